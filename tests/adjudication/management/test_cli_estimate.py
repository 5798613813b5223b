"""``manage.py estimate``: a prediction-powered share from a scores file and a labels file.

The figures are held to ppi-python 0.2.3 (see tests/adjudication/stats/test_ppi.py for the calls): if the
estimator's formula breaks, the command's output stops matching them.
"""

from __future__ import annotations

import json
import re
import shlex
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.adjudication.stats.test_ppi import A_F, A_FU, A_PI, A_Y, FU, Z95, F, Y

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guide" / "estimates.md"
TIGHT = {"rel": 1e-9, "abs": 1e-12}


def _run(*args: str) -> str:
    out = StringIO()
    call_command("estimate", *args, stdout=out)
    return out.getvalue()


def _json(*args: str) -> dict:
    return json.loads(_run(*args, "--json"))


def _lines(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def reference_files(tmp_path: Path) -> tuple[Path, Path]:
    """The frozen arrays of the stats tests as files: 20 labelled items (l01…) and 40 unlabelled (u01…),
    plus a failed score that must be left out; labels 'harmful' (1) / 'fine' (0)."""
    scores = [{"id": f"l{i:02d}", "metric": "cf", "value": f, "state": "ok"} for i, f in enumerate(F)]
    scores += [{"id": f"u{i:02d}", "metric": "cf", "value": f, "state": "ok"} for i, f in enumerate(FU)]
    scores.append({"id": "x", "metric": "cf", "value": None, "state": "failed"})
    labels = [{"id": f"l{i:02d}", "label": "harmful" if y else "fine"} for i, y in enumerate(Y)]
    return _lines(tmp_path / "scores.jsonl", scores), _lines(tmp_path / "labels.jsonl", labels)


def test_json_reproduces_ppi_python(reference_files):
    scores, labels = reference_files
    out = _json("--scores", str(scores), "--labels", str(labels), "--positive", "harmful")
    assert {"estimate", "ci_low", "ci_high", "method", "n_labelled", "n_unlabelled", "classical"} <= set(out)
    assert out["method"] == "ppi++"
    # ppi_py.ppi_mean_ci(Y, F, FU, alpha=0.05) and ppi_mean_pointestimate
    assert out["estimate"] == pytest.approx(0.3188733211838862, **TIGHT)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((0.13157048918650063, 0.5061761531812718), **TIGHT)
    assert out["lambda"] == pytest.approx(0.6740471851387926, **TIGHT)
    # ppi_py.classical_mean_ci(Y, alpha=0.05)
    c = out["classical"]
    assert c["estimate"] == pytest.approx(0.3)
    assert (c["ci_low"], c["ci_high"]) == pytest.approx((0.0991634554736407, 0.5008365445263593), **TIGHT)
    # ppi_py.ppi_mean_ci(Y, F, FU, alpha=0.05, lam=1)
    p = out["estimates"]["ppi"]
    assert (p["ci_low"], p["ci_high"]) == pytest.approx((0.13750671270747875, 0.5184932872925214), **TIGHT)
    assert (out["n_labelled"], out["n_unlabelled"], out["n_not_ok"], out["n_positive"]) == (20, 40, 1, 6)
    assert out["effective_labels"] == pytest.approx(22.994649225120455, rel=1e-9)
    assert out["metric"] == "cf" and out["weighted"] is False


def test_method_picks_the_headline_and_alpha_the_level(reference_files):
    scores, labels = (str(p) for p in reference_files)
    base = ("--scores", scores, "--labels", labels, "--positive", "harmful")
    assert _json(*base, "--method", "classical")["estimate"] == pytest.approx(0.3)
    assert _json(*base, "--method", "ppi")["estimate"] == pytest.approx(0.328)
    assert _json(*base, "--method", "ppi++")["method"] == "ppi++"
    ninety = _json(*base, "--alpha", "0.1")  # ppi_py.ppi_mean_ci(Y, F, FU, alpha=0.1)
    assert (ninety["ci_low"], ninety["ci_high"]) == pytest.approx((0.16168382944866916, 0.4760628129191033), **TIGHT)
    text = _run(*base, "--method", "all")
    assert "estimate (" not in text
    assert all(m in text for m in ("ppi++", "ppi ", "classical"))
    assert "effective labels" in _run(*base)


def test_invert_uses_one_minus_the_score(tmp_path, reference_files):
    _, labels = reference_files
    flipped = [{"id": f"l{i:02d}", "value": 1 - f} for i, f in enumerate(F)]
    flipped += [{"id": f"u{i:02d}", "value": 1 - f} for i, f in enumerate(FU)]
    scores = _lines(tmp_path / "flipped.jsonl", flipped)
    out = _json("--scores", str(scores), "--labels", str(labels), "--positive", "harmful", "--invert")
    assert out["estimate"] == pytest.approx(0.3188733211838862, rel=1e-9)
    assert out["inverted"] is True
    # Without --invert the flipped metric points the wrong way: λ̂ clips to 0, the classical estimate.
    assert _json("--scores", str(scores), "--labels", str(labels), "--positive", "harmful")["lambda"] == 0.0


def test_csv_files_and_weights_give_the_active_estimate(tmp_path):
    # The hand-worked example of test_ppi: weights 1/π = 2, 4, 1 on three labelled items, two unlabelled.
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "id,score\n"
        + "".join(f"l{i},{f}\n" for i, f in enumerate(A_F))
        + "".join(f"u{i},{f}\n" for i, f in enumerate(A_FU))
    )
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "id,label,weight\n" + "".join(f"l{i},{y},{1 / p:g}\n" for i, (y, p) in enumerate(zip(A_Y, A_PI, strict=True)))
    )
    out = _json("--scores", str(scores), "--labels", str(labels), "--positive", "1", "--method", "ppi")
    assert out["weighted"] is True
    assert out["estimate"] == pytest.approx(0.46, **TIGHT)  # λ = 1: mean of the terms 1.2, −0.6, 1.0, 0.1, 0.6
    assert out["ci_high"] - out["estimate"] == pytest.approx(Z95 * 0.08448**0.5, **TIGHT)
    assert out["classical"]["estimate"] == pytest.approx(0.6, **TIGHT)  # Σ Y/π / M = (2 + 0 + 1)/5
    assert out["estimates"]["ppi++"]["lambda"] == pytest.approx(0.236 / 0.2544, **TIGHT)


def test_the_documented_command_prints_what_the_guide_shows():
    text = GUIDE.read_text(encoding="utf-8")
    command = next(
        line.strip() for line in text.splitlines() if line.strip().startswith("python manage.py estimate --scores docs")
    )
    shown = re.search(r"```text\n(.*?)```", text, re.S)
    assert shown is not None
    args = shlex.split(command)[3:]
    paths = [a for a in args if a.startswith("docs/")]
    assert len(paths) == 2
    args = [str(ROOT / a) if a.startswith("docs/") else a for a in args]
    out = _run(*args)
    assert out.strip() == shown.group(1).strip()
    data = json.loads(_run(*args, "--json"))
    assert data["n_not_ok"] == 2 and data["n_labelled"] == 60
    assert data["effective_labels"] > data["n_labelled"]


# --- refusals -------------------------------------------------------------------------------------------


def _refused(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        _run(*args)
    return str(info.value)


def test_bad_rows_in_both_files_are_all_named_with_line_and_field(tmp_path):
    scores = tmp_path / "s.jsonl"
    scores.write_text(
        '{"id": "a", "value": 0.2, "state": "ok"}\n'
        '{"id": "b", "value": "high", "state": "ok"}\n'
        '{"value": 0.4}\n'
        "not json\n"
        '{"id": "c", "value": null, "state": "ok"}\n'
        '{"id": "d", "value": NaN}\n'
        '{"id": "e", "value": true}\n'
    )
    labels = tmp_path / "l.csv"
    labels.write_text("id,label,weight\na,1,2\nb,,2\nc,0,0.5\nd,1,x\n")
    message = _refused("--scores", str(scores), "--labels", str(labels), "--positive", "1")
    assert message.startswith("nothing estimated")
    for expected in (
        f"{scores}, line 2, field 'value': 'high' is not a number",
        f"{scores}, line 3, field 'id': required",
        f"{scores}, line 4: malformed JSON",
        f"{scores}, line 5, field 'value': required for a score with state ok",
        f"{scores}, line 6, field 'value'",
        f"{scores}, line 7, field 'value': True is not a number",
        f"{labels}, line 3, field 'label': required",
        f"{labels}, line 4, field 'weight': '0.5' is below 1",
        f"{labels}, line 5, field 'weight': 'x' is not a number",
    ):
        assert expected in message, (expected, message)


def test_labels_must_be_among_the_items_scored_ok_once_each(tmp_path, reference_files):
    scores, _ = reference_files
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"id": "l00", "label": "harmful"}\n'
        '{"id": "l00", "label": "fine"}\n'
        '{"id": "zz", "label": "fine"}\n'
        '{"id": "x", "label": "fine"}\n'
        '{"id": "l01", "label": "fine", "weight": 2}\n'
    )
    message = _refused("--scores", str(scores), "--labels", str(labels), "--positive", "harmful")
    assert f"{labels}, line 2, field 'id': item 'l00' is labelled twice (first on line 1)" in message
    assert f"{labels}, line 3, field 'id': item 'zz' is not in {scores}" in message
    assert f"{labels}, line 4, field 'id': item 'x' has no usable score (state failed)" in message
    assert f"{labels}, line 1, field 'weight': missing: give a weight on every row or on none" in message


def test_a_score_twice_and_a_csv_without_the_columns_are_refused(tmp_path):
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\na,0.1\nb,0.2\na,0.3\n")
    labels = tmp_path / "l.csv"
    labels.write_text("id,label\na,1\nb,0\n")
    assert f"{scores}, line 4, field 'id': item 'a' is scored twice (first on line 2)" in _refused(
        "--scores", str(scores), "--labels", str(labels), "--positive", "1"
    )
    bad_header = tmp_path / "h.csv"
    bad_header.write_text("id,verdict\na,1\n")
    assert f"{bad_header}, line 1: the header must name the columns id, label" in _refused(
        "--scores", str(scores), "--labels", str(bad_header), "--positive", "1"
    )


def test_metric_choice_positive_value_and_alpha_are_checked(tmp_path, reference_files):
    scores, labels = (str(p) for p in reference_files)
    base = ("--scores", scores, "--labels", labels)
    assert "no label equals --positive 'Harmful'; the labels are: fine, harmful" in _refused(
        *base, "--positive", "Harmful"
    )
    assert "--alpha must be strictly between 0 and 1" in _refused(*base, "--positive", "harmful", "--alpha", "1")
    assert "--alpha must be" in _refused(*base, "--positive", "harmful", "--alpha", "nan")
    assert "no row of metric 'rf'" in _refused(*base, "--positive", "harmful", "--metric", "rf")
    two = Path(scores).with_name("two.jsonl")
    two.write_text(Path(scores).read_text() + '{"id": "l00", "metric": "rf", "value": 0.5, "state": "ok"}\n')
    assert "holds several metrics (cf, rf): choose one with --metric" in _refused(
        "--scores", str(two), "--labels", labels, "--positive", "harmful"
    )
    assert (
        _json("--scores", str(two), "--labels", labels, "--positive", "harmful", "--metric", "cf")["n_labelled"] == 20
    )
    assert "no such file" in _refused("--scores", scores + ".missing", "--labels", labels, "--positive", "harmful")


def test_every_item_labelled_leaves_nothing_for_the_metric(tmp_path):
    scores = _lines(tmp_path / "s.jsonl", [{"id": "a", "value": 0.1}, {"id": "b", "value": 0.9}])
    labels = _lines(tmp_path / "l.jsonl", [{"id": "a", "label": 0}, {"id": "b", "label": 1}])
    assert "every item scored ok is labelled" in _refused(
        "--scores", str(scores), "--labels", str(labels), "--positive", "1"
    )
