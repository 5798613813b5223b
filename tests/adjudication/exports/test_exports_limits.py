"""Exports a researcher uses directly: the long CSV carries the item's id, question and answer and the
unit's text; scores come in their own CSV; an export can be limited to gold only, chosen pools and
chosen questions (and the header and card say so)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from adjudication.exports.filters import ExportFilters
from adjudication.exports.services import export_request, export_run
from adjudication.exports.writers import scores_path, write_export
from adjudication.models import ExportJob, GoldLabel
from concord.errors import ValidationFailed
from tests import factories
from tests.adjudication.exports.test_exports import exported_study
from tests.adjudication.gold_helpers import pool_with_members, submit_labels

pytestmark = pytest.mark.django_db
__all__ = ["exported_study"]


def _rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def _jsonl(path):
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return lines[0], lines[1:]


def test_the_long_csv_carries_item_id_question_answer_and_unit_text(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="csv", out=tmp_path / "e.csv")
    rows = _rows(out)
    assert list(rows[0]) == [
        "record", "item_id", "unit", "pool", "question", "annotator", "value", "version", "source",
        "item_question", "item_answer", "unit_text",
    ]
    aspect = next(r for r in rows if r["question"] == "aspect_covered")
    assert (aspect["item_id"], aspect["unit"], aspect["unit_text"]) == ("q-1", "a:0", "Dose")
    assert aspect["item_answer"] == "Take 0.5 mg daily. Hello!"
    item_level = next(r for r in rows if r["question"] == "pf" and r["record"] == "label")
    assert item_level["item_question"] and item_level["unit_text"] == ""


def test_scores_come_in_their_own_csv(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="csv", out=tmp_path / "e.csv")
    assert "record" not in {r["record"] for r in _rows(out)} - {"label", "gold", "gold_superseded"}
    scores = _rows(scores_path(out))
    assert [(r["item_id"], r["unit"], r["metric"], r["backend"], r["value"], r["state"]) for r in scores] == [
        ("q-1", "item", "cf", "nli", "0.5", "ok"),
        ("q-2", "item", "cf", "nli", "", "undetermined"),
    ]
    assert scores[0]["model_identity"] == "tiny-nli@abc" and scores[0]["item_answer"] == "Take 0.5 mg daily. Hello!"
    assert "own CSV" in (tmp_path / "e.csv.card.md").read_text()


def test_gold_only_keeps_items_with_gold_and_drops_individual_labels(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "g.jsonl",
                       filters=ExportFilters(gold_only=True))
    header, records = _jsonl(out)
    assert header["filters"] == {"pools": [], "questions": [], "gold_only": True}
    with_gold = set(
        GoldLabel.objects.filter(item__study=exported_study, is_current=True)
        .values_list("item__external_id", flat=True)
    )
    assert [r["id"] for r in records] == sorted(with_gold)
    assert all(r["labels"] == [] and r["assignments"] == [] for r in records)
    assert [(g["question"], g["value"], g["is_current"]) for g in records[0]["gold"] if g["question"] == "pf"] == [
        ("pf", "yes", False), ("pf", "no", True),
    ]
    # An item without current gold is left out.
    GoldLabel.objects.filter(item__external_id="q-2").delete()
    _, records = _jsonl(write_export(study=exported_study, fmt="jsonl", out=tmp_path / "g2.jsonl",
                                     filters=ExportFilters(gold_only=True)))
    assert [r["id"] for r in records] == ["q-1"]
    assert "Limited to gold only" in (tmp_path / "g.jsonl.card.md").read_text()
    rows = _rows(write_export(study=exported_study, fmt="csv", out=tmp_path / "g.csv",
                              filters=ExportFilters(gold_only=True)))
    assert {r["record"] for r in rows} == {"gold", "gold_superseded"}


def test_an_export_limited_to_questions_and_pools(exported_study, tmp_path):
    pf = exported_study.questions.get(key="pf")
    other, (c, _d) = pool_with_members(exported_study, [pf], n=2, name="Q")
    three = factories.make_item(exported_study, "q-3", answer="Only pool Q rated this.")
    submit_labels(other, three, c, {("pf", "item"): "no"})
    out = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "q.jsonl",
                       filters=ExportFilters(questions=("pf",)))
    header, records = _jsonl(out)
    assert [q["key"] for q in header["questions"]] == ["pf"]
    assert {lab["question"] for r in records for lab in r["labels"]} == {"pf"}
    assert [r["id"] for r in records] == ["q-1", "q-2", "q-3"]
    out = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "p.jsonl",
                       filters=ExportFilters(pools=("Q",)))
    header, records = _jsonl(out)
    assert [p["name"] for p in header["pools"]] == ["Q"]
    assert [r["id"] for r in records] == ["q-3"]
    assert {lab["pool"] for lab in records[0]["labels"]} == {"Q"}
    unlimited = _jsonl(write_export(study=exported_study, fmt="jsonl", out=tmp_path / "all.jsonl"))
    assert "filters" not in unlimited[0] and len(unlimited[1]) == 3


def test_a_limit_naming_another_studys_pool_or_question_is_refused(exported_study, researcher):
    for filters in (ExportFilters(pools=("nope",)), ExportFilters(questions=("nope",))):
        with pytest.raises(ValidationFailed, match=r"no (pool|question) 'nope'"):
            export_request(study_id=exported_study.pk, fmt="csv", actor=researcher, filters=filters)
    assert not ExportJob.objects.exists()


def test_the_exports_page_requests_a_limited_csv_and_offers_its_scores(
    client, exported_study, researcher, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(researcher)
    page = client.get(reverse("adjudication:exports", args=[exported_study.slug])).content.decode()
    assert 'name="gold_only"' in page and 'name="pools" value="P"' in page and 'name="questions" value="pf"' in page
    client.post(reverse("adjudication:exports", args=[exported_study.slug]),
                {"format": "csv", "questions": ["pf"], "pools": ["P"]})
    job = ExportJob.objects.get()
    assert job.filters == {"pools": ["P"], "questions": ["pf"], "gold_only": False}
    export_run(job_id=job.pk)
    page = client.get(reverse("adjudication:exports", args=[exported_study.slug])).content.decode()
    assert "limited to pools P; questions pf" in page and "?part=scores" in page
    response = client.get(reverse("adjudication:export-download", args=[job.pk]) + "?part=scores")
    assert response["Content-Disposition"].startswith("attachment;")
    assert b"".join(response.streaming_content).startswith(b"item_id,unit,run,metric")
    job.refresh_from_db()
    rows = _rows(Path(job.path))
    assert {r["question"] for r in rows} == {"pf"}
    api = client.post(reverse("adjudication-api-exports", args=[exported_study.slug]),
                      {"format": "jsonl", "gold_only": True}, content_type="application/json")
    assert api.status_code == 202 and api.json()["filters"]["gold_only"] is True


def test_a_limited_export_cannot_rebuild_a_study(exported_study, tmp_path):
    out = write_export(study=exported_study, fmt="jsonl", out=tmp_path / "g.jsonl",
                       filters=ExportFilters(gold_only=True))
    with pytest.raises(CommandError, match="limited"):
        call_command("import_study_export", str(out), "--study", "copy", "--create",
                     "--owner", exported_study.owner.username)
