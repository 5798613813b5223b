"""Blinded, independent validation studies: the source papers' critics' tests, runnable end to end.

A validation study sets a **metric side** — a score run, and/or a measure derived from pool A's
labels — against a **target side**: a categorical question answered by pool B, taken as gold, as the
pool's majority, or annotator by annotator. ``validation_study_create`` records the independence and
blinding checks (adjudication.validation.checks) and refuses a study that fails a blocking one, unless
the researcher explicitly runs it anyway: then ``not_independent`` is stamped on every output.
``validation_study_run`` computes the study's template:

* **astrid** (ASTRID, arXiv 2501.08208, and its critics: CF and PF came from the same two annotators):
  automated CF (a ``cf`` run, any backend) against pool B's judgement (perceived faithfulness);
  human CF from pool A against the same target; CF against RF (an ``rf`` run), paired DeLong.
* **icat** (ICAT, arXiv 2501.03545; critics: a fixed checklist): coverage against the original aspect
  set (aspect-set version 1) and against the set expanded by accepted proposals (the current set),
  for ICAT (an ``icat`` run's per-aspect verdicts) and for pool B (and pool A when given); ICAT
  coverage against human coverage under both sets.
* **pubhealth** (PubHealthBench, arXiv 2607.06641; critics: one target chunk per question): P@1,
  Recall@k, MRR and nDCG@k under the dataset's single target and under pool B's multi-label
  relevance (the chunks it marked as supporting the answer); rubric faithfulness (a ``rubric`` run)
  against "the answer is supported" under each relevance.
* **plainqafact** (PlainQAFact): explanation-only AUC of the kind-aware metric (a ``plainqafact``
  run's explanation score, or its verdicts on elaboration sentences) against a source-only metric
  (the comparison run), paired DeLong.

Where an input is absent, the analysis says exactly which one and computes nothing: never a crash,
never a zero. Every figure carries n and, where one exists, a 95% interval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from adjudication import selectors
from adjudication.analysis.access import CATEGORICAL
from adjudication.analysis.loading import (
    binary_target,
    default_positive,
    human_target,
    ratings_load,
    run_estimates,
    run_estimates_question,
)
from adjudication.models import ValidationStatus, ValidationStudy, ValidationTargetMode, ValidationTemplate
from adjudication.stats import validity as va
from adjudication.stats.agreement import Estimate
from adjudication.stats.validation_stats import mean_ci, paired_difference
from adjudication.validation import checks as vc
from annotation import units
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Chunk,
    Item,
    Pool,
    Question,
    QuestionKind,
    Role,
    Study,
)
from concord.access import require_object_role
from concord.errors import NotFound, ValidationFailed
from concord.params import parse_int
from scoring.metrics.retrieval import MEASURES as RETRIEVAL_MEASURES
from scoring.metrics.retrieval import retrieval_measures
from scoring.models import RunStatus, Score, ScoreRun, ScoreState

DEFAULT_N_BOOT = 1000
MAX_N_BOOT = 20000
DEFAULT_K = 5
NOT_INDEPENDENT = "NOT INDEPENDENT"

TEMPLATE_INFO: dict[str, dict[str, Any]] = {
    ValidationTemplate.ASTRID: {
        "title": "ASTRID: conversational faithfulness against an independent, blinded judgement",
        "metric_run": ("cf",),
        "compare_run": ("rf",),
        "measure": "human_cf",
        "target_hint": "an item-level question of pool B, e.g. perceived_faithfulness",
    },
    ValidationTemplate.ICAT: {
        "title": "ICAT: coverage under the original and the expanded aspect set",
        "metric_run": ("icat",),
        "compare_run": (),
        "measure": "human_aspect_coverage",
        "target_hint": "an aspect-level question of pool B, e.g. aspect_covered or aspect_entailment",
    },
    ValidationTemplate.PUBHEALTH: {
        "title": "PubHealthBench: single-target against multi-label relevance",
        "metric_run": ("rubric",),
        "compare_run": (),
        "measure": None,
        "target_hint": "a chunk-level question of pool B, e.g. supports_answer",
    },
    ValidationTemplate.PLAINQAFACT: {
        "title": "PlainQAFact: explanation-only AUC, kind-aware against source-only",
        "metric_run": ("plainqafact",),
        "compare_run": None,
        "measure": None,
        "target_hint": "an item- or sentence-level question of pool B judging factuality",
    },
}

Unit = tuple[int, str]


# --- creation ------------------------------------------------------------------------------------


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


def validation_study_get_for_researcher(*, user: AbstractBaseUser, pk: int) -> ValidationStudy:
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
    ctx = _Context(vs=vs, n_boot=int(p["n_boot"]), seed=int(p["seed"]), k=int(p["k"]))
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


class _Context:
    """What every template reads: the study, pool B's targets (loaded once), the bootstrap settings."""

    def __init__(self, *, vs: ValidationStudy, n_boot: int, seed: int, k: int) -> None:
        self.vs = vs
        self.n_boot, self.seed, self.k = n_boot, seed, k
        self.question = vs.target_question
        self._targets: list[tuple[str, dict[Unit, float], dict[str, int]]] | None = None

    def targets(self) -> list[tuple[str, dict[Unit, float], dict[str, int]]]:
        """(label, scale position per unit, what was excluded) for each target pool B gives."""
        if self._targets is None:
            vs = self.vs
            ratings = ratings_load(pool=vs.target_pool, question=self.question)
            if vs.target_mode == ValidationTargetMode.PER_ANNOTATOR:
                modes = [(f"rater:{name}", f"pool B annotator {name}") for name in ratings.rater_names]
            elif vs.target_mode == ValidationTargetMode.GOLD:
                modes = [("gold", "pool B gold")]
            else:
                modes = [("majority", "pool B majority")]
            self._targets = []
            for mode, label in modes:
                values, excluded = human_target(
                    pool=vs.target_pool, question=self.question, target=mode, ratings=ratings
                )
                self._targets.append((label, values, {k: n for k, n in excluded.items() if n}))
        return self._targets

    def binary(self, positions: dict[Unit, float]) -> dict[Unit, float]:
        units = list(positions)
        arr = binary_target(self.question, np.array([positions[u] for u in units], dtype=float), self.vs.positive)
        return {u: float(v) for u, v in zip(units, arr, strict=True)}


# --- shared pieces ----------------------------------------------------------------------------------


def _analysis(key: str, title: str, *, target: str | None = None) -> dict[str, Any]:
    return {"key": key, "title": title, "target": target, "status": "ok", "missing": [], "figures": [], "notes": []}


def _missing(analysis: dict[str, Any], reasons: list[str]) -> dict[str, Any]:
    analysis["status"] = "missing"
    analysis["missing"] = reasons
    return analysis


def _figure(name: str, est: Estimate | dict[str, Any]) -> dict[str, Any]:
    return {"name": name, **(est.as_dict() if isinstance(est, Estimate) else est)}


def _a(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _run_missing(run: ScoreRun | None, allowed: tuple[str, ...] | None, role: str) -> list[str]:
    wanted = " or ".join(allowed) if allowed else ""
    if run is None:
        return [f"no {role}: choose a completed {wanted + ' ' if wanted else ''}score run of this study"]
    problems = []
    if allowed and run.metric not in allowed:
        problems.append(
            f"the {role} is run #{run.pk}, {_a(run.metric)} {run.metric} run; this analysis needs "
            f"{_a(wanted)} {wanted} run"
        )
    if run.status != RunStatus.DONE:
        problems.append(f"the {role} (run #{run.pk}, {run.metric}) is {run.status}, not done")
    return problems


def _scope_missing(question: Question, scopes: tuple[str, ...], what: str) -> list[str]:
    if question.scope in scopes:
        return []
    return [
        f"the target question {question.key!r} is about {question.scope} units; {what} needs "
        f"{' or '.join(scopes)} units"
    ]


def _target_missing(ctx: _Context) -> list[str]:
    if any(values for _, values, _ in ctx.targets()):
        return []
    return [
        f"pool B ({ctx.vs.target_pool.name}) has no {ctx.vs.target_mode} target on {ctx.question.key} yet "
        "(no submitted labels, or no gold)"
    ]


def run_values(
    run: ScoreRun, *, unit: str = units.ITEM, extract: Callable[[dict[str, Any]], Any] | None = None
) -> tuple[dict[Unit, float], int]:
    """A run's ok values per unit (``unit``: a kind of :mod:`annotation.units` — ``units.ITEM``, or every
    unit of that kind, e.g. ``units.ASPECT``), or a number taken from each score's details by ``extract``;
    and how many scores were not ok or had no such number."""
    rows = Score.objects.filter(run=run)
    rows = rows.filter(unit_key=units.ITEM) if unit == units.ITEM else rows.filter(unit_key__startswith=f"{unit}:")
    fields = ["item_id", "unit_key", "value", "state"] + (["details"] if extract else [])
    values: dict[Unit, float] = {}
    not_ok = 0
    for row in rows.values_list(*fields):
        item_id, key, value, state = row[:4]
        if extract is not None:
            value = extract(row[4] or {})
        if (
            state == ScoreState.OK
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and np.isfinite(value)
        ):
            values[(item_id, key)] = float(value)
        else:
            not_ok += 1
    return values, not_ok


def _validity_figures(
    analysis: dict[str, Any],
    *,
    name: str,
    scores: dict[Unit, float],
    target: dict[Unit, float],
    ctx: _Context,
    ordinal: dict[Unit, float] | None = None,
) -> None:
    """AUC (DeLong and bootstrap), Spearman and Pearson of ``scores`` against a 0/1 ``target``."""
    units = sorted(set(scores) & set(target))
    s = np.array([scores[u] for u in units], dtype=float)
    y = np.array([target[u] for u in units], dtype=float)
    rank_target = np.array([ordinal[u] for u in units], dtype=float) if ordinal is not None else y
    summary = va.validity_summary(s, y, ordinal_target=rank_target, n_boot=ctx.n_boot, seed=ctx.seed)
    auc = summary["auc"]
    analysis["figures"].append(_figure(f"{name}: ROC AUC", auc))
    if auc.get("ci95_bootstrap"):
        analysis["figures"].append(
            _figure(
                f"{name}: ROC AUC, bootstrap interval",
                {
                    "value": auc["value"],
                    "ci95": auc["ci95_bootstrap"],
                    "n_units": auc["n_units"],
                    "n_excluded_units": auc["n_excluded_units"],
                    "ci_method": f"percentile bootstrap, stratified, {ctx.n_boot} resamples, seed {ctx.seed}",
                },
            )
        )
    analysis["figures"].append(_figure(f"{name}: Spearman ρ", summary["spearman"]))
    analysis["figures"].append(_figure(f"{name}: Pearson r", summary["pearson"]))
    analysis["notes"].append(
        f"{name}: {summary['n']} units with both a value and a target "
        f"({summary['n_pos']} positive, {summary['n_neg']} negative; {len(scores)} with a value, "
        f"{len(target)} with a target)."
    )


def _paired_figures(
    analysis: dict[str, Any],
    *,
    names: tuple[str, str],
    a: dict[Unit, float],
    b: dict[Unit, float],
    target: dict[Unit, float],
) -> None:
    """Both AUCs and the paired DeLong difference on the units both metrics scored and pool B judged."""
    units = sorted(set(a) & set(b) & set(target))
    sa = np.array([a[u] for u in units], dtype=float)
    sb = np.array([b[u] for u in units], dtype=float)
    y = np.array([target[u] for u in units], dtype=float)
    analysis["figures"].append(_figure(f"{names[0]}: ROC AUC (paired units)", va.roc_auc(sa, y)))
    analysis["figures"].append(_figure(f"{names[1]}: ROC AUC (paired units)", va.roc_auc(sb, y)))
    paired = va.delong_paired(sa, sb, y)
    analysis["figures"].append(_figure(f"{names[0]} − {names[1]}: AUC difference (paired DeLong)", paired))
    if paired.defined:
        analysis["notes"].append(
            f"Paired DeLong test: z = {paired.extra['z']:.3f}, two-sided p = "
            f"{paired.extra['p_value']:.4g}, on {len(units)} units."
        )
    else:
        analysis["notes"].append(f"Paired DeLong test on {len(units)} units: {paired.reason}.")


def _measure_values(pool: Pool, measure: str, rater: str, study: Study) -> tuple[dict[Unit, float], dict[str, str]]:
    per_item = selectors.human_measure_values(pool_id=pool.pk, measure=measure, rater=rater)
    ids = dict(Item.objects.filter(study=study, external_id__in=per_item.values).values_list("external_id", "pk"))
    return {(ids[e], units.ITEM): v for e, v in per_item.values.items() if e in ids}, per_item.undefined


# --- ASTRID -------------------------------------------------------------------------------------------


def run_astrid(ctx: _Context) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = _scope_missing(ctx.question, ("item",), "CF (one value per answer)")
    target_missing = _target_missing(ctx)
    cf_missing = _run_missing(vs.metric_run, ("cf",), "metric run (automated CF)")
    rf_missing = _run_missing(vs.compare_run, ("rf",), "comparison run (RF)")
    cf = run_values(vs.metric_run)[0] if not cf_missing else {}
    rf = run_values(vs.compare_run)[0] if not rf_missing else {}
    human_cf: dict[Unit, float] = {}
    human_missing: list[str] = []
    if vs.metric_pool is None:
        human_missing = [
            "no pool A: choose the pool whose sentence labels (information_bearing, grounded) give human CF"
        ]
    else:
        try:
            human_cf, undefined = _measure_values(vs.metric_pool, "human_cf", vs.metric_rater, vs.study)
        except NotFound as exc:
            human_missing = [f"pool A ({vs.metric_pool.name}): {exc.message}"]
        else:
            if not human_cf:
                human_missing = [
                    f"pool A ({vs.metric_pool.name}) gives no human CF from {vs.metric_rater} yet "
                    f"({len(undefined)} items undefined)"
                ]
    targets = ctx.targets() if not scope_missing else []
    for label, positions, excluded in targets or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        ordinal = positions if ctx.question.kind == QuestionKind.ORDINAL else None
        a = _analysis("automated_cf", f"Automated CF against {ctx.question.key}", target=label)
        missing = scope_missing + target_missing + cf_missing
        if missing:
            out.append(_missing(a, missing))
        else:
            _validity_figures(
                a,
                name=f"CF (run #{vs.metric_run.pk}, {vs.metric_run.backend})",
                scores=cf,
                target=y,
                ctx=ctx,
                ordinal=ordinal,
            )
            out.append(a)
        b = _analysis("human_cf", f"Human CF from pool A against {ctx.question.key} from pool B", target=label)
        missing = scope_missing + target_missing + human_missing
        if missing:
            out.append(_missing(b, missing))
        else:
            _validity_figures(
                b,
                name=f"human CF ({vs.metric_pool.name}, {vs.metric_rater})",
                scores=human_cf,
                target=y,
                ctx=ctx,
                ordinal=ordinal,
            )
            out.append(b)
        c = _analysis("cf_vs_rf", f"CF against RF on {ctx.question.key}, paired (DeLong)", target=label)
        missing = scope_missing + target_missing + cf_missing + rf_missing
        if missing:
            out.append(_missing(c, missing))
        else:
            _paired_figures(
                c, names=(f"CF (run #{vs.metric_run.pk})", f"RF (run #{vs.compare_run.pk})"), a=cf, b=rf, target=y
            )
            out.append(c)
        for analysis in out[-3:]:
            if excluded and analysis["status"] == "ok":
                analysis["notes"].append(f"Left out of the target: {excluded}.")
    return out


# --- ICAT ---------------------------------------------------------------------------------------------


def aspect_sets(study: Study) -> tuple[dict[int, list[str]], dict[int, list[str]], dict[str, int]]:
    """(original set per item, expanded set per item, counts). The original set is the aspect set as
    it stood at version 1; the expanded set is the current accepted set, proposals included."""
    original: dict[int, list[str]] = defaultdict(list)
    expanded: dict[int, list[str]] = defaultdict(list)
    for item_id, pk in Aspect.objects.filter(item__study=study).in_version(1).values_list("item_id", "pk"):
        original[item_id].append(units.aspect(pk))
    current = Aspect.objects.filter(item__study=study, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    for item_id, pk in current.values_list("item_id", "pk"):
        expanded[item_id].append(units.aspect(pk))
    counts = {
        "original_aspects": sum(len(v) for v in original.values()),
        "expanded_aspects": sum(len(v) for v in expanded.values()),
        "accepted_proposals": current.filter(origin=AspectOrigin.PROPOSED).count(),
        "items_changed": sum(
            1 for i in set(original) | set(expanded) if set(original.get(i, ())) != set(expanded.get(i, ()))
        ),
    }
    return original, expanded, counts


def coverage_per_item(sets: dict[int, list[str]], judged: dict[Unit, float]) -> tuple[dict[Unit, float], int]:
    """Share of an item's aspects judged covered (1.0 in ``judged``); an item with an aspect that has
    no judgement is left out (a partial count would be biased) and counted."""
    out: dict[Unit, float] = {}
    partial = 0
    for item_id, keys in sets.items():
        if not keys:
            continue
        got = [judged.get((item_id, key)) for key in keys]
        if any(v is None for v in got):
            if any(v is not None for v in got):
                partial += 1
            continue
        out[(item_id, units.ITEM)] = sum(got) / len(got)
    return out, partial


def _pool_a_aspect_judgements(ctx: _Context) -> tuple[dict[Unit, float], list[str]]:
    vs = ctx.vs
    if vs.metric_pool is None:
        return {}, ["no pool A: choose the pool whose aspect labels give a second human coverage"]
    keys = set(vs.metric_pool.questions.values_list("key", flat=True))
    key = next((k for k in selectors.ASPECT_QUESTIONS if k in keys), None)
    if key is None:
        return {}, [f"pool A ({vs.metric_pool.name}) answers none of {', '.join(selectors.ASPECT_QUESTIONS)}"]
    question = vs.metric_pool.questions.get(key=key)
    ratings = ratings_load(pool=vs.metric_pool, question=question)
    mode = vs.metric_rater if vs.metric_rater in ("gold", "majority") else f"rater:{vs.metric_rater}"
    try:
        positions, _ = human_target(pool=vs.metric_pool, question=question, target=mode, ratings=ratings)
    except (NotFound, ValidationFailed) as exc:
        return {}, [f"pool A ({vs.metric_pool.name}): {exc.message}"]
    if not positions:
        return {}, [f"pool A ({vs.metric_pool.name}) has no {vs.metric_rater} labels on {key} yet"]
    units = list(positions)
    covered = binary_target(
        question, np.array([positions[u] for u in units], dtype=float), selectors.ASPECT_QUESTIONS[key][0]
    )
    return {u: float(c) for u, c in zip(units, covered, strict=True)}, []


def run_icat(ctx: _Context) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = _scope_missing(ctx.question, ("aspect",), "aspect coverage")
    target_missing = _target_missing(ctx) if not scope_missing else []
    run_missing = _run_missing(vs.metric_run, ("icat",), "metric run (ICAT)")
    original, expanded, counts = aspect_sets(vs.study)
    set_note = (
        f"Original set: {counts['original_aspects']} aspects (version 1); expanded set: "
        f"{counts['expanded_aspects']} aspects, {counts['accepted_proposals']} of them accepted proposals "
        f"({counts['items_changed']} items changed)."
    )
    if not counts["accepted_proposals"] and not counts["items_changed"]:
        set_note += " No proposal has been accepted yet, so the two sets are the same."
    icat_aspects = run_values(vs.metric_run, unit=units.ASPECT)[0] if not run_missing else {}
    icat_cov = {
        name: coverage_per_item(sets, icat_aspects) for name, sets in (("original", original), ("expanded", expanded))
    }
    pool_a, pool_a_missing = _pool_a_aspect_judgements(ctx) if not scope_missing else ({}, [])
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        human_cov = {
            name: coverage_per_item(sets, y) for name, sets in (("original", original), ("expanded", expanded))
        }
        a = _analysis("coverage_by_aspect_set", "Coverage under the original and the expanded aspect set", target=label)
        a["notes"].append(set_note)
        if scope_missing or target_missing:
            out.append(_missing(a, scope_missing + target_missing))
        else:
            _coverage_figures(
                a,
                "human coverage (pool B)",
                human_cov,
                unjudged="an aspect pool B did not judge (accepted after it labelled the item?)",
            )
            if run_missing:
                a["notes"].append("ICAT coverage not computed: " + "; ".join(run_missing) + ".")
            else:
                _coverage_figures(
                    a,
                    f"ICAT coverage (run #{vs.metric_run.pk})",
                    icat_cov,
                    unjudged="an aspect the run did not score (accepted after the run, or aspects=must_have)",
                )
            out.append(a)
        b = _analysis("icat_vs_human", "ICAT coverage against human coverage, under both aspect sets", target=label)
        missing = scope_missing + target_missing + run_missing
        if missing:
            out.append(_missing(b, missing))
        else:
            for name, sets in (("original", original), ("expanded", expanded)):
                _agreement_figures(
                    b, f"ICAT vs pool B, {name} set", icat_cov[name][0], human_cov[name][0], icat_aspects, y, sets, ctx
                )
            out.append(b)
        c = _analysis("pool_a_vs_pool_b", "Pool A's coverage against pool B's, under both aspect sets", target=label)
        missing = scope_missing + target_missing + pool_a_missing
        if missing:
            out.append(_missing(c, missing))
        else:
            for name, sets in (("original", original), ("expanded", expanded)):
                a_cov = coverage_per_item(sets, pool_a)[0]
                _agreement_figures(c, f"pool A vs pool B, {name} set", a_cov, human_cov[name][0], pool_a, y, sets, ctx)
            out.append(c)
        if excluded:
            for analysis in out[-3:]:
                if analysis["status"] == "ok":
                    analysis["notes"].append(f"Left out of the target: {excluded}.")
    return out


def _coverage_figures(
    analysis: dict[str, Any],
    name: str,
    cov: dict[str, tuple[dict[Unit, float], int]],
    *,
    unjudged: str = "an aspect nobody judged",
) -> None:
    (orig, orig_partial), (exp, exp_partial) = cov["original"], cov["expanded"]
    analysis["figures"].append(
        _figure(
            f"{name}, original set: mean per item", mean_ci(list(orig.values()), n_excluded=orig_partial, what="item")
        )
    )
    analysis["figures"].append(
        _figure(
            f"{name}, expanded set: mean per item", mean_ci(list(exp.values()), n_excluded=exp_partial, what="item")
        )
    )
    both = sorted(set(orig) & set(exp))
    analysis["figures"].append(
        _figure(
            f"{name}: expanded − original, paired per item",
            paired_difference([exp[u] for u in both], [orig[u] for u in both]),
        )
    )
    if orig_partial or exp_partial:
        analysis["notes"].append(
            f"{name}: items with {unjudged} are left out (original set {orig_partial}, expanded set {exp_partial})."
        )


def _agreement_figures(
    analysis: dict[str, Any],
    name: str,
    metric_cov: dict[Unit, float],
    human_cov: dict[Unit, float],
    metric_aspects: dict[Unit, float],
    human_aspects: dict[Unit, float],
    sets: dict[int, list[str]],
    ctx: _Context,
) -> None:
    items = sorted(set(metric_cov) & set(human_cov))
    x = np.array([metric_cov[u] for u in items], dtype=float)
    h = np.array([human_cov[u] for u in items], dtype=float)
    analysis["figures"].append(_figure(f"{name}: Spearman ρ of item coverage", va.spearman(x, h)))
    analysis["figures"].append(_figure(f"{name}: Pearson r of item coverage", va.pearson(x, h)))
    in_set = {(item_id, key) for item_id, keys in sets.items() for key in keys}
    units = sorted(in_set & set(metric_aspects) & set(human_aspects))
    analysis["figures"].append(
        _figure(
            f"{name}: ROC AUC of the per-aspect verdicts",
            va.roc_auc(
                np.array([metric_aspects[u] for u in units], dtype=float),
                np.array([human_aspects[u] for u in units], dtype=float),
            ),
        )
    )


# --- PubHealthBench -----------------------------------------------------------------------------------


def _chunks(study: Study) -> dict[int, list[tuple[int, bool]]]:
    out: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for item_id, rank, target in (
        Chunk.objects.filter(item__study=study)
        .order_by("item_id", "rank")
        .values_list("item_id", "rank", "is_labelled_target")
    ):
        out[item_id].append((rank, target))
    return out


def relevance_sets(chunks: dict[int, list[tuple[int, bool]]], judged: dict[Unit, float]) -> dict[str, Any]:
    """Per item: the single target set, and pool B's multi-label set (only where every chunk was judged)."""
    single: dict[int, set[int]] = {}
    multi: dict[int, set[int]] = {}
    not_judged = 0
    for item_id, rows in chunks.items():
        single[item_id] = {rank for rank, target in rows if target}
        votes = [judged.get((item_id, units.chunk(rank))) for rank, _ in rows]
        if any(v is None for v in votes):
            not_judged += any(v is not None for v in votes)
            continue
        multi[item_id] = {rank for (rank, _), v in zip(rows, votes, strict=True) if v == 1.0}
    return {"single": single, "multi": multi, "not_all_judged": not_judged}


def run_pubhealth(ctx: _Context) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = _scope_missing(ctx.question, ("chunk",), "multi-label relevance")
    target_missing = _target_missing(ctx) if not scope_missing else []
    chunks = _chunks(vs.study)
    no_chunks = [] if chunks else ["the study's items have no retrieved chunks"]
    no_targets = (
        []
        if any(t for rows in chunks.values() for _, t in rows)
        else [
            "no chunk of the study is labelled as the target (is_labelled_target): there is no single-target relevance"
        ]
    )
    run_missing = _run_missing(vs.metric_run, ("rubric",), "metric run (judge rubric)")
    faithfulness = (
        run_values(vs.metric_run, extract=lambda d: (d.get("ratings") or {}).get("faithfulness"))[0]
        if not run_missing
        else {}
    )
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        sets = relevance_sets(chunks, y)
        a = _analysis(
            "retrieval", f"Retrieval quality (k = {ctx.k}) under single-target and multi-label relevance", target=label
        )
        missing = scope_missing + no_chunks + no_targets + target_missing
        if missing:
            out.append(_missing(a, missing))
        else:
            _retrieval_figures(a, chunks, sets, ctx.k)
            if excluded:
                a["notes"].append(f"Left out of the target: {excluded}.")
            out.append(a)
        b = _analysis("rubric_faithfulness", "Rubric faithfulness against support under each relevance", target=label)
        missing = scope_missing + no_chunks + target_missing + run_missing
        if missing:
            out.append(_missing(b, missing))
        else:
            supported_single = {
                (i, units.ITEM): float(any(y[(i, units.chunk(r))] == 1.0 for r in s))
                for i, s in sets["single"].items()
                if s and all((i, units.chunk(r)) in y for r in s)
            }
            supported_multi = {(i, units.ITEM): float(bool(s)) for i, s in sets["multi"].items()}
            b["notes"].append(
                "Single-target: the answer counts as supported when pool B marked its labelled target "
                "chunk as supporting it. Multi-label: when pool B marked any retrieved chunk."
            )
            if no_targets:
                b["notes"].append("Single-target figures undefined: " + no_targets[0] + ".")
            _validity_figures(
                b,
                name="rubric faithfulness vs single-target support",
                scores=faithfulness,
                target=supported_single,
                ctx=ctx,
            )
            _validity_figures(
                b,
                name="rubric faithfulness vs multi-label support",
                scores=faithfulness,
                target=supported_multi,
                ctx=ctx,
            )
            out.append(b)
    return out


def _retrieval_figures(
    analysis: dict[str, Any], chunks: dict[int, list[tuple[int, bool]]], sets: dict[str, Any], k: int
) -> None:
    per: dict[str, dict[int, dict[str, float]]] = {"single": {}, "multi": {}}
    empty = {"single": 0, "multi": 0}
    for name in ("single", "multi"):
        for item_id, relevant in sets[name].items():
            if not relevant:
                empty[name] += 1
                continue
            ranking = [rank for rank, _ in chunks[item_id]]
            per[name][item_id] = retrieval_measures(ranking, relevant, k)
    both = sorted(set(per["single"]) & set(per["multi"]))
    for measure in RETRIEVAL_MEASURES:
        analysis["figures"].append(
            _figure(
                f"{measure}, single target: mean",
                mean_ci([m[measure] for m in per["single"].values()], n_excluded=empty["single"], what="item"),
            )
        )
        analysis["figures"].append(
            _figure(
                f"{measure}, multi-label (pool B): mean",
                mean_ci([m[measure] for m in per["multi"].values()], n_excluded=empty["multi"], what="item"),
            )
        )
        analysis["figures"].append(
            _figure(
                f"{measure}: multi-label − single target, paired",
                paired_difference([per["multi"][i][measure] for i in both], [per["single"][i][measure] for i in both]),
            )
        )
    analysis["notes"].append(
        f"Items left out: {empty['single']} with no labelled target chunk, {empty['multi']} where pool B marked no "
        f"chunk as supporting, {sets['not_all_judged']} where pool B judged only some chunks. Relevant chunks are "
        "those among the retrieved ones, so Recall@k with k ≥ the number of chunks is 1."
    )


# --- PlainQAFact -------------------------------------------------------------------------------------


def _explanation_score(details: dict[str, Any]) -> Any:
    return details.get("explanation_score")


def run_plainqafact(ctx: _Context) -> list[dict[str, Any]]:
    vs = ctx.vs
    out = []
    scope_missing = _scope_missing(ctx.question, ("item", "sentence"), "explanation-only AUC")
    target_missing = _target_missing(ctx) if not scope_missing else []
    run_missing = _run_missing(vs.metric_run, ("plainqafact",), "metric run (kind-aware PlainQAFact)")
    compare_missing = _run_missing(vs.compare_run, None, "comparison run (a source-only metric)")
    notes = []
    a_vals: dict[Unit, float] = {}
    b_vals: dict[Unit, float] = {}
    sentence = ctx.question.scope == "sentence"
    if not run_missing:
        if (vs.metric_run.parameters or {}).get("knowledge") == "none":
            notes.append(
                f"Run #{vs.metric_run.pk} verifies explanations against the source only (knowledge=none): "
                "it is not kind-aware beyond the source."
            )
        if sentence:
            elaborations = {
                (i, k)
                for i, k, d in Score.objects.filter(
                    run=vs.metric_run, unit_key__startswith=f"{units.ANSWER_SENTENCE}:"
                ).values_list("item_id", "unit_key", "details")
                if (d or {}).get("kind") == "elaboration"
            }
            a_vals = {
                u: v for u, v in run_values(vs.metric_run, unit=units.ANSWER_SENTENCE)[0].items() if u in elaborations
            }
        else:
            a_vals = run_values(vs.metric_run, extract=_explanation_score)[0]
        if not a_vals:
            run_missing = [f"run #{vs.metric_run.pk} has no explanation (elaboration) score on any item"]
    if not compare_missing:
        if vs.compare_run.metric == "plainqafact" and (vs.compare_run.parameters or {}).get("knowledge") != "none":
            notes.append(f"The comparison run #{vs.compare_run.pk} uses a knowledge base: it is not source-only.")
        if sentence:
            b_vals = run_values(vs.compare_run, unit=units.ANSWER_SENTENCE)[0]
        elif vs.compare_run.metric == "plainqafact":
            b_vals = run_values(vs.compare_run, extract=_explanation_score)[0]
        else:
            b_vals = run_values(vs.compare_run)[0]
    for label, positions, excluded in (ctx.targets() if not scope_missing else []) or [(None, {}, {})]:
        y = ctx.binary(positions) if positions else {}
        a = _analysis("explanation_only_auc", "Explanation-only AUC: kind-aware against source-only", target=label)
        a["notes"] += notes
        missing = scope_missing + target_missing + run_missing + compare_missing
        if missing:
            out.append(_missing(a, missing))
            continue
        what = (
            "elaboration sentences (as the kind-aware run classified them)"
            if sentence
            else "items, by the explanation score (supported elaborations / elaborations)"
        )
        a["notes"].append(f"Units: {what}.")
        _paired_figures(
            a,
            names=(f"kind-aware (run #{vs.metric_run.pk})", f"source-only (run #{vs.compare_run.pk})"),
            a=a_vals,
            b={u: v for u, v in b_vals.items() if u in a_vals},
            target=y,
        )
        if excluded:
            a["notes"].append(f"Left out of the target: {excluded}.")
        out.append(a)
    return out


TEMPLATE_RUNNERS: dict[str, Callable[[_Context], list[dict[str, Any]]]] = {
    ValidationTemplate.ASTRID: run_astrid,
    ValidationTemplate.ICAT: run_icat,
    ValidationTemplate.PUBHEALTH: run_pubhealth,
    ValidationTemplate.PLAINQAFACT: run_plainqafact,
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
