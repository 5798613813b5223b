"""python manage.py load_demo_estimates [--force]

Run after ``load_demo_validation``: gives the ``kqa-demo`` study what the estimates report needs, so that the
demo shows a prediction-powered estimate once its annotators have labelled a small random sample.

* The ``cf`` score run (lexical backend) that ``load_demo_validation`` queued is computed here, in this
  process, if it has not run yet (a worker that later receives its message finds it done and does nothing):
  a sample is drawn from a finished run's items.
* A pool **Estimate sample** asks the item-level questions ``perceived_faithfulness`` and ``harmful`` (overlap
  1). Before it hands out any item, a uniform random sample of its items is drawn from the ``cf`` run
  (seed 2024, recorded), and the two demo annotators join it: they are handed only the drawn items.

Once they have submitted those items, *Reports → Estimates* with pool *Estimate sample*, question
``perceived_faithfulness``, positive ``3`` (3 or more) and the ``cf`` run gives the PPI++ estimate, the plain PPI
and classical intervals, the plot of the interval as labels arrive and the plan. Idempotent: a rerun finds the
run, the pool and its sample in place.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.models import PoolSample
from adjudication.sampling import DEFAULT_FLOOR, pool_sample_draw
from annotation.console.services import pool_create, pool_membership_add
from annotation.models import Pool, PoolMembership, Question, Study
from scoring import services as scoring_services
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

STUDY = "kqa-demo"
RESEARCHER = "demo-researcher"
ANNOTATORS = ("demo-annotator-1", "demo-annotator-2")
POOL = "Estimate sample"
QUESTIONS = ("perceived_faithfulness", "harmful")
SAMPLE = 20
SEED = 2024


class Command(BaseCommand):
    help = (
        "Give the kqa-demo study a finished cf run and a pool with a recorded random sample for the estimates report."
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
        for k, user in enumerate(annotators, start=1):
            if not PoolMembership.objects.filter(pool=pool, user=user, active=True).exists():
                pool_membership_add(pool=pool, user=user, actor=researcher, pseudonym=f"Annotator {k}")
        sample = PoolSample.objects.filter(pool=pool).first()
        drawn = f"{sample.n_drawn} of {sample.population} items drawn" if sample else "no sample"
        self.stdout.write(
            f"Pool {POOL!r} (#{pool.pk}): {drawn} from run #{run.pk} (cf, lexical). Once the demo annotators have "
            f"submitted them: Reports → Estimates, pool {POOL!r}, question perceived_faithfulness, positive 3."
        )

    def _compute(self, run: ScoreRun) -> None:
        if run.status != RunStatus.QUEUED:
            return
        for batch_id in scoring_services.score_run_fan_out(run_id=run.pk):
            scoring_services.score_batch_process(batch_id=batch_id, worker="load_demo_estimates")
        run.refresh_from_db()
        self.stdout.write(f"Computed score run #{run.pk} (cf, lexical): {run.status}.")
