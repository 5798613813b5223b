"""python manage.py load_demo_estimates [--force]

Run after ``load_demo_validation``: gives two demo studies what the estimates report needs.

**begin-demo** (BEGIN CMU-DoG, imported by ``load_demo``: every response carries one attribution label from
BEGIN's annotators, in the imported pool *BEGIN annotators*) shows an estimate at once:

* its ``cf`` score run (lexical backend) is started and computed here, in this process, if it is missing;
* a pool **BEGIN attribution sample** (question ``attribution``, overlap 1) gets a uniform random sample of 100 of
  the run's items (seed 2024, recorded) drawn *before* the pool has any label;
* then, for exactly the drawn items, BEGIN's own label is copied from *BEGIN annotators* into that pool, under an
  import identity with BEGIN's pseudonym (``ImportIdentity``, as an import makes: an inactive account that
  cannot log in), the demo researcher as the actor, and an ``ImportBatch`` naming the source. No label is
  invented and no item outside the sample gets one. BEGIN's annotators labelled every item, so the labels of
  the other items exist in *BEGIN annotators*; this pool stands for a study that could afford labels for a
  random sample only.

*Reports → Estimates* with pool *BEGIN attribution sample*, question ``attribution``, positive ``not_fully``,
"invert the metric" (1 − cf: a high cf means attributable) and the ``cf`` run gives the PPI++ estimate of the
share not fully attributable, the plain PPI and classical intervals, the plot of the interval as labels
arrived and the plan.

**kqa-demo** gets one once its demo annotators have labelled a small random sample:

* the ``cf`` score run (lexical backend) that ``load_demo_validation`` queued is computed here if it has not run
  yet (a worker that later receives its message finds it done and does nothing);
* a pool **Estimate sample** asks the item-level questions ``perceived_faithfulness`` and ``harmful`` (overlap
  1). Before it hands out any item, a uniform random sample of its items is drawn from the ``cf`` run
  (seed 2024, recorded). The study's pools are independent (a person belongs to one pool only, so that a
  metric can be checked against clinicians who never labelled in another pool), and the two demo annotators
  already label the pool *Demo annotators*: they are not added (the command says so). Add annotators who belong
  to no other pool of the study; they are handed only the drawn items.

Once those items are submitted, *Reports → Estimates* with pool *Estimate sample*, question
``perceived_faithfulness``, positive ``3`` (3 or more) and the ``cf`` run gives the estimate. Idempotent: a
rerun finds the runs, the pools, their samples and the copied labels in place.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from adjudication.models import PoolSample
from adjudication.sampling import DEFAULT_FLOOR, pool_sample_draw
from annotation.adapters import ADAPTERS
from annotation.console.services import pool_create, pool_membership_add
from annotation.imports.validation import Pseudonyms
from annotation.imports.writer import _annotators_ensure
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ImportBatch,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Question,
    Study,
)
from annotation.signals import assignment_submitted
from scoring import services as scoring_services
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

STUDY = "kqa-demo"
RESEARCHER = "demo-researcher"
ANNOTATORS = ("demo-annotator-1", "demo-annotator-2")
POOL = "Estimate sample"
QUESTIONS = ("perceived_faithfulness", "harmful")
SAMPLE = 20
SEED = 2024

BEGIN_STUDY = "begin-demo"
BEGIN_SOURCE = ADAPTERS["begin"].pool_name  # the imported pool holding BEGIN's annotators' labels
BEGIN_POOL = "BEGIN attribution sample"
BEGIN_QUESTION = "attribution"
BEGIN_POSITIVE = "not_fully"
BEGIN_SAMPLE = 100


class Command(BaseCommand):
    help = (
        "Give the begin-demo and kqa-demo studies a finished cf run and a pool with a recorded random sample for "
        "the estimates report (begin-demo's sample labelled with BEGIN's own labels)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="run even with CONCORD_ENV=production")

    def handle(self, *args: Any, **opts: Any) -> None:
        if settings.PRODUCTION and not opts["force"]:
            raise CommandError("load_demo_estimates changes the demo study; refusing in production (use --force)")
        study = Study.objects.filter(slug=STUDY).first()
        User = get_user_model()
        researcher = User.objects.filter(username=RESEARCHER).first()
        annotators = [User.objects.filter(username=name).first() for name in ANNOTATORS]
        if study is None or researcher is None or None in annotators:
            raise CommandError(f"run load_demo first: the {STUDY} study or the demo accounts are missing")
        run = ScoreRun.objects.filter(study=study, metric="cf", backend="lexical").order_by("-id").first()
        if run is None:
            raise CommandError(f"run load_demo_validation first: the {STUDY} study has no cf run")
        self._compute(run)
        if run.status != RunStatus.DONE:
            raise CommandError(
                f"score run #{run.pk} (cf) is {run.status}, not done: a sample is drawn from a finished run's items; "
                "run this command again once it is done"
            )
        self._begin(researcher)
        self._kqa(study, run, researcher, annotators)

    def _kqa(self, study: Study, run: ScoreRun, researcher: Any, annotators: list[Any]) -> None:
        pool = Pool.objects.filter(study=study, name=POOL).first()
        if pool is None:
            questions = list(Question.objects.filter(study=study, key__in=QUESTIONS))
            pool = pool_create(study=study, actor=researcher, name=POOL, questions=questions, overlap=1, seed=SEED)
        if not PoolSample.objects.filter(pool=pool).exists() and not pool.assignments.exists():
            population = Score.objects.filter(run=run, unit_key="item", state=ScoreState.OK).count()
            n = min(SAMPLE, max(2, population // 2))
            pool_sample_draw(
                pool=pool, run=run, design="uniform", n=n, seed=SEED, floor=DEFAULT_FLOOR, actor=researcher
            )
        skipped = []
        for k, user in enumerate(annotators, start=1):
            if PoolMembership.objects.filter(pool=pool, user=user, active=True).exists():
                continue
            if study.independent_pools and PoolMembership.objects.filter(study=study, user=user).exists():
                skipped.append(user.username)  # independent pools: never switched off for the demo
                continue
            pool_membership_add(pool=pool, user=user, actor=researcher, pseudonym=f"Annotator {k}")
        if skipped:
            self.stdout.write(
                f"Pool {POOL!r}: {', '.join(skipped)} not added: they belong to another pool of {STUDY}, whose pools "
                "are independent; add annotators who belong to no other pool."
            )
        sample = PoolSample.objects.filter(pool=pool).first()
        drawn = f"{sample.n_drawn} of {sample.population} items drawn" if sample else "no sample"
        self.stdout.write(
            f"Pool {POOL!r} (#{pool.pk}): {drawn} from run #{run.pk} (cf, lexical). Once its annotators have "
            f"submitted them: Reports → Estimates, pool {POOL!r}, question perceived_faithfulness, positive 3."
        )

    def _begin(self, researcher: Any) -> None:
        study = Study.objects.filter(slug=BEGIN_STUDY).first()
        if study is None:
            self.stdout.write(f"No {BEGIN_STUDY} study (load_demo --no-begin): its estimate sample is skipped.")
            return
        source = Pool.objects.filter(study=study, name=BEGIN_SOURCE).first()
        if source is None:
            raise CommandError(f"run load_demo first: the {BEGIN_STUDY} study has no pool {BEGIN_SOURCE!r}")
        run = ScoreRun.objects.filter(study=study, metric="cf", backend="lexical").order_by("-id").first()
        if run is None:
            run = scoring_services.score_run_start(
                study=study, metric="cf", backend="lexical", parameters={}, actor=researcher
            )
        self._compute(run)
        if run.status != RunStatus.DONE:
            raise CommandError(f"score run #{run.pk} (cf) of {BEGIN_STUDY} is {run.status}, not done")
        with transaction.atomic():
            pool = Pool.objects.filter(study=study, name=BEGIN_POOL).first()
            if pool is None:
                question = Question.objects.get(study=study, key=BEGIN_QUESTION)
                pool = pool_create(
                    study=study, actor=researcher, name=BEGIN_POOL, questions=[question], overlap=1, seed=SEED
                )
            sample = PoolSample.objects.filter(pool=pool).first()
            if sample is None:
                if pool.assignments.exists():
                    raise CommandError(f"pool {BEGIN_POOL!r} has labels but no sample: delete it and run this again")
                population = Score.objects.filter(run=run, unit_key="item", state=ScoreState.OK).count()
                sample = pool_sample_draw(
                    pool=pool, run=run, design="uniform", n=min(BEGIN_SAMPLE, max(2, population // 2)), seed=SEED,
                    floor=DEFAULT_FLOOR, actor=researcher,
                )  # fmt: skip
            copied = self._copy_labels(study, source, pool, sample, researcher)
        self.stdout.write(
            f"Pool {BEGIN_POOL!r} (#{pool.pk}): {sample.n_drawn} of {sample.population} items drawn from run "
            f"#{run.pk} (cf, lexical), seed {sample.seed}; BEGIN's labels copied for {copied} drawn items now. "
            f"Reports → Estimates: study {BEGIN_STUDY}, pool {BEGIN_POOL!r}, question {BEGIN_QUESTION}, positive "
            f"{BEGIN_POSITIVE}, invert the metric, run #{run.pk}."
        )

    @staticmethod
    def _copy_labels(study: Study, source: Pool, pool: Pool, sample: PoolSample, actor: Any) -> int:
        """BEGIN's label of each drawn item without one in ``pool`` yet, copied from ``source`` (the imported pool)
        under an import identity with BEGIN's pseudonym, as an import of labels writes them. Returns how many."""
        drawn = set(sample.items.filter(drawn=True).values_list("item_id", flat=True))
        drawn -= set(pool.assignments.values_list("item_id", flat=True))
        if not drawn:
            return 0
        originals = list(
            Label.objects.filter(
                assignment__pool=source, assignment__status=AssignmentStatus.SUBMITTED, assignment__item_id__in=drawn,
                question__key=BEGIN_QUESTION, unit_key="item",
            ).select_related("assignment__annotator__import_identity", "question").order_by("assignment__item_id", "pk")
        )  # fmt: skip
        missing = drawn - {label.assignment.item_id for label in originals}
        if missing:
            raise CommandError(f"{len(missing)} drawn items have no BEGIN label in {BEGIN_SOURCE!r}: nothing copied")
        pseudonyms = Pseudonyms()
        for label in originals:
            pseudonyms.add(label.assignment.annotator.import_identity.pseudonym, 0, "annotator")
        filename = f"{BEGIN_SOURCE} (labels of the {len(drawn)} items drawn by the sample of pool {pool.name})"
        members = _annotators_ensure(
            study=study, pool=pool, pseudonyms=pseudonyms, actor=actor, where="record", filename=filename
        )
        now = timezone.now()
        assignments: dict[tuple[int, str], Assignment] = {}
        keys = [(label.assignment.item_id, label.assignment.annotator.import_identity.pseudonym) for label in originals]
        for item_id, pseudonym in keys:
            if (item_id, pseudonym) not in assignments:
                assignments[(item_id, pseudonym)] = Assignment(
                    pool=pool, item_id=item_id, annotator=members[pseudonym], status=AssignmentStatus.SUBMITTED,
                    started_at=now, submitted_at=now,
                )  # fmt: skip
        Assignment.objects.bulk_create(assignments.values())
        labels = Label.objects.bulk_create(
            Label(
                assignment=assignments[key], question=label.question, unit_key=label.unit_key, value=label.value,
                version=1, updated_by=actor, updated_at=now,
            )
            for key, label in zip(keys, originals, strict=True)
        )  # fmt: skip
        LabelHistory.objects.bulk_create(
            LabelHistory(label=lab, old_value=None, new_value=lab.value, old_version=None, new_version=1, actor=actor,
                         at=now)
            for lab in labels
        )  # fmt: skip
        ImportBatch.objects.create(
            study=study, filename=filename[:300], adapter="begin", n_labels=len(labels), by=actor
        )
        for item_id in sorted(drawn):
            assignment_submitted.send(sender=Assignment, pool_id=pool.pk, item_id=item_id)
        return len(labels)

    def _compute(self, run: ScoreRun) -> None:
        if run.status != RunStatus.QUEUED:
            return
        for batch_id in scoring_services.score_run_fan_out(run_id=run.pk):
            scoring_services.score_batch_process(batch_id=batch_id, worker="load_demo_estimates")
        run.refresh_from_db()
        self.stdout.write(f"Computed score run #{run.pk} ({run.metric}, lexical): {run.status}.")
