"""The import's write pass: what it stores, batch after batch, and that a failure in any batch undoes all.

These run on the embedded default (SQLite) and, with DATABASE_URL set, on PostgreSQL, where items,
sentences and chunks go by COPY from a second thread (``writer._CopyPipeline``) while the next batch
is prepared.
"""

from __future__ import annotations

import collections
import io
import json
import threading

import pytest
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.imports import ImportRejected, file_source, records_import, validation, writer
from annotation.models import (
    Aspect,
    Assignment,
    AssignmentStatus,
    Chunk,
    ControlItem,
    ImportBatch,
    ImportIdentity,
    Item,
    Label,
    LabelHistory,
    PoolMembership,
    Sentence,
)
from annotation.protocols import study_protocol_apply
from annotation.segmentation_fast import split_sentences
from concord.errors import Conflict
from tests import factories

# Tabs, new lines, carriage returns and backslashes are what COPY's text format escapes.
AWKWARD = "Tab\there, back\\slash \\N and \\t. New\nline; CR\r\nend. <b>HTML</b> & \"quotes\" — é ✓ 🙂."


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def protocol_study(study):
    study_protocol_apply(study=study, presets=["astrid", "icat"])
    return study


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(writer, "BATCH_SIZE", 2)


def _jsonl(records) -> io.BytesIO:
    return io.BytesIO(("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n").encode())


def _records(n):
    return [
        {
            "id": f"r{i}", "question": f"Question {i}?\tTabbed",
            "answer": f"Answer {i} here. {AWKWARD} Dr. Lee says so.",
            "source": f"Source {i}.\nSecond line here." if i % 2 else "",
            "contexts": [{"id": f"d\\{i}", "text": f"ctx {i}\t{AWKWARD}", "is_target": i % 3 == 0}, f"plain {i}"],
            "system": "sys\t1", "scope": "in_scope", "metadata": {"n": i, "text": AWKWARD, "nested": [1.5, None, True]},
        }
        for i in range(1, n + 1)
    ]


def _import(study, records, **kw):
    return records_import(study=study, source=file_source(_jsonl(records), filename="x.jsonl")[0],
                          filename="x.jsonl", where="line", **kw)


def test_every_row_is_stored_exactly_as_the_records_say(protocol_study, small_batches):
    records = _records(5)
    result = _import(protocol_study, records)
    items = list(Item.objects.filter(study=protocol_study).order_by("id"))
    assert [i.external_id for i in items] == [r["id"] for r in records]  # ids in file order, batch after batch
    n_sentences = 0
    for item, rec in zip(items, records, strict=True):
        assert (item.question, item.answer, item.source, item.system, item.scope_class, item.metadata) == (
            rec["question"], rec["answer"], rec["source"], rec["system"], rec["scope"], rec["metadata"])
        for part in ("answer", "source"):
            expected = [(s.text, s.start, s.end) for s in split_sentences(rec[part])]
            stored = list(Sentence.objects.filter(item=item, part=part).order_by("index").values_list(
                "text", "start", "end"))
            assert stored == expected
            n_sentences += len(expected)
        chunks = list(Chunk.objects.filter(item=item).order_by("rank").values_list(
            "rank", "text", "document_id", "is_labelled_target"))
        assert chunks == [(1, rec["contexts"][0]["text"], rec["contexts"][0]["id"], rec["contexts"][0]["is_target"]),
                          (2, rec["contexts"][1], "", False)]
    assert (result.n_items, result.n_sentences, result.n_chunks) == (5, n_sentences, 10)


def test_aspects_and_labels_are_written_in_every_batch(protocol_study, small_batches):
    records = []
    for i in range(1, 6):
        labels = [
            {"annotator": "A", "question": "aspect_covered", "unit": "a:1", "value": "no"},
            {"annotator": "B", "question": "context_relevant", "unit": "c:1", "value": "yes"},
        ]
        records.append({"id": f"r{i}", "question": "Q?", "answer": "One. Two.", "contexts": ["ctx"],
                        "aspects": [f"first {i}", f"second {i}"], "labels": labels})
    result = _import(protocol_study, records)
    assert (result.n_items, result.n_aspects, result.n_labels) == (5, 10, 10)
    for i in range(1, 6):
        second = Aspect.objects.get(text=f"second {i}", item__external_id=f"r{i}")
        label = Label.objects.get(question__key="aspect_covered", assignment__item__external_id=f"r{i}")
        assert label.unit_key == f"a:{second.pk}"
    assert LabelHistory.objects.count() == 10


def test_control_items_are_written_in_every_batch_with_who_marked_them(protocol_study, small_batches, researcher):
    factories.make_question(protocol_study, "ok")
    records = [{"id": f"r{i}", "question": "Q?", "answer": "One."} for i in range(1, 6)]
    records[1]["control"] = {"answers": {"ok": "no"}}  # first batch
    records[4]["control"] = {"kind": "attention", "answers": {"ok": "yes"}, "explanation": "Said yes."}  # third
    _import(protocol_study, records, actor=researcher)
    got = {
        c.item.external_id: (c.kind, c.answers, c.explanation, c.created_by)
        for c in ControlItem.objects.select_related("item", "created_by")
    }
    assert got == {
        "r2": ("control", {"ok": "no"}, "", researcher),
        "r5": ("attention", {"ok": "yes"}, "Said yes.", researcher),
    }


def _source_changing(records_check, records_write):
    calls = []

    def source():
        calls.append(1)
        return file_source(_jsonl(records_check if len(calls) == 1 else records_write), filename="x.jsonl")[0]()

    return source


@pytest.mark.parametrize(("n_write", "error"), [
    (3, ("file", "file", "1 records fewer than when checked")),
    (6, ("line 5", "", "not in the file when it was checked")),
    (-1, ("line 2", "answer", "required field is missing")),
])
def test_a_source_with_other_records_in_the_write_pass_writes_nothing(protocol_study, small_batches, n_write, error):
    records = _records(6)
    written = records[:n_write] if n_write > 0 else [records[0], {**records[1], "answer": None}, *records[2:4]]
    with pytest.raises(ImportRejected) as refused:
        records_import(study=protocol_study, source=_source_changing(records[:4], written),
                       filename="x.jsonl", where="line")
    assert [(e.location, e.field, e.reason) for e in refused.value.errors] == [error]
    assert refused.value.message == "x.jsonl: 1 error; nothing was imported"
    assert not Item.objects.exists() and not Sentence.objects.exists() and not ImportBatch.objects.exists()


def test_a_failure_in_a_later_batch_undoes_the_earlier_ones(protocol_study, small_batches, monkeypatch):
    real_scan = validation.scan

    def scan_then_race(*args, **kwargs):
        result = real_scan(*args, **kwargs)
        factories.make_item(protocol_study, "r5")  # another import commits r5, in the third batch
        return result

    monkeypatch.setattr(validation, "scan", scan_then_race)
    with pytest.raises(Conflict, match="another import"):
        _import(protocol_study, _records(6))
    assert list(Item.objects.values_list("external_id", flat=True)) == ["r5"]
    assert not Sentence.objects.exclude(item__external_id="r5").exists()
    assert not Chunk.objects.exclude(item__external_id="r5").exists() and not ImportBatch.objects.exists()


def test_the_item_foreign_keys_are_deferred_again_after_the_import(protocol_study):
    _import(protocol_study, _records(2))
    if connection.vendor != "postgresql":
        return
    # Still deferred in the rest of the transaction: a sentence may precede its item until commit.
    with connection.cursor() as cursor:
        cursor.execute("SAVEPOINT deferred_check")
        cursor.execute('INSERT INTO annotation_sentence (item_id, part, "index", text, start, "end") '
                       "VALUES (-1, 'answer', 0, 'x', 0, 1)")
        cursor.execute("ROLLBACK TO SAVEPOINT deferred_check")


def _labelled(*pseudonyms, item="r1"):
    labels = [{"annotator": p, "question": "refused", "unit": "item", "value": "no"} for p in pseudonyms]
    return {"id": item, "question": "Q?", "answer": "One. Two.", "labels": labels}


@pytest.mark.parametrize("independent", [True, False])
def test_an_imported_annotator_joins_the_pool_as_the_study_runs_its_pools(protocol_study, independent):
    protocol_study.independent_pools = independent
    protocol_study.save()
    _import(protocol_study, [_labelled("A")])
    membership = PoolMembership.objects.get(pseudonym="A")
    assert (membership.pool.name, membership.study, membership.independent) == ("imported", protocol_study, independent)


def test_an_imported_annotators_account_name_fits_its_column_and_is_never_one_taken(protocol_study, researcher):
    long_pool, long_pseudonym = "p" * 120, "Q" * 40
    base = f"imported-{protocol_study.pk}-{long_pool}-{long_pseudonym.lower()}"[:140]
    taken = factories.make_user(base)
    _import(protocol_study, [_labelled(long_pseudonym)], pool_name=long_pool, actor=researcher)
    user = ImportIdentity.objects.get(pseudonym=long_pseudonym).user
    max_length = user._meta.get_field("username").max_length
    assert user != taken and user.username.startswith(f"{base}-") and len(user.username) <= max_length
    # A short name is taken as it is.
    _import(protocol_study, [_labelled("B", item="r2")])
    assert ImportIdentity.objects.get(pseudonym="B").user.username == f"imported-{protocol_study.pk}-imported-b"


def test_the_import_batch_records_the_file_the_adapter_the_counts_and_who(protocol_study, researcher):
    records = [
        _labelled("A", "B", item="r1"),
        _labelled("A", item="r2"),
        {"id": "r3", "question": "Q?", "answer": "A."},
    ]
    source = file_source(_jsonl(records), filename="x.jsonl")[0]
    result = records_import(
        study=protocol_study, source=source, filename="f" * 310, where="line", actor=researcher, adapter="jsonl-test"
    )
    batch = ImportBatch.objects.get(pk=result.batch_id)
    assert (batch.filename, batch.adapter, batch.n_items, batch.n_labels, batch.by) == (
        "f" * 300,
        "jsonl-test",
        3,
        3,
        researcher,
    )
    assert (result.n_items, result.n_labels, result.n_annotators) == (3, 3, 2)


def test_a_line_broken_since_the_check_is_refused_at_that_line(protocol_study):
    records = _records(3)
    with pytest.raises(ImportRejected) as refused:
        records_import(study=protocol_study, source=_source_changing(records, [records[0], '{"id": "r2",', records[2]]),
                       filename="x.jsonl", where="line")
    assert [(e.location, e.field) for e in refused.value.errors] == [("line 2", "")]
    assert refused.value.errors[0].reason.startswith("malformed JSON")
    assert not Item.objects.exists() and not ImportBatch.objects.exists()


def test_another_spelling_of_an_imported_annotator_added_since_the_check_stops_the_import(protocol_study,
                                                                                          monkeypatch):
    real_scan = validation.scan

    def scan_then_import(*args, **kwargs):
        result = real_scan(*args, **kwargs)
        monkeypatch.setattr(validation, "scan", real_scan)
        _import(protocol_study, [_labelled("Kim", item="other")])  # another import adds "Kim" to the pool
        return result

    monkeypatch.setattr(validation, "scan", scan_then_import)
    with pytest.raises(ImportRejected) as refused:
        _import(protocol_study, [_labelled("kim")])
    assert [(e.location, e.field) for e in refused.value.errors] == [("line 1", "labels[0].annotator")]
    reason = refused.value.errors[0].reason
    assert "looks like 'Kim', the pseudonym of an imported annotator of pool 'imported'" in reason
    assert refused.value.message == "x.jsonl: 1 error; nothing was imported"
    assert list(Item.objects.values_list("external_id", flat=True)) == ["other"]


def test_imported_work_was_started_and_submitted_at_the_moment_of_the_import(protocol_study):
    before = timezone.now()
    _import(protocol_study, [_labelled("A", "B")])
    after = timezone.now()
    assignments = list(Assignment.objects.all())
    assert [a.status for a in assignments] == [AssignmentStatus.SUBMITTED] * 2
    # One moment for the whole import: when each assignment was started and submitted, each label's last change
    # and its history entry.
    moments = {a.started_at for a in assignments} | {a.submitted_at for a in assignments}
    moments |= set(Label.objects.values_list("updated_at", flat=True))
    moments |= set(LabelHistory.objects.values_list("at", flat=True))
    [moment] = moments
    assert moment is not None and before <= moment <= after
    # Each label is at its first version, as if its annotator had saved it once: the workspace's next save of
    # it names version 1.
    assert set(Label.objects.values_list("version", flat=True)) == {1}
    assert before <= Item.objects.get().created_at <= after


def _sentence_fk_checked_now() -> bool:
    """Whether a sentence pointing at no item is refused as it is written (else only at commit)."""
    with connection.cursor() as cursor:
        cursor.execute("SAVEPOINT fk_probe")
        try:
            cursor.execute('INSERT INTO annotation_sentence (item_id, part, "index", text, start, "end") '
                           "VALUES (-1, 'answer', 0, 'x', 0, 1)")
        except IntegrityError:
            return True
        finally:
            cursor.execute("ROLLBACK TO SAVEPOINT fk_probe")
        return False


def _with_gold(records):
    return [{**r, "gold": [{"question": "refused", "value": "no"}]} for r in records]


def test_during_the_write_the_copied_rows_are_checked_as_they_arrive_by_one_daemon_thread(protocol_study):
    if connection.vendor != "postgresql":
        pytest.skip("COPY and its thread are PostgreSQL's")
    seen = []

    def extra_writer(item, record):
        # Called in the write pass, while the COPY thread lives.
        threads = [t for t in threading.enumerate() if t.name == "import-copy"]
        seen.append((item.external_id, [t.daemon for t in threads], _sentence_fk_checked_now()))

    records = _with_gold(_records(2))
    records_import(study=protocol_study, source=file_source(_jsonl(records), filename="x.jsonl")[0],
                   filename="x.jsonl", where="line", extra_writer=extra_writer)
    # One thread, which never keeps the process alive; the item foreign keys checked row by row (so that the
    # database checks them while the next batch is prepared), deferred again after the write.
    assert seen == [("r1", [True], True), ("r2", [True], True)]
    assert not [t for t in threading.enumerate() if t.name == "import-copy"]
    assert not _sentence_fk_checked_now()


def test_the_extra_writer_gets_each_item_with_its_rows_stored_however_slow_the_copy(protocol_study, small_batches,
                                                                                 monkeypatch):
    if connection.vendor == "postgresql":
        # The COPY thread stores nothing until the writer waits for it (or stops it): the writer must wait for
        # each batch's items before it hands them on.
        waiting = threading.Event()
        store, drain, close = writer._CopyPipeline._store, writer._CopyPipeline.drain, writer._CopyPipeline.close

        def slow_store(self, job):
            assert waiting.wait(timeout=120), "the writer never waited for the COPY thread"
            store(self, job)

        def waited(method):
            def wrapper(self):
                waiting.set()
                method(self)
            return wrapper

        monkeypatch.setattr(writer._CopyPipeline, "_store", slow_store)
        monkeypatch.setattr(writer._CopyPipeline, "drain", waited(drain))
        monkeypatch.setattr(writer._CopyPipeline, "close", waited(close))
    seen = []

    def extra_writer(item, record):
        seen.append((item.external_id, item.sentences.count(), item.chunks.count(), record["gold"]))

    records = _with_gold(_records(3))
    records_import(study=protocol_study, source=file_source(_jsonl(records), filename="x.jsonl")[0],
                   filename="x.jsonl", where="line", extra_writer=extra_writer)
    gold = [{"question": "refused", "value": "no"}]
    expected_sentences = [len(split_sentences(r["answer"])) + len(split_sentences(r["source"])) for r in records]
    assert seen == [(f"r{i}", expected_sentences[i - 1], 2, gold) for i in (1, 2, 3)]


def test_a_real_import_splits_each_answer_and_source_once(protocol_study, small_batches, monkeypatch):
    # The check pass leaves long answers to the write pass, which splits every answer anyway and counts its
    # sentences from that split: no text is split twice (nor an empty source at all).
    split = collections.Counter()

    def counting(real):
        def wrapper(text, *args, **kwargs):
            split[text] += 1
            return real(text, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(writer, "split_sentences", counting(writer.split_sentences))
    monkeypatch.setattr(validation, "split_sentences", counting(validation.split_sentences))
    records = _records(5)
    assert all(len(r["answer"]) > 60 for r in records)  # long enough that the long-answer check would split them
    result = _import(protocol_study, records)
    assert result.n_items == 5
    assert split == collections.Counter([r["answer"] for r in records] + [r["source"] for r in records if r["source"]])


def test_a_plain_import_waits_for_the_copy_thread_only_at_its_end(protocol_study, small_batches, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("COPY and its thread are PostgreSQL's")
    # Items without aspects or labels need nothing of the ORM: the writer prepares each batch while the thread
    # stores the one before, and waits for it once, at the end.
    drains = []
    drain = writer._CopyPipeline.drain

    def counted(self):
        drains.append(1)
        drain(self)

    monkeypatch.setattr(writer._CopyPipeline, "drain", counted)
    assert _import(protocol_study, _records(5)).n_items == 5
    assert len(drains) == 1
    # Labels need their batch's items stored: then it waits for each batch.
    drains.clear()
    _import(protocol_study, [_labelled("A", item=f"l{i}") for i in range(1, 6)])
    assert len(drains) == 3 + 1


def test_a_real_import_lists_its_long_answers_by_line_and_id_batch_after_batch(protocol_study, small_batches,
                                                                               settings):
    settings.IMPORT_LONG_ANSWER_CHARS, settings.IMPORT_LONG_ANSWER_SENTENCES = 30, 2
    answers = ["Short one.", "One here. Two here. Three here.", "Fine.", "Fine too.",
               "A much longer answer than thirty characters."]
    records = [{"id": f"r{i}", "question": "Q?", "answer": a} for i, a in enumerate(answers, start=1)]
    result = _import(protocol_study, records)
    assert (result.n_items, result.n_long_answers) == (5, 2)
    assert result.long_answers == [
        {"location": "line 2", "id": "r2", "chars": 31, "sentences": 3,
         "reason": "31 characters (over 30) and 3 sentences (over 2)"},
        {"location": "line 5", "id": "r5", "chars": 44, "sentences": 1, "reason": "44 characters (over 30)"},
    ]


def test_on_postgresql_items_sentences_and_chunks_go_by_copy_not_by_insert(protocol_study, small_batches):
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's")
    records = _records(5)
    with CaptureQueriesContext(connection) as queries:
        result = _import(protocol_study, records)
    inserted = {table for table in ("annotation_item", "annotation_sentence", "annotation_chunk")
                for query in queries.captured_queries if f'INSERT INTO "{table}"' in query["sql"]}
    assert inserted == set()
    assert (result.n_items, Item.objects.filter(study=protocol_study).count(), Chunk.objects.count()) == (5, 5, 10)
