"""``python manage.py predict_outcome STUDY --outcome QUESTION --features a,b,c [--json]``

Cross-validated prediction of a clinicians' outcome question from metric scores and item attributes
(adjudication.analysis.outcomes; feature names are documented there: ``<metric>[:<backend>]``, ``run:<id>``,
``scope_class``, ``system``, ``metadata.<key>``). Runs in this process (no worker needed). The pool is
the one that answers the outcome question; ``--pool`` chooses when several do.
"""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.analysis import outcomes
from adjudication.management.report_text import format_outcome_text
from annotation.models import Pool, Study
from concord.errors import DomainError


class Command(BaseCommand):
    help = "Predict a clinician outcome from metric scores and item attributes with repeated stratified k-fold CV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument("--outcome", required=True, help="key of a categorical question (e.g. harmful)")
        parser.add_argument("--features", required=True, help="comma-separated feature names")
        parser.add_argument("--pool", type=int, help="pool id (default: the only pool answering the outcome)")
        parser.add_argument("--target", choices=["gold", "majority"], help="default: gold if it covers every unit")
        parser.add_argument("--models", default="logistic,forest")
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument("--repeats", type=int, default=10)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--n-boot", type=int, default=1000)
        parser.add_argument("--subgroup", help="scope_class, system or metadata.<key>")
        parser.add_argument("--positive", help="fit one option against the rest (ordinal: that option or later)")
        parser.add_argument("--json", action="store_true", help="print the full result as JSON")

    def handle(self, *args: object, **opts: object) -> None:
        study = Study.objects.filter(slug=opts["study"]).first()
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        pool_id = opts["pool"]
        if pool_id is None:
            pools = list(Pool.objects.filter(study=study, questions__key=opts["outcome"]).values_list("pk", flat=True))
            if len(pools) != 1:
                raise CommandError(f"{len(pools)} pools answer {opts['outcome']!r}; choose one with --pool")
            pool_id = pools[0]
        query = {
            "pool": pool_id,
            "question": opts["outcome"],
            "features": opts["features"],
            "target": opts["target"] or "",
            "models": opts["models"],
            "n_splits": opts["folds"],
            "n_repeats": opts["repeats"],
            "seed": opts["seed"],
            "n_boot": opts["n_boot"],
            "subgroup": opts["subgroup"] or "",
            "positive": opts["positive"] or "",
        }

        def progress(done: int, total: int) -> None:
            if not opts["json"]:
                sys.stderr.write(f"\rfits {done}/{total}")
                if done == total:
                    sys.stderr.write("\n")

        try:
            params = outcomes.outcome_params_parse(study=study, query=query)
            report = outcomes.outcome_report(study=study, params=params, progress=progress)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if opts["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, indent=1))
        else:
            self.stdout.write(format_outcome_text(report))
        if report.get("refused"):
            raise CommandError(report["reason"])
