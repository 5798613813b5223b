"""A pool's recorded sample: the seeded draw, the probabilities recorded per item, the pool restricted to the
drawn items, and the estimate that rests on it (checked against adjudication.stats.ppi on the same arrays)."""

from __future__ import annotations

import numpy as np
import pytest

from adjudication.analysis.estimates import EstimateParams, estimate_report, sampling_design_for
from adjudication.models import GoldLabel, GoldSource, PoolSample, PoolSampleItem
from adjudication.sampling import draw, pool_sample_draw, pool_sample_parse
from adjudication.stats import ppi as ppi_stats
from annotation.models import PoolItemExclusion
from annotation.services import pool_assign_items
from concord.errors import Conflict, NotFound, ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

pytestmark = pytest.mark.django_db

N_ITEMS = 40
RNG = np.random.default_rng(11)
VALUES = np.round(RNG.uniform(0.02, 0.98, N_ITEMS), 3)
TRUTH = (RNG.uniform(size=N_ITEMS) < VALUES).astype(int)  # 1 = "yes"


@pytest.fixture
def world(study, researcher):
    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "sampled", questions=[pf])
    items = [factories.make_item(study, f"q{i:02d}") for i in range(N_ITEMS)]
    unscored = factories.make_item(study, "unscored")
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", created_by=researcher, status=RunStatus.DONE
    )
    Score.objects.bulk_create(
        Score(run=run, item=item, unit_key="item", value=float(v), state=ScoreState.OK)
        for item, v in zip(items, VALUES, strict=True)
    )
    return {"study": study, "pool": pool, "pf": pf, "items": items, "unscored": unscored, "run": run}


def _gold_for_drawn(world, sample):
    by_pk = {item.pk: i for i, item in enumerate(world["items"])}
    for row in PoolSampleItem.objects.filter(sample=sample, drawn=True):
        GoldLabel.objects.create(
            pool=world["pool"], item_id=row.item_id, unit_key="item", question=world["pf"],
            value="yes" if TRUTH[by_pk[row.item_id]] else "no", source=GoldSource.ADJUDICATED,
        )  # fmt: skip


def _params(world):
    return EstimateParams(pool_id=world["pool"].pk, question="pf", run_id=world["run"].pk, positive="yes")


def test_the_uniform_draw_is_seeded_and_records_n_over_big_n_for_every_item():
    pi, drawn = draw(VALUES, design="uniform", n=10, seed=5, floor=0.1)
    _, again = draw(VALUES, design="uniform", n=10, seed=5, floor=0.1)
    assert drawn.sum() == 10 and np.array_equal(drawn, again) and np.allclose(pi, 10 / N_ITEMS)
    expected = np.zeros(N_ITEMS, dtype=bool)
    expected[np.random.default_rng(5).choice(N_ITEMS, 10, replace=False)] = True
    assert np.array_equal(drawn, expected)
    assert not np.array_equal(drawn, draw(VALUES, design="uniform", n=10, seed=6, floor=0.1)[1])


def test_the_probability_draw_records_the_papers_probabilities():
    pi, drawn = draw(VALUES, design="probability", n=12, seed=3, floor=0.2)
    expected = ppi_stats.sampling_probabilities(np.sqrt(VALUES * (1 - VALUES)), 12, floor=0.2)
    assert np.allclose(pi, expected) and pi.sum() == pytest.approx(12)
    assert pi.min() >= 0.2 * 12 / N_ITEMS - 1e-12
    assert np.array_equal(drawn, np.random.default_rng(3).uniform(size=N_ITEMS) < expected)


def test_a_probability_draw_refuses_values_outside_the_unit_interval():
    with pytest.raises(ValidationFailed, match=r"\[0, 1\]"):
        draw(np.array([0.2, 1.5, 0.3]), design="probability", n=1, seed=0, floor=0.1)


def test_drawing_records_the_sample_and_the_pool_hands_out_only_drawn_items(world, researcher, annotator):
    sample = pool_sample_draw(
        pool=world["pool"], run=world["run"], design="uniform", n=8, seed=1, floor=0.1, actor=researcher
    )
    assert sample.n_drawn == 8 and sample.population == N_ITEMS
    assert PoolSampleItem.objects.filter(sample=sample).count() == N_ITEMS
    drawn = set(PoolSampleItem.objects.filter(sample=sample, drawn=True).values_list("item_id", flat=True))
    excluded = set(PoolItemExclusion.objects.filter(pool=world["pool"]).values_list("item_id", flat=True))
    assert world["unscored"].pk in excluded and not (drawn & excluded)
    assert len(excluded) == N_ITEMS + 1 - 8
    factories.add_member(world["pool"], annotator)
    pool_assign_items(pool=world["pool"])
    assert set(world["pool"].assignments.values_list("item_id", flat=True)) == drawn


def test_a_pool_sample_is_never_redrawn_nor_drawn_after_items_were_handed_out(world, researcher, annotator):
    pool_sample_draw(pool=world["pool"], run=world["run"], design="uniform", n=5, seed=1, floor=0.1, actor=researcher)
    with pytest.raises(Conflict, match="never redrawn"):
        pool_sample_draw(
            pool=world["pool"], run=world["run"], design="uniform", n=5, seed=2, floor=0.1, actor=researcher
        )
    busy = factories.make_pool(world["study"], "busy", questions=[world["pf"]])
    factories.make_assignment(busy, world["items"][0], annotator)
    with pytest.raises(Conflict, match="before anyone labels"):
        pool_sample_draw(pool=busy, run=world["run"], design="uniform", n=5, seed=1, floor=0.1, actor=researcher)
    assert not PoolSample.objects.filter(pool=busy).exists()


def test_n_above_the_population_is_refused(world, researcher):
    with pytest.raises(ValidationFailed, match="at most the population, 40"):
        pool_sample_draw(
            pool=world["pool"], run=world["run"], design="uniform", n=41, seed=1, floor=0.1, actor=researcher
        )


def test_pools_without_a_sample_are_untouched(world, annotator):
    other = factories.make_pool(world["study"], "plain", questions=[world["pf"]])
    factories.add_member(other, annotator)
    pool_assign_items(pool=other)
    assert other.assignments.count() == N_ITEMS + 1 and sampling_design_for(pool=other) is None


def test_the_estimate_over_a_uniform_sample_is_ppi_plus_plus_on_the_drawn_items(world, researcher):
    sample = pool_sample_draw(
        pool=world["pool"], run=world["run"], design="uniform", n=15, seed=9, floor=0.1, actor=researcher
    )
    report = estimate_report(study=world["study"], params=_params(world))
    assert report["valid"] is False and "15 of the 15 items the pool's sampling design drew" in report["refusal"]
    _gold_for_drawn(world, sample)
    report = estimate_report(study=world["study"], params=_params(world))
    drawn = np.array([r.drawn for r in PoolSampleItem.objects.filter(sample=sample).order_by("item_id")])
    y, f, f_u = TRUTH[drawn].astype(float), VALUES[drawn], VALUES[~drawn]
    want = [ppi_stats.ppipp(y, f, f_u), ppi_stats.ppi(y, f, f_u), ppi_stats.classical(y)]
    assert (
        report["valid"] is True
        and report["design"]["kind"] == "uniform"
        and "seed 9" in report["design"]["description"]
    )
    assert report["label_sources"] == {"gold": 15, "majority": 0, "no_majority": 0, "gold_off_scale": 0}
    for got, expected in zip(report["estimates"], want, strict=True):
        assert got["method"] == expected.method
        assert (got["point"], got["lower"], got["upper"]) == pytest.approx(
            (expected.point, expected.lower, expected.upper), rel=1e-12
        )


def test_the_estimate_over_a_probability_sample_is_the_weighted_active_estimate(world, researcher):
    sample = pool_sample_draw(
        pool=world["pool"], run=world["run"], design="probability", n=15, seed=4, floor=0.1, actor=researcher
    )
    _gold_for_drawn(world, sample)
    report = estimate_report(study=world["study"], params=_params(world))
    rows = list(PoolSampleItem.objects.filter(sample=sample).order_by("item_id"))
    drawn = np.array([r.drawn for r in rows])
    pi = np.array([r.probability for r in rows])
    y, f, f_u = TRUTH[drawn].astype(float), VALUES[drawn], VALUES[~drawn]
    want = ppi_stats.active_mean(y, f, pi[drawn], f_u)
    assert report["valid"] is True and report["headline"] == ppi_stats.ACTIVE
    head = report["estimates"][0]
    assert (head["point"], head["lower"], head["upper"]) == pytest.approx((want.point, want.lower, want.upper))
    classical = report["estimates"][2]
    assert classical["method"] == ppi_stats.ACTIVE_CLASSICAL


def test_a_run_that_scored_items_outside_the_frame_is_refused(world, researcher):
    sample = pool_sample_draw(
        pool=world["pool"], run=world["run"], design="uniform", n=5, seed=1, floor=0.1, actor=researcher
    )
    _gold_for_drawn(world, sample)
    wider = ScoreRun.objects.create(study=world["study"], metric="cf", metric_version="1", backend="lexical")
    for item in [*world["items"], world["unscored"]]:
        Score.objects.create(run=wider, item=item, unit_key="item", value=0.5, state=ScoreState.OK)
    params = EstimateParams(pool_id=world["pool"].pk, question="pf", run_id=wider.pk, positive="yes")
    report = estimate_report(study=world["study"], params=params)
    assert report["valid"] is False and "could not be drawn" in report["refusal"]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"run": "x", "design": "uniform", "n": "5"}, ValidationFailed),
        ({"run": "999999", "design": "uniform", "n": "5"}, NotFound),
        ({"run": "", "design": "uniform", "n": "5"}, ValidationFailed),
        ({"design": "stratified", "n": "5"}, ValidationFailed),
        ({"design": "uniform", "n": "٣"}, ValidationFailed),
        ({"design": "uniform", "n": "9" * 400}, ValidationFailed),
        ({"design": "uniform", "n": "0"}, ValidationFailed),
        ({"design": "uniform", "n": "5", "seed": "-1"}, ValidationFailed),
        ({"design": "probability", "n": "5", "floor": "0.3"}, ValidationFailed),
    ],
)
def test_bad_draw_requests_are_refused(world, data, error):
    data = {"run": str(world["run"].pk), **data}
    with pytest.raises(error):
        pool_sample_parse(study=world["study"], pool=world["pool"], data=data)


def test_a_good_draw_request_is_read(world):
    data = {"run": str(world["run"].pk), "design": "probability", "n": "12", "seed": "7", "floor": "0.2"}
    got = pool_sample_parse(study=world["study"], pool=world["pool"], data=data)
    assert (got["run"], got["design"], got["n"], got["seed"], got["floor"]) == (world["run"], "probability", 12, 7, 0.2)
