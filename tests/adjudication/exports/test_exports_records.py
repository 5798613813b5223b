"""What a researcher finds in a JSONL export, field by field (``adjudication.exports.records``): the header
describes the study, its questions (in the protocol's order), pools and score runs with every setting
spelled out, and each record carries every field of its item, its labels, gold, cases and scores, with
timestamps in ISO 8601 UTC and annotators under their pseudonyms only."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from datetime import timezone as timezone_offset
from pathlib import Path

import pytest
from django.db import connections
from django.utils import timezone

from adjudication.exports import records
from adjudication.exports.filters import ExportFilters
from adjudication.exports.writers import write_export
from adjudication.models import AdjudicationCase, ConsensusRule, GoldLabel
from annotation.models import Aspect, Assignment, Item, Pool, Question, Sentence, Study
from scoring.models import Score, ScoreRun
from tests import factories
from tests.adjudication.exports.test_exports import exported_study
from tests.adjudication.gold_helpers import submit_labels

pytestmark = pytest.mark.django_db
__all__ = ["exported_study"]


def _jsonl(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:]


@pytest.fixture
def configured_study(exported_study):
    """The exported study with every header setting away from its default."""
    Study.objects.filter(pk=exported_study.pk).update(
        guidelines="Read the passage twice.",
        protocol_presets=["kqa-nli"],
        blind_system=False,
        visible_metadata_fields=["source"],
        independent_pools=False,
        show_scores_to_adjudicators=True,
    )
    exported_study.refresh_from_db()
    # The protocol's order, not the order of creation: aspect_covered, then note, then pf.
    for key, order in (("pf", 3), ("note", 2), ("aspect_covered", 1)):
        Question.objects.filter(study=exported_study, key=key).update(order=order)
    Question.objects.filter(study=exported_study, key="note").update(
        help_text="Free text.", condition={"question": "pf", "values": ["no"]}, min_value=1.0, max_value=9.0
    )
    Pool.objects.filter(study=exported_study).update(visibility="after_submit", seed=7, reservation_minutes=45)
    pool = Pool.objects.get(study=exported_study)
    ConsensusRule.objects.create(pool=pool, question=exported_study.questions.get(key="pf"), majority=True)
    ConsensusRule.objects.create(pool=pool, question=exported_study.questions.get(key="note"), majority=False)
    ScoreRun.objects.filter(study=exported_study).update(parameters={"beta": 2}, status="done")
    return exported_study


def test_the_header_spells_out_the_study_its_questions_pools_and_runs(configured_study, tmp_path):
    header, _ = _jsonl(write_export(study=configured_study, fmt="jsonl", out=tmp_path / "e.jsonl"))
    run = ScoreRun.objects.get(study=configured_study)
    exported_at = header.pop("exported_at")
    assert abs(timezone.now() - datetime.fromisoformat(exported_at)).total_seconds() < 3600
    yes_no = [{"value": "yes", "label": "Yes", "key": "1"}, {"value": "no", "label": "No", "key": "2"}]
    plain = {"help_text": "", "condition": {}, "required": True, "min_value": None, "max_value": None}
    assert header == {
        "concord_export": 1,
        "study": {
            "name": configured_study.name,
            "slug": "demo-study",
            "guidelines": "Read the passage twice.",
            "protocol_presets": ["kqa-nli"],
            "blind_system": False,
            "hidden_metadata_fields": ["hospital"],
            "visible_metadata_fields": ["source"],
            "independent_pools": False,
            "show_scores_to_adjudicators": True,
            "licence": "MIT — K-QA (Manes et al. 2024)",
        },
        "questions": [
            {
                "key": "aspect_covered",
                "order": 1,
                "scope": "aspect",
                "kind": "binary",
                "prompt": "aspect_covered",
                "options": yes_no,
                **plain,
            },
            {
                "key": "note",
                "order": 2,
                "scope": "item",
                "kind": "text",
                "prompt": "note",
                "options": [],
                "help_text": "Free text.",
                "condition": {"question": "pf", "values": ["no"]},
                "required": False,
                "min_value": 1.0,
                "max_value": 9.0,
            },
            {"key": "pf", "order": 3, "scope": "item", "kind": "binary", "prompt": "pf", "options": yes_no, **plain},
        ],
        "pools": [
            {
                "name": "P",
                "overlap": 2,
                "visibility": "after_submit",
                "seed": 7,
                "reservation_minutes": 45,
                "questions": ["aspect_covered", "note", "pf"],
                "majority_rule": ["pf"],
                "members": ["P-A1", "P-A2"],
            }
        ],
        "score_runs": [
            {
                "run": "run-1",
                "metric": "cf",
                "metric_version": "2",
                "backend": "nli",
                "model_identity": "tiny-nli@abc",
                "parameters": {"beta": 2},
                "status": "done",
                "created_at": run.created_at.isoformat(),
            }
        ],
    }


def test_a_limited_header_lists_only_the_chosen_pools_and_questions(configured_study, tmp_path):
    pf = configured_study.questions.get(key="pf")
    other = factories.make_pool(configured_study, "A-first", questions=[pf])
    factories.add_member(other, factories.make_user("a-first-annotator"), pseudonym="A-1")
    header, _ = _jsonl(write_export(study=configured_study, fmt="jsonl", out=tmp_path / "all.jsonl"))
    # Pools by name, each with its own members only.
    assert [(p["name"], p["members"], p["questions"]) for p in header["pools"]] == [
        ("A-first", ["A-1"], ["pf"]),
        ("P", ["P-A1", "P-A2"], ["aspect_covered", "note", "pf"]),
    ]
    assert "filters" not in header
    filters = ExportFilters(pools=("P",), questions=("note", "pf"))
    header, _ = _jsonl(write_export(study=configured_study, fmt="jsonl", out=tmp_path / "e.jsonl", filters=filters))
    assert [p["name"] for p in header["pools"]] == ["P"]
    assert [q["key"] for q in header["questions"]] == ["note", "pf"]
    assert header["filters"] == {"pools": ["P"], "questions": ["note", "pf"], "gold_only": False}


def _iso(value) -> str:
    return value.astimezone(UTC).isoformat()


def test_a_record_carries_every_field_of_the_item_and_its_decisions(exported_study, adjudicator, tmp_path):
    dose = Aspect.objects.get(text="Dose")
    Aspect.objects.filter(pk=dose.pk).update(importance="nice_to_have", retired_in_version=2, decided_by=adjudicator)
    _, records = _jsonl(write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl"))
    one = records[0]
    assignments = {a.annotator.username: a for a in Assignment.objects.filter(item__external_id="q-1")}
    gold = {(g.question.key, g.version): g for g in GoldLabel.objects.filter(item__external_id="q-1")}
    cases = {c.question.key: c for c in AdjudicationCase.objects.filter(item__external_id="q-1")}
    labels = [
        ("P-A1", "aspect_covered", "a:0", "yes"),
        ("P-A1", "note", "item", '=HYPERLINK("http://evil.example","click")'),
        ("P-A1", "pf", "item", "yes"),
        ("P-A2", "aspect_covered", "a:0", "yes"),
        ("P-A2", "note", "item", "-1.5"),
        ("P-A2", "pf", "item", "no"),
    ]
    unanimous = {
        "adjudicator": None,
        "rationale": "2 of 2 annotators agreed",
        "confidence": None,
        "guideline_gap": False,
        "case_status": None,
    }
    assert one == {
        "id": "q-1",
        "question": "What dose?",
        "answer": "Take 0.5 mg daily. Hello!",
        "source": "",
        "scope": "",
        "system": "sys-A",
        "metadata": {"hospital": "X"},
        "sentences": [
            {"unit": "s:0", "part": "answer", "index": 0, "text": "Take 0.5 mg daily.", "start": 0, "end": 18},
            {"unit": "s:1", "part": "answer", "index": 1, "text": "Hello!", "start": 19, "end": 25},
        ],
        "contexts": [{"unit": "c:1", "id": "doc-7", "text": "The usual dose is 0.5 mg daily.", "is_target": True}],
        "aspects": [
            {
                "unit": "a:0",
                "text": "Dose",
                "importance": "nice_to_have",
                "origin": "reference",
                "status": "accepted",
                "version": 1,
                "retired_in_version": 2,
                "proposed_by": None,
                "decided_by": "adam-adjudicator",
            },
            {
                "unit": "a:1",
                "text": "Renal",
                "importance": "must_have",
                "origin": "proposed",
                "status": "proposed",
                "version": 1,
                "retired_in_version": None,
                "proposed_by": "P-A1",
                "decided_by": None,
            },
        ],
        "assignments": [
            {
                "pool": "P",
                "annotator": f"P-A{i + 1}",
                "status": "submitted",
                "active_seconds": seconds,
                "submitted_at": _iso(assignments[f"p-annotator-{i}"].submitted_at),
            }
            for i, seconds in ((0, 30.0), (1, 12.0))
        ],
        "labels": [
            {"pool": "P", "annotator": who, "question": q, "unit": u, "value": v, "version": 1}
            for who, q, u, v in labels
        ],
        "gold": [
            {
                "pool": "P",
                "question": "aspect_covered",
                "unit": "a:0",
                "value": "yes",
                "version": 1,
                "is_current": True,
                "source": "unanimous",
                **unanimous,
                "created_at": _iso(gold[("aspect_covered", 1)].created_at),
            },
            {
                "pool": "P",
                "question": "pf",
                "unit": "item",
                "value": "yes",
                "version": 1,
                "is_current": False,
                "source": "adjudicated",
                "adjudicator": "adam-adjudicator",
                "rationale": "chunk 1",
                "confidence": 3,
                "guideline_gap": False,
                "case_status": "resolved",
                "created_at": _iso(gold[("pf", 1)].created_at),
            },
            {
                "pool": "P",
                "question": "pf",
                "unit": "item",
                "value": "no",
                "version": 2,
                "is_current": True,
                "source": "adjudicated",
                "adjudicator": "adam-adjudicator",
                "rationale": "Revision: chunk 2 contradicts it\nre-read",
                "confidence": None,
                "guideline_gap": True,
                "case_status": "resolved",
                "created_at": _iso(gold[("pf", 2)].created_at),
            },
        ],
        "cases": [
            {"pool": "P", "question": q, "unit": "item", "status": status, "opened_at": _iso(cases[q].opened_at)}
            for q, status in (("note", "open"), ("pf", "resolved"))
        ],
        "scores": [
            {
                "run": "run-1",
                "metric": "cf",
                "metric_version": "2",
                "backend": "nli",
                "model_identity": "tiny-nli@abc",
                "unit": "item",
                "value": 0.5,
                "state": "ok",
                "details": {"verdicts": [1, 0]},
            }
        ],
    }


def test_lists_are_in_a_stable_order_and_outsiders_stay_pseudonymous(exported_study, tmp_path):
    """Units sort by length, then text ("s:9" before "s:10"); an annotator outside the pool's members is
    exported as "unlisted-<id>", never by username, and comes before the listed ones."""
    sentence = factories.make_question(exported_study, "claim", scope="sentence")
    pool = Pool.objects.get(study=exported_study)
    pool.questions.add(sentence)
    item = factories.make_item(exported_study, "long", answer=" ".join(f"Sentence {n}." for n in range(11)))
    member = pool.memberships.get(pseudonym="P-A1").user
    outsider = factories.make_user("outside-annotator")
    for user in (member, outsider):
        submit_labels(pool, item, user, {("claim", "s:10"): "no", ("claim", "s:9"): "yes", ("pf", "item"): "yes"})
    _, records = _jsonl(write_export(study=exported_study, fmt="jsonl", out=tmp_path / "e.jsonl"))
    record = next(r for r in records if r["id"] == "long")
    unlisted = f"unlisted-{outsider.pk}"
    assert [(lab["annotator"], lab["question"], lab["unit"]) for lab in record["labels"]] == [
        (unlisted, "claim", "s:9"),
        (unlisted, "claim", "s:10"),
        (unlisted, "pf", "item"),
        ("P-A1", "claim", "s:9"),
        ("P-A1", "claim", "s:10"),
        ("P-A1", "pf", "item"),
    ]
    assert [a["annotator"] for a in record["assignments"]] == ["P-A1", unlisted]
    assert "outside-annotator" not in json.dumps(record)


# --- The reader's parts, one by one (narrow fixtures: no export file written) ---------------------------------


@pytest.fixture
def as_vendor(monkeypatch):
    """Answer ``connection.vendor`` as another database would, for the helpers that only build SQL text."""

    def use(vendor):
        # On the connection itself (the module's ``connection`` is a proxy to it), as an instance attribute.
        monkeypatch.setitem(connections["default"].__dict__, "vendor", vendor)

    return use


def test_a_chunks_ids_are_read_by_range_when_dense_and_by_range_and_array_when_sparse_on_postgresql(as_vendor):
    as_vendor("postgresql")
    assert records._in("item_id", [7]) == ("item_id BETWEEN %s AND %s", [7, 7])
    assert records._in("item_id", [10, 11, 12]) == ("item_id BETWEEN %s AND %s", [10, 12])
    # At most twice as many ids in the range as in the chunk: still the bare range.
    assert records._in("item_id", [10, 13]) == ("item_id BETWEEN %s AND %s", [10, 13])
    assert records._in("item_id", [10, 14]) == (
        "item_id BETWEEN %s AND %s AND item_id = ANY(%s)",
        [10, 14, [10, 14]],
    )
    assert records._in("a", [1, 2, 3, 9]) == ("a BETWEEN %s AND %s AND a = ANY(%s)", [1, 9, [1, 2, 3, 9]])
    as_vendor("sqlite")
    assert records._in("item_id", [10, 11, 14]) == ("item_id IN (%s, %s, %s)", [10, 11, 14])


def test_timestamps_are_formatted_as_utc_iso_text_by_postgresql_and_read_as_datetimes_elsewhere(as_vendor):
    as_vendor("postgresql")
    assert records._ts("created_at") == (
        "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"
    )
    as_vendor("sqlite")
    assert records._ts("created_at") == "created_at"


def test_a_timestamp_value_becomes_iso_8601_and_a_json_text_its_value():
    assert records._iso(None) is None
    assert records._iso("2026-01-02T03:04:05.000006+00:00") == "2026-01-02T03:04:05.000006+00:00"
    assert records._iso(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05+00:00"  # naive: UTC
    plus_two = timezone_offset(timedelta(hours=2))
    assert records._iso(datetime(2026, 1, 2, 3, 4, 5, tzinfo=plus_two)) == "2026-01-02T03:04:05+02:00"
    assert records._json(None) is None
    assert records._json('{"a": [1, "x"]}') == {"a": [1, "x"]}


def test_items_are_read_in_chunks_by_primary_key_with_every_column(study, researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    mine = []
    for i in range(5):
        mine.append(factories.make_item(study, f"m-{i}", answer=f"A{i}.", system=f"sys-{i}", metadata={"n": i}))
        factories.make_item(other, f"o-{i}")
    Item.objects.filter(pk=mine[0].pk).update(source="The source.", scope_class="in")
    batches = list(records._item_chunks(study, 2))
    assert [[row[1] for row in batch] for batch in batches] == [["m-0", "m-1"], ["m-2", "m-3"], ["m-4"]]
    assert batches[0][0] == (mine[0].pk, "m-0", "What dose?", "A0.", "The source.", "in", "sys-0", {"n": 0})
    assert [len(b) for b in records._item_chunks(study, 5)] == [5]
    assert [len(b) for b in records._item_chunks(study, 4)] == [4, 1]
    assert list(records._item_chunks(factories.make_study(), 3)) == []


def test_rows_of_ids_outside_the_chunk_are_dropped_even_when_the_range_reads_them(study, researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    first = factories.make_item(study, "a", answer="First.")
    between = factories.make_item(other, "b", answer="Between.")
    last = factories.make_item(study, "c", answer="Last.")
    assert first.pk < between.pk < last.pk
    query = (
        f"SELECT item_id, text FROM {Sentence._meta.db_table} WHERE {{where}} "  # noqa: S608 (a model's table)
        "ORDER BY item_id"
    )
    grouped = records._grouped(query, "item_id", [first.pk, last.pk])
    assert dict(grouped) == {first.pk: [(first.pk, "First.")], last.pk: [(last.pk, "Last.")]}


def test_the_context_names_users_once_and_people_by_their_first_pools_pseudonym(
    study, adjudicator, django_assert_num_queries
):
    Study.objects.filter(pk=study.pk).update(independent_pools=False)
    study.refresh_from_db()
    person = factories.make_user("two-pools")
    factories.add_member(factories.make_pool(study, "Zeta"), person, pseudonym="Z-1")
    factories.add_member(factories.make_pool(study, "Alpha"), person, pseudonym="A-1")
    ctx = records.ExportContext(study)
    assert ctx.person == {person.pk: "A-1"}
    assert sorted(ctx.pseudonyms.values()) == ["A-1", "Z-1"]
    assert ctx.username(None) is None
    with django_assert_num_queries(2):
        assert ctx.username(adjudicator.pk) == "adam-adjudicator"
        assert ctx.username(adjudicator.pk) == "adam-adjudicator"  # read once
        assert ctx.username(987654) == "user-987654"  # no such account (any more)


def test_questions_of_one_order_come_by_creation_and_runs_are_numbered_oldest_first(study):
    for key in ("b", "a", "c"):
        factories.make_question(study, key, order=1)
    factories.make_question(study, "first", order=0)
    ScoreRun.objects.create(study=study, metric="cf", metric_version="1", backend="lexical")
    older = ScoreRun.objects.create(study=study, metric="icat", metric_version="1", backend="lexical")
    ScoreRun.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(days=1))
    ctx = records.ExportContext(study)
    assert [q.key for q in ctx.questions.values()] == ["first", "b", "a", "c"]
    assert [(r["run"], r["metric"]) for r in ctx.runs.values()] == [("run-1", "icat"), ("run-2", "cf")]
    assert ctx.run_fields[older.pk] == {
        "run": "run-1", "metric": "icat", "metric_version": "1", "backend": "lexical", "model_identity": ""
    }
    ScoreRun.objects.filter(study=study).update(created_at=timezone.now())
    assert [r["metric"] for r in records.ExportContext(study).runs.values()] == ["cf", "icat"]  # a tie: by id


@pytest.fixture
def two_pools(study, adjudicator, researcher):
    """Two pools named against their creation order, two questions whose protocol order goes against their keys,
    and items whose assignments were created out of item order, with another study's work in between."""
    Study.objects.filter(pk=study.pk).update(independent_pools=False)
    study.refresh_from_db()
    late = factories.make_question(study, "a-late", order=2)
    early = factories.make_question(study, "z-early", order=1)
    aspect_q = factories.make_question(study, "covered", scope="aspect", order=3)
    zulu = factories.make_pool(study, "Zulu", questions=[late, early, aspect_q])
    alpha = factories.make_pool(study, "Alpha", questions=[late, early, aspect_q])
    ann = factories.make_user("ann")
    factories.add_member(zulu, ann, pseudonym="Z-ann")
    factories.add_member(alpha, ann, pseudonym="A-ann")
    bob = factories.make_user("bob")
    factories.add_member(zulu, bob, pseudonym="Z-bob")
    x = factories.make_item(study, "x", answer="One. Two.", source="Src.")
    Sentence.objects.create(item=x, part="source", index=0, text="Src.", start=0, end=4)
    y = factories.make_item(study, "y")
    # Ids of six digits: stored as "a:100002", longer than "weird"; exported by position, as "a:1" (the order
    # of the lists follows what is exported, whatever ids the database gave).
    first_aspect = Aspect.objects.create(id=100001, item=x, text="First")
    second_aspect = Aspect.objects.create(id=100002, item=x, text="Second")
    foreign_aspect = Aspect.objects.create(id=100003, item=y, text="Of y")
    other = factories.make_study(owner=researcher, slug="other-study")
    other_q = factories.make_question(other, "a-late")
    other_pool = factories.make_pool(other, "Other", questions=[other_q])
    stranger = factories.make_user("other-annotator")
    factories.add_member(other_pool, stranger, pseudonym="O-1")
    other_item = factories.make_item(other, "o")
    # y's work first, then another study's, then x's: x's assignment ids are above y's, around the foreign one.
    submit_labels(zulu, y, ann, {("a-late", "item"): "yes"})
    submit_labels(other_pool, other_item, stranger, {("a-late", "item"): "secret"})
    submit_labels(zulu, x, bob, {("a-late", "item"): "no", ("z-early", "item"): "yes"})
    submit_labels(
        alpha, x, ann,
        {
            ("a-late", "item"): "yes",
            ("z-early", "item"): "no",
            ("covered", f"a:{second_aspect.pk}"): "yes",
            ("covered", f"a:{foreign_aspect.pk}"): "yes",
            ("covered", "weird"): "yes",
        },
    )
    submit_labels(zulu, x, ann, {("z-early", "item"): "yes"})
    common = {"item": x, "unit_key": "item", "source": "adjudicated"}
    GoldLabel.objects.create(pool=zulu, question=late, value="no", adjudicator=adjudicator, **common)
    GoldLabel.objects.create(pool=alpha, question=late, value="yes", adjudicator_name="Dr. Imported", **common)
    GoldLabel.objects.create(pool=alpha, question=early, value="no", **common)
    for key in ("weird", f"a:{second_aspect.pk}"):  # exported "weird" and "a:1": "a:1" comes first
        GoldLabel.objects.create(pool=alpha, question=aspect_q, value="yes", item=x, unit_key=key, source="adjudicated")
    # One unit's gold history written out of version order (as a restore may write it): listed by version.
    for version, current in ((2, False), (1, False), (3, True)):
        GoldLabel.objects.create(
            pool=zulu, question=early, value=f"v{version}", version=version, is_current=current, **common
        )
    for pool, question in ((zulu, late), (alpha, late), (alpha, early)):
        AdjudicationCase.objects.create(pool=pool, item=x, question=question, unit_key="item", status="resolved")
    # Two cases of one question whose statuses sort against their units ("open" < "resolved", "a:1" < "weird").
    AdjudicationCase.objects.create(pool=alpha, item=x, question=aspect_q, unit_key="weird", status="open")
    AdjudicationCase.objects.create(
        pool=alpha, item=x, question=aspect_q, unit_key=f"a:{second_aspect.pk}", status="resolved"
    )
    run = ScoreRun.objects.create(study=study, metric="cov", metric_version="1", backend="lexical")
    Score.objects.create(run=run, item=x, unit_key=f"a:{second_aspect.pk}", value=1.0, state="ok")
    Score.objects.create(run=run, item=x, unit_key="s:1", value=0.0, state="ok", details={"why": "none"})
    return {"x": x, "y": y, "first_aspect": first_aspect, "foreign_aspect": foreign_aspect}


@pytest.mark.parametrize("chunk", [1, 1000])
def test_a_records_lists_follow_pool_name_pseudonym_question_order_and_unit(study, two_pools, chunk):
    x, y = (r for r in records.iter_records(study, chunk=chunk))
    assert (x["id"], y["id"]) == ("x", "y")
    assert [(a["pool"], a["annotator"]) for a in x["assignments"]] == [
        ("Alpha", "A-ann"), ("Zulu", "Z-ann"), ("Zulu", "Z-bob")
    ]
    foreign = f"a:{two_pools['foreign_aspect'].pk}"
    assert [(lab["pool"], lab["annotator"], lab["question"], lab["unit"], lab["value"]) for lab in x["labels"]] == [
        ("Alpha", "A-ann", "z-early", "item", "no"),
        ("Alpha", "A-ann", "a-late", "item", "yes"),
        ("Alpha", "A-ann", "covered", "a:1", "yes"),  # an aspect of this item: by its position
        ("Alpha", "A-ann", "covered", "weird", "yes"),  # not a unit key: as stored
        ("Alpha", "A-ann", "covered", foreign, "yes"),  # not this item's aspect: as stored ("a:100003")
        ("Zulu", "Z-ann", "z-early", "item", "yes"),
        ("Zulu", "Z-bob", "z-early", "item", "yes"),
        ("Zulu", "Z-bob", "a-late", "item", "no"),
    ]
    assert [(g["pool"], g["question"], g["value"], g["adjudicator"]) for g in x["gold"] if g["unit"] == "item"] == [
        ("Alpha", "z-early", "no", None),
        ("Alpha", "a-late", "yes", "Dr. Imported"),
        ("Zulu", "z-early", "v1", None),
        ("Zulu", "z-early", "v2", None),
        ("Zulu", "z-early", "v3", None),
        ("Zulu", "a-late", "no", "adam-adjudicator"),
    ]
    assert [(g["version"], g["is_current"]) for g in x["gold"] if g["value"] in ("v1", "v2", "v3")] == [
        (1, False), (2, False), (3, True)
    ]
    assert [(g["question"], g["unit"]) for g in x["gold"] if g["unit"] != "item"] == [("covered", "a:1"),
                                                                                       ("covered", "weird")]
    assert all(g["case_status"] is None for g in x["gold"])
    assert [(c["pool"], c["question"], c["unit"], c["status"]) for c in x["cases"]] == [
        ("Alpha", "z-early", "item", "resolved"),
        ("Alpha", "a-late", "item", "resolved"),
        ("Alpha", "covered", "a:1", "resolved"),  # by unit, not by status
        ("Alpha", "covered", "weird", "open"),
        ("Zulu", "a-late", "item", "resolved"),
    ]
    assert [(s["unit"], s["part"], s["index"]) for s in x["sentences"]] == [
        ("s:0", "answer", 0), ("s:1", "answer", 1), ("src:0", "source", 0)
    ]
    assert [(a["unit"], a["text"]) for a in x["aspects"]] == [("a:0", "First"), ("a:1", "Second")]
    assert [(s["run"], s["unit"], s["value"], s["details"]) for s in x["scores"]] == [
        ("run-1", "a:1", 1.0, {}), ("run-1", "s:1", 0.0, {"why": "none"})
    ]
    assert [(lab["annotator"], lab["value"]) for lab in y["labels"]] == [("Z-ann", "yes")]
    assert "secret" not in json.dumps([x, y])


def test_the_records_read_a_given_context(study, two_pools):
    ctx = records.ExportContext(study)
    ctx.pseudonyms = {key: f"given-{name}" for key, name in ctx.pseudonyms.items()}
    (x, _) = records.iter_records(study, ctx=ctx)
    assert {a["annotator"] for a in x["assignments"]} == {"given-A-ann", "given-Z-ann", "given-Z-bob"}
