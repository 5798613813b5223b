"""The held-out natural claim/evidence set (tests/scoring/data/natural_contradictions_heldout.jsonl, provenance in
natural_contradictions_heldout.md beside it) is exactly what its builder makes, with a sound schema.

These tests check the data only; they run no detector. The set is meant to be measured once, after the detector is
frozen. K-QA: Manes et al., "K-QA: A Real-World Medical Q&A Benchmark", arXiv:2401.14493 (MIT licence,
data/demo/kqa/LICENSE.txt).
"""

from __future__ import annotations

import collections
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "tests/scoring/data/natural_contradictions_heldout.jsonl"
BUILDER = ROOT / "bench/data/build_natural_contradictions_heldout.py"
KQA = ROOT / "data/demo/kqa/questions_w_answers.jsonl"
FIELDS = ["id", "kind", "label", "claim", "evidence", "evidence_sentence", "source", "transform", "split"]
ID = re.compile(r"^nh-(kqa(?P<line>\d{3})|leaflet)-(?P<n>\d{2})-(?P<code>[cs])(?P<k>\d)$")
KQA_SOURCE = re.compile(r"^data/demo/kqa/questions_w_answers\.jsonl line (?P<line>\d+) Free_form_answer$")


def _builder():
    spec = importlib.util.spec_from_file_location("build_natural_contradictions_heldout", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines()]


def test_the_file_is_exactly_what_the_builder_makes():
    builder = _builder()
    assert SET.read_text(encoding="utf-8") == builder.render(builder.build_records())


def test_schema_and_labels():
    rows = _rows()
    for r in rows:
        assert list(r) == FIELDS, r.get("id")
        assert all(isinstance(r[f], str) and r[f].strip() for f in FIELDS), r["id"]
        assert r["kind"] == "natural_written"
        assert r["split"] == "heldout"
        m = ID.match(r["id"])
        assert m, r["id"]
        assert r["label"] == {"c": "contradicted", "s": "supported"}[m["code"]], r["id"]
        family, sep, detail = r["transform"].partition(": ")
        assert sep and family and detail, r["id"]
        assert (family == "paraphrase") == (r["label"] == "supported"), r["id"]
        assert r["claim"] != r["evidence_sentence"], r["id"]


def test_at_least_150_per_label_and_unique_ids_and_claims():
    rows = _rows()
    counts = collections.Counter(r["label"] for r in rows)
    assert counts["contradicted"] >= 150 and counts["supported"] >= 150, counts
    assert set(counts) == {"contradicted", "supported"}
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["claim"] for r in rows}) == len(rows)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)


def test_every_evidence_sentence_is_in_its_evidence():
    for r in _rows():
        assert r["evidence_sentence"] in r["evidence"], r["id"]


def test_kqa_evidence_is_the_answer_on_that_line_and_only_lines_126_to_201():
    answers = [json.loads(x)["Free_form_answer"] for x in KQA.read_text(encoding="utf-8").splitlines()]
    kqa_rows = 0
    for r in _rows():
        m, s = ID.match(r["id"]), KQA_SOURCE.match(r["source"])
        if m["line"] is None:
            assert r["source"] == "written: patient leaflet", r["id"]
            continue
        kqa_rows += 1
        assert s and int(s["line"]) == int(m["line"]), r["id"]
        line = int(m["line"])
        assert 126 <= line <= 201, r["id"]
        # Independent of the builder's regex: the answer's non-blank lines, stripped, joined by one space.
        expected = " ".join(part.strip() for part in answers[line - 1].splitlines() if part.strip())
        assert r["evidence"] == expected, r["id"]
    assert kqa_rows >= 150


def test_leaflets_are_for_medicines_outside_the_older_sets_list():
    excluded = ["omeprazole", "ibuprofen", "warfarin", "metformin", "levothyroxine", "folic acid", "ramipril",
                "simvastatin", "amoxicillin", "apixaban", "salbutamol"]
    for r in _rows():
        if r["source"] == "written: patient leaflet":
            assert not any(name in r["evidence"].lower() for name in excluded), r["id"]
