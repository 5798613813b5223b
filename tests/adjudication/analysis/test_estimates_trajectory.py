"""The interval as labels arrive on the estimates report: PPI++ and classical recomputed on the first n labels
in the order they arrived (against adjudication.stats.ppi on the same arrays), the SVG's coordinates, and the
order itself (a gold label's time, else the last submission of the pool's labels)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from adjudication.analysis.estimates import (
    PROBABILITY,
    UNIFORM,
    SamplingDesign,
    estimate_compute,
    label_times,
    trajectory_compute,
    trajectory_plot,
)
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import ppi as ppi_stats
from annotation.models import AssignmentStatus, Label
from tests import factories

RNG = np.random.default_rng(5)
N_POP = 300
SCORES = {500 + i: float(s) for i, s in enumerate(RNG.uniform(size=N_POP))}
LABELS = {i: float(RNG.uniform() < s) for i, s in SCORES.items()}
DRAWN = sorted(RNG.choice(sorted(SCORES), 60, replace=False).tolist())
ORDER = DRAWN[::-1]  # the labels arrived in the reverse of the ids' order


def _trajectory(design, order=ORDER):
    result = estimate_compute(scores=SCORES, labels=LABELS, design=design, alpha=0.05)
    return result, trajectory_compute(
        scores=SCORES, labels=LABELS, design=design, result=result, order=order, alpha=0.05
    )


def test_each_step_is_ppi_plus_plus_and_classical_on_the_first_n_labels_and_the_last_is_the_headline():
    result, out = _trajectory(SamplingDesign(UNIFORM, dict.fromkeys(DRAWN, 0.2), N_POP))
    assert out["available"] is True and [s["n"] for s in out["steps"]] == [10, 20, 30, 40, 50, 60]
    first = ORDER[:20]
    rest = [SCORES[i] for i in sorted(SCORES) if i not in set(first)]
    expected = ppi_stats.ppipp([LABELS[i] for i in first], [SCORES[i] for i in first], rest)
    step = out["steps"][1]
    assert (step["ppipp"]["lower"], step["ppipp"]["upper"]) == pytest.approx((expected.lower, expected.upper))
    assert step["classical"]["point"] == pytest.approx(np.mean([LABELS[i] for i in first]))
    head = result["estimates"][0]
    assert out["steps"][-1]["ppipp"]["point"] == pytest.approx(head["point"])
    assert out["steps"][-1]["ppipp"]["upper"] == pytest.approx(head["upper"])
    other = _trajectory(SamplingDesign(UNIFORM, dict.fromkeys(DRAWN, 0.2), N_POP), order=DRAWN)[1]
    assert other["steps"][1]["classical"]["point"] == pytest.approx(np.mean([LABELS[i] for i in DRAWN[:20]]))


def test_no_trajectory_for_a_probability_design_an_exact_share_or_no_estimate():
    _, out = _trajectory(SamplingDesign(PROBABILITY, dict.fromkeys(DRAWN, 0.2), N_POP))
    assert out["available"] is False and "uniform sample only" in out["reason"]
    _, out = _trajectory(None)
    assert out["available"] is False and "exact" in out["reason"]
    result = estimate_compute(scores=SCORES, labels={DRAWN[0]: 1.0}, design=None, alpha=0.05)
    out = trajectory_compute(scores=SCORES, labels=LABELS, design=None, result=result, order=[], alpha=0.05)
    assert out["reason"] == "there is no valid estimate"


def test_the_plot_puts_higher_values_higher_and_later_steps_further_right_inside_its_box():
    _, out = _trajectory(SamplingDesign(UNIFORM, dict.fromkeys(DRAWN, 0.2), N_POP))
    plot = trajectory_plot(out["steps"])
    xs = [p["x"] for p in plot["points"]]
    assert xs == sorted(xs) and xs[-1] == plot["right"]
    for p in plot["points"]:
        for method in ("ppipp", "classical"):
            m = p[method]
            assert plot["top"] <= m["upper"] <= m["point"] <= m["lower"] <= plot["bottom"]  # y grows downwards
    widths = [p["classical"]["lower"] - p["classical"]["upper"] for p in plot["points"]]
    assert widths[0] > widths[-1]  # the classical interval narrows as labels arrive
    assert trajectory_plot([]) is None


@pytest.mark.django_db
def test_a_labels_time_is_its_golds_else_its_last_submission(study, annotator):
    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "clinicians", questions=[pf])
    factories.add_member(pool, annotator, pseudonym="A1")
    gold_item, voted, unlabelled = (factories.make_item(study, f"t{i}") for i in range(3))
    gold = GoldLabel.objects.create(
        pool=pool, item=gold_item, unit_key="item", question=pf, value="yes", source=GoldSource.ADJUDICATED
    )
    submitted = timezone.now() - timedelta(days=3)
    a = factories.make_assignment(pool, voted, annotator, status=AssignmentStatus.SUBMITTED, submitted_at=submitted)
    Label.objects.create(
        assignment=a, question=pf, unit_key="item", value="no", version=1, updated_by=annotator,
        updated_at=timezone.now(),
    )  # fmt: skip
    times = label_times(pool=pool, question=pf, item_ids=[gold_item.pk, voted.pk, unlabelled.pk])
    assert times == {gold_item.pk: gold.created_at, voted.pk: submitted}


@pytest.mark.django_db
def test_the_reports_steps_follow_the_order_the_labels_arrived(study, researcher):
    from adjudication.analysis.estimates import EstimateParams, estimate_report
    from adjudication.models import PoolSample
    from adjudication.sampling import pool_sample_draw
    from scoring.models import RunStatus, Score, ScoreRun, ScoreState

    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "sampled", questions=[pf])
    items = [factories.make_item(study, f"q{i:02d}") for i in range(40)]
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", created_by=researcher, status=RunStatus.DONE
    )
    Score.objects.bulk_create(
        Score(run=run, item=item, unit_key="item", value=float(v), state=ScoreState.OK)
        for item, v in zip(items, RNG.uniform(size=len(items)), strict=True)
    )
    pool_sample_draw(pool=pool, run=run, design="uniform", n=20, seed=4, floor=0.1, actor=researcher)
    drawn = sorted(PoolSample.objects.get(pool=pool).items.filter(drawn=True).values_list("item_id", flat=True))
    # The last ten ids were labelled first, all "yes"; the first ten later, all "no".
    base = timezone.now() - timedelta(days=1)
    for rank, item_id in enumerate(drawn[::-1]):
        gold = GoldLabel.objects.create(
            pool=pool, item_id=item_id, unit_key="item", question=pf, value="yes" if rank < 10 else "no",
            source=GoldSource.ADJUDICATED,
        )  # fmt: skip
        GoldLabel.objects.filter(pk=gold.pk).update(created_at=base + timedelta(minutes=rank))
    params = EstimateParams(pool_id=pool.pk, question="pf", run_id=run.pk, positive="yes")
    steps = estimate_report(study=study, params=params)["trajectory"]["steps"]
    assert steps[0]["n"] == 10 and steps[0]["classical"]["point"] == 1.0  # the ten labelled first
    assert steps[-1]["n"] == 20 and steps[-1]["classical"]["point"] == 0.5
