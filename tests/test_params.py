"""The one parser of ids and bounded whole numbers from requests (concord/params.py)."""

from __future__ import annotations

import pytest

from concord.errors import ValidationFailed
from concord.params import parse_id, parse_ids, parse_int


@pytest.mark.parametrize("raw, expected", [("7", 7), (" 12 ", 12), (42, 42), ("007", 7)])
def test_an_id_of_ascii_digits_is_read(raw, expected):
    assert parse_id(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["", " ", "0", "-1", "+1", "1.0", "1e3", "²", "٣", "1²", "x", None, True, 1.0, [1], {"a": 1}, "9" * 19, "9" * 5000],
)
def test_anything_else_names_no_id(raw):
    assert parse_id(raw) is None


def test_a_list_of_ids_keeps_only_the_ids():
    assert parse_ids(["1", "²", "3", "9" * 5000, 4]) == [1, 3, 4]
    assert parse_ids("1,2") == []


def test_a_bounded_number_is_read_within_its_bounds():
    assert parse_int("5", name="n", minimum=1, maximum=10) == 5
    assert parse_int("-3", name="n", minimum=-5, maximum=5) == -3
    assert parse_int(10, name="n", minimum=1, maximum=10) == 10
    assert parse_int("", name="n", minimum=1, maximum=10, default=4) == 4
    assert parse_int(None, name="n", minimum=1, maximum=10, default=4) == 4


@pytest.mark.parametrize("raw", ["0", "11", "²", "1" * 400, "9" * 5000, "1.5", "x", True, [1], "--1"])
def test_a_bounded_number_outside_its_bounds_or_not_a_number_is_refused_naming_it(raw):
    with pytest.raises(ValidationFailed, match="n must be a whole number from 1 to 10"):
        parse_int(raw, name="n", minimum=1, maximum=10)


def test_a_missing_number_without_a_default_is_refused():
    with pytest.raises(ValidationFailed, match="n is required"):
        parse_int("", name="n", minimum=1, maximum=10)
