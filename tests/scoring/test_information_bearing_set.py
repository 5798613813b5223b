"""The labelled information-bearing set (tests/scoring/data/information_bearing.jsonl, README beside it) is what its
builder makes, with the documented counts and split."""

from __future__ import annotations

import collections
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "tests/scoring/data/information_bearing.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_has_the_documented_counts_unique_ids_and_texts():
    rows = _rows()
    assert collections.Counter(r["label"] for r in rows) == {"information_bearing": 150, "conversational": 100}
    assert collections.Counter(r["source"] for r in rows) == {"kqa": 110, "written-conversational": 100,
                                                               "written-informative": 40}
    assert len({r["id"] for r in rows}) == len(rows) == len({r["text"] for r in rows})
    assert all(r["label"] == "conversational" for r in rows if r["source"] == "written-conversational")


def test_the_split_is_the_parity_of_the_ids_hash():
    for r in _rows():
        even = int(hashlib.sha256(r["id"].encode()).hexdigest()[:2], 16) % 2 == 0
        assert r["split"] == ("dev" if even else "test"), r["id"]


def test_every_kqa_sentence_is_in_its_answer():
    answers = [json.loads(x) for x in (ROOT / "data/demo/kqa/questions_w_answers.jsonl").read_text().splitlines()]
    for r in _rows():
        if r["source"] == "kqa":
            line = int(r["id"].split("-")[1])
            assert r["text"] in " ".join(answers[line - 1]["Free_form_answer"].split()), r["id"]


def test_the_file_is_what_the_builder_makes():
    done = subprocess.run([sys.executable, str(ROOT / "bench/data/build_information_bearing.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
