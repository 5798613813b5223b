"""Prediction-powered estimates of a mean (a share, for 0/1 labels) with a valid interval.

Pure: numbers in, numbers out (numpy and scipy only; no Django, no app).

The setting: a metric (or a judge) gives a prediction ``f(X)`` for every item of a population; clinicians
give the label ``Y`` for a sample of the items. The mean of the metric alone is biased by however far the
metric is from the clinicians; the mean of the labels alone is unbiased but wide. Prediction-powered
inference (PPI) uses the metric on every item and corrects its bias with the labelled sample:

    θ̂_λ = λ·mean(f over the unlabelled items) + mean(Y − λ·f over the labelled items)

is unbiased for every λ and every metric, however poor, as long as the labelled items are a random sample
of the same population (or are drawn with known inclusion probabilities: :func:`active_mean`). Its
interval is θ̂ ± z_{1−α/2}·√(λ²·Var(f_unlabelled)/N + Var(Y − λf)/n), a central-limit (normal) interval.

* :func:`classical` — the labelled items alone (λ = 0): mean ± z·sd/√n.
* :func:`ppi` — plain PPI, λ = 1 (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered
  inference", Science 382:669–674, 2023).
* :func:`ppipp` — PPI++ with power tuning, the default (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
  prediction-powered inference", arXiv:2311.01453, 2023): λ̂ = Cov(Y, f) / ((1 + n/N)·Var(f)), clipped to
  [0, 1], so the interval is never wider than the classical one by more than the estimation noise of λ̂
  and, when the metric is useless, falls back to the classical interval.
* :func:`active_mean` — inverse-probability-weighted PPI for items drawn independently with known
  inclusion probabilities π_i (Zrnic & Candès, "Active statistical inference", ICML 2024):
  θ̂ = (1/M)·Σ_i [λ·f_i + (Y_i − λ·f_i)·ξ_i/π_i] over all M items (ξ_i = 1 when item i was labelled).
* :func:`paired_difference` — two systems (or two versions of one) scored and labelled on the same items:
  PPI++ on the per-item differences Y_a − Y_b with predictions f_a − f_b, so the interval accounts for the
  pairing.
* :func:`cross_ppi_mean` — cross-prediction-powered inference for a judge trained on the labelled items
  themselves (Zrnic & Candès, "Cross-prediction-powered inference", PNAS 121(15):e2322083121, 2024): K-fold
  predictions on the labelled items (each from the model trained without that item's fold), the K models'
  average on the unlabelled items; never in-sample predictions.
* :func:`effective_labels` — how many labels the classical interval would need to be as narrow (the
  "effective sample size" of Boyeau, Angelopoulos, Yosef, Malik & Jordan, "AutoEval done right: using
  synthetic data for model evaluation", arXiv:2403.07008, 2024).
* :func:`labels_for_half_width` — planning: labels needed for a target half-width, with and without the
  metric, from pilot data.

The formulas follow the reference implementation ``ppi-python`` 0.2.3 (``ppi_py.ppi_mean_ci``,
``ppi_py.crossppi_mean_ci``, ``ppi_py.classical_mean_ci``): normal quantiles, variances with divisor n
(``np.std``), and λ̂ from ``ppi_py.ppi._calc_lam_glm`` (the covariance with divisor n, the variance of the
predictions over labelled and unlabelled items together with divisor n + N − 1). The tests hold them to
``ppi-python``'s values.

The target is the mean of the population the items are a sample of. For a finite population (every scored
answer of a study) with a simple random sample labelled, the interval is slightly conservative: it ignores
the finite-population correction.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

Vector = npt.NDArray[np.float64]

DEFAULT_ALPHA = 0.05
MIN_LABELS = 2  # a variance needs two values
MIN_FOLDS = 2

CLASSICAL = "classical"
PPI = "ppi"
PPIPP = "ppi++"
ACTIVE = "active ppi++"
ACTIVE_PPI = "active ppi"
ACTIVE_CLASSICAL = "active classical"
PAIRED = "paired ppi++"
CROSS_PPI = "cross-ppi"

REFERENCES = {
    CLASSICAL: "central-limit interval of the labelled mean",
    PPI: "Angelopoulos et al., Science 2023",
    PPIPP: "Angelopoulos, Duchi & Zrnic, PPI++, arXiv:2311.01453 (2023)",
    ACTIVE: "Zrnic & Candès, Active statistical inference, ICML 2024",
    ACTIVE_PPI: "Zrnic & Candès, Active statistical inference, ICML 2024 (λ = 1)",
    ACTIVE_CLASSICAL: "inverse-probability-weighted labelled mean (Zrnic & Candès 2024 with λ = 0)",
    PAIRED: "PPI++ on paired differences (Angelopoulos, Duchi & Zrnic 2023)",
    CROSS_PPI: "Zrnic & Candès, Cross-prediction-powered inference, PNAS 2024",
}


class PPIError(ValueError):
    """Input that no estimate can be made from; the message says which input and why."""


@dataclass(frozen=True)
class Estimate:
    """A mean with its two-sided ``1 − alpha`` interval ``[lower, upper]``.

    ``se`` is the standard error behind the interval (half-width = z_{1−α/2}·se). ``n_labelled`` items
    carry a label, ``n_unlabelled`` only a prediction. ``effective_labels`` is how many labels the
    classical interval would need to be as narrow (equal to ``n_labelled`` for the classical estimate;
    ``inf`` when the interval has no width). ``lam`` is the power-tuning weight of the predictions (0 for
    the classical estimate, 1 for plain PPI). ``notes`` say where the interval deserves less trust.
    """

    method: str
    point: float
    lower: float
    upper: float
    alpha: float
    se: float
    n_labelled: int
    n_unlabelled: int
    effective_labels: float
    lam: float
    reference: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def half_width(self) -> float:
        return (self.upper - self.lower) / 2

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        out["half_width"] = self.half_width
        if math.isinf(self.effective_labels):
            out["effective_labels"] = None
        return out


@dataclass(frozen=True)
class LabelPlan:
    """Labels (in all, counting those already there) for a ``1 − alpha`` interval of ``half_width``.

    ``with_metric`` is for PPI++ with the metric on the rest of the population, ``without_metric`` for the
    classical interval; ``None`` when the target cannot be reached within the population (then the
    ``notes`` say so). ``*_more`` are the labels still to collect.
    """

    half_width: float
    alpha: float
    n_labelled: int
    population: int
    with_metric: int | None
    without_metric: int | None
    with_metric_more: int | None
    without_metric_more: int | None
    lam: float
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


# --- checks --------------------------------------------------------------------------------------------


def _vector(values: npt.ArrayLike, name: str, *, at_least: int = 1) -> Vector:
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise PPIError(f"{name} must be numbers") from None
    if x.ndim != 1:
        raise PPIError(f"{name} must be a one-dimensional list of numbers (got {x.ndim} dimensions)")
    if x.size == 0:
        raise PPIError(f"{name} is empty")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise PPIError(f"{name} has a missing (NaN) or infinite value at position {int(bad[0])}")
    if x.size < at_least:
        raise PPIError(f"{name} has {x.size} value(s); at least {at_least} are needed for an interval")
    return x


def _labelled(y: npt.ArrayLike, yhat: npt.ArrayLike, *, labels: str = "labels") -> tuple[Vector, Vector]:
    y_ = _vector(y, labels, at_least=MIN_LABELS)
    f = _vector(yhat, f"predictions on the {labels}")
    if f.size != y_.size:
        raise PPIError(f"{labels} and their predictions differ in length ({y_.size} labels, {f.size} predictions)")
    return y_, f


def _z(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < alpha < 1.0:
        raise PPIError(f"alpha must be a number strictly between 0 and 1 (got {alpha!r})")
    return float(stats.norm.ppf(1.0 - alpha / 2.0))


def _var0(x: Vector) -> float:
    """Variance with divisor n, as ``np.std`` in ppi-python."""
    return float(np.var(x))


def _notes(y: Vector) -> tuple[str, ...]:
    if np.all(y == y[0]):
        return (
            "every label is the same: the central-limit interval of the labels has no width and is not to be "
            "trusted; label more items",
        )
    return ()


def effective_labels(label_variance: float, se: float) -> float:
    """Labels the classical interval would need to have standard error ``se``: Var(Y) / se².

    For the classical estimate itself this is n (its se² is Var(Y)/n). A PPI estimate with
    ``effective_labels`` of 2n is worth as much as doubling the labels (Boyeau et al. 2024, "AutoEval done
    right", the effective sample size; ppi-python's ``ppi_power`` calls it ``effective_n``). ``inf`` when
    ``se`` is 0.
    """
    if not math.isfinite(label_variance) or label_variance < 0:
        raise PPIError(f"the label variance must be a finite number ≥ 0 (got {label_variance!r})")
    if not math.isfinite(se) or se < 0:
        raise PPIError(f"the standard error must be a finite number ≥ 0 (got {se!r})")
    if se == 0.0:
        return math.inf
    return label_variance / se**2


def _estimate(
    method: str,
    point: float,
    se: float,
    *,
    alpha: float,
    z: float,
    n: int,
    n_unlabelled: int,
    label_variance: float,
    lam: float,
    notes: tuple[str, ...] = (),
) -> Estimate:
    return Estimate(
        method=method,
        point=point,
        lower=point - z * se,
        upper=point + z * se,
        alpha=alpha,
        se=se,
        n_labelled=n,
        n_unlabelled=n_unlabelled,
        effective_labels=effective_labels(label_variance, se),
        lam=lam,
        reference=REFERENCES[method],
        notes=notes,
    )


# --- estimators ----------------------------------------------------------------------------------------


def classical(y: npt.ArrayLike, *, alpha: float = DEFAULT_ALPHA) -> Estimate:
    """The labelled items alone: mean ± z_{1−α/2}·sd/√n (sd with divisor n, as ``ppi_py.classical_mean_ci``)."""
    y_ = _vector(y, "labels", at_least=MIN_LABELS)
    z = _z(alpha)
    var = _var0(y_)
    return _estimate(
        CLASSICAL,
        float(y_.mean()),
        math.sqrt(var / y_.size),
        alpha=alpha,
        z=z,
        n=y_.size,
        n_unlabelled=0,
        label_variance=var,
        lam=0.0,
        notes=_notes(y_),
    )


def power_tuning(y: Vector, yhat: Vector, yhat_unlabelled: Vector) -> float:
    """PPI++'s λ̂ for a mean: Cov(Y, f) / ((1 + n/N)·Var(f)), clipped to [0, 1].

    Angelopoulos, Duchi & Zrnic (2023), the variance-minimising λ for a mean (the identity Hessian of the
    squared loss); computed as ``ppi_py.ppi._calc_lam_glm(..., clip=True)``: the covariance over the labelled items
    with divisor n, the variance of the predictions over labelled and unlabelled items together with divisor
    n + N − 1. Predictions without spread carry no information: λ̂ = 0.
    """
    n, big_n = y.size, yhat_unlabelled.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if var == 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def _ppi_mean(method: str, y: Vector, f: Vector, f_u: Vector, lam: float, *, alpha: float, z: float) -> Estimate:
    rectifier = y - lam * f
    point = float(lam * f_u.mean() + rectifier.mean())
    se = math.sqrt(lam**2 * _var0(f_u) / f_u.size + _var0(rectifier) / y.size)
    return _estimate(
        method, point, se, alpha=alpha, z=z, n=y.size, n_unlabelled=f_u.size, label_variance=_var0(y),
        lam=lam, notes=_notes(y),
    )  # fmt: skip


def ppi(
    y: npt.ArrayLike, yhat: npt.ArrayLike, yhat_unlabelled: npt.ArrayLike, *, alpha: float = DEFAULT_ALPHA
) -> Estimate:
    """Plain prediction-powered mean (λ = 1; Angelopoulos et al., Science 2023, Theorem 1 / the mean example).

    θ̂ = mean(f_unlabelled) + mean(Y − f); se² = Var(f_unlabelled)/N + Var(Y − f)/n. ``y`` and ``yhat`` are
    the labels and predictions of the labelled items, ``yhat_unlabelled`` the predictions of the others.
    """
    y_, f = _labelled(y, yhat)
    f_u = _vector(yhat_unlabelled, "predictions on the unlabelled items")
    return _ppi_mean(PPI, y_, f, f_u, 1.0, alpha=alpha, z=_z(alpha))


def ppipp(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    *,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> Estimate:
    """PPI++: the prediction-powered mean with power tuning (Angelopoulos, Duchi & Zrnic 2023), the default.

    θ̂_λ = λ·mean(f_unlabelled) + mean(Y − λ·f); se² = λ²·Var(f_unlabelled)/N + Var(Y − λ·f)/n, with λ̂ from
    :func:`power_tuning` unless ``lam`` is given (``lam=1`` is plain PPI, ``lam=0`` the classical interval).
    """
    y_, f = _labelled(y, yhat)
    f_u = _vector(yhat_unlabelled, "predictions on the unlabelled items")
    z = _z(alpha)
    if lam is None:
        lam = power_tuning(y_, f, f_u)
    elif not math.isfinite(lam):
        raise PPIError(f"lam must be a finite number (got {lam!r})")
    return _ppi_mean(PPIPP, y_, f, f_u, float(lam), alpha=alpha, z=z)


def paired_difference(
    y_a: npt.ArrayLike,
    y_b: npt.ArrayLike,
    yhat_a: npt.ArrayLike,
    yhat_b: npt.ArrayLike,
    yhat_a_unlabelled: npt.ArrayLike,
    yhat_b_unlabelled: npt.ArrayLike,
    *,
    alpha: float = DEFAULT_ALPHA,
) -> Estimate:
    """The difference of means a − b of two systems scored (and labelled) on the same items.

    PPI++ on the per-item differences: labels D = Y_a − Y_b on the labelled items, predictions
    f_a − f_b on every item. Working on differences keeps the pairing: what the two systems share on an item
    cancels, so the interval is narrower than one from two independent estimates. Equals
    ``ppi_py.ppi_mean_ci(Y_a − Y_b, f_a − f_b, f_a_unl − f_b_unl)``.
    """
    ya, fa = _labelled(y_a, yhat_a, labels="labels of system a")
    yb, fb = _labelled(y_b, yhat_b, labels="labels of system b")
    if ya.size != yb.size:
        raise PPIError(f"the two systems must be labelled on the same items ({ya.size} labels for a, {yb.size} for b)")
    fa_u = _vector(yhat_a_unlabelled, "predictions of system a on the unlabelled items")
    fb_u = _vector(yhat_b_unlabelled, "predictions of system b on the unlabelled items")
    if fa_u.size != fb_u.size:
        raise PPIError(
            f"the two systems must be scored on the same unlabelled items ({fa_u.size} predictions for a, "
            f"{fb_u.size} for b)"
        )
    d, fd, fd_u = ya - yb, fa - fb, fa_u - fb_u
    z = _z(alpha)
    return _ppi_mean(PAIRED, d, fd, fd_u, power_tuning(d, fd, fd_u), alpha=alpha, z=z)


def active_mean(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    probabilities: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    *,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
) -> Estimate:
    """Prediction-powered mean from labels drawn with known inclusion probabilities (active inference).

    Zrnic & Candès, "Active statistical inference", ICML 2024 (mean estimation): each of the M items
    was labelled independently with probability π_i (ξ_i = 1 if so), the π_i fixed before the draw from
    the predictions alone and bounded away from 0. With the per-item terms

        t_i = λ·f_i + (Y_i − λ·f_i)·ξ_i/π_i       (only λ·f_i for an unlabelled item)

    θ̂ = mean(t) and se² = Var(t)/M (divisor M) give a valid interval for every λ; λ̂ minimises Var(t):
    λ̂ = Ĉov(Yξ/π, f·(ξ/π − 1)) / V̂ar(f·(ξ/π − 1)), clipped to [0, 1] (``lam=1``: no tuning; ``lam=0``:
    the inverse-probability-weighted labelled mean, the classical estimate under this design).

    ``probabilities`` are the π_i of the labelled items (in (0, 1]); ``y``/``yhat`` their labels and
    predictions; ``yhat_unlabelled`` the predictions of the items not drawn. The effective labels compare
    with a uniform random sample: the label variance is the π-weighted variance of the labels.
    """
    y_, f = _labelled(y, yhat)
    pi = _vector(probabilities, "inclusion probabilities")
    if pi.size != y_.size:
        raise PPIError(
            f"labels and inclusion probabilities differ in length ({y_.size} labels, {pi.size} probabilities)"
        )
    bad = np.flatnonzero((pi <= 0.0) | (pi > 1.0))
    if bad.size:
        raise PPIError(
            f"inclusion probability at position {int(bad[0])} is {float(pi[bad[0]])!r}; each must be in (0, 1]"
        )
    f_u = np.asarray(yhat_unlabelled, dtype=np.float64)
    f_u = _vector(f_u, "predictions on the unlabelled items") if f_u.size else np.zeros(0)
    z = _z(alpha)
    m = y_.size + f_u.size
    f_all = np.concatenate([f, f_u])
    weight = np.concatenate([1.0 / pi, np.zeros(f_u.size)])  # ξ/π
    a = np.concatenate([y_ / pi, np.zeros(f_u.size)])  # Y·ξ/π
    b = f_all * (weight - 1.0)  # f·(ξ/π − 1)
    if lam is None:
        var_b = float(np.var(b))
        lam = 0.0 if var_b == 0.0 else float(np.clip(np.mean((a - a.mean()) * (b - b.mean())) / var_b, 0.0, 1.0))
        method = ACTIVE
    elif not math.isfinite(lam):
        raise PPIError(f"lam must be a finite number (got {lam!r})")
    else:
        method = ACTIVE_PPI if lam == 1.0 else ACTIVE_CLASSICAL if lam == 0.0 else ACTIVE
    terms = a - lam * b  # = λ·f + (Y − λ·f)·ξ/π
    w = 1.0 / pi
    mu_w = float(np.sum(w * y_) / np.sum(w))
    label_var = float(np.sum(w * (y_ - mu_w) ** 2) / np.sum(w))
    return _estimate(
        method, float(terms.mean()), math.sqrt(_var0(terms) / m), alpha=alpha, z=z, n=y_.size,
        n_unlabelled=f_u.size, label_variance=label_var, lam=float(lam), notes=_notes(y_),
    )  # fmt: skip


def cross_ppi_mean(
    y: npt.ArrayLike,
    yhat_crossfit: npt.ArrayLike,
    yhat_unlabelled_by_fold: npt.ArrayLike,
    *,
    alpha: float = DEFAULT_ALPHA,
) -> Estimate:
    """Cross-prediction-powered mean (Zrnic & Candès, PNAS 2024) for a judge learned on the labelled items.

    ``yhat_crossfit[i]`` is the prediction for labelled item i by the model trained on the other folds (never
    the model that saw item i); ``yhat_unlabelled_by_fold`` is an N × K array, column j the predictions on
    the unlabelled items of the model trained without fold j. θ̂ = mean(f̄_unlabelled) + mean(Y − f̂) with
    f̄ the K models' average, se² = Var(f̄_unlabelled)/N + Var(Y − f̂)/n (``ppi_py.crossppi_mean_ci``).
    """
    y_, f = _labelled(y, yhat_crossfit)
    try:
        grid = np.asarray(yhat_unlabelled_by_fold, dtype=np.float64)
    except (TypeError, ValueError):
        raise PPIError("predictions on the unlabelled items must be numbers") from None
    if grid.ndim != 2 or grid.shape[1] < MIN_FOLDS:
        raise PPIError(
            "predictions on the unlabelled items must be an N × K array, one column per fold's model, "
            f"K ≥ {MIN_FOLDS} (got shape {grid.shape})"
        )
    f_bar = _vector(grid.mean(axis=1), "predictions on the unlabelled items (mean of the folds' models)")
    return _ppi_mean(CROSS_PPI, y_, f, f_bar, 1.0, alpha=alpha, z=_z(alpha))


# --- planning ------------------------------------------------------------------------------------------


def labels_for_half_width(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabelled: npt.ArrayLike,
    half_width: float,
    *,
    alpha: float = DEFAULT_ALPHA,
) -> LabelPlan:
    """Labels needed (in all) for a ``1 − alpha`` interval of ``half_width``, with and without the metric.

    The pilot labels ``y`` with predictions ``yhat`` give Var(Y), Var(f) and Cov(Y, f); the population is
    the pilot plus the ``yhat_unlabelled`` items, M in all, and each further label comes out of the
    unlabelled rest. With n labels PPI++'s half-width is z·√(λ²·Var(f)/(M − n) + Var(Y − λf)/n) with
    λ = Cov/((1 + n/(M − n))·Var(f)) clipped to [0, 1] (as :func:`power_tuning`); the classical one
    z·√(Var(Y)/n). The answer is the smallest n ≥ the pilot's for which the half-width is at most the
    target: PPI++ planning as in Angelopoulos, Duchi & Zrnic (2023) and the ``ppi_mean_power`` of
    ppi-python (Broska, Howes & van Loon 2024), from pilot estimates, so the figure is as good as the pilot.
    """
    y_, f = _labelled(y, yhat)
    f_u = _vector(yhat_unlabelled, "predictions on the unlabelled items")
    z = _z(alpha)
    if isinstance(half_width, bool) or not isinstance(half_width, int | float) or not 0.0 < half_width < math.inf:
        raise PPIError(f"the half-width must be a positive number (got {half_width!r})")
    n0, m = y_.size, y_.size + f_u.size
    var_y = _var0(y_)
    var_f_lab = _var0(f)
    cov = float(np.mean((y_ - y_.mean()) * (f - f.mean())))
    var_f_all = float(np.var(np.concatenate([f, f_u]), ddof=1))
    target = (half_width / z) ** 2
    notes: list[str] = list(_notes(y_))

    ns = np.arange(n0, m, dtype=np.float64)  # keep at least one unlabelled item for the metric's mean
    rest = m - ns
    lams = np.clip(cov / ((1.0 + ns / rest) * var_f_all), 0.0, 1.0) if var_f_all > 0.0 else np.zeros_like(ns)
    var_rect = np.maximum(var_y - 2.0 * lams * cov + lams**2 * var_f_lab, 0.0)
    se2 = lams**2 * _var0(f_u) / rest + var_rect / ns  # the rest's spread as the pilot's unlabelled items'
    ok = np.flatnonzero(se2 <= target)
    with_metric = int(ns[ok[0]]) if ok.size else None
    if with_metric is None:
        notes.append(f"with the metric, the half-width {half_width} is not reached even with {m - 1} labels")
    need = math.ceil(var_y / target) if var_y > 0 else n0
    without_metric: int | None = max(need, n0)
    if without_metric is not None and without_metric > m:
        without_metric = None
        notes.append(f"without the metric, the half-width {half_width} needs more labels than the {m} items")
    lam_now = power_tuning(y_, f, f_u)
    return LabelPlan(
        half_width=float(half_width),
        alpha=alpha,
        n_labelled=n0,
        population=m,
        with_metric=with_metric,
        without_metric=without_metric,
        with_metric_more=None if with_metric is None else with_metric - n0,
        without_metric_more=None if without_metric is None else without_metric - n0,
        lam=lam_now,
        notes=tuple(notes),
    )


def sampling_probabilities(uncertainty: npt.ArrayLike, expected_labels: float, *, floor: float = 0.1) -> Vector:
    """Inclusion probabilities for active labelling: π_i ∝ uncertainty_i, bounded below, summing to the budget.

    Zrnic & Candès (ICML 2024) show the variance-optimal π for a mean, under a budget on E[Σπ], is proportional to
    √E[(Y − f)² | X]; for a calibrated probability f of a 0/1 label that is √(f(1 − f)), the usual choice
    of ``uncertainty``. Each π_i is at least ``floor`` × the uniform rate ``expected_labels``/M (so every
    item can be drawn and no weight 1/π explodes) and at most 1; the scale is found by bisection so the
    π_i sum to ``expected_labels``.
    """
    u = _vector(uncertainty, "uncertainty")
    if np.any(u < 0):
        raise PPIError("uncertainty must be ≥ 0 for every item")
    m = u.size
    if isinstance(expected_labels, bool) or not 0 < expected_labels <= m:
        raise PPIError(f"the expected number of labels must be in (0, {m}] (got {expected_labels!r})")
    if not 0.0 < floor <= 1.0:
        raise PPIError(f"floor must be in (0, 1] (got {floor!r})")
    low = floor * expected_labels / m
    if not np.any(u > 0):
        return np.full(m, expected_labels / m)

    def probs(scale: float) -> Vector:
        return np.clip(scale * u, low, 1.0)

    lo, hi = 0.0, 1.0
    while probs(hi).sum() < expected_labels:
        hi *= 2.0
        if hi > 1e300:  # pragma: no cover - the sum reaches m when every π is 1
            break
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if probs(mid).sum() < expected_labels:
            lo = mid
        else:
            hi = mid
    return probs(hi)
