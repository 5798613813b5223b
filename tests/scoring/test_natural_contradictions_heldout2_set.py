"""The second held-out natural contradiction set is exactly its builder's output and well formed.

The set (tests/scoring/data/natural_contradictions_heldout2.jsonl, provenance in the .md beside it) is hand-written
claim/evidence pairs in the style of UK patient leaflets and NHS condition pages (https://www.nhs.uk/medicines/,
https://www.nhs.uk/conditions/). These tests only check the data: they never run the detector on it, because the
set is to be measured once, after the detector is frozen.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILDER = ROOT / "bench" / "data" / "build_natural_contradictions_heldout2.py"
DATA = ROOT / "tests" / "scoring" / "data" / "natural_contradictions_heldout2.jsonl"

FIELDS = {"id", "kind", "label", "claim", "evidence", "evidence_sentence", "source", "transform", "split"}
ID_RE = re.compile(r"^nh2-(leaflet|page)-(\d{2})-([cs])(\d)$")
SOURCES = {"leaflet": "written: patient leaflet", "page": "written: condition page"}


def _load_builder():
    spec = importlib.util.spec_from_file_location("build_natural_contradictions_heldout2", BUILDER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def builder():
    return _load_builder()


@pytest.fixture(scope="module")
def text() -> str:
    return DATA.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rows(text) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_file_is_exactly_the_builder_output(builder, text):
    assert text == builder.render(builder.build_rows())


def test_schema(rows):
    for row in rows:
        assert set(row) == FIELDS, row.get("id")
        assert all(isinstance(row[field], str) and row[field].strip() for field in FIELDS), row["id"]
        match = ID_RE.match(row["id"])
        assert match, row["id"]
        group, _n, kind, _k = match.groups()
        assert row["kind"] == "natural_written"
        assert row["split"] == "heldout2"
        assert row["source"] == SOURCES[group]
        assert row["label"] == {"c": "contradicted", "s": "supported"}[kind]
        family, sep, detail = row["transform"].partition(": ")
        assert sep and family and detail, row["id"]
        assert (family == "paraphrase") == (row["label"] == "supported"), row["id"]


def test_at_least_150_per_label(rows):
    for label in ("contradicted", "supported"):
        assert sum(row["label"] == label for row in rows) >= 150, label


def test_ids_and_claims_unique_and_sorted(rows):
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    assert ids == sorted(ids)
    claims = [row["claim"] for row in rows]
    assert len(claims) == len(set(claims))


def test_evidence_sentence_verbatim_and_claim_not_copied(rows):
    for row in rows:
        assert row["evidence_sentence"] in row["evidence"], row["id"]
        assert row["claim"] != row["evidence_sentence"], row["id"]
        assert row["claim"] not in row["evidence"], row["id"]


def test_every_evidence_sentence_has_both_labels_and_one_paragraph(rows):
    labels: dict[str, set[str]] = defaultdict(set)
    paragraphs: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        key = row["id"].rsplit("-", 1)[0]
        labels[key].add(row["label"])
        paragraphs[key].add((row["evidence"], row["evidence_sentence"]))
    for key in labels:
        assert labels[key] == {"contradicted", "supported"}, key
        assert len(paragraphs[key]) == 1, key
