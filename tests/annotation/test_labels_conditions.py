"""Pure rules of answers: value validation (annotation/answers.py) and conditional questions (conditions.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from annotation.answers import InvalidValue, normalise
from annotation.conditions import (
    Missing,
    dependents_to_clear,
    is_applicable,
    missing_answers,
)


@dataclass
class Q:
    key: str
    scope: str = "sentence"
    kind: str = "binary"
    options: list = field(default_factory=lambda: ["yes", "no"])
    condition: dict = field(default_factory=dict)
    required: bool = True
    min_value: float | None = None
    max_value: float | None = None

    @property
    def option_values(self) -> list[str]:
        return list(self.options)


IB = Q("information_bearing")
GROUNDED = Q(
    "grounded",
    kind="nominal",
    options=["supported", "unsupported", "contradicted"],
    condition={"question": "information_bearing", "in": ["yes"]},
)
BY_KEY = {q.key: q for q in (IB, GROUNDED)}


def test_categorical_values_must_be_options():
    assert normalise(IB, "yes") == "yes"
    with pytest.raises(InvalidValue):
        normalise(IB, "maybe")
    with pytest.raises(InvalidValue):
        normalise(IB, True)


def test_multilabel_values_are_deduplicated_in_option_order():
    roles = Q("roles", kind="multilabel", options=["background", "definition", "example"])
    assert normalise(roles, ["example", "background", "example"]) == ["background", "example"]
    assert normalise(roles, []) == []
    with pytest.raises(InvalidValue):
        normalise(roles, "background")


def test_alignment_values_must_point_at_existing_sentences():
    align = Q("align", kind="alignment", options=[])
    assert normalise(align, ["2", 0, 2], alignment_targets=[0, 1, 2]) == [0, 2]
    with pytest.raises(InvalidValue, match="no sentence"):
        normalise(align, [5], alignment_targets=[0, 1, 2])


def test_numbers_respect_bounds_and_refuse_nan():
    n = Q("n", kind="number", options=[], min_value=1, max_value=5)
    assert normalise(n, "3.5") == 3.5
    for bad in (0, 6, "abc", float("nan"), float("inf")):
        with pytest.raises(InvalidValue):
            normalise(n, bad)


def test_empty_text_clears_the_answer():
    t = Q("t", kind="text", options=[])
    assert normalise(t, "  ") is None
    assert normalise(t, " ok ") == "ok"


def test_a_conditional_question_applies_only_when_its_condition_holds():
    assert not is_applicable(GROUNDED, "s:0", {}, BY_KEY)
    assert not is_applicable(GROUNDED, "s:0", {("information_bearing", "s:0"): "no"}, BY_KEY)
    assert is_applicable(GROUNDED, "s:0", {("information_bearing", "s:0"): "yes"}, BY_KEY)
    assert not is_applicable(GROUNDED, "s:1", {("information_bearing", "s:0"): "yes"}, BY_KEY)


def test_a_condition_on_a_question_the_pool_does_not_ask_is_ignored():
    assert is_applicable(GROUNDED, "s:0", {}, {"grounded": GROUNDED})


def test_an_item_level_condition_governs_every_unit():
    refused = Q("refused", scope="item")
    why = Q("why", kind="text", options=[], condition={"question": "refused", "in": ["yes"]})
    by_key = {"refused": refused, "why": why}
    assert is_applicable(why, "s:3", {("refused", "item"): "yes"}, by_key)
    assert dependents_to_clear(
        "refused", "item", {("refused", "item"): "no", ("why", "s:3"): "x", ("why", "s:4"): "y"}, by_key
    ) == [("why", "s:3"), ("why", "s:4")]


def test_missing_answers_respect_conditions_and_optional_questions():
    note = Q("note", kind="text", options=[], required=False)
    units = {"sentence": ["s:0", "s:1"]}
    answers = {("information_bearing", "s:0"): "yes", ("information_bearing", "s:1"): "no"}
    assert missing_answers([IB, GROUNDED, note], units, answers) == [Missing("grounded", "s:0")]


def test_an_alignment_with_nothing_to_align_to_is_not_required():
    align = Q("align", kind="alignment", options=[])
    assert missing_answers([align], {"sentence": ["s:0"]}, {}, alignment_targets_by_scope={"sentence": []}) == []
    assert missing_answers([align], {"sentence": ["s:0"]}, {}, alignment_targets_by_scope={"sentence": [0]}) == [
        Missing("align", "s:0")
    ]


def test_turning_a_condition_off_names_the_answers_to_clear_following_chains():
    severity = Q(
        "severity",
        kind="nominal",
        options=["minor", "major"],
        condition={"question": "grounded", "in": ["contradicted"]},
    )
    by_key = {**BY_KEY, "severity": severity}
    answers = {
        ("information_bearing", "s:0"): "no",
        ("grounded", "s:0"): "contradicted",
        ("severity", "s:0"): "major",
        ("grounded", "s:1"): "supported",
    }
    assert sorted(dependents_to_clear("information_bearing", "s:0", answers, by_key)) == [
        ("grounded", "s:0"),
        ("severity", "s:0"),
    ]
