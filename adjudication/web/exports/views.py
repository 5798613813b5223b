"""Researcher export pages: request an export, follow its job, download the file.

Every view authorizes with one access helper from adjudication.selectors (annotators 403, strangers
404), calls one service and responds; for an htmx request it answers only the fragment.
"""

from __future__ import annotations

from pathlib import Path

from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_http_methods

from adjudication import selectors
from adjudication.exports import services
from adjudication.exports.filters import ExportFilters
from adjudication.exports.writers import scores_path
from adjudication.models import ExportFormat, ExportStatus
from annotation.access import get_study_for_researcher
from concord.access import access_policy
from concord.errors import NotFound
from concord.http import domain_errors, htmx_render


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def exports(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    if request.method == "POST":
        filters = ExportFilters(
            pools=tuple(sorted(set(request.POST.getlist("pools")))),
            questions=tuple(sorted(set(request.POST.getlist("questions")))),
            gold_only=request.POST.get("gold_only") in ("1", "on", "true"),
        )
        services.export_request(
            study_id=study.pk, fmt=request.POST.get("format", ""), actor=request.user, filters=filters
        )
        if not request.htmx:
            return redirect("adjudication:exports", slug=study.slug)
    jobs = list(study.export_jobs.select_related("requested_by")[:50])
    for job in jobs:
        job.limited_to = ExportFilters.from_dict(job.filters).describe() if job.filters else ""
    context = {
        "study": study,
        "jobs": jobs,
        "formats": ExportFormat.choices,
        "pools": list(study.pools.order_by("name").values_list("name", flat=True)),
        "questions": list(study.questions.order_by("order", "key").values_list("key", flat=True)),
        "polling": any(j.status in (ExportStatus.QUEUED, ExportStatus.RUNNING) for j in jobs),
    }
    return htmx_render(request, "adjudication/exports.html", context, fragment="adjudication/_export_jobs.html")


@access_policy("researcher")
@require_GET
@domain_errors
def export_download(request: HttpRequest, pk: int) -> FileResponse:
    job = selectors.get_export_for_researcher(request.user, pk)
    services.export_download_record(job=job, actor=request.user)
    path = Path(job.path)
    part = request.GET.get("part")
    if part == "card" and job.format != ExportFormat.HF:
        path = Path(job.path + ".card.md")
    elif part == "scores":
        if job.format != ExportFormat.CSV or not scores_path(job.path).exists():
            raise NotFound("only a CSV export has a scores file")
        path = scores_path(job.path)
    # Always an attachment: an export holds item text that must never render in the browser.
    response = FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)  # noqa: SIM115
    response["X-Content-Type-Options"] = "nosniff"
    return response
