"""The paired comparison of two score runs on the estimates report: items paired by their question text, the
labelled pairs a valid sample (every pair labelled, or both items drawn by the pool's design), and the numbers
against adjudication.stats.ppi on the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

from adjudication.analysis.estimates import PROBABILITY, UNIFORM, SamplingDesign, comparison_compute
from adjudication.stats import ppi as ppi_stats

N_PAIRS = 40
RNG = np.random.default_rng(3)
# System a's answers are items 1..40, system b's 101..140; item i of a and 100 + i of b answer question i.
PROMPTS = {i: f"Question {i}?" for i in range(1, N_PAIRS + 1)} | {
    100 + i: f"  question   {i}? " for i in range(1, N_PAIRS + 1)
}
SCORES_A = {i: float(RNG.uniform()) for i in range(1, N_PAIRS + 1)}
SCORES_B = {100 + i: float(RNG.uniform()) for i in range(1, N_PAIRS + 1)}
LABELS = {i: float(RNG.uniform() < SCORES_A[i]) for i in SCORES_A} | {
    j: float(RNG.uniform() < SCORES_B[j]) for j in SCORES_B
}
FRAME = frozenset(SCORES_A) | frozenset(SCORES_B)


def _compute(design, labels=LABELS, **kw):
    args = {"scores_a": SCORES_A, "scores_b": SCORES_B, "prompts": PROMPTS, "labels": labels, "design": design}
    args.update(kw)
    return comparison_compute(alpha=0.05, **args)


def test_a_uniform_design_uses_the_pairs_whose_two_items_were_drawn_with_the_paired_ppi_plus_plus():
    both = list(range(1, 16))  # pairs 1..15: both items drawn; pairs 16..20: only a's item
    drawn = {i: 0.4 for i in both + list(range(16, 21))} | {100 + i: 0.4 for i in both}
    out = _compute(SamplingDesign(UNIFORM, drawn, len(FRAME), frame=FRAME))
    assert out["valid"] is True and out["n_pairs"] == N_PAIRS and out["n_labelled_pairs"] == 15
    rest = list(range(16, N_PAIRS + 1))
    expected = ppi_stats.paired_difference(
        [LABELS[i] for i in both], [LABELS[100 + i] for i in both],
        [SCORES_A[i] for i in both], [SCORES_B[100 + i] for i in both],
        [SCORES_A[i] for i in rest], [SCORES_B[100 + i] for i in rest],
    )  # fmt: skip
    head, classical = out["estimates"]
    assert head["method"] == "paired ppi++" and out["headline"] == "paired ppi++"
    assert (head["point"], head["lower"], head["upper"]) == pytest.approx(
        (expected.point, expected.lower, expected.upper)
    )
    diff = np.array([LABELS[i] - LABELS[100 + i] for i in both])
    assert classical["point"] == pytest.approx(diff.mean()) and classical["n_labelled"] == 15
    assert out["metric_difference"] == pytest.approx(
        np.mean(list(SCORES_A.values())) - np.mean(list(SCORES_B.values()))
    )


def test_a_probability_design_weighs_each_pair_by_the_product_of_its_two_probabilities():
    pi = {i: 0.3 + 0.01 * i for i in range(1, 21)}
    drawn = pi | {100 + i: 0.5 for i in range(1, 21)}
    out = _compute(SamplingDesign(PROBABILITY, drawn, len(FRAME), frame=FRAME))
    both, rest = list(range(1, 21)), list(range(21, N_PAIRS + 1))
    expected = ppi_stats.active_mean(
        [LABELS[i] - LABELS[100 + i] for i in both], [SCORES_A[i] - SCORES_B[100 + i] for i in both],
        [pi[i] * 0.5 for i in both], [SCORES_A[i] - SCORES_B[100 + i] for i in rest],
    )  # fmt: skip
    assert out["valid"] is True and out["headline"] == "active ppi++"
    assert out["estimates"][0]["point"] == pytest.approx(expected.point)
    assert out["estimates"][0]["upper"] == pytest.approx(expected.upper)
    assert out["estimates"][1]["lam"] == 0.0


def test_without_a_design_every_pair_must_be_labelled_and_then_the_difference_is_exact():
    out = _compute(None)
    exact = np.mean([LABELS[i] - LABELS[100 + i] for i in range(1, N_PAIRS + 1)])
    assert out["valid"] is True and out["exact"] is True and out["exact_value"] == pytest.approx(exact)
    partly = {k: v for k, v in LABELS.items() if k != 107}
    out = _compute(None, labels=partly)
    assert out["valid"] is False and "39 of the 40 pairs" in out["refusal"] and "no sampling design" in out["refusal"]


def test_a_drawn_pair_missing_a_label_or_a_pair_outside_the_frame_is_refused():
    drawn = {i: 0.5 for i in range(1, 11)} | {100 + i: 0.5 for i in range(1, 11)}
    labels = {k: v for k, v in LABELS.items() if k != 103}
    out = _compute(SamplingDesign(UNIFORM, drawn, len(FRAME), frame=FRAME), labels=labels)
    assert out["valid"] is False and "1 of the 10 pairs" in out["refusal"]
    out = _compute(SamplingDesign(UNIFORM, drawn, 40, frame=frozenset(SCORES_A)))
    assert out["valid"] is False and "40 paired items were not among the items" in out["refusal"]
    one_pair = {1: 0.5, 101: 0.5, 2: 0.5, 3: 0.5}
    out = _compute(SamplingDesign(UNIFORM, one_pair, len(FRAME), frame=FRAME))
    assert out["valid"] is False and "drew both items of 1 of the 40 pairs" in out["refusal"]


def test_two_runs_over_the_same_items_or_without_shared_questions_are_refused():
    out = _compute(None, scores_b=SCORES_A)
    assert out["valid"] is False and "score 40 of the same items" in out["refusal"]
    prompts = {**PROMPTS, **{100 + i: f"other {i}" for i in range(1, N_PAIRS + 1)}}
    out = _compute(None, prompts=prompts)
    assert out["valid"] is False and "0 question(s) are answered by an item of each run" in out["refusal"]


def test_a_question_asked_twice_in_one_run_cannot_be_paired():
    prompts = {**PROMPTS, 2: "Question 1?"}
    out = _compute(None, prompts=prompts)
    assert out["n_pairs"] == N_PAIRS - 2 and "2 items of the first run and 0 of the second" in out["notes"][0]
