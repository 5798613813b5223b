"""The import service and its three entry points: all or nothing, every error located."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotation.answers import MAX_TEXT_LENGTH
from annotation.imports import MAX_ERRORS, ImportRejected, file_source, items_import, records_import, validation, writer
from annotation.imports.validation import IdIndex
from annotation.models import (
    Aspect,
    Assignment,
    AssignmentStatus,
    Chunk,
    ImportBatch,
    Item,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Role,
    Sentence,
    Study,
)
from annotation.protocols import study_protocol_apply
from concord.errors import Conflict, PayloadTooLarge
from tests import factories

User = get_user_model()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The personas' passwords are hashed once per test; the production hasher costs ~1 s each here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _jsonl(*records) -> io.BytesIO:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def _record(i=1, **extra):
    rec = {"id": f"q{i}", "question": "What dose of drug X?", "answer": "Take 0.5 mg daily, e.g. with food. Hello!"}
    rec.update(extra)
    return rec


def _import(study, file, filename="items.jsonl", **kw):
    return items_import(study=study, file=file, filename=filename, **kw)


def _counts():
    return (Item.objects.count(), Sentence.objects.count(), Chunk.objects.count(), Aspect.objects.count(),
            Label.objects.count(), LabelHistory.objects.count(), Assignment.objects.count(), Pool.objects.count(),
            User.objects.count(), ImportBatch.objects.count())


def _rejected(study, file, filename="items.jsonl", **kw) -> list[dict]:
    before = _counts()
    with pytest.raises(ImportRejected) as info:
        _import(study, file, filename, **kw)
    assert _counts() == before, "a rejected import must write nothing"
    return [e.as_dict() for e in info.value.errors]


@pytest.fixture
def protocol_study(study):
    study_protocol_apply(study=study, presets=["astrid", "icat"])
    return study


# --- what a good file becomes --------------------------------------------------------------------


def test_a_record_becomes_an_item_with_sentences_chunks_and_aspects(protocol_study, researcher):
    rec = _record(
        contexts=["Drug X: 0.5 mg once daily.", {"id": "doc-7", "text": "Take with food.", "is_target": True}],
        source="The source abstract. It has two sentences.",
        aspects=["Dose is 0.5 mg", {"text": "Take with food", "importance": "nice_to_have"}],
        scope="in_scope", system="gpt4", metadata={"batch": 3},
    )
    result = _import(protocol_study, _jsonl(rec), actor=researcher)
    item = Item.objects.get(study=protocol_study, external_id="q1")
    assert (item.scope_class, item.system, item.metadata) == ("in_scope", "gpt4", {"batch": 3})
    answer = list(item.sentences.filter(part="answer"))
    assert [s.text for s in answer] == ["Take 0.5 mg daily, e.g. with food.", "Hello!"]
    assert all(item.answer[s.start : s.end] == s.text for s in answer)
    assert item.sentences.filter(part="source").count() == 2
    chunks = list(item.chunks.all())
    assert [(c.rank, c.document_id, c.is_labelled_target) for c in chunks] == [(1, "", False), (2, "doc-7", True)]
    assert [(a.text, a.importance) for a in item.aspects.all()] == [
        ("Dose is 0.5 mg", "must_have"),
        ("Take with food", "nice_to_have"),
    ]
    batch = ImportBatch.objects.get(pk=result.batch_id)
    assert (batch.n_items, batch.by, batch.filename) == (1, researcher, "items.jsonl")
    assert (result.n_items, result.n_sentences, result.n_chunks, result.n_aspects) == (1, 4, 2, 2)


def test_integer_ids_are_accepted_as_strings(protocol_study):
    _import(protocol_study, _jsonl(_record(id=17)))
    assert Item.objects.filter(external_id="17").exists()


def test_html_is_stored_as_text(protocol_study):
    _import(protocol_study, _jsonl(_record(answer="<script>alert(1)</script> Take it. <b>Now</b>!")))
    assert Item.objects.get().answer == "<script>alert(1)</script> Take it. <b>Now</b>!"


def test_existing_labels_become_submitted_work_of_inactive_pseudonymous_annotators(protocol_study):
    labels = [
        {"annotator": "A", "question": "information_bearing", "unit": "s:0", "value": "yes"},
        {"annotator": "A", "question": "perceived_faithfulness", "unit": "item", "value": 4},
        {"annotator": "B", "question": "aspect_covered", "unit": "a:1", "value": "no"},
        {"annotator": "B", "question": "context_relevant", "unit": "c:1", "value": "yes"},
    ]
    rec = _record(aspects=["first", "second"], contexts=["ctx"], labels=labels)
    result = _import(protocol_study, _jsonl(rec))
    assert (result.n_labels, result.n_annotators) == (4, 2)
    pool = Pool.objects.get(study=protocol_study, name="imported")
    members = {m.pseudonym: m for m in PoolMembership.objects.filter(pool=pool).select_related("user")}
    assert set(members) == {"A", "B"}
    for m in members.values():
        assert not m.user.is_active and not m.user.has_usable_password()
        assert m.user.study_roles.filter(study=protocol_study, role=Role.ANNOTATOR).exists()
    assignments = Assignment.objects.filter(pool=pool)
    assert assignments.count() == 2
    assert set(assignments.values_list("status", flat=True)) == {AssignmentStatus.SUBMITTED}
    second_aspect = Aspect.objects.get(text="second")
    label = Label.objects.get(question__key="aspect_covered")
    assert (label.unit_key, label.value, label.updated_by) == (f"a:{second_aspect.pk}", "no", members["B"].user)
    assert Label.objects.get(question__key="perceived_faithfulness").value == "4"
    assert LabelHistory.objects.count() == 4
    for h in LabelHistory.objects.select_related("label"):
        assert (h.old_value, h.new_value, h.new_version, h.actor_id) == (None, h.label.value, 1, h.label.updated_by_id)
    assert set(pool.questions.values_list("key", flat=True)) == {
        "information_bearing", "perceived_faithfulness", "aspect_covered", "context_relevant",
    }


def test_a_second_import_reuses_the_pools_pseudonymous_annotators(protocol_study):
    lab = [{"annotator": "A", "question": "refused", "unit": "item", "value": "no"}]
    _import(protocol_study, _jsonl(_record(1, labels=lab)))
    _import(protocol_study, _jsonl(_record(2, labels=lab)))
    assert PoolMembership.objects.filter(pseudonym="A").count() == 1
    assert Assignment.objects.values("annotator").distinct().count() == 1


def test_labels_can_go_to_a_named_pool(protocol_study):
    lab = [{"annotator": "A", "question": "refused", "unit": "item", "value": "no"}]
    result = _import(protocol_study, _jsonl(_record(labels=lab)), pool_name="physicians")
    assert result.pool_name == "physicians"
    assert Pool.objects.filter(study=protocol_study, name="physicians").exists()


def test_imported_submissions_send_assignment_submitted(protocol_study, submit_receivers):
    calls.clear()
    submit_receivers(record_call)
    lab = [{"annotator": a, "question": "refused", "unit": "item", "value": "no"} for a in ("A", "B")]
    _import(protocol_study, _jsonl(_record(1, labels=lab), _record(2)))
    item = Item.objects.get(external_id="q1")
    assert calls == [{"sender": Assignment, "pool_id": Pool.objects.get(name="imported").pk, "item_id": item.pk}]


def test_a_failing_receiver_rolls_the_whole_import_back(protocol_study, submit_receivers):
    """The signal is sent inside the import's transaction: a receiver that fails leaves nothing imported."""

    def explode(sender, **kwargs):
        raise RuntimeError("receiver failed")

    submit_receivers(explode)
    lab = [{"annotator": a, "question": "refused", "unit": "item", "value": "no"} for a in ("A", "B")]
    with pytest.raises(RuntimeError, match="receiver failed"):
        _import(protocol_study, _jsonl(_record(1, labels=lab), _record(2)))
    assert not Item.objects.filter(study=protocol_study).exists()
    assert not Assignment.objects.filter(pool__study=protocol_study).exists()


calls: list[dict] = []


def record_call(sender, *, pool_id, item_id, **kwargs):
    calls.append({"sender": sender, "pool_id": pool_id, "item_id": item_id})


def test_csv_with_json_cells_imports(protocol_study):
    text = (
        "id,question,answer,contexts,aspects,metadata,scope\n"
        'c1,"Is it safe?","Yes, it is. Ask your GP!",'
        '"[""ctx one"", ""ctx two""]","[""aspect""]","{""k"": 1}",in_scope\n'
        'c2,"Second?","Multi\nline answer.",,,,\n'
    )
    result = _import(protocol_study, io.BytesIO(text.encode()), "items.csv")
    assert result.n_items == 2 and result.n_chunks == 2 and result.n_aspects == 1
    assert Item.objects.get(external_id="c1").metadata == {"k": 1}
    assert Item.objects.get(external_id="c2").answer == "Multi\nline answer."


def test_gzip_files_are_read(protocol_study):
    data = gzip.compress(_jsonl(_record(1), _record(2)).getvalue())
    assert _import(protocol_study, io.BytesIO(data), "items.jsonl.gz").n_items == 2


def test_a_dry_run_counts_and_writes_nothing(protocol_study):
    before = _counts()
    lab = [{"annotator": "A", "question": "refused", "unit": "item", "value": "no"}]
    result = _import(protocol_study, _jsonl(_record(1, labels=lab), _record(2)), dry_run=True)
    assert (result.dry_run, result.n_items, result.n_labels, result.batch_id) == (True, 2, 1, None)
    assert _counts() == before


def test_a_dry_run_adds_up_every_record_s_chunks_aspects_and_labels(protocol_study):
    lab = [{"annotator": "A", "question": "refused", "unit": "item", "value": "no"}]
    records = (
        _record(1, contexts=["a", "b"], aspects=["x"], labels=lab),
        _record(2, contexts=["c"], aspects=["y", "z"], labels=[{**lab[0], "annotator": "B"}]),
        _record(3),
    )
    result = _import(protocol_study, _jsonl(*records), dry_run=True)
    assert (result.n_items, result.n_chunks, result.n_aspects, result.n_labels) == (3, 3, 3, 2)


def test_extra_writer_gets_gold_and_scores_inside_the_transaction(protocol_study):
    seen = []

    def writer(item, record):
        seen.append((item.external_id, record["gold"], record.get("scores")))

    _import(protocol_study, _jsonl(_record(1, gold=[{"question": "refused", "value": "no"}]), _record(2)),
            extra_writer=writer)
    assert seen == [("q1", [{"question": "refused", "value": "no"}], None)]


def test_a_failing_extra_writer_undoes_the_whole_import(protocol_study):
    def writer(item, record):
        raise RuntimeError("bad gold")

    before = _counts()
    with pytest.raises(RuntimeError):
        _import(protocol_study, _jsonl(_record(1), _record(2, gold=[{}])), extra_writer=writer)
    assert _counts() == before


# --- what a bad file is told -----------------------------------------------------------------------


def test_missing_required_field_is_rejected_with_its_line_and_field(protocol_study):
    rec = _record(2)
    del rec["answer"]
    errors = _rejected(protocol_study, _jsonl(_record(1), rec))
    assert errors == [{"location": "line 2", "line": 2, "field": "answer", "reason": "required field is missing"}]


def test_wrong_types_are_rejected_with_line_and_field(protocol_study):
    errors = _rejected(
        protocol_study, _jsonl(_record(1, metadata=["not", "an", "object"]), _record(2, contexts="text"))
    )
    assert [(e["line"], e["field"]) for e in errors] == [(1, "metadata"), (2, "contexts")]
    assert "must be an object, found a list" in errors[0]["reason"]


def test_duplicate_id_in_one_file_names_both_lines(protocol_study):
    errors = _rejected(protocol_study, _jsonl(_record(1), _record(2), _record(1)))
    assert errors == [{"location": "line 3", "line": 3, "field": "id", "reason": "duplicate id 'q1': also on line 1"}]


def test_an_id_repeated_three_times_names_the_first_line_each_time(protocol_study):
    errors = _rejected(protocol_study, _jsonl(_record(7), _record(1), _record(7), _record(2), _record(7)))
    assert [(e["line"], e["reason"]) for e in errors] == [
        (3, "duplicate id 'q7': also on line 1"), (5, "duplicate id 'q7': also on line 1"),
    ]


def test_the_id_index_finds_repeats_among_many_ids():
    index = IdIndex()
    for n in range(1, 20_001):
        index.add(f"item-{n % 15_000}", n)
    repeats = index.repeats()
    assert len(repeats) == 5_000
    assert all(first == number - 15_000 for number, first in repeats)


def test_the_id_index_takes_digests_equal_in_one_half_only_for_different_ids():
    # Two ids are one only when both 64-bit halves of their digests are equal. No two real ids can be found
    # to share one half, so the digests are written into the index directly.
    index = IdIndex()
    index.high.extend([5, 5, 9, 1, 1])
    index.low.extend([1, 2, 7, 7, 7])
    index.numbers.extend([1, 2, 3, 4, 5])
    # (5, 1) and (5, 2) share the high half, (9, 7) and (1, 7) the low half: only (1, 7) repeats.
    assert index.repeats() == [(5, 4)]


def test_malformed_json_names_the_line(protocol_study):
    errors = _rejected(protocol_study, _jsonl(_record(1), '{"id": "q2", "question": "x",', _record(3)))
    assert len(errors) == 1 and errors[0]["line"] == 2
    assert errors[0]["reason"].startswith("malformed JSON")


def test_a_csv_with_a_broken_quote_is_rejected(protocol_study):
    text = 'id,question,answer\nc1,"fine","fine."\nc2,"never closed,answer.\nc3,q,a.\n'
    errors = _rejected(protocol_study, io.BytesIO(text.encode()), "items.csv")
    assert errors[0]["row"] == 3
    assert "CSV syntax error" in errors[0]["reason"] and "quote" in errors[0]["reason"]


def test_csv_rows_are_numbered_as_a_spreadsheet_shows_them(protocol_study):
    text = 'id,question,answer,metadata\nc1,q,a.,\nc2,q,a.,{not json}\nc3,,a.,\n'
    errors = _rejected(protocol_study, io.BytesIO(text.encode()), "items.csv")
    assert [(e["row"], e["field"]) for e in errors] == [(3, "metadata"), (4, "question")]


def test_csv_with_unknown_or_missing_columns_is_rejected_at_the_header(protocol_study):
    errors = _rejected(protocol_study, io.BytesIO(b"id,question,anwser\nc1,q,a.\n"), "items.csv")
    assert errors[0]["row"] == 1 and "missing column(s) answer" in errors[0]["reason"]
    assert "unknown column(s) anwser" in errors[0]["reason"]


@override_settings(IMPORT_MAX_BYTES=100)
def test_a_file_over_the_limit_is_refused_before_parsing(protocol_study):
    before = _counts()
    data = io.BytesIO(b"this is not even JSON " * 10)
    with pytest.raises(PayloadTooLarge) as info:
        _import(protocol_study, data)
    assert "220 bytes; the import limit is 100 bytes" in info.value.message
    assert info.value.details[0]["field"] == "file"
    assert _counts() == before


@override_settings(IMPORT_MAX_BYTES=10_000)
def test_a_gzip_bomb_is_refused(protocol_study):
    rec = _record(answer="a. " * 20_000)
    bomb = gzip.compress(json.dumps(rec).encode())
    assert len(bomb) < 10_000
    before = _counts()
    with pytest.raises(PayloadTooLarge, match="decompresses to more than 10000 bytes"):
        _import(protocol_study, io.BytesIO(bomb), "bomb.jsonl.gz")
    assert _counts() == before


def test_every_error_of_the_file_is_reported_not_only_the_first(protocol_study):
    errors = _rejected(
        protocol_study, _jsonl(_record(1, scope="urgent"), _record(2, question=""), _record(3, system=5))
    )
    assert [(e["line"], e["field"]) for e in errors] == [(1, "scope"), (2, "question"), (3, "system")]


def test_errors_are_capped(protocol_study):
    records = [_record(i, scope="bad") for i in range(MAX_ERRORS + 20)]
    with pytest.raises(ImportRejected) as info:
        _import(protocol_study, _jsonl(*records))
    assert len(info.value.errors) == MAX_ERRORS and info.value.total == MAX_ERRORS + 20
    assert "showing the first 200" in info.value.message


def test_unknown_fields_are_rejected_not_dropped(protocol_study):
    errors = _rejected(protocol_study, _jsonl(_record(1, anwser="typo")))
    assert errors[0]["field"] == "anwser" and "unknown field" in errors[0]["reason"]


@pytest.mark.parametrize(
    ("label", "field", "reason"),
    [
        (
            {"annotator": "A", "question": "nope", "unit": "item", "value": "yes"},
            "labels[0].question",
            "is not a question",
        ),
        (
            {"annotator": "A", "question": "refused", "unit": "item", "value": "maybe"},
            "labels[0].value",
            "is not an option",
        ),
        ({"annotator": "A", "question": "refused", "unit": "s:0", "value": "no"}, "labels[0].unit", "asked per item"),
        (
            {"annotator": "A", "question": "grounded", "unit": "s:9", "value": "supported"},
            "labels[0].unit",
            "has 2 sentences",
        ),
        (
            {"annotator": "A", "question": "context_relevant", "unit": "c:1", "value": "yes"},
            "labels[0].unit",
            "has 0 contexts",
        ),
        (
            {"annotator": "A", "question": "aspect_covered", "unit": "a:0", "value": "yes"},
            "labels[0].unit",
            "has 0 aspects",
        ),
        ({"annotator": "", "question": "refused", "unit": "item", "value": "no"}, "labels[0].annotator", "pseudonym"),
        (
            {"annotator": "A", "question": "aspect_evidence", "unit": "a:0", "value": "1"},
            "labels[0].unit",
            "has 0 aspects",
        ),
        (
            {"annotator": "A", "question": "missing_aspects", "unit": "item", "value": 3},
            "labels[0].value",
            "expected text",
        ),
    ],
)
def test_labels_are_checked_against_the_studys_questions(protocol_study, label, field, reason):
    errors = _rejected(protocol_study, _jsonl(_record(labels=[label])))
    assert errors[0]["field"] == field and reason in errors[0]["reason"], errors


def test_an_alignment_label_must_point_at_existing_sentences(protocol_study):
    label = {"annotator": "A", "question": "aspect_evidence", "unit": "a:0", "value": [0, 5]}
    errors = _rejected(protocol_study, _jsonl(_record(aspects=["x"], labels=[label])))
    assert errors[0]["field"] == "labels[0].value" and "no sentence 5" in errors[0]["reason"]


def test_label_values_are_stored_normalised_as_the_workspace_stores_them(protocol_study):
    labels = [
        {"annotator": "A", "question": "missing_aspects", "unit": "item", "value": "  two missing  "},
        {"annotator": "A", "question": "aspect_evidence", "unit": "a:0", "value": [1, 0, 1]},
        {"annotator": "B", "question": "missing_aspects", "unit": "item", "value": "   "},
    ]
    _import(protocol_study, _jsonl(_record(aspects=["x"], labels=labels)))
    pseudonyms = dict(PoolMembership.objects.values_list("user_id", "pseudonym"))
    stored = {(pseudonyms[lab.assignment.annotator_id], lab.question.key): lab.value
              for lab in Label.objects.select_related("assignment", "question")}
    assert stored == {("A", "missing_aspects"): "two missing", ("A", "aspect_evidence"): [0, 1],
                      ("B", "missing_aspects"): None}


def test_label_text_longer_than_the_workspace_allows_is_refused(protocol_study):
    label = {"annotator": "A", "question": "missing_aspects", "unit": "item", "value": "x" * (MAX_TEXT_LENGTH + 1)}
    errors = _rejected(protocol_study, _jsonl(_record(labels=[label])))
    assert errors[0]["field"] == "labels[0].value" and "longer than" in errors[0]["reason"]


def test_gold_without_an_extra_writer_points_to_the_export_importer(protocol_study):
    errors = _rejected(protocol_study, _jsonl(_record(gold=[{"question": "refused", "value": "no"}])))
    assert errors[0]["field"] == "gold" and "python manage.py import_study_export" in errors[0]["reason"]


def test_reimporting_an_existing_id_is_reported_and_never_duplicated(protocol_study):
    _import(protocol_study, _jsonl(_record(1)))
    errors = _rejected(protocol_study, _jsonl(_record(2), _record(1)))
    assert errors == [{"location": "line 2", "line": 2, "field": "id",
                       "reason": "id 'q1' already exists in study 'demo-study'; it is not imported again"}]
    assert Item.objects.filter(external_id="q1").count() == 1


def test_an_id_written_by_another_import_between_the_passes_is_a_conflict(protocol_study, monkeypatch):
    real_scan = validation.scan

    def scan_then_race(*args, **kwargs):
        result = real_scan(*args, **kwargs)
        factories.make_item(protocol_study, "q2")  # another import commits q2 meanwhile
        return result

    monkeypatch.setattr(validation, "scan", scan_then_race)
    with pytest.raises(Conflict, match="another import"):
        _import(protocol_study, _jsonl(_record(1), _record(2), _record(3)))
    assert list(Item.objects.values_list("external_id", flat=True)) == ["q2"]
    assert not ImportBatch.objects.exists()


def test_the_same_id_in_another_study_is_fine(protocol_study):
    other = factories.make_study()
    _import(protocol_study, _jsonl(_record(1)))
    _import(other, _jsonl(_record(1)))
    assert Item.objects.filter(external_id="q1").count() == 2


def test_nul_characters_and_non_finite_numbers_are_refused_on_every_database(protocol_study):
    errors = _rejected(protocol_study, _jsonl(
        _record(1, answer="Take it.\x00"), _record(2, contexts=["a\x00b"]), _record(3, metadata={"x": float("nan")}),
        _record(4, aspects=[{"text": "a\x00"}]), _record(5, contexts=[{"id": "doc\x00", "text": "a"}]),
        _record(6, contexts=["a", {"id": "doc\x00", "text": "b", "is_target": True, "extra": 1}]),
        _record(7, labels=[{"annotator": "A\x00", "question": "perceived_faithfulness", "unit": "item", "value": 4}]),
    ))
    assert [(e["line"], e["field"]) for e in errors] == [
        (1, "answer"),
        (2, "contexts[0]"),
        (3, "metadata"),
        (4, "aspects[0].text"),
        (5, "contexts[0].id"),
        (6, "contexts[1]"),
        (6, "contexts[1].id"),
        (7, "labels[0].annotator"),
    ]


_NUL = "contains a NUL character (\\u0000), which cannot be stored"


@pytest.mark.parametrize(("extra", "field", "reason"), [
    ({"id": "q\x00"}, "id", _NUL),
    ({"question": "Why?\x00"}, "question", _NUL),
    ({"source": "The source.\x00"}, "source", _NUL),
    ({"system": "rag\x00"}, "system", _NUL),
    ({"scope": "in_scope\x00"}, "scope", _NUL),
    ({"metadata": {"site": ["a", "b\x00"]}}, "metadata", "contains a NUL character"),
    ({"metadata": {"si\x00te": 1}}, "metadata", "contains a NUL character"),
    ({"contexts": ["ok", "b\x00"]}, "contexts[1]", _NUL),
    ({"contexts": [{"text": "b\x00"}]}, "contexts[0].text", _NUL),
    ({"contexts": [{"id": "d\x00", "text": "b"}]}, "contexts[0].id", _NUL),
    ({"aspects": ["a\x00"]}, "aspects[0]", _NUL),
    ({"aspects": [{"text": "a\x00", "importance": "nice_to_have"}]}, "aspects[0].text", _NUL),
    ({"labels": [{"annotator": "A\x00", "question": "refused", "unit": "item", "value": "no"}]}, "labels[0].annotator",
     _NUL),
    ({"labels": [{"annotator": "A", "question": "missing_aspects", "unit": "item", "value": "x\x00"}]},
     "labels[0].value", "text contains a NUL character"),
])
def test_a_nul_character_in_any_field_is_refused_naming_line_and_field(protocol_study, extra, field, reason):
    # PostgreSQL stores no NUL in text or JSON: refused here, on either database, before anything is written.
    errors = _rejected(protocol_study, _jsonl(_record(1), _record(2, **extra)))
    assert [(e["line"], e["field"]) for e in errors if reason in e["reason"]] == [(2, field)], errors


def test_a_second_label_of_one_annotator_for_one_question_and_unit_is_refused(protocol_study):
    def label(annotator, question="refused", unit="item", value="no"):
        return {"annotator": annotator, "question": question, "unit": unit, "value": value}

    errors = _rejected(protocol_study, _jsonl(
        _record(1, labels=[label("A"), label("B"), label("A", value="yes")]),
        _record(2, labels=[label("A", "grounded", "s:0", "supported"), label(" A ", "grounded", "s:00", "supported")]),
    ))
    assert [(e["location"], e["field"], e["reason"]) for e in errors] == [
        ("line 1", "labels[2]", "a second label of 'A' for 'refused' on item"),
        ("line 2", "labels[1]", "a second label of 'A' for 'grounded' on s:0"),
    ]
    # One label each per question and unit, on any number of items, is what a file holds.
    result = _import(protocol_study, _jsonl(
        _record(1, labels=[label("A"), label("B")]), _record(2, labels=[label("A")]),
        _record(3, labels=[label("A"), label("A", "grounded", "s:0", "supported")]),
    ))
    assert (result.n_labels, Label.objects.count()) == (5, 5)


def test_a_live_annotator_who_joins_between_the_check_and_the_write_stops_the_import(protocol_study, annotator,
                                                                                     monkeypatch):
    real_scan = validation.scan

    def scan_then_join(*args, **kwargs):
        result = real_scan(*args, **kwargs)
        factories.add_member(factories.make_pool(protocol_study, "live"), annotator, pseudonym="ＫＩＭ")
        return result

    monkeypatch.setattr(validation, "scan", scan_then_join)
    lab = [{"annotator": "kim", "question": "refused", "unit": "item", "value": "no"}]
    with pytest.raises(ImportRejected) as refused:
        _import(protocol_study, _jsonl(_record(1), _record(2, labels=lab)))
    assert [e.as_dict() for e in refused.value.errors] == [{
        "location": "line 2", "line": 2, "field": "labels[0].annotator",
        "reason": "pseudonym 'kim' looks like 'ＫＩＭ', the pseudonym of a live annotator of pool 'live'; imported "
                  "labels need pseudonyms of their own"}]
    assert not Item.objects.exists() and not Label.objects.exists() and not ImportBatch.objects.exists()


def test_an_empty_file_is_rejected(protocol_study):
    # The whole file is the place to look, as the error table shows it: no line number, "file" for both.
    errors = _rejected(protocol_study, io.BytesIO(b"\n\n"))
    assert errors == [{"location": "file", "field": "file", "reason": "no records found"}]


# --- budgets: lines and wall-clock seconds -----------------------------------------------------------


@override_settings(IMPORT_MAX_LINES=50)
@pytest.mark.parametrize("name", ["items.jsonl.gz", "items.csv.gz"])
def test_a_file_past_the_line_budget_is_answered_413_and_writes_nothing(client, protocol_study, researcher, name):
    # A few hundred bytes of gzip that inflate to a hundred thousand blank lines before one good record.
    head = b"id,question,answer\n" if name.startswith("items.csv") else b""
    record = b"q1,Why?,Because.\n" if name.startswith("items.csv") else json.dumps(_record(1)).encode() + b"\n"
    body = gzip.compress(head + b" \n" * 100_000 + record)
    client.force_login(researcher)
    before = _counts()
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import", {"file": _upload(body, name)})
    assert response.status_code == 413
    assert response.json()["detail"].startswith(f"{name} has more than 50 lines (IMPORT_MAX_LINES)")
    page = client.post(f"/studies/{protocol_study.slug}/import/", {"file": _upload(body, name), "dry_run": "on"})
    assert page.status_code == 413 and b"more than 50 lines (IMPORT_MAX_LINES)" in page.content
    assert _counts() == before


class _Clock:
    """A monotonic clock that the test moves, read by the import's wall-clock budget instead of the machine's."""

    def __init__(self, *, step: float = 0.0) -> None:
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _moving(source, clock, *, on_pass: int, at: int, seconds: float):
    """``source``, moving ``clock`` on by ``seconds`` when its pass ``on_pass`` (1: the check, 2: the write)
    reaches record ``at``."""
    passes = 0

    def moved():
        nonlocal passes
        passes += 1
        for number, rec in source():
            if passes == on_pass and number == at:
                clock.now += seconds
            yield number, rec

    return moved


def _budgeted_import(study, clock, *, on_pass, at, seconds, n=6):
    source, _ = file_source(_jsonl(*(_record(i) for i in range(1, n + 1))), filename="items.jsonl")
    return records_import(study=study, source=_moving(source, clock, on_pass=on_pass, at=at, seconds=seconds),
                          filename="items.jsonl", where="line", clock=clock)


@override_settings(IMPORT_MAX_SECONDS=60)
def test_an_import_past_its_wall_clock_budget_is_refused_where_it_got_and_writes_nothing(protocol_study):
    before = _counts()
    with pytest.raises(PayloadTooLarge) as refused:
        _budgeted_import(protocol_study, _Clock(), on_pass=1, at=3, seconds=60.5)
    assert refused.value.status_code == 413
    assert refused.value.message.startswith(
        "items.jsonl: the import ran longer than 60 seconds (IMPORT_MAX_SECONDS) and was stopped at line 3")
    assert refused.value.details == [{"location": "line 3", "line": 3, "field": "file",
                                      "reason": "longer than 60 seconds (IMPORT_MAX_SECONDS)"}]
    assert _counts() == before
    # Sixty seconds are within the budget.
    assert _budgeted_import(protocol_study, _Clock(), on_pass=1, at=3, seconds=60).n_items == 6


@override_settings(IMPORT_MAX_SECONDS=60)
def test_the_budget_counts_the_check_and_the_write_and_a_refused_write_is_undone(protocol_study, monkeypatch):
    monkeypatch.setattr(writer, "BATCH_SIZE", 2)  # lines 1 to 4 are written before the budget runs out
    before = _counts()
    with pytest.raises(PayloadTooLarge, match="stopped at line 5"):
        _budgeted_import(protocol_study, _Clock(), on_pass=2, at=5, seconds=61)
    assert _counts() == before
    # The check's seconds count too: 40 of them there and 30 in the write are over 60.
    clock = _Clock()
    source, _ = file_source(_jsonl(_record(1), _record(2)), filename="items.jsonl")
    source = _moving(_moving(source, clock, on_pass=1, at=2, seconds=40), clock, on_pass=2, at=1, seconds=30)
    with pytest.raises(PayloadTooLarge, match="stopped at line 1"):
        records_import(study=protocol_study, source=source, filename="items.jsonl", where="line", clock=clock)
    # A file with repeated ids is read a second time for their messages: within the budget too.
    clock = _Clock()
    source, _ = file_source(_jsonl(_record(1), _record(2), _record(1)), filename="items.jsonl")
    with pytest.raises(PayloadTooLarge, match="stopped at line 2"):
        records_import(study=protocol_study, source=_moving(source, clock, on_pass=2, at=2, seconds=61),
                       filename="items.jsonl", where="line", clock=clock, dry_run=True)
    assert _counts() == before


@override_settings(IMPORT_MAX_SECONDS=60)
def test_the_api_the_page_and_a_console_check_refuse_an_import_past_its_budget(client, protocol_study, researcher,
                                                                              monkeypatch):
    from annotation.imports import jobs, service
    from annotation.models import ImportJobStatus

    monkeypatch.setattr(service, "monotonic", _Clock(step=61))  # each reading of the clock 61 s after the last
    client.force_login(researcher)
    body = _jsonl(_record(1), _record(2)).getvalue()
    before = _counts()
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import", {"file": _upload(body)})
    assert response.status_code == 413
    assert "ran longer than 60 seconds (IMPORT_MAX_SECONDS) and was stopped at line 1" in response.json()["detail"]
    page = client.post(f"/studies/{protocol_study.slug}/import/", {"file": _upload(body)})
    assert page.status_code == 413 and b"IMPORT_MAX_SECONDS" in page.content
    job = jobs.import_job_create(study=protocol_study, actor=researcher, upload=_upload(body))
    job = jobs.import_job_check(job_id=job.pk)
    assert job.status == ImportJobStatus.INVALID
    assert job.errors == [{"location": "line 1", "line": 1, "field": "file",
                           "reason": "longer than 60 seconds (IMPORT_MAX_SECONDS)"}]
    assert _counts() == before


# --- the command line ---------------------------------------------------------------------------------


def _write(tmp_path, name, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


def test_command_imports_and_prints_counts(protocol_study, tmp_path, capsys):
    path = _write(tmp_path, "items.jsonl", _jsonl(_record(1), _record(2)).getvalue())
    call_command("import_items", path, "--study", protocol_study.slug)
    assert "imported 2 items" in capsys.readouterr().out
    assert Item.objects.filter(study=protocol_study).count() == 2


def test_command_prints_the_error_table_and_exits_non_zero(protocol_study, tmp_path, capsys):
    rec = _record(2)
    del rec["question"]
    path = _write(tmp_path, "items.jsonl", _jsonl(_record(1), rec).getvalue())
    with pytest.raises(CommandError, match="1 error; nothing was imported"):
        call_command("import_items", path, "--study", protocol_study.slug)
    err = capsys.readouterr().err
    assert "line 2" in err and "question" in err and "required field is missing" in err
    assert not Item.objects.exists()


def test_command_creates_a_study_with_a_protocol(tmp_path, researcher, capsys):
    path = _write(tmp_path, "items.csv", b"id,question,answer\nx,q?,Answer.\n")
    call_command("import_items", path, "--study", "new-one", "--create", "--protocol", "pubhealth,astrid",
                 "--owner", researcher.username)
    study = Study.objects.get(slug="new-one")
    assert study.protocol_presets == ["pubhealth", "astrid"]
    assert study.questions.filter(key="rubric_clarity").exists()
    assert study.roles.filter(user=researcher, role=Role.RESEARCHER).exists()


def test_command_dry_run_creates_nothing_not_even_the_study(tmp_path, researcher, capsys):
    path = _write(tmp_path, "items.jsonl", _jsonl(_record(1)).getvalue())
    call_command("import_items", path, "--study", "dry", "--create", "--protocol", "astrid", "--owner",
                 researcher.username, "--dry-run")
    assert "would import 1 items" in capsys.readouterr().out
    assert not Study.objects.filter(slug="dry").exists()


def test_command_refuses_an_unknown_study_without_create(tmp_path, db):
    path = _write(tmp_path, "items.jsonl", _jsonl(_record(1)).getvalue())
    with pytest.raises(CommandError, match="no study 'ghost'"):
        call_command("import_items", path, "--study", "ghost")


def test_command_refuses_an_unknown_preset(tmp_path, researcher):
    path = _write(tmp_path, "items.jsonl", _jsonl(_record(1)).getvalue())
    with pytest.raises(CommandError, match="unknown protocol preset"):
        call_command(
            "import_items", path, "--study", "s", "--create", "--protocol", "astrix", "--owner", researcher.username
        )
    assert not Study.objects.filter(slug="s").exists()


# --- the web page and the API ----------------------------------------------------------------------


def _upload(content: bytes, name="items.jsonl"):
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def test_researcher_imports_through_the_page(client, protocol_study, researcher):
    client.force_login(researcher)
    url = f"/studies/{protocol_study.slug}/import/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"file": _upload(_jsonl(_record(1)).getvalue())})
    assert response.status_code == 200
    assert b"imported 1 items" in response.content
    assert Item.objects.filter(study=protocol_study).count() == 1


def test_page_dry_run_writes_nothing(client, protocol_study, researcher):
    client.force_login(researcher)
    response = client.post(f"/studies/{protocol_study.slug}/import/",
                           {"file": _upload(_jsonl(_record(1)).getvalue()), "dry_run": "on"})
    assert b"nothing was written" in response.content
    assert not Item.objects.exists()


def test_page_shows_the_error_table_with_user_text_escaped(client, protocol_study, researcher):
    client.force_login(researcher)
    rec = _record(
        labels=[{"annotator": "A", "question": "refused", "unit": "item", "value": "<script>alert(1)</script>"}]
    )
    response = client.post(f"/studies/{protocol_study.slug}/import/", {"file": _upload(_jsonl(rec).getvalue())})
    assert response.status_code == 400
    body = response.content.decode()
    assert "labels[0].value" in body and "line 1" in body
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_page_answers_htmx_with_the_fragment_only(client, protocol_study, researcher):
    client.force_login(researcher)
    response = client.post(f"/studies/{protocol_study.slug}/import/", {"file": _upload(b"{broken\n")},
                           HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "Nothing was imported" in body and "<html" not in body
    assert "HX-Request" in response["Vary"]


def test_annotator_gets_403_and_stranger_404_on_the_page(client, protocol_study, annotator, stranger):
    factories.grant(protocol_study, annotator, Role.ANNOTATOR)
    client.force_login(annotator)
    assert client.get(f"/studies/{protocol_study.slug}/import/").status_code == 403
    client.force_login(stranger)
    assert client.get(f"/studies/{protocol_study.slug}/import/").status_code == 404
    assert client.get("/studies/no-such-study/import/").status_code == 404


def test_anonymous_visitor_is_sent_to_login(client, protocol_study):
    response = client.get(f"/studies/{protocol_study.slug}/import/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_api_imports_and_answers_201_with_counts(client, protocol_study, researcher):
    client.force_login(researcher)
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import",
                           {"file": _upload(b"id,question,answer\nx,q?,A.\n", "items.csv")})
    assert response.status_code == 201, response.content
    assert response.json()["items"] == 1


def test_api_answers_400_with_every_error_and_writes_nothing(client, protocol_study, researcher):
    client.force_login(researcher)
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import",
                           {"file": _upload(_jsonl(_record(1), _record(1)).getvalue())})
    assert response.status_code == 400
    assert response.json()["details"] == [
        {"location": "line 2", "line": 2, "field": "id", "reason": "duplicate id 'q1': also on line 1"}
    ]
    assert not Item.objects.exists()


@override_settings(IMPORT_MAX_BYTES=50)
def test_api_answers_413_over_the_limit(client, protocol_study, researcher):
    client.force_login(researcher)
    response = client.post(f"/api/studies/{protocol_study.slug}/items/import",
                           {"file": _upload(_jsonl(_record(1), _record(2)).getvalue())})
    assert response.status_code == 413
    assert not Item.objects.exists()


def test_api_answers_403_to_annotators_and_404_to_strangers(client, protocol_study, annotator, stranger):
    factories.grant(protocol_study, annotator, Role.ANNOTATOR)
    url = f"/api/studies/{protocol_study.slug}/items/import"
    data = _jsonl(_record(1)).getvalue()
    client.force_login(annotator)
    assert client.post(url, {"file": _upload(data)}).status_code == 403
    client.force_login(stranger)
    assert client.post(url, {"file": _upload(data)}).status_code == 404
    assert client.post("/api/studies/nope/items/import", {"file": _upload(data)}).status_code == 404
    assert not Item.objects.exists()


@pytest.mark.parametrize("depth", [65, 2_000, 100_000])
def test_json_nested_past_the_client_limit_is_refused_naming_the_line_never_a_crash(protocol_study, depth):
    # json.loads recursed past Python's limit (RecursionError: a 500 on the upload page and the API) and
    # orjson accepts up to 1,024 levels; the import takes no more than any other client JSON (64 levels).
    nested = "[" * depth + "]" * depth
    line = '{"id": "q2", "question": "Why?", "answer": "Because.", "metadata": {"x": ' + nested + "}}"
    errors = _rejected(protocol_study, _jsonl(_record(1), line))
    assert [(e["line"], e["field"]) for e in errors] == [(2, "")]
    assert "nested more than 64 levels deep" in errors[0]["reason"]
    csv_file = io.BytesIO(f'id,question,answer,metadata\nq1,Why?,Because.,"{nested}"\n'.encode())
    errors = _rejected(protocol_study, csv_file, filename="items.csv")
    assert [(e["row"], e["field"]) for e in errors] == [(2, "metadata")]
    assert "nested more than 64 levels deep" in errors[0]["reason"]


def test_a_number_of_more_digits_than_int_reads_is_refused_naming_the_line(protocol_study):
    line = '{"id": "q2", "question": "Why?", "answer": "Because.", "metadata": {"x": 1' + "1" * 5_000 + "}}"
    errors = _rejected(protocol_study, _jsonl(_record(1), line))
    assert [(e["line"], e["field"]) for e in errors] == [(2, "")]
    assert "4300 digits" in errors[0]["reason"]
    cell = '"{""x"": 1' + "1" * 5_000 + '}"'
    errors = _rejected(protocol_study, io.BytesIO(f"id,question,answer,metadata\nq1,Why?,Because.,{cell}\n".encode()),
                       filename="items.csv")
    assert [(e["row"], e["field"]) for e in errors] == [(2, "metadata")]
