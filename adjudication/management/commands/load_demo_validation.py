"""python manage.py load_demo_validation [--force]

Run after ``load_demo``: gives the ``kqa-demo`` study two validation studies ready to run, and queues
the score runs they read (lexical backend, so the demo needs no model). ``make run`` starts the worker
afterwards, which computes the runs; the researcher then opens *Validation studies* and presses Run.

* **ICAT on K-QA** — metric: ICAT coverage (an ``icat`` run) and, once the demo annotators have
  labelled, their human aspect coverage (pool A: *Demo annotators*, gold); target: the three K-QA
  physicians' entailment of each expected statement (pool B: *K-QA physicians*, majority, positive
  ``entailment``). It reports coverage under the original statement set and under the set expanded by
  accepted proposals, ICAT against the physicians under both, and the physicians' agreement as the
  ceiling. The physicians' labels were imported, so the exposure check warns that Concord holds no
  trail of what they were shown when their labels were collected.
* **ASTRID on K-QA** — metric: automated CF (a ``cf`` run) compared with RF (an ``rf`` run), paired;
  target: the demo annotators' perceived faithfulness (pool B: *Demo annotators*, majority, positive
  3 or more). Until the demo annotators have submitted items, every analysis names that missing input.

Idempotent: a rerun finds the runs and studies in place and adds nothing twice.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.models import ValidationStudy
from adjudication.validation.inputs import validation_inputs_parse
from adjudication.validation.services import validation_study_create
from annotation.models import Pool, Study
from scoring.models import ScoreRun
from scoring.services import score_run_start

STUDY = "kqa-demo"
RESEARCHER = "demo-researcher"
PHYSICIANS = "K-QA physicians"
ANNOTATORS = "Demo annotators"
ICAT_NAME = "ICAT on K-QA: coverage under the original and the expanded statement set"
ASTRID_NAME = "ASTRID on K-QA: automated CF against the demo annotators' perceived faithfulness"


class Command(BaseCommand):
    help = "Add ready-to-run validation studies (and the score runs they read) to the kqa-demo study."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="run even with CONCORD_ENV=production")

    def handle(self, *args: Any, **opts: Any) -> None:
        if settings.PRODUCTION and not opts["force"]:
            raise CommandError("load_demo_validation changes the demo study; refusing in production (use --force)")
        study = Study.objects.filter(slug=STUDY).first()
        researcher = get_user_model().objects.filter(username=RESEARCHER).first()
        if study is None or researcher is None:
            raise CommandError(f"run load_demo first: the {STUDY} study and the {RESEARCHER} account are missing")
        physicians = Pool.objects.filter(study=study, name=PHYSICIANS).first()
        annotators = Pool.objects.filter(study=study, name=ANNOTATORS).first()
        if physicians is None or annotators is None:
            raise CommandError(f"run load_demo first: the pools {PHYSICIANS!r} and {ANNOTATORS!r} are missing")
        icat = self._run(study, researcher, "icat")
        cf = self._run(study, researcher, "cf")
        rf = self._run(study, researcher, "rf")
        self._study(
            study,
            researcher,
            ICAT_NAME,
            {
                "template": "icat",
                "metric_run": icat.pk,
                "metric_pool": annotators.pk,
                "metric_rater": "gold",
                "target_pool": physicians.pk,
                "target_question": "aspect_entailment",
                "target_mode": "majority",
                "positive": "entailment",
            },
        )
        self._study(
            study,
            researcher,
            ASTRID_NAME,
            {
                "template": "astrid",
                "metric_run": cf.pk,
                "compare_run": rf.pk,
                "target_pool": annotators.pk,
                "target_question": "perceived_faithfulness",
                "target_mode": "majority",
                "positive": "3",
            },
        )

    def _run(self, study: Study, researcher: Any, metric: str) -> ScoreRun:
        run = ScoreRun.objects.filter(study=study, metric=metric, backend="lexical").order_by("-id").first()
        if run is None:
            run = score_run_start(study=study, metric=metric, backend="lexical", parameters={}, actor=researcher)
            self.stdout.write(
                f"Queued score run #{run.pk} ({metric}, lexical) on {study.slug}; the worker computes it."
            )
        return run

    def _study(self, study: Study, researcher: Any, name: str, data: dict[str, Any]) -> None:
        existing = ValidationStudy.objects.filter(study=study, name=name).first()
        if existing is not None:
            self.stdout.write(f"Validation study #{existing.pk} {name!r} is in place.")
            return
        inputs = validation_inputs_parse(study=study, data={**data, "name": name})
        vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
        warnings = [c["key"] for c in vs.checks if c["status"] != "pass"]
        note = f" (checks with warnings: {', '.join(warnings)})" if warnings else ""
        self.stdout.write(f"Validation study #{vs.pk} {name!r} is ready to run{note}.")
