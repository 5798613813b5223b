"""The per-annotator quality page of one pool, and the study's list of pools to choose from.

Every view authorizes with ``get_study_for_researcher`` (annotators and adjudicators 403, strangers 404) and
``get_pool_for_report`` (a pool of another study: 404), calls :mod:`adjudication.analysis.quality` and renders.
"""

from __future__ import annotations

import io
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from adjudication.analysis.access import get_pool_for_report
from adjudication.analysis.quality import DEFAULT_WINDOW, drift_plot, pool_quality
from adjudication.web.common import check_format, report_download, report_errors
from annotation.access import get_study_for_researcher
from annotation.models import Pool
from concord.access import access_policy
from concord.csv_writer import csv_writer
from concord.params import parse_int


def window_param(raw: object) -> int:
    return parse_int(raw, name="window", minimum=2, maximum=1000, default=DEFAULT_WINDOW)


@access_policy("researcher")
@require_GET
@report_errors
def quality_index(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return render(
        request, "adjudication/quality_index.html",
        {"study": study, "pools": Pool.objects.filter(study=study).order_by("name")},
    )


@access_policy("researcher")
@require_GET
@report_errors
def quality_pool(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    pool = get_pool_for_report(study, pool_id)
    report = pool_quality(pool=pool, window=window_param(request.GET.get("window")))
    rows = [{**row, "plot": drift_plot(row["drift"])} for row in report["annotators"]]
    return render(request, "adjudication/quality.html", {"study": study, "pool": pool, "report": report, "rows": rows})


def quality_csv(report: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = csv_writer(out)  # a pseudonym that starts like a formula is neutralised (SECURITY.md)
    writer.writerow(
        [
            "pseudonym", "flagged", "control_k", "control_n", "control_accuracy", "control_lower", "control_upper",
            "attention_k", "attention_n", "consensus_k", "consensus_n", "consensus_agreement", "median_seconds",
            "qualification_attempts", "qualification_passed",
        ]
    )
    for r in report["annotators"]:
        c, a, g, q = r["control_accuracy"], r["attention"], r["consensus_agreement"], r["qualification"] or {}
        writer.writerow(
            [
                r["pseudonym"], r["flagged"], c["k"], c["n"], c["share"], c["lower"], c["upper"], a["k"], a["n"],
                g["k"], g["n"], g["share"], r["time_per_item"]["median"], q.get("attempts", 0), q.get("passed", ""),
            ]
        )
    return out.getvalue()


@access_policy("researcher")
@require_GET
@report_errors
def quality_download(request: HttpRequest, slug: str, pool_id: int, fmt: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    check_format(fmt)
    pool = get_pool_for_report(study, pool_id)
    report = pool_quality(pool=pool, window=window_param(request.GET.get("window")))
    for row in report["annotators"]:
        row.pop("user_id")
    return report_download(fmt, report, f"{study.slug}-{pool.name}-annotator-quality", quality_csv)
