"""The answer vocabulary: what each question kind accepts and stores, how a form's fields become a value,
and how an answer is shown."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from django.http import QueryDict

from annotation import answers


@dataclass
class Q:
    kind: str
    options: list = field(default_factory=list)
    min_value: float | None = None
    max_value: float | None = None
    key: str = "q"
    scope: str = "item"
    condition: dict = field(default_factory=dict)
    required: bool = True

    @property
    def option_values(self) -> list[str]:
        return [str(o["value"]) for o in self.options]


YES_NO = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
SCALE = [{"value": str(n), "label": f"{n} stars"} for n in range(1, 6)]
TAGS = [{"value": "claim", "label": "Claim"}, {"value": "hedge", "label": "Hedge"}, {"value": "other"}]


def test_none_is_no_answer_for_every_kind():
    for kind in answers.KINDS:
        assert answers.normalise(Q(kind, options=YES_NO), None) is None


@pytest.mark.parametrize("value", ["yes", "no"])
def test_a_categorical_answer_is_stored_as_its_option_value(value):
    assert answers.normalise(Q("binary", options=YES_NO), value) == value


def test_an_ordinal_answer_given_as_a_number_is_stored_as_the_option_text():
    assert answers.normalise(Q("ordinal", options=SCALE), 4) == "4"


@pytest.mark.parametrize("value", ["maybe", "", " yes", True, 1.0, ["yes"], {"v": "yes"}])
def test_a_categorical_answer_outside_the_options_is_refused(value):
    with pytest.raises(answers.InvalidValue):
        answers.normalise(Q("nominal", options=YES_NO), value)


def test_multilabel_keeps_protocol_order_and_each_option_once():
    assert answers.normalise(Q("multilabel", options=TAGS), ["other", "claim", "claim"]) == ["claim", "other"]
    assert answers.normalise(Q("multilabel", options=TAGS), []) == []


@pytest.mark.parametrize("value", ["claim", ["claim", "nope"], [True], [["claim"]]])
def test_multilabel_refuses_what_is_not_a_list_of_options(value):
    with pytest.raises(answers.InvalidValue):
        answers.normalise(Q("multilabel", options=TAGS), value)


def test_alignment_is_a_sorted_list_of_distinct_sentences_that_exist():
    assert answers.normalise(Q("alignment"), [2, "0", 2], alignment_targets=[0, 1, 2]) == [0, 2]
    with pytest.raises(answers.InvalidValue, match="no sentence 3"):
        answers.normalise(Q("alignment"), [3], alignment_targets=[0, 1, 2])


def test_alignment_with_unknown_targets_checks_only_the_form_of_the_list():
    assert answers.normalise(Q("alignment"), [7, 1], alignment_targets=None) == [1, 7]
    for bad in ([-1], [True], ["x"], [1.5], "1", ["١"]):
        with pytest.raises(answers.InvalidValue):
            answers.normalise(Q("alignment"), bad, alignment_targets=None)


def test_text_is_stripped_blank_text_is_no_answer_and_length_is_capped():
    assert answers.normalise(Q("text"), "  a note \n") == "a note"
    assert answers.normalise(Q("text"), " \t ") is None
    assert answers.normalise(Q("text"), "x" * answers.MAX_TEXT_LENGTH) == "x" * answers.MAX_TEXT_LENGTH
    for bad in ("x" * (answers.MAX_TEXT_LENGTH + 1), "a\x00b", 3, ["a"]):
        with pytest.raises(answers.InvalidValue):
            answers.normalise(Q("text"), bad)


def test_numbers_are_finite_within_bounds_and_read_from_text():
    question = Q("number", min_value=0, max_value=10)
    assert answers.normalise(question, "7") == 7 and isinstance(answers.normalise(question, "7"), int)
    assert answers.normalise(question, " 2.5 ") == 2.5
    assert answers.normalise(question, 10) == 10
    for bad in (-1, 10.5, "nan", "inf", float("nan"), True, "seven", "", [1]):
        with pytest.raises(answers.InvalidValue):
            answers.normalise(question, bad)


def test_an_unknown_kind_is_refused():
    with pytest.raises(answers.InvalidValue, match="unknown question kind"):
        answers.normalise(Q("ranking"), "a")


def _form(text: str) -> QueryDict:
    return QueryDict(text)


def test_a_form_sends_list_kinds_as_repeated_fields_and_nothing_ticked_as_an_empty_list():
    assert answers.from_form(Q("multilabel", options=TAGS), _form("value=claim&value=other")) == ["claim", "other"]
    assert answers.from_form(Q("alignment"), _form("list=1")) == []
    assert answers.from_form(Q("alignment"), {"value": "2"}) == ["2"]
    assert answers.from_form(Q("alignment"), {}) == []


def test_a_blank_number_field_is_no_answer_but_other_fields_are_passed_on_as_typed():
    assert answers.from_form(Q("number"), _form("value=+")) is None
    assert answers.from_form(Q("number"), _form("value=3")) == "3"
    assert answers.from_form(Q("binary", options=YES_NO), _form("value=")) == ""  # refused by normalise
    assert answers.from_form(Q("text"), _form("value=+hi+")) == " hi "
    assert answers.from_form(Q("binary", options=YES_NO), _form("other=1")) is None


def test_a_blank_option_field_is_refused_and_blank_text_clears():
    with pytest.raises(answers.InvalidValue):
        answers.normalise(Q("binary", options=YES_NO), answers.from_form(Q("binary", options=YES_NO), _form("value=")))
    assert answers.normalise(Q("text"), answers.from_form(Q("text"), _form("value=+"))) is None


def test_display_uses_option_labels_and_counts_sentences_from_one():
    assert answers.display(Q("binary", options=YES_NO), "yes") == "Yes"
    assert answers.display(Q("ordinal", options=SCALE), "4") == "4 stars"
    assert answers.display(Q("multilabel", options=TAGS), ["claim", "other"]) == "Claim, other"
    assert answers.display(Q("multilabel", options=TAGS), []) == "none"
    assert answers.display(Q("alignment"), [0, 2]) == "sentence 1, sentence 3"
    assert answers.display(Q("alignment"), []) == "none"
    assert answers.display(Q("number"), 3.0) == "3"
    assert answers.display(Q("number"), 2.5) == "2.5"
    assert answers.display(Q("text"), "a note") == "a note"


def test_display_of_no_answer_is_said_in_words_or_as_the_caller_asks():
    assert answers.display(Q("binary", options=YES_NO), None) == "no answer"
    assert answers.display(Q("binary", options=YES_NO), None, empty="—") == "—"


def test_a_stored_value_no_longer_among_the_options_is_shown_as_stored():
    assert answers.display(Q("nominal", options=YES_NO), "retired") == "retired"
