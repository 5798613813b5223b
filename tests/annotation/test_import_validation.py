"""The import's check of one record, called directly: what an importer is told (line, field, reason), what a
clean record becomes, and the long answers the dry run lists."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.imports import validation
from annotation.imports.deadline import Deadline
from annotation.imports.schema import RowError
from annotation.imports.validation import LongAnswers, Validator, long_answer
from annotation.protocols import study_protocol_apply
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def protocol_study(study):
    study_protocol_apply(study=study, presets=["astrid", "icat"])
    return study


def _record(**extra):
    rec = {"id": "q1", "question": "What dose?", "answer": "Take 0.5 mg daily. Ask your GP."}
    rec.update(extra)
    return rec


def _errors(study, rec, number=4):
    record, errors = Validator(study, where="line", accept_extra=False).validate(number, rec)
    assert record is None
    return [(e.location, e.field, e.reason) for e in errors]


# --- long answers ------------------------------------------------------------------------------------------


def test_a_long_answer_says_which_limit_it_passes():
    # Over the characters only: at the sentence limit is not over it.
    assert long_answer("Yes. No.", max_chars=3, max_sentences=2) == {
        "chars": 8,
        "sentences": 2,
        "reason": "8 characters (over 3)",
    }
    # Over the sentences only: at the character limit is not over it.
    assert long_answer("Go now. Stop here. Wait.", max_chars=24, max_sentences=2) == {
        "chars": 24,
        "sentences": 3,
        "reason": "3 sentences (over 2)",
    }
    assert long_answer("Go now. Stop here. Wait.", max_chars=5, max_sentences=2) == {
        "chars": 24,
        "sentences": 3,
        "reason": "24 characters (over 5) and 3 sentences (over 2)",
    }
    # An answer of as many characters as the sentence limit is split and its sentences counted; a shorter
    # one cannot hold that many and is not split.
    assert long_answer("Yes. No.", max_chars=3, max_sentences=8)["sentences"] == 2
    assert long_answer("Yes. No.", max_chars=3, max_sentences=9)["sentences"] == 0


def test_every_long_answer_is_counted_and_the_first_fifty_listed():
    long = LongAnswers("line", max_chars=3, max_sentences=100)
    for number in range(1, validation.MAX_LONG_LISTED + 3):
        long.check(number, f"r{number}", "Too long.")
    assert long.count == validation.MAX_LONG_LISTED + 2
    assert len(long.listed) == validation.MAX_LONG_LISTED
    assert long.listed[-1]["location"] == f"line {validation.MAX_LONG_LISTED}"
    assert long.listed[0] == {
        "location": "line 1",
        "id": "r1",
        "chars": 9,
        "sentences": 0,
        "reason": "9 characters (over 3)",
    }


# --- plain fields ------------------------------------------------------------------------------------------


def test_a_field_of_the_wrong_type_or_empty_names_the_field_and_what_was_found(protocol_study):
    assert _errors(protocol_study, _record(system=5, question="  ", source=["a"])) == [
        ("line 4", "question", "must not be empty"),
        ("line 4", "source", "must be a string, found a list"),
        ("line 4", "system", "must be a string, found a number"),
    ]


def test_a_clean_record_becomes_what_the_writer_stores(protocol_study):
    rec = _record(
        id=" 17 ",
        source="The source.",
        scope="in_scope",
        system="gpt4",
        metadata={"n": 1, "x": [1.5]},
        contexts=["plain", {"id": 7, "text": "seven"}, {"id": "d" * 200, "text": "t", "is_target": True}],
        aspects=["first", {"text": "second", "importance": "nice_to_have"}, {"text": "third"}],
    )
    record, errors = Validator(protocol_study, where="line", accept_extra=False).validate(1, rec)
    assert errors == []
    assert (record.external_id, record.question, record.answer, record.source, record.scope, record.system) == (
        "17",
        "What dose?",
        "Take 0.5 mg daily. Ask your GP.",
        "The source.",
        "in_scope",
        "gpt4",
    )
    assert (record.metadata, record.metadata_json) == ({"n": 1, "x": [1.5]}, '{"n": 1, "x": [1.5]}')
    assert record.contexts == [("", "plain", False), ("7", "seven", False), ("d" * 200, "t", True)]
    assert record.aspects == [("first", "must_have"), ("second", "nice_to_have"), ("third", "must_have")]
    assert (record.labels, record.raw, record.has_extra) == ([], rec, False)
    # At the length of their columns an id and a system are taken.
    longest, _ = Validator(protocol_study, where="line", accept_extra=False).validate(
        1, _record(id="i" * 200, system="s" * 200)
    )
    assert (longest.external_id, longest.system) == ("i" * 200, "s" * 200)
    bare, _ = Validator(protocol_study, where="line", accept_extra=False).validate(1, _record(metadata={}))
    assert (bare.metadata, bare.metadata_json, bare.contexts, bare.aspects, bare.source) == ({}, "{}", [], [], "")


def test_unknown_fields_and_values_are_named_with_what_is_known(protocol_study):
    assert _errors(protocol_study, _record(zeta=1, anwser="typo")) == [
        (
            "line 4",
            "anwser",
            "unknown field(s) anwser, zeta (known: id, question, answer, contexts, source, aspects, "
            "scope, system, metadata, labels, control, gold, scores)",
        )
    ]
    assert _errors(protocol_study, _record(scope="urgent")) == [
        ("line 4", "scope", "'urgent' is not one of emergency, in_scope, out_of_scope, non_clinical")
    ]
    assert _errors(protocol_study, _record(id=True, system="s" * 201)) == [
        ("line 4", "id", "must be a string, found true/false"),
        ("line 4", "system", "longer than 200 characters"),
    ]
    assert _errors(protocol_study, _record(id="i" * 201, answer=None)) == [
        ("line 4", "id", "longer than 200 characters"),
        ("line 4", "answer", "required field is missing"),
    ]
    assert _errors(protocol_study, {"question": "Q?", "answer": "A."}) == [
        ("line 4", "id", "required field is missing")
    ]
    assert _errors(protocol_study, _record(id=" ")) == [("line 4", "id", "must not be empty")]
    assert _errors(protocol_study, _record(metadata=[1])) == [("line 4", "metadata", "must be an object, found a list")]
    assert _errors(protocol_study, _record(metadata={"x": float("inf")})) == [
        (
            "line 4",
            "metadata",
            "contains a NUL character (\\u0000), which cannot be stored, or a number that is not "
            "finite (NaN, Infinity)",
        )
    ]


def test_gold_and_scores_are_lists_of_objects_taken_only_by_the_export_importer(protocol_study):
    for value in ({"a": 1}, [{"a": 1}, 2]):
        assert _errors(protocol_study, _record(scores=value)) == [("line 4", "scores", "must be a list of objects")]
    assert _errors(protocol_study, _record(gold=[], scores=[{}])) == [
        ("line 4", "gold", "gold are imported with `python manage.py import_study_export`, not as items"),
        ("line 4", "scores", "scores are imported with `python manage.py import_study_export`, not as items"),
    ]
    validator = Validator(protocol_study, where="line", accept_extra=True)
    record, errors = validator.validate(1, _record(scores=[{"v": 1}]))
    assert errors == [] and record.has_extra
    assert not validator.validate(2, _record(id="q2"))[0].has_extra


# --- contexts and aspects ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contexts", "field", "reason"),
    [
        ("text", "contexts", "must be a list, found a string"),
        (["ok", 3], "contexts[1]", "must be a string or an object, found a number"),
        (
            [{"text": "a", "zeta": 1, "alpha": 2}],
            "contexts[0]",
            "unknown key(s) alpha, zeta (known: id, text, is_target)",
        ),
        ([{"id": "d"}], "contexts[0].text", "required string"),
        ([{"text": 5}], "contexts[0].text", "must be a string, found a number"),
        ([{"text": "a", "id": True}], "contexts[0].id", "must be a string of at most 200 characters"),
        ([{"text": "a", "id": "d" * 201}], "contexts[0].id", "must be a string of at most 200 characters"),
        ([{"text": "a", "is_target": "yes"}], "contexts[0].is_target", "must be true or false, found a string"),
        ([{"text": "a", "is_target": 1}], "contexts[0].is_target", "must be true or false, found a number"),
        ([{"text": "a\x00"}], "contexts[0].text", validation._NUL_REASON),
        ([{"text": "a", "id": "d\x00"}], "contexts[0].id", validation._NUL_REASON),
        (["a\x00"], "contexts[0]", validation._NUL_REASON),
    ],
)
def test_a_bad_context_is_named_by_its_position_and_key(protocol_study, contexts, field, reason):
    assert _errors(protocol_study, _record(contexts=contexts)) == [("line 4", field, reason)]


def test_a_context_with_an_unknown_key_is_refused_once_and_a_later_bad_one_too(protocol_study):
    assert _errors(protocol_study, _record(contexts=[{"text": "a", "x": 1}, {"text": 2}, "fine"])) == [
        ("line 4", "contexts[0]", "unknown key(s) x (known: id, text, is_target)"),
        ("line 4", "contexts[1].text", "must be a string, found a number"),
    ]


@pytest.mark.parametrize(
    ("aspects", "field", "reason"),
    [
        ({"text": "a"}, "aspects", "must be a list, found an object"),
        (["ok", 3], "aspects[1]", "must be a string or an object, found a number"),
        ([{"text": "a", "zeta": 1, "alpha": 2}], "aspects[0]", "unknown key(s) alpha, zeta (known: text, importance)"),
        (
            [{"text": "a", "importance": "urgent"}],
            "aspects[0].importance",
            "'urgent' is not one of must_have, nice_to_have",
        ),
        (["  "], "aspects[0]", "must be a non-empty string"),
        ([{"text": " "}], "aspects[0].text", "must be a non-empty string"),
        ([{"importance": "must_have"}], "aspects[0].text", "must be a non-empty string"),
        (["a\x00"], "aspects[0]", validation._NUL_REASON),
        ([{"text": "a\x00"}], "aspects[0].text", validation._NUL_REASON),
    ],
)
def test_a_bad_aspect_is_named_by_its_position_and_key(protocol_study, aspects, field, reason):
    assert _errors(protocol_study, _record(aspects=aspects)) == [("line 4", field, reason)]


def test_every_bad_aspect_of_a_record_is_named(protocol_study):
    assert _errors(protocol_study, _record(aspects=[{"text": "a", "importance": "x"}, "", "fine", 1])) == [
        ("line 4", "aspects[0].importance", "'x' is not one of must_have, nice_to_have"),
        ("line 4", "aspects[1]", "must be a non-empty string"),
        ("line 4", "aspects[3]", "must be a string or an object, found a number"),
    ]


# --- labels ------------------------------------------------------------------------------------------------


def _label(annotator="A", question="refused", unit="item", value="no", **extra):
    return {"annotator": annotator, "question": question, "unit": unit, "value": value, **extra}


@pytest.mark.parametrize(
    ("labels", "field", "reason"),
    [
        ("A", "labels", "must be a list, found a string"),
        ([3], "labels[0]", "must be an object, found a number"),
        (
            [_label(zeta=1, alpha=2)],
            "labels[0]",
            "unknown key(s) alpha, zeta (known: annotator, question, unit, value)",
        ),
        (
            [_label(annotator=7)],
            "labels[0].annotator",
            "must be a pseudonym of 1 to 40 characters, not counting white space around it",
        ),
        (
            [_label(annotator="P" * 41)],
            "labels[0].annotator",
            "must be a pseudonym of 1 to 40 characters, not counting white space around it",
        ),
        ([_label(annotator="A\x00")], "labels[0].annotator", validation._NUL_REASON),
        ([_label(question="nope")], "labels[0].question", "'nope' is not a question of study 'demo-study'"),
        ([_label(question=5)], "labels[0].question", "5 is not a question of study 'demo-study'"),
        ([_label(unit="x:1")], "labels[0].unit", "'x:1' is not a unit (item, s:<i>, c:<rank>, a:<i>)"),
        ([_label(unit="src:0")], "labels[0].unit", "'src:0' is not a unit (item, s:<i>, c:<rank>, a:<i>)"),
        ([_label(unit=3)], "labels[0].unit", "3 is not a unit (item, s:<i>, c:<rank>, a:<i>)"),
        ([_label(unit="s:0")], "labels[0].unit", "question 'refused' is asked per item, not per sentence"),
        (
            [_label(question="grounded", unit="s:2", value="supported")],
            "labels[0].unit",
            "the answer has 2 sentences, no s:2",
        ),
        (
            [_label(question="context_relevant", unit="c:0", value="yes")],
            "labels[0].unit",
            "the record has 1 contexts (ranks from 1), no c:0",
        ),
        (
            [_label(question="context_relevant", unit="c:2", value="yes")],
            "labels[0].unit",
            "the record has 1 contexts (ranks from 1), no c:2",
        ),
        (
            [_label(question="aspect_covered", unit="a:1", value="yes")],
            "labels[0].unit",
            "the record has 1 aspects (counted from 0), no a:1",
        ),
        ([{"annotator": "A", "question": "refused"}], "labels[0].value", "value is missing"),
        ([_label(value="maybe")], "labels[0].value", "'maybe' is not an option; expected one of yes, no"),
        (
            [_label(question="aspect_evidence", unit="a:0", value=[2])],
            "labels[0].value",
            "there is no sentence 2 to align to",
        ),
    ],
)
def test_a_bad_label_is_named_by_its_position_and_key(protocol_study, labels, field, reason):
    rec = _record(contexts=["ctx"], aspects=["x"], labels=labels)
    assert _errors(protocol_study, rec) == [("line 4", field, reason)]


def test_a_good_label_is_taken_at_the_last_unit_of_each_kind_and_normalised(protocol_study):
    labels = [
        _label(annotator=" A "),
        {"annotator": "B", "question": "refused", "value": "yes"},
        _label(question="grounded", unit="s:01", value="supported"),
        _label(question="context_relevant", unit="c:2", value="yes"),
        _label(question="aspect_covered", unit="a:1", value="no"),
        _label(question="aspect_evidence", unit="a:0", value=[1, 0, 1]),
    ]
    rec = _record(contexts=["one", "two"], aspects=["x", "y"], labels=labels)
    record, errors = Validator(protocol_study, where="line", accept_extra=False).validate(1, rec)
    assert errors == []
    assert [(lab.pseudonym, lab.question.key, lab.unit, lab.value) for lab in record.labels] == [
        ("A", "refused", "item", "no"),
        ("B", "refused", "item", "yes"),
        ("A", "grounded", "s:1", "supported"),
        ("A", "context_relevant", "c:2", "yes"),
        ("A", "aspect_covered", "a:1", "no"),
        ("A", "aspect_evidence", "a:0", [0, 1]),
    ]


def test_a_sentence_alignment_points_into_the_source_and_an_aspect_one_into_the_answer(protocol_study):
    factories.make_question(protocol_study, "support", scope="sentence", kind="alignment", options=[])
    rec = _record(
        source="One here. Two here. Three here.",
        labels=[
            _label(question="support", unit="s:1", value=[2]),
            _label(question="aspect_evidence", unit="a:0", value=[1]),
        ],
        aspects=["x"],
    )
    record, errors = Validator(protocol_study, where="line", accept_extra=False).validate(1, rec)
    assert errors == [] and [lab.value for lab in record.labels] == [[2], [1]]
    rec["labels"] = [
        _label(question="support", unit="s:0", value=[3]),
        _label(question="aspect_evidence", unit="a:0", value=[2]),
    ]
    assert _errors(protocol_study, rec) == [
        ("line 4", "labels[0].value", "there is no sentence 3 to align to"),
        ("line 4", "labels[1].value", "there is no sentence 2 to align to"),
    ]



@pytest.mark.parametrize("value", ["doc-1", ["doc-1", ""], ["doc-1", None], [True], [{"id": "d"}], {"a": 1}, [1.5]])
def test_malformed_target_ids_are_refused_naming_the_field(protocol_study, value):
    """metadata.target_ids is what the retrieval metrics count misses from: a malformed one is an error naming the
    row and the field, never silently ignored (a miss would go uncounted)."""
    errors = _errors(protocol_study, _record(metadata={"target_ids": value}))
    assert [(where, field) for where, field, _ in errors] == [("line 4", "metadata.target_ids")]
    assert "must be a list of document ids" in errors[0][2]


def test_well_formed_target_ids_pass_as_given(protocol_study):
    rec = _record(metadata={"target_ids": ["bnf-colchicine", 42], "topic": "gout"})
    record, errors = Validator(protocol_study, where="line", accept_extra=False).validate(1, rec)
    assert errors == [] and record.metadata == {"target_ids": ["bnf-colchicine", 42], "topic": "gout"}


# --- every error of a record, each in its place ---------------------------------------------------------


def test_every_bad_context_of_a_record_is_named_in_order(protocol_study):
    # One bad context never hides the next: each is named by its position, whatever was wrong with it.
    contexts = [
        "a\x00",
        3,
        {"text": 5},
        {"text": "a", "id": True},
        {"text": "a", "id": "d\x00"},
        {"text": "a", "is_target": "yes"},
        {"text": "a\x00"},
        {"text": "b", "id": "d" * 200, "zeta": 1},  # an id at the column's length is not an error
        {"id": "d"},
    ]
    assert _errors(protocol_study, _record(contexts=contexts)) == [
        ("line 4", "contexts[0]", validation._NUL_REASON),
        ("line 4", "contexts[1]", "must be a string or an object, found a number"),
        ("line 4", "contexts[2].text", "must be a string, found a number"),
        ("line 4", "contexts[3].id", "must be a string of at most 200 characters"),
        ("line 4", "contexts[4].id", validation._NUL_REASON),
        ("line 4", "contexts[5].is_target", "must be true or false, found a string"),
        ("line 4", "contexts[6].text", validation._NUL_REASON),
        ("line 4", "contexts[7]", "unknown key(s) zeta (known: id, text, is_target)"),
        ("line 4", "contexts[8].text", "required string"),
    ]


def test_a_context_object_without_id_or_target_is_an_untargeted_passage_without_document(protocol_study):
    record, errors = Validator(protocol_study, where="line", accept_extra=False).validate(
        1, _record(contexts=[{"text": "no id"}, {"text": "target", "is_target": True}, {"id": 12, "text": "t"}])
    )
    assert errors == []
    assert record.contexts == [("", "no id", False), ("", "target", True), ("12", "t", False)]


def test_every_bad_aspect_is_named_after_one_that_is_no_object_or_holds_a_nul(protocol_study):
    assert _errors(protocol_study, _record(aspects=[1, "a\x00", {"text": "b\x00"}, "  ", "fine"])) == [
        ("line 4", "aspects[0]", "must be a string or an object, found a number"),
        ("line 4", "aspects[1]", validation._NUL_REASON),
        ("line 4", "aspects[2].text", validation._NUL_REASON),
        ("line 4", "aspects[3]", "must be a non-empty string"),
    ]


def test_every_bad_label_of_a_record_is_named_in_order(protocol_study):
    # Each kind of mistake, each followed by another: none stops the check of the labels after it.
    labels = [
        _label(),
        3,
        _label(zeta=1),
        _label(annotator=""),
        _label(annotator="B\x00"),
        _label(annotator="\u200b"),
        _label(question="nope"),
        _label(question=["refused"]),
        _label(unit="x:1"),
        _label(unit="s:0"),
        _label(question="grounded", unit="s:5", value="supported"),
        _label(question="context_relevant", unit="c:5", value="yes"),
        _label(question="aspect_covered", unit="a:5", value="yes"),
        {"annotator": "A", "question": "refused"},
        _label(annotator="B", value="maybe"),
        _label(value="yes"),
        _label(annotator="a", question="grounded", unit="s:0", value="supported"),
        _label(annotator=7),
    ]
    rec = _record(contexts=["ctx"], aspects=["x"], labels=labels)
    assert _errors(protocol_study, rec) == [
        ("line 4", "labels[1]", "must be an object, found a number"),
        ("line 4", "labels[2]", "unknown key(s) zeta (known: annotator, question, unit, value)"),
        ("line 4", "labels[3].annotator", "must be a pseudonym of 1 to 40 characters, not counting white space "
                                          "around it"),
        ("line 4", "labels[4].annotator", validation._NUL_REASON),
        ("line 4", "labels[5].annotator", "'\\u200b' has no visible character"),
        ("line 4", "labels[6].question", "'nope' is not a question of study 'demo-study'"),
        ("line 4", "labels[7].question", "['refused'] is not a question of study 'demo-study'"),
        ("line 4", "labels[8].unit", "'x:1' is not a unit (item, s:<i>, c:<rank>, a:<i>)"),
        ("line 4", "labels[9].unit", "question 'refused' is asked per item, not per sentence"),
        ("line 4", "labels[10].unit", "the answer has 2 sentences, no s:5"),
        ("line 4", "labels[11].unit", "the record has 1 contexts (ranks from 1), no c:5"),
        ("line 4", "labels[12].unit", "the record has 1 aspects (counted from 0), no a:5"),
        ("line 4", "labels[13].value", "value is missing"),
        ("line 4", "labels[14].value", "'maybe' is not an option; expected one of yes, no"),
        ("line 4", "labels[15]", "a second label of 'A' for 'refused' on item"),
        ("line 4", "labels[16].annotator", "pseudonym 'a' looks like 'A' (line 4, labels[0].annotator): write one "
                                           "annotator one way, and give two annotators pseudonyms that do not look "
                                           "alike"),
        ("line 4", "labels[17].annotator", "must be a pseudonym of 1 to 40 characters, not counting white space "
                                           "around it"),
    ]


def test_malformed_target_ids_are_told_what_the_retrieval_metrics_read(protocol_study):
    assert _errors(protocol_study, _record(metadata={"target_ids": [""]})) == [(
        "line 4", "metadata.target_ids", "must be a list of document ids (non-empty strings or integers), as the "
        "retrieval metrics read it; an id of another form would be ignored and a miss go uncounted",
    )]


# --- the scan: the whole source, every error in file order ---------------------------------------------------


def _scan(study, records, **kw):
    kw.setdefault("pool_name", "imported")
    kw.setdefault("deadline", Deadline(seconds=60, clock=lambda: 0.0, filename="x.jsonl"))
    return validation.scan(study, lambda: iter(list(enumerate(records, start=1))), "line", False, **kw)


def test_the_scan_lists_every_error_in_file_order_whichever_check_found_it(protocol_study):
    factories.make_item(protocol_study, "old")
    scan = _scan(protocol_study, [
        _record(id="old"),  # found by the existing-id check, after the pass
        RowError("line", 2, "", "malformed JSON: Expecting value (column 1)"),  # found by the reader
        _record(id="q3", answer=None),
        _record(id="q4"),
        _record(id="q4"),  # found by the duplicate check, after the pass
    ])
    assert [(e.location, e.field, e.reason) for e in scan.errors] == [
        ("line 1", "id", "id 'old' already exists in study 'demo-study'; it is not imported again"),
        ("line 2", "", "malformed JSON: Expecting value (column 1)"),
        ("line 3", "answer", "required field is missing"),
        ("line 5", "id", "duplicate id 'q4': also on line 4"),
    ]
    assert (scan.n_errors, scan.n_records) == (4, 3)


def test_a_scan_flags_long_answers_by_its_own_limits_and_by_default(protocol_study, settings):
    settings.IMPORT_LONG_ANSWER_CHARS, settings.IMPORT_LONG_ANSWER_SENTENCES = 10, 1
    records = [_record(id="short", answer="Yes."), _record(id="wordy", answer="Twelve chars"),
               _record(id="two", answer="One. Two.")]
    by_settings = _scan(protocol_study, records)
    assert [(a["location"], a["id"], a["reason"]) for a in by_settings.long_answers] == [
        ("line 2", "wordy", "12 characters (over 10)"), ("line 3", "two", "2 sentences (over 1)")]
    own = _scan(protocol_study, records, long_chars=11, long_sentences=2)
    assert [(a["id"], a["reason"]) for a in own.long_answers] == [("wordy", "12 characters (over 11)")]
    assert _scan(protocol_study, records, flag_long=False).long_answers == []


@pytest.mark.parametrize("branch", ["portable", "postgresql"])
def test_the_existing_id_check_finds_the_studys_ids_only_in_item_order(protocol_study, monkeypatch, branch):
    for external_id in ("b", "a", "c", "unlisted"):
        factories.make_item(protocol_study, external_id)
    factories.make_item(factories.make_study(), "d")  # another study's
    if branch == "portable":
        # The ORM's query, which SQLite takes; it must find what PostgreSQL's array query finds.
        monkeypatch.setattr(validation, "connection", SimpleNamespace(vendor="sqlite"))
    elif connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's own query")
    with CaptureQueriesContext(connection) as queries:
        assert validation._existing_ids(protocol_study, ["c", "d", "a", "zz"]) == ["a", "c"]
    if connection.vendor == "postgresql":
        # On PostgreSQL the ids go as one array parameter, whatever their number.
        [query] = queries.captured_queries
        assert ("= ANY(" in query["sql"]) == (branch == "postgresql")


# --- items of known answer (the ``control`` field) -----------------------------------------------------------


@pytest.fixture
def control_study(study):
    factories.make_question(study, "ok")  # binary, about the whole item
    factories.make_question(study, "ib", scope="sentence")
    return study


EXPLANATION_REASON = "must be text of at most 2000 characters"


@pytest.mark.parametrize(
    "control, field, reason",
    [
        ("yes", "control", "must be an object, found a string"),
        ({"answers": {"ok": "yes"}, "why": "x", "also": 1}, "control",
         "unknown key(s) also, why (known: kind, answers, explanation)"),
        ({"kind": "gold", "answers": {"ok": "yes"}}, "control.kind",
         "must be one of control, qualification, attention"),
        ({"answers": {"ok": "yes"}, "explanation": 3}, "control.explanation", EXPLANATION_REASON),
        ({"answers": {"ok": "yes"}, "explanation": "a\x00b"}, "control.explanation", EXPLANATION_REASON),
        ({"answers": {"ok": "yes"}, "explanation": "x" * 2001}, "control.explanation", EXPLANATION_REASON),
        ({"answers": {"nope": "yes"}}, "control.answers", "known answers: the study has no question 'nope'"),
        ({"answers": {"ib": "yes"}}, "control.answers",
         "known answers: 'ib' is not about the whole item (only item questions)"),
        ({}, "control.answers", "known answers must be an object {question key: answer} with at least one answer"),
    ],
    ids=["not-an-object", "unknown-keys", "kind", "explanation-number", "explanation-nul", "explanation-long",
         "unknown-question", "sentence-question", "no-answers"],
)
def test_a_malformed_control_field_is_named_with_its_reason(control_study, control, field, reason):
    assert _errors(control_study, _record(control=control)) == [("line 4", field, reason)]


def test_a_control_field_becomes_the_items_known_answer(control_study):
    validator = Validator(control_study, where="line", accept_extra=False)
    record, errors = validator.validate(1, _record(control={"answers": {"ok": "yes"}}))
    assert errors == [] and record.control == {"kind": "control", "answers": {"ok": "yes"}, "explanation": ""}
    # Each kind, and an explanation of exactly the longest length allowed.
    for kind in ("control", "qualification", "attention"):
        record, errors = validator.validate(2, _record(control={"kind": kind, "answers": {"ok": "no"},
                                                                 "explanation": "x" * 2000}))
        assert errors == [] and record.control == {"kind": kind, "answers": {"ok": "no"}, "explanation": "x" * 2000}
    assert validator.validate(3, _record())[0].control is None
