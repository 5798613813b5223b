"""A pool's sample of a score run's population, drawn at random and recorded (``PoolSample``), for estimates.

:func:`pool_sample_draw` draws it and restricts the pool to the drawn items; :func:`pool_sample_parse` reads the
researcher's request. The estimate reads the recorded design (``adjudication.analysis.estimates``); nothing is
drawn anywhere else, and a pool without a sample hands out items as it always did.

* **uniform** — ``n`` of the N items with an ok item-level value, drawn without replacement by numpy's
  ``default_rng(seed)``: a simple random sample, each item with inclusion probability n/N.
* **probability** — each item drawn independently (Poisson sampling) with probability
  π_i ∝ √(f_i·(1 − f_i)) (the metric is least certain near 0.5), at least ``floor`` × n/N and at most 1, the
  π_i summing to ``n`` (``adjudication.stats.ppi.sampling_probabilities``; Zrnic & Candès, "Active statistical
  inference", ICML 2024). Needs values in [0, 1]. The number drawn is random, n on average.

The draw is refused once the pool has handed out any item: a design must be fixed before anyone labels, or the
labels already given would not be part of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import transaction

from adjudication.models import PoolSample, PoolSampleItem, SampleDesign
from adjudication.stats import ppi as ppi_stats
from annotation.models import Assignment, Item, Pool, PoolItemExclusion, Study
from concord.errors import Conflict, NotFound, ValidationFailed
from concord.params import MAX_INT, parse_id, parse_int
from scoring.models import Score, ScoreRun, ScoreState

DEFAULT_FLOOR = 0.1
FLOORS = {"0.05": 0.05, "0.1": 0.1, "0.2": 0.2, "0.5": 0.5}


def pool_sample_parse(*, study: Study, pool: Pool, data: Any) -> dict[str, Any]:
    """``run`` (a score run of the study), ``design`` (uniform or probability), ``n`` (1..N), ``seed``
    (0..2³¹ − 1, default 0) and for the probability design ``floor`` (0.05, 0.1, 0.2 or 0.5)."""
    run_id = parse_id(data.get("run"))
    if run_id is None:
        raise ValidationFailed("run must be a score run id")
    run = ScoreRun.objects.filter(study=study, pk=run_id).first()
    if run is None:
        raise NotFound("no such score run in this study")
    design = data.get("design")
    design = design.strip() if isinstance(design, str) else ""
    if design not in SampleDesign.values:
        raise ValidationFailed(f"design must be one of {', '.join(SampleDesign.values)}")
    n = parse_int(data.get("n"), name="n", minimum=1, maximum=MAX_INT)
    seed = parse_int(data.get("seed"), name="seed", minimum=0, maximum=MAX_INT, default=0)
    floor = data.get("floor")
    floor = floor.strip() if isinstance(floor, str) and floor.strip() else str(DEFAULT_FLOOR)
    if floor not in FLOORS:
        raise ValidationFailed(f"floor must be one of {', '.join(FLOORS)}")
    return {"pool": pool, "run": run, "design": design, "n": n, "seed": seed, "floor": FLOORS[floor]}


def _population(run: ScoreRun) -> tuple[list[int], np.ndarray]:
    rows = sorted(
        Score.objects.filter(run=run, unit_key="item", state=ScoreState.OK, value__isnull=False).values_list(
            "item_id", "value"
        )
    )
    return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=float)


def draw(values: np.ndarray, *, design: str, n: int, seed: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Inclusion probabilities and the drawn mask over the population's values (pure; seeded)."""
    big_n = values.size
    rng = np.random.default_rng(seed)
    if design == SampleDesign.UNIFORM:
        drawn = np.zeros(big_n, dtype=bool)
        drawn[rng.choice(big_n, n, replace=False)] = True
        return np.full(big_n, n / big_n), drawn
    if values.size and (values.min() < 0.0 or values.max() > 1.0):
        raise ValidationFailed(
            "the probability design needs the run's values in [0, 1] (it favours values near 0.5, where a "
            "probability-like metric is least certain); use the uniform design for this run"
        )
    try:
        pi = ppi_stats.sampling_probabilities(np.sqrt(values * (1.0 - values)), n, floor=floor)
    except ppi_stats.PPIError as exc:
        raise ValidationFailed(str(exc)) from None
    return pi, rng.uniform(size=big_n) < pi


def pool_sample_draw(
    *, pool: Pool, run: ScoreRun, design: str, n: int, seed: int, floor: float, actor: Any
) -> PoolSample:
    """Draw the pool's sample from ``run``'s population, record every item's probability, and exclude the items
    not drawn from the pool (its top-up then hands out only drawn ones). 409 if the pool has a sample already
    or has handed out any item; 400 if ``n`` exceeds the population."""
    if run.study_id != pool.study_id:
        raise NotFound("no such score run in this study")
    with transaction.atomic():
        Pool.objects.select_for_update().filter(pk=pool.pk).first()
        if PoolSample.objects.filter(pool=pool).exists():
            raise Conflict("this pool has a sample already; a recorded sample is never redrawn")
        if Assignment.objects.filter(pool=pool).exists():
            raise Conflict(
                "this pool has handed out items already: draw the sample before anyone labels, in a new pool"
            )
        items, values = _population(run)
        if not items:
            raise ValidationFailed("the score run has no item with an ok item-level value to draw from")
        if n > len(items):
            raise ValidationFailed(f"n must be at most the population, {len(items)} items")
        pi, drawn = draw(values, design=design, n=n, seed=seed, floor=floor)
        sample = PoolSample.objects.create(
            pool=pool, run=run, design=design, n=n, seed=seed, floor=floor, population=len(items),
            n_drawn=int(drawn.sum()), created_by=actor,
        )  # fmt: skip
        PoolSampleItem.objects.bulk_create(
            PoolSampleItem(sample=sample, item_id=i, probability=float(p), drawn=bool(d))
            for i, p, d in zip(items, pi.tolist(), drawn.tolist(), strict=True)
        )
        keep = {i for i, d in zip(items, drawn.tolist(), strict=True) if d}
        excluded = set(PoolItemExclusion.objects.filter(pool=pool).values_list("item_id", flat=True))
        PoolItemExclusion.objects.bulk_create(
            PoolItemExclusion(pool=pool, item_id=i, created_by=actor)
            for i in Item.objects.filter(study_id=pool.study_id).values_list("pk", flat=True)
            if i not in keep and i not in excluded
        )
    return sample
