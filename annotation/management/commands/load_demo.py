"""python manage.py load_demo [--force] [--no-begin]

Builds the demo study ``kqa-demo`` from K-QA (the 50 LLM answers with their labelled statements as
aspects and the three physicians' labels as the imported pool ``K-QA physicians``), a live pool for
two demo annotators, and a small ``begin-demo`` study from BEGIN CMU-DoG. One demo account per role;
each run sets new random passwords and prints them (nothing is fixed in code). Idempotent: a rerun
finds the studies, pools and imports in place and adds nothing twice.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.adapters import ADAPTERS
from annotation.console.services import pool_create, pool_membership_add, study_create
from annotation.imports import records_from, records_import
from annotation.models import ImportBatch, Pool, PoolMembership, Question, Role, Study, StudyRole
from annotation.protocols import study_protocol_apply

DEMO_DIR = Path(settings.BASE_DIR) / "data" / "demo"
KQA_FILE = DEMO_DIR / "kqa" / "NLI_medical_annotator.csv"
BEGIN_FILE = DEMO_DIR / "begin_cmudog" / "begin_dev_cmu.tsv"

ACCOUNTS = [
    ("demo-researcher", "researcher"),
    ("demo-adjudicator", "adjudicator"),
    ("demo-annotator-1", "annotator"),
    ("demo-annotator-2", "annotator"),
]
LIVE_POOL = "Demo annotators"
# The live pool answers the sentence-, chunk- and item-level ASTRID questions and ICAT's aspect
# coverage; the physicians' own entailment question stays with the imported pool.
LIVE_QUESTIONS = (
    "information_bearing",
    "grounded",
    "context_relevant",
    "perceived_faithfulness",
    "harmful",
    "helpful",
    "aspect_covered",
    "aspect_evidence",
    "missing_aspects",
)
KQA_GUIDELINES = """\
## K-QA demo

Each item is a patient's question and one chatbot's answer. The **context** is the answer a physician
wrote to the same question.

* For every **sentence** of the answer: does it carry clinical information? If so, is it supported by
  the physician's answer?
* For every **expected aspect** (a statement physicians consider important): does the answer cover it,
  and in which sentences?
* For the answer as a whole: how faithful, helpful and harmful is it?

Keyboard: the key next to each option selects it; `j` / `k` move between units.
"""
BEGIN_GUIDELINES = """\
## BEGIN demo

Each item is a turn of a movie conversation: the user's message, the system's response and the
knowledge passage the system was given. Judge whether the response is attributable to the passage.
"""


class Command(BaseCommand):
    help = "Build the demo studies (kqa-demo, begin-demo) and print one login per role."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="run even with CONCORD_ENV=production")
        parser.add_argument("--no-begin", action="store_true", help="skip the BEGIN demo study")

    def handle(self, *args: Any, **opts: Any) -> None:
        if settings.PRODUCTION and not opts["force"]:
            raise CommandError(
                "load_demo creates accounts with printed passwords; refusing in production (use --force)"
            )
        for path in (KQA_FILE, BEGIN_FILE):
            if not path.exists():
                raise CommandError(f"{path} is missing; the demo data ships in data/demo/")
        with transaction.atomic():
            users, passwords = self._accounts()
            kqa = self._kqa_demo(users)
            lines = [self._describe(kqa)]
            if not opts["no_begin"]:
                lines.append(self._describe(self._begin_demo(users)))
        for line in lines:
            self.stdout.write(line)
        self.stdout.write("Demo logins (new random passwords on every run of load_demo):")
        for username, role in ACCOUNTS:
            self.stdout.write(f"  {role:<12} {username:<18} {passwords[username]}")

    def _accounts(self) -> tuple[dict[str, Any], dict[str, str]]:
        User = get_user_model()
        users, passwords = {}, {}
        for username, _role in ACCOUNTS:
            user, _ = User.objects.get_or_create(username=username, defaults={"is_active": True})
            password = secrets.token_urlsafe(12)
            user.set_password(password)
            user.is_active = True
            user.save()
            if username == "demo-researcher":
                # So that the demo researcher can also try the console's "new study" flow.
                user.user_permissions.add(
                    Permission.objects.get(codename="add_study", content_type__app_label="annotation")
                )
            users[username], passwords[username] = user, password
        return users, passwords

    def _study(self, *, slug: str, name: str, presets: list[str], guidelines: str, owner: Any) -> Study:
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            study = study_create(owner=owner, name=name, slug=slug, presets=presets, guidelines=guidelines)
        else:
            study_protocol_apply(study=study, presets=presets)
        StudyRole.objects.get_or_create(study=study, user=owner, role=Role.RESEARCHER)
        return study

    def _import(self, study: Study, adapter_name: str, path: Path) -> None:
        adapter = ADAPTERS[adapter_name]
        if ImportBatch.objects.filter(study=study, adapter=adapter.name).exists():
            return
        study_protocol_apply(study=study, presets=list(adapter.presets))
        if not study.licence:
            study.licence = adapter.licence(path)
            study.save(update_fields=["licence"])
        records_import(
            study=study,
            source=records_from(lambda: adapter.records(path)),
            filename=path.name,
            where="record",
            adapter=adapter.name,
            pool_name=adapter.pool_name,
        )

    def _kqa_demo(self, users: dict[str, Any]) -> Study:
        researcher = users["demo-researcher"]
        study = self._study(
            slug="kqa-demo",
            name="K-QA demo: chatbot answers to patient questions",
            presets=["astrid", "icat", "kqa"],
            guidelines=KQA_GUIDELINES,
            owner=researcher,
        )
        StudyRole.objects.get_or_create(study=study, user=users["demo-adjudicator"], role=Role.ADJUDICATOR)
        self._import(study, "kqa-nli", KQA_FILE)
        pool = Pool.objects.filter(study=study, name=LIVE_POOL).first()
        if pool is None:
            questions = list(Question.objects.filter(study=study, key__in=LIVE_QUESTIONS))
            pool = pool_create(study=study, actor=researcher, name=LIVE_POOL, questions=questions, overlap=2, seed=2024)
        for n in (1, 2):
            user = users[f"demo-annotator-{n}"]
            if not PoolMembership.objects.filter(pool=pool, user=user, active=True).exists():
                # Adding the second member assigns every item of the study to both (overlap 2).
                pool_membership_add(pool=pool, user=user, actor=researcher, pseudonym=f"Annotator {n}")
        return study

    def _begin_demo(self, users: dict[str, Any]) -> Study:
        study = self._study(
            slug="begin-demo",
            name="BEGIN demo: attribution of dialogue responses",
            presets=["astrid", "begin"],
            guidelines=BEGIN_GUIDELINES,
            owner=users["demo-researcher"],
        )
        StudyRole.objects.get_or_create(study=study, user=users["demo-adjudicator"], role=Role.ADJUDICATOR)
        self._import(study, "begin", BEGIN_FILE)
        return study

    @staticmethod
    def _describe(study: Study) -> str:
        pools = ", ".join(f"{p.name} ({p.memberships.count()} members)" for p in study.pools.all())
        return f"Study {study.slug}: {study.items.count()} items; pools: {pools}"
