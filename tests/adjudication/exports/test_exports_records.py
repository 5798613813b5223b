"""What a researcher finds in a JSONL export, field by field (``adjudication.exports.records``): the header
describes the study, its questions (in the protocol's order), pools and score runs with every setting
spelled out, and each record carries every field of its item, its labels, gold, cases and scores, with
timestamps in ISO 8601 UTC and annotators under their pseudonyms only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.utils import timezone

from adjudication.exports.filters import ExportFilters
from adjudication.exports.writers import write_export
from adjudication.models import AdjudicationCase, ConsensusRule, GoldLabel
from annotation.models import Aspect, Assignment, Pool, Question, Study
from scoring.models import ScoreRun
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
