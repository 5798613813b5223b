"""The writes of validation studies: creating one, running it, and the fixed-precision stopping rule of the
pools they target.

* :func:`validation_study_create` records a study with its independence and blinding checks
  (:mod:`adjudication.validation.checks`) and refuses one that fails a blocking check, unless the researcher
  explicitly runs it anyway: then ``not_independent`` is stamped on every output (:func:`stamp`).
* :func:`validation_study_run` checks again and computes the study's template
  (:mod:`adjudication.validation.templates`), replacing the previous result.
* :func:`pool_stop_rule_set`, :func:`pool_reopen` — a pool's fixed-precision rule, set by the researcher, and
  the explicit reopening of a pool it closed; :func:`pool_precision_check` — called on every submission by
  ``precision_on_submit``, the receiver of ``annotation.signals.assignment_submitted`` that adjudication/apps.py
  connects — closes the pool when every headline figure of the validation studies it is the target of has
  reached the rule's precision
  (:func:`adjudication.analysis.planning.pool_precision_status` decides; this module writes).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from adjudication.analysis.planning import parse_half_width, pool_precision_status
from adjudication.models import ValidationStatus, ValidationStudy
from adjudication.validation import checks as vc
from adjudication.validation.figures import TemplateContext
from adjudication.validation.inputs import DEFAULT_K, DEFAULT_N_BOOT, validation_checks_preview, validation_parameters
from adjudication.validation.templates import TEMPLATE_INFO, TEMPLATE_RUNNERS
from annotation.models import Pool, QuestionKind, Role, Study
from concord.access import require_object_role
from concord.errors import NotFound, ValidationFailed
from scoring.models import ScoreRun

NOT_INDEPENDENT = "NOT INDEPENDENT"


def _refusal(failures: list[dict[str, Any]]) -> str:
    return " ".join(f"{c['title']}: {c['detail']}" for c in failures)


def validation_study_create(
    *,
    study: Study,
    actor: AbstractBaseUser,
    inputs: dict[str, Any],
    run_anyway: bool = False,
    override_reason: str = "",
) -> ValidationStudy:
    """Record a validation study with its checks.

    Refused (ValidationFailed, nothing written, the checks in ``details``) when a blocking check fails,
    unless ``run_anyway`` — the researcher's explicit choice — in which case the study is marked
    ``not_independent`` and every output says so.
    """
    checks = validation_checks_preview(inputs=inputs)
    failures = vc.blocking_failures(checks)
    if failures and not run_anyway:
        raise ValidationFailed(
            f"refused: this study is not independent. {_refusal(failures)}", details={"checks": checks}
        )
    with transaction.atomic():
        return ValidationStudy.objects.create(
            study=study,
            created_by=actor,
            checks=checks,
            checks_passed=not failures,
            not_independent=bool(failures),
            override_reason=override_reason.strip() if failures else "",
            **inputs,
        )


def get_validation_study_for_researcher(user: AbstractBaseUser, pk: int) -> ValidationStudy:
    """The validation study if the user is a researcher of its study (anyone else 404, members included)."""
    vs = (
        ValidationStudy.objects.select_related(
            "study", "metric_run", "compare_run", "metric_pool", "target_pool", "target_question"
        )
        .filter(pk=pk)
        .first()
    )
    if vs is None:
        raise NotFound("no such validation study")
    require_object_role(user, vs.study_id, Role.RESEARCHER, what="validation study")
    return vs


# --- running ---------------------------------------------------------------------------------------


def validation_study_run(*, validation_study: ValidationStudy, actor: AbstractBaseUser) -> ValidationStudy:
    """Check again (labels and exposures may have changed since creation) and compute the template.

    A study created independent that now fails a blocking check is refused (nothing changes); one the
    researcher chose to run anyway runs, stamped. The result replaces the previous one.
    """
    vs = validation_study
    p = vs.parameters or validation_parameters()
    checks = vc.validation_checks_compute(
        metric_pool=vs.metric_pool,
        target_pool=vs.target_pool,
        target_question=vs.target_question,
        n_boot=p.get("n_boot", DEFAULT_N_BOOT),
        seed=p.get("seed", 0),
    )
    failures = vc.blocking_failures(checks)
    if failures and not vs.not_independent:
        raise ValidationFailed(
            f"refused: a check now fails. {_refusal(failures)} Create a new study and choose "
            "to run it anyway if you must.",
            details={"checks": checks},
        )
    try:
        results = validation_results(vs=vs, checks=checks)
    except Exception as exc:
        ValidationStudy.objects.filter(pk=vs.pk).update(
            status=ValidationStatus.FAILED, error=str(exc)[:2000], run_at=timezone.now()
        )
        raise
    ValidationStudy.objects.filter(pk=vs.pk).update(
        status=ValidationStatus.DONE, results=results, checks=checks, error="", run_at=timezone.now()
    )
    vs.refresh_from_db()
    return vs


def stamp(vs: ValidationStudy) -> str | None:
    if not vs.not_independent:
        return None
    failed = [c["title"] for c in vs.checks if c.get("blocking") and c.get("status") == vc.FAIL]
    why = f" Failed: {'; '.join(failed)}." if failed else ""
    reason = f" Researcher's reason: {vs.override_reason}" if vs.override_reason else ""
    return (
        f"{NOT_INDEPENDENT}: run at the researcher's explicit choice although the independence and blinding "
        f"checks failed; these figures are not an independent validation.{why}{reason}"
    )


def _describe_run(run: ScoreRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "id": run.pk,
        "metric": run.metric,
        "metric_version": run.metric_version,
        "backend": run.backend,
        "model_identity": run.model_identity,
        "parameters": run.parameters,
        "status": run.status,
    }


def validation_results(*, vs: ValidationStudy, checks: list[dict[str, Any]]) -> dict[str, Any]:
    p = {"n_boot": DEFAULT_N_BOOT, "seed": 0, "k": DEFAULT_K, **(vs.parameters or {})}
    question = vs.target_question
    ctx = TemplateContext(vs=vs, n_boot=int(p["n_boot"]), seed=int(p["seed"]), k=int(p["k"]))
    analyses = TEMPLATE_RUNNERS[vs.template](ctx)
    ceiling = next((c["data"] for c in checks if c["key"] == "human_ceiling"), None)
    return {
        "validation_study": {
            "id": vs.pk,
            "name": vs.name,
            "study": vs.study.slug,
            "template": vs.template,
            "template_title": TEMPLATE_INFO[vs.template]["title"],
        },
        "not_independent": vs.not_independent,
        "stamp": stamp(vs),
        "override_reason": vs.override_reason or None,
        "inputs": {
            "metric_run": _describe_run(vs.metric_run),
            "compare_run": _describe_run(vs.compare_run),
            "metric_pool": {"id": vs.metric_pool_id, "name": vs.metric_pool.name, "rater": vs.metric_rater}
            if vs.metric_pool
            else None,
            "target_pool": {"id": vs.target_pool_id, "name": vs.target_pool.name, "overlap": vs.target_pool.overlap},
            "target_question": {
                "key": question.key,
                "kind": question.kind,
                "scope": question.scope,
                "options": question.option_values,
            },
            "target_mode": vs.target_mode,
            "positive": vs.positive,
            "positive_rule": "at or after this option in the declared order"
            if question.kind == QuestionKind.ORDINAL
            else "equal to this option",
            "n_boot": ctx.n_boot,
            "seed": ctx.seed,
            "k": ctx.k,
        },
        "checks": checks,
        "human_ceiling": ceiling,
        "analyses": analyses,
        "computed_at": timezone.now().isoformat(),
    }


def validation_study_as_dict(vs: ValidationStudy) -> dict[str, Any]:
    """The study as the API and the JSON download give it; ``not_independent`` and ``stamp`` at the top."""
    return {
        "id": vs.pk,
        "name": vs.name,
        "study": vs.study.slug,
        "template": vs.template,
        "not_independent": vs.not_independent,
        "stamp": stamp(vs),
        "override_reason": vs.override_reason or None,
        "status": vs.status,
        "checks_passed": vs.checks_passed,
        "metric_run": vs.metric_run_id,
        "compare_run": vs.compare_run_id,
        "metric_pool": vs.metric_pool_id,
        "metric_rater": vs.metric_rater,
        "target_pool": vs.target_pool_id,
        "target_question": vs.target_question.key,
        "target_mode": vs.target_mode,
        "positive": vs.positive,
        "parameters": vs.parameters,
        "checks": (vs.results or {}).get("checks") or vs.checks,
        "results": vs.results,
        "error": vs.error or None,
        "created_at": vs.created_at.isoformat(),
        "run_at": vs.run_at.isoformat() if vs.run_at else None,
    }


# --- the pools' fixed-precision stopping rule ------------------------------------------------------


def pool_stop_rule_set(*, pool: Pool, half_width: Any) -> Pool:
    """Set (or clear, with an empty value) the pool's fixed-precision rule. Reopening a pool closed by the
    rule is a separate, explicit act (:func:`pool_reopen`); setting a rule never reopens it."""
    blank = half_width is None or (isinstance(half_width, str) and not half_width.strip())
    value = None if blank else parse_half_width(half_width)
    Pool.objects.filter(pk=pool.pk).update(stop_at_half_width=value)
    pool.refresh_from_db()
    return pool


def pool_reopen(*, pool: Pool) -> Pool:
    Pool.objects.filter(pk=pool.pk).update(closed_at=None, closed_reason="")
    pool.refresh_from_db()
    return pool


def pool_precision_check(*, pool_id: int, item_id: int) -> bool:
    """Close the pool when its fixed-precision rule is met (called inside the submitting transaction).

    Does nothing (one query) unless the pool has ``stop_at_half_width`` and is open. The close is one
    UPDATE of the pool row, so the audit trail (annotation/audit.py) records it with the reason."""
    pool = Pool.objects.filter(pk=pool_id, stop_at_half_width__isnull=False, closed_at__isnull=True).first()
    if pool is None:
        return False
    status = pool_precision_status(pool=pool)
    if not status["reached"]:
        return False
    reason = f"fixed-precision rule: every headline figure within ±{pool.stop_at_half_width:g} (95%): " + "; ".join(
        status["summary"]
    )
    with transaction.atomic():
        updated = Pool.objects.filter(pk=pool.pk, closed_at__isnull=True).update(
            closed_at=timezone.now(), closed_reason=reason[:2000]
        )
    return bool(updated)
