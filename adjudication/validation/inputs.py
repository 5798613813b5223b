"""The validation wizard's inputs: what the page's form and the API's body give, read as model values and
checked before anything is written.

* :func:`validation_inputs_parse` — the template, pool B and its target question (categorical), the target
  mode and positive option, the metric side (a score run of a metric that estimates the target, and/or pool
  A with its rater), the bootstrap size, seed and k; every refusal names the field (400), another study's
  run or pool is a 404.
* :func:`validation_checks_preview` — the independence and blinding checks a study with these inputs would
  record (:mod:`adjudication.validation.checks`), shown before it is created.
"""

from __future__ import annotations

from typing import Any

from adjudication.analysis.access import CATEGORICAL
from adjudication.analysis.loading import default_positive, run_estimates, run_estimates_question
from adjudication.models import ValidationTargetMode, ValidationTemplate
from adjudication.validation import checks as vc
from annotation.models import Pool, Study
from concord.errors import NotFound, ValidationFailed
from concord.params import parse_int
from scoring.models import ScoreRun

DEFAULT_N_BOOT = 1000
MAX_N_BOOT = 20000
DEFAULT_K = 5


def _int_param(value: Any, name: str, default: int, low: int, high: int) -> int:
    return parse_int(value, name=name, minimum=low, maximum=high, default=default)


def validation_parameters(*, n_boot: Any = None, seed: Any = None, k: Any = None) -> dict[str, int]:
    n = _int_param(n_boot, "n_boot", DEFAULT_N_BOOT, 0, MAX_N_BOOT)
    if 0 < n < 100:
        raise ValidationFailed("n_boot must be 0 (no bootstrap) or at least 100")
    return {"n_boot": n, "seed": _int_param(seed, "seed", 0, 0, 2**31 - 1), "k": _int_param(k, "k", DEFAULT_K, 1, 1000)}


def _run_in_study(study: Study, run_id: Any, what: str) -> ScoreRun | None:
    if run_id in (None, ""):
        return None
    run = ScoreRun.objects.filter(study=study, pk=_int_param(run_id, what, 0, 1, 2**62)).first()
    if run is None:
        raise NotFound(f"no such score run ({what}) in this study")
    return run


def _pool_in_study(study: Study, pool_id: Any, what: str) -> Pool | None:
    if pool_id in (None, ""):
        return None
    pool = Pool.objects.filter(study=study, pk=_int_param(pool_id, what, 0, 1, 2**62)).first()
    if pool is None:
        raise NotFound(f"no such pool ({what}) in this study")
    return pool


def validation_inputs_parse(*, study: Study, data: Any) -> dict[str, Any]:
    """The wizard's and the API's input as model values, refusing what cannot make a study."""
    template = (data.get("template") or "").strip()
    if template not in ValidationTemplate.values:
        raise ValidationFailed(f"template must be one of {', '.join(ValidationTemplate.values)}")
    target_pool = _pool_in_study(study, data.get("target_pool"), "target_pool")
    if target_pool is None:
        raise ValidationFailed("choose pool B (target_pool), whose labels are the target")
    key = (data.get("target_question") or "").strip()
    question = target_pool.questions.filter(key=key).first()
    if question is None:
        raise ValidationFailed(f"pool B ({target_pool.name}) answers no question {key!r}")
    if question.kind not in CATEGORICAL:
        raise ValidationFailed(f"the target must be a categorical question; {question.key!r} is {question.kind}")
    mode = (data.get("target_mode") or ValidationTargetMode.MAJORITY).strip()
    if mode not in ValidationTargetMode.values:
        raise ValidationFailed(f"target_mode must be one of {', '.join(ValidationTargetMode.values)}")
    positive = (data.get("positive") or "").strip() or default_positive(question)
    if positive not in question.option_values:
        raise ValidationFailed(f"positive must be one of {', '.join(question.option_values)}")
    metric_run = _run_in_study(study, data.get("metric_run"), "metric_run")
    compare_run = _run_in_study(study, data.get("compare_run"), "compare_run")
    # Templates that compare a run's values with the target question directly (ASTRID: CF and RF against
    # perceived faithfulness; ICAT: coverage against the physicians' entailment) accept only runs of metrics
    # that declare they estimate it. The others read a run for another part of their analysis.
    direct = (("metric_run", metric_run), ("compare_run", compare_run)) if template in ("astrid", "icat") else ()
    for role, run in direct:
        if run is not None and not run_estimates_question(run.metric, run.parameters, question.key):
            estimated = ", ".join(run_estimates(run.metric, run.parameters)) or "no human question"
            raise ValidationFailed(
                f"{role}: a {run.metric} run does not estimate {question.key!r}; it estimates {estimated}"
            )
    metric_pool = _pool_in_study(study, data.get("metric_pool"), "metric_pool")
    if metric_run is None and metric_pool is None:
        raise ValidationFailed("choose a metric side: a score run (metric_run) or pool A (metric_pool), or both")
    rater = (data.get("metric_rater") or "gold").strip()
    if (
        metric_pool is not None
        and rater not in ("gold", "majority")
        and not metric_pool.memberships.filter(pseudonym=rater).exists()
    ):
        raise ValidationFailed(f"metric_rater must be gold, majority or a pseudonym of pool A ({metric_pool.name})")
    name = (data.get("name") or "").strip() or f"{template} validation: {question.key} ({target_pool.name})"
    return {
        "name": name[:200],
        "template": template,
        "target_pool": target_pool,
        "target_question": question,
        "target_mode": mode,
        "positive": positive,
        "metric_run": metric_run,
        "compare_run": compare_run,
        "metric_pool": metric_pool,
        "metric_rater": rater,
        "parameters": validation_parameters(n_boot=data.get("n_boot"), seed=data.get("seed"), k=data.get("k")),
    }


def validation_checks_preview(*, inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks a study with these inputs would record (the wizard shows them before creating)."""
    p = inputs["parameters"]
    return vc.validation_checks_compute(
        metric_pool=inputs["metric_pool"],
        target_pool=inputs["target_pool"],
        target_question=inputs["target_question"],
        n_boot=p["n_boot"],
        seed=p["seed"],
    )
