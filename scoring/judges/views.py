"""The trained-judge registry pages (researchers of the study only; strangers 404, other roles 403):
list, train (a Celery job with a progress bar), detail with the CV figures, retire, share."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.access import get_study_for_researcher
from annotation.models import Question, Study
from concord.access import access_policy
from concord.errors import ValidationFailed
from concord.http import domain_errors, htmx_render, is_htmx
from scoring.judges import selectors, services
from scoring.judges.features import FEATURE_SETS
from scoring.judges.training import MODEL_TYPES, TASKS


def _list_page(request: HttpRequest, study: Study, *, error: str = "", posted: dict[str, Any] | None = None,
               status: int = 200) -> HttpResponse:
    return render(request, "scoring/judges/list.html", {
        "study": study,
        "judges": selectors.judges_for_study(study),
        "jobs": selectors.train_jobs_for_study(study)[:10],
        "questions": Question.objects.filter(study=study).order_by("key"),
        "tasks": TASKS, "model_types": MODEL_TYPES, "feature_sets": FEATURE_SETS,
        "error": error, "posted": posted or {},
    }, status=status)


@access_policy("researcher")
@require_GET
@domain_errors
def judge_list(request: HttpRequest, slug: str) -> HttpResponse:
    return _list_page(request, get_study_for_researcher(request.user, slug))


def _values(raw: str) -> list[str]:
    return [v.strip() for v in (raw or "").split(",") if v.strip()]


@access_policy("researcher")
@require_POST
@domain_errors
def judge_train(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    post = request.POST
    options = {"folds": post.get("folds") or 5, "model_types": post.getlist("model_types") or ["logistic"],
               "feature_sets": post.getlist("feature_sets") or list(FEATURE_SETS), "epochs": post.get("epochs") or 2}
    try:
        job = services.judge_train_job_start(
            study=study, question_key=post.get("question", ""), task=post.get("task", ""), name=post.get("name", ""),
            actor=request.user, positive=_values(post.get("positive", "")), exclude=_values(post.get("exclude", "")),
            options=options,
        )
    except ValidationFailed as exc:
        return _list_page(request, study, error=exc.message, posted=post.dict(), status=400)
    return redirect("scoring:judges:job", slug=study.slug, job_id=job.pk)


@access_policy("researcher")
@require_GET
@domain_errors
def judge_job(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    job = selectors.get_train_job_for_researcher(request.user, study, job_id)
    context = {"study": study, "job": job}
    if is_htmx(request):
        return htmx_render(request, "scoring/judges/_job.html", context)
    return render(request, "scoring/judges/job.html", context)


@access_policy("researcher")
@require_GET
@domain_errors
def judge_detail(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    judge = selectors.get_judge_for_researcher(request.user, study, judge_id)
    return render(request, "scoring/judges/detail.html", {
        "study": study, "judge": judge, "owned": judge.study_id == study.pk, "cv": judge.cv,
        "shared_with": list(judge.shared_with.order_by("slug")),
    })


@access_policy("researcher")
@require_POST
@domain_errors
def judge_retire(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    judge = selectors.get_judge_for_researcher(request.user, study, judge_id)
    if judge.study_id != study.pk:
        raise ValidationFailed("only the owning study retires a judge")
    services.judge_retire(judge=judge, actor=request.user)
    return redirect("scoring:judges:detail", slug=study.slug, judge_id=judge.pk)


@access_policy("researcher")
@require_POST
@domain_errors
def judge_share(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    study = get_study_for_researcher(request.user, slug)
    judge = selectors.get_judge_for_researcher(request.user, study, judge_id)
    if judge.study_id != study.pk:
        raise ValidationFailed("only the owning study shares a judge")
    services.judge_share(judge=judge, target_slug=request.POST.get("study", ""), actor=request.user)
    return redirect("scoring:judges:detail", slug=study.slug, judge_id=judge.pk)
