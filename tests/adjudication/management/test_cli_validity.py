"""``manage.py validity``: a metric against a binary label, and two metrics paired."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

# Hanley & McNeil (1982) Table 1 (see test_validity): AUC 0.8932, DeLong CI 0.83295–0.95339 (Stata roctab).
NEG = np.repeat([1, 2, 3, 4, 5], [33, 6, 6, 11, 2])
POS = np.repeat([1, 2, 3, 4, 5], [3, 2, 2, 11, 33])


def _run(*args: str) -> str:
    out = StringIO()
    call_command("validity", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def single(tmp_path: Path) -> Path:
    lines = (
        ["unit,score,label"] + [f"p{i},{s},1" for i, s in enumerate(POS)] + [f"n{i},{s},0" for i, s in enumerate(NEG)]
    )
    path = tmp_path / "single.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_json_has_the_documented_keys_and_the_published_auc(single):
    out = json.loads(_run(str(single), "--bootstrap", "300", "--seed", "2", "--json"))
    assert {"n", "n_pos", "n_neg", "auc", "pearson", "spearman", "kendall"} <= set(out)
    assert (out["n"], out["n_pos"], out["n_neg"]) == (109, 51, 58)
    assert round(out["auc"]["value"], 4) == 0.8932
    assert [round(x, 5) for x in out["auc"]["ci95"]] == [0.83295, 0.95339]
    assert len(out["auc"]["ci95_bootstrap"]) == 2
    assert "delong_paired" not in out


def test_paired_input_adds_the_delong_test(tmp_path):
    rng = np.random.default_rng(0)
    scores = np.r_[POS, NEG].astype(float)
    other = scores + rng.normal(size=scores.size)
    labels = np.r_[np.ones(51), np.zeros(58)].astype(int)
    lines = ["unit,score_a,score_b,label"] + [
        f"u{i},{a},{b:.6f},{y}" for i, (a, b, y) in enumerate(zip(scores, other, labels, strict=True))
    ]
    path = tmp_path / "paired.csv"
    path.write_text("\n".join(lines) + "\n")
    out = json.loads(_run(str(path), "--bootstrap", "0", "--json"))
    assert {"auc_a", "auc_b", "delong_paired"} <= set(out)
    d = out["delong_paired"]
    assert {"diff", "z", "p_value", "ci95"} <= set(d)
    assert d["diff"] == pytest.approx(out["auc_a"]["value"] - out["auc_b"]["value"])
    text = _run(str(path), "--bootstrap", "0")
    assert "DeLong paired: diff" in text


def test_an_empty_score_is_excluded_and_counted(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text("unit,score,label\na,0.9,1\nb,,1\nc,0.1,0\nd,0.2,0\ne,0.8,1\n")
    out = json.loads(_run(str(path), "--bootstrap", "0", "--json"))
    assert out["n"] == 4 and out["n_excluded_units"] == 1
    assert out["auc"]["value"] == 1.0


def test_one_class_makes_auc_undefined(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("unit,score,label\na,0.9,1\nb,0.3,1\n")
    out = json.loads(_run(str(path), "--bootstrap", "0", "--json"))
    assert out["auc"]["value"] is None and "no negative unit" in out["auc"]["reason"]


def test_a_label_that_is_not_zero_or_one_is_refused(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("unit,score,label\na,0.9,yes\n")
    with pytest.raises(CommandError, match="label must be 0 or 1"):
        _run(str(path))
