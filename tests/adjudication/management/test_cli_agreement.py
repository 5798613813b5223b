"""``manage.py agreement``: CSV in, every applicable statistic out, with the documented JSON keys."""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

# The copy shipped with the demo (data/demo/kqa, checksummed against its MANIFEST.md).
KQA = Path(__file__).resolve().parents[3] / "data" / "demo" / "kqa" / "NLI_medical_annotator.csv"
KQA_SCALE = "Entailment,Neutral,Contradiction"


def _write(path: Path, rows: list[tuple[str, str, str]], header: str = "unit,rater,value") -> Path:
    path.write_text(header + "\n" + "\n".join(",".join(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _run(*args: str) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def kqa_long(tmp_path: Path) -> Path:
    with KQA.open(newline="") as fh:
        rows = [(str(i), f"physician{k}", r[f"label_{k}"]) for i, r in enumerate(csv.DictReader(fh)) for k in range(3)]
    return _write(tmp_path / "kqa.csv", rows)


def test_json_output_has_the_documented_keys_and_kqa_values(kqa_long):
    out = json.loads(_run(str(kqa_long), "--scale", KQA_SCALE, "--bootstrap", "200", "--seed", "3", "--json"))
    assert {"n_units", "n_raters", "n_excluded_units", "percent_agreement", "fleiss_kappa", "krippendorff_alpha",
            "cohen_kappa", "cohen_kappa_pairs"} <= set(out)
    assert (out["n_units"], out["n_raters"], out["n_excluded_units"]) == (399, 3, 0)
    assert round(out["fleiss_kappa"]["value"], 4) == 0.7189
    assert round(out["krippendorff_alpha"]["value"], 4) == 0.7191
    assert len(out["fleiss_kappa"]["ci95"]) == 2
    assert [round(p["value"], 4) for p in out["cohen_kappa_pairs"]] == [0.6696, 0.7612, 0.7317]
    assert out["cohen_kappa"]["value"] is None and out["cohen_kappa"]["reason"]


def test_the_same_seed_gives_the_same_intervals(kqa_long):
    a = json.loads(_run(str(kqa_long), "--scale", KQA_SCALE, "--bootstrap", "200", "--seed", "9", "--json"))
    b = json.loads(_run(str(kqa_long), "--scale", KQA_SCALE, "--bootstrap", "200", "--seed", "9", "--json"))
    assert a["fleiss_kappa"]["ci95"] == b["fleiss_kappa"]["ci95"]


def test_plain_output_prints_every_statistic_with_n_and_intervals(kqa_long):
    text = _run(str(kqa_long), "--scale", KQA_SCALE, "--bootstrap", "100")
    assert "units 399  raters 3  excluded units (rated fewer than twice) 0" in text
    for name in ("percent agreement", "Fleiss kappa", "Krippendorff alpha (nominal)", "physician0 ~ physician1"):
        assert name in text
    assert "95% CI [" in text and "n units 399, excluded 0" in text


def test_two_raters_with_weights_give_cohen_kappa_over_the_declared_scale(tmp_path):
    # SAS example table [[0,4,1],[0,8,0],[0,1,5]] (see test_agreement): linear weighted κ 0.4701.
    table = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
    scale = ["low", "mid", "high"]
    rows, unit = [], 0
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            for _ in range(count):
                rows += [(str(unit), "a", scale[i]), (str(unit), "b", scale[j])]
                unit += 1
    path = _write(tmp_path / "two.csv", rows)
    out = json.loads(_run(str(path), "--level", "ordinal", "--scale", "low,mid,high", "--weights", "linear",
                          "--bootstrap", "0", "--json"))
    assert round(out["cohen_kappa"]["value"], 4) == 0.4701
    assert out["cohen_kappa"]["n_units"] == 19
    assert len(out["cohen_kappa_pairs"]) == 1


def test_interval_level_uses_the_numbers(tmp_path):
    # Krippendorff (2011) reliability data: interval α = 0.849.
    data = [
        "1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3", ". 3 3 3 2 3 4 2 2 5 1 .", "1 2 3 3 2 4 4 1 2 5 1 .",
    ]
    rows = [(str(u), f"obs{o}", v) for o, line in enumerate(data) for u, v in enumerate(line.split()) if v != "."]
    path = _write(tmp_path / "k.csv", rows)
    out = json.loads(_run(str(path), "--level", "interval", "--bootstrap", "0", "--json"))
    assert round(out["krippendorff_alpha"]["value"], 3) == 0.849
    assert out["n_excluded_units"] == 1
    assert out["fleiss_kappa"]["value"] is None
    nominal = json.loads(_run(str(path), "--bootstrap", "0", "--json"))
    assert round(nominal["krippendorff_alpha"]["value"], 3) == 0.743


def test_a_value_off_the_scale_is_refused(tmp_path):
    path = _write(tmp_path / "bad.csv", [("1", "a", "yes"), ("1", "b", "maybe")])
    with pytest.raises(CommandError, match="not on the declared scale"):
        _run(str(path), "--scale", "yes,no")


def test_a_wrong_header_is_refused(tmp_path):
    path = _write(tmp_path / "bad.csv", [("1", "a", "yes")], header="item,annotator,label")
    with pytest.raises(CommandError, match="unit,rater,value"):
        _run(str(path))


def test_a_rater_rating_a_unit_twice_is_refused(tmp_path):
    path = _write(tmp_path / "dup.csv", [("1", "a", "yes"), ("1", "a", "no")])
    with pytest.raises(CommandError, match="twice"):
        _run(str(path))


def test_ordinal_without_a_scale_is_refused(tmp_path):
    path = _write(tmp_path / "o.csv", [("1", "a", "none"), ("1", "b", "severe")])
    with pytest.raises(CommandError, match="--scale"):
        _run(str(path), "--level", "ordinal")
