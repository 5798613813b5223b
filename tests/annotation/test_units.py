"""Unit keys are formatted and parsed in one place (annotation/units.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation import units


@pytest.mark.parametrize(
    ("key", "kind", "ref", "scope"),
    [("item", "item", None, "item"), ("s:0", "s", 0, "sentence"), ("src:12", "src", 12, "source"),
     ("c:3", "c", 3, "chunk"), ("a:41", "a", 41, "aspect")],
)
def test_every_kind_of_key_parses_to_its_kind_reference_and_scope(key, kind, ref, scope):
    unit = units.parse(key)
    assert (unit.kind, unit.ref, unit.scope, unit.key) == (kind, ref, scope, key)


@pytest.mark.parametrize("bad", ["", "s", "s:", "s:-1", "s:1.5", "x:1", "item:1", "S:1", "s:١", " s:1", None, 3])
def test_anything_else_is_refused_with_what_a_key_looks_like(bad):
    with pytest.raises(units.InvalidUnitKey):
        units.parse(bad)
    assert not units.is_valid(bad)


@given(st.sampled_from(["sentence", "chunk", "aspect"]), st.integers(min_value=0, max_value=10**9))
def test_formatting_then_parsing_gives_back_the_same_unit(scope, ref):
    key = units.for_scope(scope, ref)
    assert units.parse(key).scope == scope and units.parse(key).ref == ref


def test_builders_and_descriptions_count_from_one_as_people_do():
    assert units.of_sentence("answer", 2) == units.sentence(2) == "s:2"
    assert units.of_sentence("source", 2) == units.source_sentence(2) == "src:2"
    assert units.describe("s:2") == "sentence 3"
    assert units.describe("c:2") == "chunk 2"
    assert units.describe("a:99", aspect_position=1) == "aspect 1"
    assert units.describe("item") == "the answer as a whole"
