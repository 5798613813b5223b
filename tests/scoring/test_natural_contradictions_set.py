"""The hand-written contradiction set (tests/scoring/data/natural_contradictions.jsonl) is well formed.

Built by bench/data/build_natural_contradictions.py (provenance in natural_contradictions.md): K-QA physician
answers and written patient-leaflet paragraphs, each claim a reversal (``contradicted``) or a paraphrase
(``supported``) of one evidence sentence, split dev/test by a hash of the id's stem.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SET = Path(__file__).parent / "data" / "natural_contradictions.jsonl"
FIELDS = {"id", "kind", "label", "claim", "evidence", "evidence_sentence", "source", "transform", "split"}
KQA = "data/demo/kqa/questions_w_answers.jsonl"


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_schema(pairs):
    for p in pairs:
        assert set(p) == FIELDS, p["id"]
        assert p["kind"] == "natural_written"
        assert p["label"] in ("contradicted", "supported")
        assert p["split"] in ("dev", "test")
        assert all(isinstance(p[f], str) and p[f].strip() for f in FIELDS), p["id"]
        assert p["source"] == "written: patient leaflet" or (
            p["source"].startswith(f"{KQA} line ") and p["source"].endswith(" Free_form_answer")
        ), p["id"]


def test_counts_and_unique_ids(pairs):
    labels = Counter(p["label"] for p in pairs)
    assert labels["contradicted"] >= 160 and labels["supported"] >= 160
    assert len({p["id"] for p in pairs}) == len(pairs)
    from_kqa = sum(p["source"].startswith(KQA) for p in pairs)
    assert from_kqa * 2 >= len(pairs)  # at least half the evidence is real K-QA text


def test_evidence_sentence_is_in_its_evidence(pairs):
    answers = [
        json.loads(line)["Free_form_answer"].replace("\n", " ")
        for line in (ROOT / KQA).read_text(encoding="utf-8").splitlines()
    ]
    for p in pairs:
        assert p["evidence_sentence"] in p["evidence"], p["id"]
        if p["source"].startswith(KQA):
            line = int(p["source"].split(" line ")[1].split()[0])
            assert p["evidence"] == answers[line - 1], p["id"]


def test_no_contradiction_repeats_its_sentence(pairs):
    for p in pairs:
        if p["label"] == "contradicted":
            assert p["claim"].strip() != p["evidence_sentence"].strip(), p["id"]


def test_splits_follow_the_hash_of_the_id_stem(pairs):
    splits = Counter((p["split"], p["label"]) for p in pairs)
    assert all(splits[(s, label)] > 0 for s in ("dev", "test") for label in ("contradicted", "supported"))
    by_stem: dict[str, set[str]] = {}
    for p in pairs:
        stem = p["id"].rsplit("-", 1)[0]
        want = "dev" if hashlib.sha256(stem.encode()).digest()[0] % 2 == 0 else "test"
        assert p["split"] == want, p["id"]
        by_stem.setdefault(stem, set()).add(p["split"])
    assert all(len(s) == 1 for s in by_stem.values())  # one sentence's claims never straddle dev and test


def test_the_file_is_what_the_builder_writes(pairs):
    spec = importlib.util.spec_from_file_location(
        "build_natural_contradictions", ROOT / "bench" / "data" / "build_natural_contradictions.py"
    )
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    assert builder.build() == pairs
