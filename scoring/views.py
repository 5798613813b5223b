"""Researcher pages for score runs, item scores and knowledge bases.

Every view: parse, authorize with one access helper from ``scoring.selectors`` (annotators 403,
strangers 404), call one service, respond. Scores never appear on annotation pages.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.access import get_study_for_researcher
from annotation.models import Study
from concord.access import access_policy
from concord.errors import DomainError, NotFound, ValidationFailed
from concord.http import domain_errors, htmx_render, is_htmx
from concord.params import parse_id, parse_int
from scoring import selectors, services, summary
from scoring.forms import backend_option_rules, catalogue, parse_run_form
from scoring.judges.selectors import judges_usable_by
from scoring.models import KnowledgeBase

SCORES_PER_PAGE = 100


def _runs_page(
    request: HttpRequest, study: Study, *, form_error: str = "", posted: dict[str, Any] | None = None, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "scoring/study_runs.html",
        {
            "study": study,
            "runs": selectors.runs_for_study(study)[:100],
            "metrics": catalogue(),
            "backends": selectors.backend_statuses(study),
            "backend_options": backend_option_rules(),
            "section": "scores",
            "knowledge_bases": KnowledgeBase.objects.filter(study=study).order_by("name"),
            "judges": judges_usable_by(study.pk).filter(retired_at__isnull=True).order_by("name"),
            "form_error": form_error,
            "posted": posted or {},
        },
        status=status,
    )


@access_policy("researcher")
@require_GET
@domain_errors
def study_runs(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    return _runs_page(request, study)


@access_policy("researcher")
@require_POST
@domain_errors
def run_start(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    try:
        # The service refuses an unavailable backend or another study's knowledge base, as it does for the API.
        run = services.score_run_start(study=study, actor=request.user, **parse_run_form(request.POST))
    except ValidationFailed as exc:
        return _runs_page(request, study, form_error=exc.message, posted=request.POST.dict(), status=400)
    return redirect("scoring:run", run_id=run.pk)


def _progress_context(run) -> dict[str, Any]:
    return {"run": run, "progress": selectors.run_progress(run)}


@access_policy("researcher")
@require_GET
@domain_errors
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.get_run_for_researcher(request.user, run_id)
    if is_htmx(request):
        response = htmx_render(request, "scoring/_progress.html", _progress_context(run))
        if not run.is_active:
            # Only a page opened while the run was active polls: the run has just finished, and the
            # distribution, item and score sections below were drawn before it had scores. htmx reloads
            # the page (once: a finished run's page does not poll).
            response["HX-Refresh"] = "true"
        return response
    page = Paginator(selectors.run_scores(run), SCORES_PER_PAGE).get_page(request.GET.get("page"))
    item_page, item_views = selectors.run_item_views(run, request.GET.get("items"))
    context = {
        **_progress_context(run),
        "study": run.study,
        "section": "scores",
        "failed": selectors.run_failed_scores(run),
        "state_counts": selectors.run_state_counts(run),
        "page": page,
        "item_page": item_page,
        "item_views": item_views,
        "distribution": summary.distribution(selectors.run_item_values(run)),
        "other_runs": selectors.runs_for_study(run.study).exclude(pk=run.pk)[:100],
        "metric": catalogue().get(run.metric),
    }
    entry = context["metric"]
    context["computed_as"] = entry.metric.computed_as(run.backend, run.parameters) if entry else ""
    return htmx_render(request, "scoring/run_detail.html", context)


COMPARED_ROWS = 200


@access_policy("researcher")
@require_GET
@domain_errors
def run_compare(request: HttpRequest, run_id: int) -> HttpResponse:
    """Two runs of one study side by side (e.g. lexical vs embedding) with their agreement."""
    run = selectors.get_run_for_researcher(request.user, run_id)
    other_id = parse_id(request.GET.get("with"))
    other = selectors.get_run_for_researcher(request.user, other_id) if other_id is not None else None
    if other is None or other.study_id != run.study_id or other.pk == run.pk:
        raise NotFound("choose another run of the same study to compare with")
    unit = "units" if request.GET.get("units") == "all" else "item"
    pairs = selectors.paired_values(run, other, unit=unit)
    agreement = summary.paired_agreement([p[2] for p in pairs], [p[3] for p in pairs])
    return render(request, "scoring/run_compare.html", {
        "study": run.study, "section": "scores", "run": run, "other": other, "unit": unit,
        "pairs": pairs[:COMPARED_ROWS], "n_pairs": len(pairs), "agreement": agreement,
        "dist_a": summary.distribution(selectors.run_item_values(run)),
        "dist_b": summary.distribution(selectors.run_item_values(other)),
    })


@access_policy("researcher")
@require_POST
@domain_errors
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.get_run_for_researcher(request.user, run_id)
    run = services.score_run_cancel(run=run, actor=request.user)
    if is_htmx(request):
        return htmx_render(request, "scoring/_progress.html", _progress_context(run))
    return redirect("scoring:run", run_id=run.pk)


@access_policy("researcher")
@require_GET
@domain_errors
def item_scores(request: HttpRequest, slug: str, external_id: str) -> HttpResponse:
    item = selectors.get_item_for_researcher(request.user, slug, external_id)
    return render(
        request, "scoring/item_scores.html",
        {"study": item.study, "section": "scores", "item": item, "runs": selectors.item_scores(item)},
    )


def _kb_page(request: HttpRequest, study, *, error: str = "", status: int = 200) -> HttpResponse:
    return render(
        request,
        "scoring/knowledge_bases.html",
        {"study": study, "knowledge_bases": selectors.knowledge_bases_for_study(study), "error": error},
        status=status,
    )


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def knowledge_bases(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    if request.method == "GET":
        return _kb_page(request, study)
    try:
        kb = services.knowledge_base_create(
            study=study,
            name=request.POST.get("name", ""),
            chunk_size=parse_int(request.POST.get("chunk_size"), name="chunk size", minimum=1,
                                 maximum=services.MAX_PASSAGE_WORDS, default=200),
            chunk_overlap=parse_int(request.POST.get("chunk_overlap"), name="chunk overlap", minimum=0,
                                    maximum=services.MAX_PASSAGE_WORDS, default=40),
            actor=request.user,
        )
    except ValidationFailed as exc:
        return _kb_page(request, study, error=exc.message, status=400)
    return redirect("scoring:knowledge-base", kb_id=kb.pk)


def _kb_detail(request: HttpRequest, kb, *, error: str = "", added: int | None = None, status: int = 200):
    return render(
        request,
        "scoring/knowledge_base_detail.html",
        {
            "kb": kb,
            "study": kb.study,
            "n_passages": kb.passages.count(),
            "documents": kb.passages.values_list("document_id", flat=True).distinct().order_by("document_id")[:200],
            "error": error,
            "added": added,
        },
        status=status,
    )


@access_policy("researcher")
@require_http_methods(["GET", "POST"])
@domain_errors
def knowledge_base_detail(request: HttpRequest, kb_id: int) -> HttpResponse:
    kb = selectors.get_knowledge_base_for_researcher(request.user, kb_id)
    if request.method == "GET":
        return _kb_detail(request, kb)
    upload = request.FILES.get("file")
    text = request.POST.get("text", "")
    try:
        if upload is not None:
            added = services.knowledge_base_add_documents(
                knowledge_base=kb,
                filename=upload.name,
                content=upload.read(services.KB_MAX_BYTES + 1),
                actor=request.user,
            )
        elif text.strip():
            name = (request.POST.get("document_id") or "").strip() or "pasted.txt"
            added = services.knowledge_base_add_documents(
                knowledge_base=kb, filename=name, content=text.encode(), actor=request.user
            )
        else:
            raise ValidationFailed("Choose a file or paste a document.")
    except DomainError as exc:
        return _kb_detail(request, kb, error=exc.message, status=exc.status_code)
    return _kb_detail(request, kb, added=added)
