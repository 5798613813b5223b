"""``python manage.py plan_validation``: how many items a wanted precision needs.

    plan_validation --auc 0.8 --prevalence 0.3 --half-width 0.05 [--json]
    plan_validation --kappa 0.6 --raters 3 --categories 3 --half-width 0.05
    plan_validation --validation 1 --half-width 0.05      (a validation study's plan and monitoring)

The same plan as ``GET /api/adjudication/plan/`` (figures) and
``GET /api/adjudication/validation-studies/<id>/plan/`` (a study).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.analysis import planning
from adjudication.models import ValidationStudy
from concord.errors import ValidationFailed


class Command(BaseCommand):
    help = "Print the items a validation needs for a 95% interval of a given half-width."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--auc", type=str, help="expected metric-vs-human ROC AUC")
        parser.add_argument("--prevalence", type=str, help="expected share of positive items (AUC; 2×2 kappa)")
        parser.add_argument("--kappa", type=str, help="expected Cohen's / Fleiss' kappa")
        parser.add_argument("--alpha", type=str, help="expected Krippendorff's alpha (nominal)")
        parser.add_argument("--raters", type=str, help="raters per item (k)")
        parser.add_argument("--categories", type=str, help="number of answer categories")
        parser.add_argument("--half-width", type=str, default="0.05", help="wanted 95%% CI half-width")
        parser.add_argument("--confidence", type=str, default="0.95")
        parser.add_argument("--seed", type=str, default="0", help="seed of the simulated plans")
        parser.add_argument("--validation", type=int, help="plan and monitor this validation study (its id)")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            if opts["validation"] is not None:
                vs = (
                    ValidationStudy.objects.select_related("target_pool", "target_question", "metric_run", "study")
                    .filter(pk=opts["validation"])
                    .first()
                )
                if vs is None:
                    raise CommandError(f"no validation study {opts['validation']}")
                half_width = planning.parse_half_width(opts["half_width"])
                out = planning.validation_monitoring(vs=vs, half_width=half_width)
                out["validation_study"] = {"id": vs.pk, "name": vs.name, "study": vs.study.slug}
                text = planning.monitoring_text(out)
            else:
                out = planning.plan_request(
                    {k: opts[k] for k in ("auc", "prevalence", "kappa", "alpha", "raters", "categories", "seed")}
                    | {"half_width": opts["half_width"], "confidence": opts["confidence"]}
                )
                text = planning.plan_text(out)
        except ValidationFailed as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(json.dumps(out, indent=2, default=str) if opts["json"] else text)
