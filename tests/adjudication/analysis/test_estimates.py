"""Prediction-powered estimates for a study: the population, the human label per item and its source, when a
sample is valid, and the numbers against adjudication.stats.ppi on the same arrays (those functions are held to
ppi-python 0.2.3 and the papers' formulas in tests/adjudication/stats/test_ppi.py)."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from adjudication.analysis.estimates import (
    PROBABILITY,
    UNIFORM,
    EstimateParams,
    SamplingDesign,
    estimate_compute,
    estimate_params_parse,
    estimate_report,
    human_labels,
    strict_majority,
)
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import ppi as ppi_stats
from annotation.models import AssignmentStatus, Label
from concord.errors import NotFound, ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

HARM = [
    {"value": "none", "label": "None", "key": "1"},
    {"value": "slight", "label": "Slight", "key": "2"},
    {"value": "severe", "label": "Severe", "key": "3"},
]
# Per item: the three annotators' answers on "pf" (None: not labelled), the gold value (None: no gold), the
# metric's item-level value (None: the score failed).
ROWS = [
    (["no", "no", "yes"], "yes", 0.9),  # gold overrides the majority
    (["yes", "yes", "yes"], "yes", 0.8),
    ([None, None, None], "no", 0.2),  # gold without labels
    (["no", "no", "no"], None, 0.1),
    (["yes", "yes", "no"], None, 0.7),
    (["no", "no", None], None, 0.3),
    (["yes", None, None], None, 0.6),
    (["yes", "no", None], None, 0.5),  # a tie: no label
    ([None, None, None], None, 0.4),  # nobody labelled it
    (["yes", "yes", "yes"], "yes", None),  # labelled, but the score failed: outside the population
]


def _label(assignment, question, value):
    return Label(
        assignment=assignment,
        question=question,
        unit_key="item",
        value=value,
        version=1,
        updated_by=assignment.annotator,
        updated_at=timezone.now(),
    )


def _gold(pool, item, question, value, source=GoldSource.ADJUDICATED):
    return GoldLabel.objects.create(
        pool=pool, item=item, unit_key="item", question=question, value=value, source=source
    )


@pytest.fixture
def world(study, researcher):
    pf = factories.make_question(study, "pf")
    harm = factories.make_question(study, "harm", kind="ordinal", options=HARM, order=1)
    number = factories.make_question(study, "minutes", kind="number", options=[], order=2)
    pool = factories.make_pool(study, "clinicians", questions=[pf, harm, number], overlap=3)
    members = [factories.make_user(f"clin{i}") for i in range(3)]
    for i, user in enumerate(members):
        factories.add_member(pool, user, pseudonym=f"A{i + 1}")
    items = [factories.make_item(study, f"q{i:02d}") for i in range(len(ROWS))]
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", created_by=researcher, status=RunStatus.DONE
    )
    labels = []
    for item, (answers, gold, score) in zip(items, ROWS, strict=True):
        for user, answer in zip(members, answers, strict=True):
            if answer is None:
                continue
            a = factories.make_assignment(
                pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            labels.append(_label(a, pf, answer))
        if gold is not None:
            _gold(pool, item, pf, gold)
        if score is None:
            Score.objects.create(run=run, item=item, unit_key="item", value=None, state=ScoreState.FAILED)
        else:
            Score.objects.create(run=run, item=item, unit_key="item", value=score, state=ScoreState.OK)
            Score.objects.create(run=run, item=item, unit_key="s:0", value=1 - score, state=ScoreState.OK)
    Label.objects.bulk_create(labels)
    return {"study": study, "pool": pool, "pf": pf, "harm": harm, "number": number, "items": items, "run": run,
            "members": members}  # fmt: skip


def _params(world, **kw):
    values = {"pool_id": world["pool"].pk, "question": "pf", "run_id": world["run"].pk, "positive": "yes"}
    values.update(kw)
    return EstimateParams(**values)


# --- human labels ---------------------------------------------------------------------------------------


def test_gold_comes_first_then_the_strict_majority_and_a_tie_gives_no_label(world):
    human = human_labels(pool=world["pool"], question=world["pf"])
    items = world["items"]
    yes, no = 0.0, 1.0  # positions on [yes, no]
    assert human.positions[items[0].pk] == yes and human.source[items[0].pk] == "gold"  # gold, not the 2-1 "no"
    assert human.positions[items[2].pk] == no and human.source[items[2].pk] == "gold"
    assert human.positions[items[4].pk] == yes and human.source[items[4].pk] == "majority"
    assert human.positions[items[5].pk] == no and human.source[items[5].pk] == "majority"
    assert human.positions[items[6].pk] == yes  # one label is a majority of one
    assert items[7].pk not in human.positions and human.no_majority == {items[7].pk}
    assert items[8].pk not in human.positions


def test_unresolved_and_superseded_gold_are_not_labels(world):
    pool, pf, item = world["pool"], world["pf"], world["items"][3]
    GoldLabel.objects.create(pool=pool, item=item, unit_key="item", question=pf, value="yes", source="majority",
                             version=1, is_current=False)  # fmt: skip
    GoldLabel.objects.create(pool=pool, item=item, unit_key="item", question=pf, value=None, source="unresolved",
                             version=2)  # fmt: skip
    human = human_labels(pool=pool, question=pf)
    assert human.source[item.pk] == "majority" and human.positions[item.pk] == 1.0


def test_a_strict_majority_needs_more_than_half_of_the_ratings():
    nan = np.nan
    codes = np.array([[0, 0, 1, 2], [0, 0, 0, 1], [0, 1, nan, nan], [2, nan, nan, nan], [nan, nan, nan, nan]])
    keep, winners, ties = strict_majority(codes, 3)
    assert keep.tolist() == [1, 3] and winners.tolist() == [0, 2]
    assert ties == 2  # 2 of 4 and 1 of 2 are not more than half; the unrated row is not counted


# --- validity of the sample -----------------------------------------------------------------------------


def test_a_partly_labelled_pool_without_a_design_is_refused_with_the_reason(world):
    report = estimate_report(study=world["study"], params=_params(world))
    assert report["valid"] is False and report["estimates"] == []
    assert report["n_population"] == 9 and report["n_scores_not_ok"] == 1
    assert report["n_labelled"] == 7 and report["n_labelled_outside_population"] == 1
    assert "7 of the 9 items" in report["refusal"] and "no sampling design" in report["refusal"]
    assert report["label_sources"] == {"gold": 3, "majority": 4, "no_majority": 1, "gold_off_scale": 0}


def test_every_item_labelled_gives_the_exact_share_and_the_classical_interval(world):
    pool, pf, items = world["pool"], world["pf"], world["items"]
    _gold(pool, items[7], pf, "no")
    _gold(pool, items[8], pf, "yes")
    report = estimate_report(study=world["study"], params=_params(world))
    y = [1, 1, 0, 0, 1, 0, 1, 0, 1]  # items 0..8 against "yes"
    assert report["valid"] is True and report["exact"] is True and report["refusal"] is None
    assert report["exact_value"] == pytest.approx(5 / 9) and report["n_positive"] == 5
    assert report["label_sources"]["gold"] == 5 and report["label_sources"]["majority"] == 4
    (classical,) = report["estimates"]
    reference = ppi_stats.classical(np.array(y, dtype=float), alpha=0.05)
    assert classical["method"] == "classical" and report["headline"] == "classical"
    assert (classical["point"], classical["lower"], classical["upper"]) == pytest.approx(
        (reference.point, reference.lower, reference.upper), rel=1e-12
    )
    assert "exact over this population" in report["notes"][0]


def test_the_positive_option_the_inversion_and_an_ordinal_cut_off(world):
    pool, items, harm = world["pool"], world["items"], world["harm"]
    for item, value in zip(items, ["none", "slight", "severe", "none", "slight", "none", "severe", "none", "slight",
                                   "none"], strict=True):  # fmt: skip
        _gold(pool, item, harm, value)
    report = estimate_report(study=world["study"], params=_params(world, question="harm", positive="slight"))
    assert report["exact_value"] == pytest.approx(5 / 9)  # slight or severe, over the 9 scored items
    report = estimate_report(study=world["study"], params=_params(world, question="harm", positive="severe"))
    assert report["exact_value"] == pytest.approx(2 / 9)
    plain = estimate_report(study=world["study"], params=_params(world))
    inverted = estimate_report(study=world["study"], params=_params(world, invert=True))
    assert plain["metric_mean"] == pytest.approx(np.mean([0.9, 0.8, 0.2, 0.1, 0.7, 0.3, 0.6, 0.5, 0.4]))
    assert inverted["metric_mean"] == pytest.approx(1 - plain["metric_mean"])


# --- the numbers with a design (plain data) -------------------------------------------------------------

RNG = np.random.default_rng(2026)
N_POP = 60
F_ALL = np.round(RNG.uniform(0, 1, N_POP), 3)
Y_ALL = (RNG.uniform(0, 1, N_POP) < 0.2 + 0.6 * F_ALL).astype(float)
SCORES = {100 + i: float(F_ALL[i]) for i in range(N_POP)}
LABELS = {100 + i: float(Y_ALL[i]) for i in range(N_POP)}


def test_a_uniform_design_gives_ppi_plus_plus_ppi_and_classical_as_the_pure_functions():
    drawn = sorted(RNG.choice(N_POP, 15, replace=False).tolist())
    design = SamplingDesign(UNIFORM, {100 + i: 15 / N_POP for i in drawn}, N_POP, "seed 7")
    extra = next(i for i in range(N_POP) if i not in drawn)  # labelled, but not drawn: its label is not used
    labels = {100 + i: LABELS[100 + i] for i in drawn} | {100 + extra: 1.0 - LABELS[100 + extra]}
    out = estimate_compute(scores=SCORES, labels=labels, design=design, alpha=0.05)
    y = np.array([LABELS[100 + i] for i in drawn])
    f = F_ALL[drawn]
    f_u = F_ALL[[i for i in range(N_POP) if i not in drawn]]
    expected = [ppi_stats.ppipp(y, f, f_u), ppi_stats.ppi(y, f, f_u), ppi_stats.classical(y)]
    assert out["valid"] is True and out["headline"] == "ppi++" and out["n_labelled"] == 15
    assert out["design"]["n_labelled_not_drawn"] == 1
    for got, want in zip(out["estimates"], expected, strict=True):
        assert got["method"] == want.method
        assert (got["point"], got["lower"], got["upper"], got["effective_labels"]) == pytest.approx(
            (want.point, want.lower, want.upper, want.effective_labels), rel=1e-12
        )


def test_a_probability_design_gives_the_inverse_probability_weighted_estimates():
    pi = np.clip(np.sqrt(F_ALL * (1 - F_ALL)), 0.05, 1.0) * 0.6
    drawn = [i for i in range(N_POP) if RNG.uniform() < pi[i]]
    design = SamplingDesign(PROBABILITY, {100 + i: float(pi[i]) for i in drawn}, N_POP)
    out = estimate_compute(scores=SCORES, labels=LABELS, design=design, alpha=0.1)
    y, f, p = Y_ALL[drawn], F_ALL[drawn], pi[drawn]
    f_u = F_ALL[[i for i in range(N_POP) if i not in drawn]]
    expected = [
        ppi_stats.active_mean(y, f, p, f_u, alpha=0.1),
        ppi_stats.active_mean(y, f, p, f_u, alpha=0.1, lam=1.0),
        ppi_stats.active_mean(y, f, p, f_u, alpha=0.1, lam=0.0),
    ]
    assert out["valid"] is True and out["headline"] == ppi_stats.ACTIVE
    assert out["design"]["n_labelled_not_drawn"] == N_POP - len(drawn)  # every item labelled; only drawn ones used
    assert "not used" in out["notes"][0]
    for got, want in zip(out["estimates"], expected, strict=True):
        assert got["method"] == want.method
        assert (got["point"], got["lower"], got["upper"]) == pytest.approx((want.point, want.lower, want.upper))


def test_a_drawn_item_without_a_label_refuses_the_estimate():
    design = SamplingDesign(UNIFORM, {100: 0.05, 101: 0.05, 102: 0.05}, N_POP)
    out = estimate_compute(scores=SCORES, labels={100: 1.0, 101: 0.0}, design=design, alpha=0.05)
    assert out["valid"] is False and out["estimates"] == []
    assert "1 of the 3 items" in out["refusal"]


def test_too_few_labels_are_refused_with_the_statistics_message():
    design = SamplingDesign(UNIFORM, {100: 0.02}, N_POP)
    out = estimate_compute(scores=SCORES, labels={100: 1.0}, design=design, alpha=0.05)
    assert out["valid"] is False and "at least 2" in out["refusal"]


def test_a_run_with_every_score_failed_has_no_population():
    out = estimate_compute(scores={}, labels={1: 1.0}, design=None, alpha=0.05)
    assert out["valid"] is False and "no population" in out["refusal"]


# --- parameters -----------------------------------------------------------------------------------------


def _query(world, **kw):
    q = {"pool": str(world["pool"].pk), "question": "pf", "run": str(world["run"].pk)}
    q.update(kw)
    return {k: v for k, v in q.items() if v is not None}


def test_parameters_default_the_positive_option_and_alpha(world):
    params = estimate_params_parse(study=world["study"], query=_query(world, invert="on"))
    assert params == _params(world, invert=True)
    assert estimate_params_parse(study=world["study"], query=_query(world, alpha="0.1")).alpha == "0.1"


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"positive": "maybe"}, ValidationFailed, "positive must be one of"),
        ({"question": "harm"}, ValidationFailed, "ordinal"),  # no default cut-off
        ({"question": "minutes"}, ValidationFailed, "is number"),
        ({"question": "nope"}, NotFound, "no such question"),
        ({"pool": "x"}, ValidationFailed, "pool must be"),
        ({"pool": "²"}, ValidationFailed, "pool must be"),
        ({"run": "٣"}, ValidationFailed, "run must be"),
        ({"run": "9" * 400}, ValidationFailed, "run must be"),
        ({"run": "999999"}, NotFound, "no such score run"),
        ({"pool": "999999"}, NotFound, "no such pool"),
        ({"alpha": "0.2"}, ValidationFailed, "alpha must be"),
        ({"alpha": "1e400"}, ValidationFailed, "alpha must be"),
        ({"run": None}, ValidationFailed, "choose a pool"),
    ],
)
def test_bad_parameters_are_refused(world, change, error, message):
    with pytest.raises(error, match=message):
        estimate_params_parse(study=world["study"], query=_query(world, **change))


def test_another_studys_run_and_pool_are_not_found(world):
    other = factories.make_study(slug="other-study")
    q = factories.make_question(other, "pf")
    other_pool = factories.make_pool(other, "theirs", questions=[q])
    other_run = ScoreRun.objects.create(study=other, metric="cf", metric_version="1", backend="lexical")
    with pytest.raises(NotFound):
        estimate_params_parse(study=world["study"], query=_query(world, run=str(other_run.pk)))
    with pytest.raises(NotFound):
        estimate_params_parse(study=world["study"], query=_query(world, pool=str(other_pool.pk)))
    with pytest.raises(NotFound):
        estimate_report(study=world["study"], params=_params(world, run_id=other_run.pk))


def test_a_run_without_item_level_values_is_refused(world, researcher):
    run = ScoreRun.objects.create(study=world["study"], metric="cf", metric_version="1", backend="lexical")
    Score.objects.create(run=run, item=world["items"][0], unit_key="s:0", value=0.5, state=ScoreState.OK)
    with pytest.raises(ValidationFailed, match="no item-level values"):
        estimate_report(study=world["study"], params=_params(world, run_id=run.pk))


def test_a_design_that_drew_every_item_gives_the_exact_share():
    design = SamplingDesign(UNIFORM, dict.fromkeys(SCORES, 1.0), N_POP)
    out = estimate_compute(scores=SCORES, labels=LABELS, design=design, alpha=0.05)
    assert out["valid"] is True and out["exact"] is True and out["exact_value"] == pytest.approx(Y_ALL.mean())
    assert out["design"]["n_drawn"] == N_POP and [e["method"] for e in out["estimates"]] == ["classical"]
