"""Human targets from coded ratings (adjudication.stats.targets): majority vote, binary target, value coding."""

from __future__ import annotations

import numpy as np
import pytest

from adjudication.stats import targets

nan = np.nan


def test_the_majority_is_the_strict_plurality_and_ties_are_left_out_and_counted():
    codes = np.array(
        [
            [0, 0, 1],  # 0 wins
            [1, nan, 1],  # 1 wins, one rater missing
            [0, 1, nan],  # tie
            [nan, nan, nan],  # nobody rated it: neither a winner nor a tie
            [2, 2, 2],
        ]
    )
    kept, winners, ties = targets.majority(codes, 3)
    assert kept.tolist() == [0, 1, 4]
    assert winners.tolist() == [0, 1, 2]
    assert ties == 1


def test_a_majority_of_no_units_is_empty():
    kept, winners, ties = targets.majority(np.empty((0, 3)), 2)
    assert kept.size == 0 and winners.size == 0 and ties == 0


def test_a_binary_target_is_one_option_or_for_ordinal_scales_that_option_and_any_later_one():
    positions = np.array([0.0, 1.0, 2.0, nan])
    np.testing.assert_array_equal(targets.binary(positions, 1), [0.0, 1.0, 0.0, nan])
    np.testing.assert_array_equal(targets.binary(positions, 1, at_least=True), [0.0, 1.0, 1.0, nan])


def test_the_default_positive_is_the_first_option_or_the_middle_of_an_ordinal_scale():
    assert targets.default_positive(["yes", "no"], ordinal=False) == "yes"
    assert targets.default_positive(["none", "slight", "severe"], ordinal=True) == "slight"
    assert targets.default_positive(["1", "2", "3", "4", "5"], ordinal=True) == "3"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3.0), (2.5, 2.5), ("-1.5", -1.5), (True, nan), ("many", nan), ([1], nan), (None, nan), ("inf", nan)],
)
def test_only_finite_numbers_count_as_numbers(value, expected):
    got = targets.number_or_nan(value)
    assert (np.isnan(got) and np.isnan(expected)) or got == expected


def test_a_stored_answer_is_a_position_on_the_declared_options_or_a_number():
    options = ["no", "partly", "yes"]
    assert targets.scale_position("yes", options) == 2.0
    assert targets.scale_position("maybe", options) is None
    assert targets.scale_position(["yes"], options) is None
    assert targets.scale_position("4.5", None) == 4.5
    assert targets.scale_position("n/a", None) is None
