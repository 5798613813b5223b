"""``python manage.py estimate``: a prediction-powered share with its interval, from two files.

    estimate --scores SCORES.jsonl --labels LABELS.csv --positive VALUE [--metric NAME] [--invert]
             [--method ppipp|ppi|classical|all] [--alpha 0.05] [--json]

SCORES is the ``score`` command's output (JSONL: ``id``, ``metric``, ``value``, ``state``) or a CSV with
columns ``id,score`` (or ``id,value``; ``state`` and ``metric`` optional). The population is every item
scored with state ``ok``. LABELS holds the clinicians' labels of a random sample of those items: JSONL
objects or CSV rows with ``id`` and ``label``, and optionally ``weight``, the inverse of the probability
with which the item was drawn (every row or none: then the estimate is the inverse-probability-weighted
one of active inference). A label equal to ``--positive`` counts 1, any other 0, so the estimate is the
share of positive items. ``--invert`` uses 1 − score, for a score that is high where the label is
negative (a faithfulness score for the share of unfaithful answers).

The PPI++ estimate is printed with plain PPI and the classical interval (the labels alone) beside it, and
the effective labels of each (see adjudication/stats/ppi.py and docs/guide/estimates.md). Nothing is
estimated unless both files are valid as a whole: every bad row is named, with its line and field.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.stats import ppi as ppi_stats

METHODS = {"ppipp": ppi_stats.PPIPP, "ppi++": ppi_stats.PPIPP, "ppi": ppi_stats.PPI, "classical": "classical"}
ORDER = (ppi_stats.PPIPP, ppi_stats.PPI, ppi_stats.CLASSICAL)
JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
MAX_ERRORS = 50


@dataclass
class ScoreRow:
    line: int
    id: str
    metric: str
    state: str
    value: float | None


@dataclass
class LabelRow:
    line: int
    id: str
    label: Any
    weight: float | None


class _Errors(list[str]):
    def add(self, path: Path, line: int, field: str | None, message: str) -> None:
        where = f"{path}, line {line}" + (f", field {field!r}" if field else "")
        self.append(f"{where}: {message}")


# --- reading ---------------------------------------------------------------------------------------------


def _is_jsonl(path: Path, text: str) -> bool:
    if path.suffix.lower() in JSONL_SUFFIXES:
        return True
    if path.suffix.lower() == ".csv":
        return False
    return text.lstrip().startswith("{")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CommandError(f"no such file: {path}") from None
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None


def _records(path: Path, errors: _Errors) -> tuple[list[str] | None, list[tuple[int, dict[str, Any]]]]:
    """The CSV header (None for JSONL) and the (line, record) pairs of a file; CSV cells are stripped
    strings, empty ones absent."""
    text = _read_text(path)
    out: list[tuple[int, dict[str, Any]]] = []
    if _is_jsonl(path, text):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.add(path, number, None, f"malformed JSON ({exc.msg})")
                continue
            if not isinstance(rec, dict):
                errors.add(path, number, None, "expected a JSON object")
                continue
            out.append((number, rec))
        return None, out
    reader = csv.reader(io.StringIO(text, newline=""))
    header = [h.strip() for h in next(reader, [])]
    if len(set(header)) != len(header):
        raise CommandError(f"{path}, line 1: a column name appears twice in the header")
    for row in reader:
        number = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            errors.add(path, number, None, f"{len(row)} fields, but the header names {len(header)}")
            continue
        out.append((number, {h: c.strip() for h, c in zip(header, row, strict=False) if c.strip()}))
    return header, out


def _require_columns(path: Path, header: list[str] | None, *columns: str) -> None:
    if header is None:
        return
    missing = [c for c in columns if c not in header]
    if missing:
        raise CommandError(
            f"{path}, line 1: the header must name the columns {', '.join(columns)} "
            f"(missing {', '.join(missing)}; got {', '.join(header) or 'nothing'})"
        )


def _id(rec: dict[str, Any], path: Path, line: int, errors: _Errors) -> str | None:
    value = rec.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        errors.add(path, line, "id", "required: a non-empty string" if value in (None, "") else "must be a string")
        return None
    return value.strip()


def _number(value: Any, path: Path, line: int, field: str, errors: _Errors) -> float | None:
    if isinstance(value, bool):
        errors.add(path, line, field, f"{value!r} is not a number")
        return None
    if isinstance(value, int | float):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = float(value)
        except ValueError:
            errors.add(path, line, field, f"{value!r} is not a number")
            return None
    else:
        errors.add(path, line, field, f"{value!r} is not a number")
        return None
    if not math.isfinite(x):
        errors.add(path, line, field, f"{value!r} is not a finite number")
        return None
    return x


def read_scores(path: Path, errors: _Errors) -> list[ScoreRow]:
    """Score rows: ``id``, ``value`` (or ``score``), optional ``state`` (default ok) and ``metric``."""
    header, records = _records(path, errors)
    if header is not None:
        _require_columns(path, header, "id", "value" if "value" in header and "score" not in header else "score")
    rows: list[ScoreRow] = []
    for line, rec in records:
        item = _id(rec, path, line, errors)
        metric = rec.get("metric", "")
        if not isinstance(metric, str):
            errors.add(path, line, "metric", "must be a string")
            metric = ""
        state = rec.get("state", "ok")
        if not isinstance(state, str) or not state.strip():
            errors.add(path, line, "state", "must be a non-empty string (ok, undetermined, failed)")
            continue
        state = state.strip()
        field = "score" if "score" in rec and "value" not in rec else "value"
        value: float | None = None
        if state == "ok":
            if rec.get(field) is None:
                errors.add(path, line, field, "required for a score with state ok")
                continue
            value = _number(rec[field], path, line, field, errors)
            if value is None:
                continue
        if item is not None:
            rows.append(ScoreRow(line, item, metric.strip(), state, value))
    return rows


def read_labels(path: Path, errors: _Errors) -> list[LabelRow]:
    """Label rows: ``id``, ``label`` and optionally ``weight`` (1 / the item's inclusion probability)."""
    header, records = _records(path, errors)
    _require_columns(path, header, "id", "label")
    rows: list[LabelRow] = []
    for line, rec in records:
        item = _id(rec, path, line, errors)
        label = rec.get("label")
        if label is None or (isinstance(label, str) and not label.strip()):
            errors.add(path, line, "label", "required")
            continue
        if not isinstance(label, str | int | float | bool):
            errors.add(path, line, "label", "must be a string, a number or true/false")
            continue
        weight: float | None = None
        if rec.get("weight") is not None:
            weight = _number(rec["weight"], path, line, "weight", errors)
            if weight is None:
                continue
            if weight < 1.0:
                errors.add(
                    path, line, "weight", f"{rec['weight']!r} is below 1: a weight is 1 / the inclusion probability"
                )
                continue
        if item is not None:
            rows.append(LabelRow(line, item, label, weight))
    return rows


def is_positive(label: Any, positive: str) -> bool:
    """Whether a label equals ``--positive``: as text, as a number (1 = 1.0), or as true/false."""
    wanted = positive.strip()
    if isinstance(label, bool):
        return wanted.lower() == str(label).lower()
    text = label.strip() if isinstance(label, str) else str(label)
    if text == wanted:
        return True
    try:
        return float(text) == float(wanted)
    except ValueError:
        return False


# --- the command -----------------------------------------------------------------------------------------


def _as_dict(e: ppi_stats.Estimate) -> dict[str, Any]:
    return {
        "method": e.method,
        "estimate": e.point,
        "ci_low": e.lower,
        "ci_high": e.upper,
        "half_width": e.half_width,
        "se": e.se,
        "lambda": e.lam,
        "effective_labels": None if math.isinf(e.effective_labels) else e.effective_labels,
        "n_labelled": e.n_labelled,
        "n_unlabelled": e.n_unlabelled,
        "reference": e.reference,
        "notes": list(e.notes),
    }


class Command(BaseCommand):
    help = (
        "The share of positive items with a prediction-powered 95% interval (PPI++, plain PPI and the classical "
        "interval beside it), from a metric's scores on every item and clinicians' labels on a random sample."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scores", required=True, type=Path, help="the score command's JSONL, or id,score CSV")
        parser.add_argument("--labels", required=True, type=Path, help="JSONL or CSV with id, label[, weight]")
        parser.add_argument("--positive", required=True, help="the label value counted as positive")
        parser.add_argument("--metric", help="use the rows of this metric (when the scores hold several)")
        parser.add_argument("--invert", action="store_true", help="use 1 − score (a high score means negative)")
        parser.add_argument(
            "--method", default="ppipp", choices=[*METHODS, "all"], help="the headline estimate (default ppipp)"
        )
        parser.add_argument("--alpha", default="0.05", help="1 − the interval's confidence (default 0.05)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            alpha = float(opts["alpha"])
        except ValueError:
            raise CommandError(f"--alpha must be a number between 0 and 1, got {opts['alpha']!r}") from None
        if not 0.0 < alpha < 1.0:
            raise CommandError(f"--alpha must be strictly between 0 and 1, got {opts['alpha']!r}")
        if not opts["positive"].strip():
            raise CommandError("--positive must name a label value")
        scores_path: Path = opts["scores"]
        labels_path: Path = opts["labels"]
        errors = _Errors()
        score_rows = read_scores(scores_path, errors)
        label_rows = read_labels(labels_path, errors)
        if errors:
            raise CommandError(self._refusal(errors))

        metrics = sorted({r.metric for r in score_rows if r.metric})
        metric = opts["metric"]
        if metric is not None:
            if metric not in metrics:
                raise CommandError(
                    f"{scores_path}: no row of metric {metric!r} (metrics there: {', '.join(metrics) or 'none named'})"
                )
            score_rows = [r for r in score_rows if r.metric == metric]
        elif len(metrics) > 1:
            raise CommandError(f"{scores_path} holds several metrics ({', '.join(metrics)}): choose one with --metric")
        else:
            metric = metrics[0] if metrics else None

        scored: dict[str, ScoreRow] = {}
        for r in score_rows:
            if r.id in scored:
                errors.add(
                    scores_path, r.line, "id", f"item {r.id!r} is scored twice (first on line {scored[r.id].line})"
                )
            else:
                scored[r.id] = r
        labelled: dict[str, LabelRow] = {}
        weighted = [r for r in label_rows if r.weight is not None]
        for r in label_rows:
            if r.id in labelled:
                errors.add(
                    labels_path, r.line, "id", f"item {r.id!r} is labelled twice (first on line {labelled[r.id].line})"
                )
                continue
            labelled[r.id] = r
            score = scored.get(r.id)
            if score is None:
                errors.add(labels_path, r.line, "id", f"item {r.id!r} is not in {scores_path}")
            elif score.state != "ok":
                errors.add(
                    labels_path,
                    r.line,
                    "id",
                    f"item {r.id!r} has no usable score (state {score.state}): the labelled items must be among the "
                    "items scored ok",
                )
            if weighted and r.weight is None:
                errors.add(labels_path, r.line, "weight", "missing: give a weight on every row or on none")
        if errors:
            raise CommandError(self._refusal(errors))
        if not labelled:
            raise CommandError(f"{labels_path}: no labels")

        positive = opts["positive"]
        ok = {k: r for k, r in scored.items() if r.state == "ok"}
        n_not_ok = len(scored) - len(ok)
        y = np.array([1.0 if is_positive(r.label, positive) else 0.0 for r in labelled.values()])
        if not y.any():
            seen = sorted({str(r.label) for r in labelled.values()})
            raise CommandError(
                f"no label equals --positive {positive!r}; the labels are: {', '.join(seen[:10])}"
                + (" …" if len(seen) > 10 else "")
            )

        def prediction(row: ScoreRow) -> float:
            assert row.value is not None  # state ok
            return 1.0 - row.value if opts["invert"] else row.value

        f = np.array([prediction(ok[k]) for k in labelled])
        f_u = np.array([prediction(r) for k, r in ok.items() if k not in labelled])
        if f_u.size == 0:
            raise CommandError(
                "every item scored ok is labelled: there is nothing for the metric to add; "
                f"the share of {positive!r} is {y.mean():.4f} exactly"
            )
        try:
            if weighted:
                pi = np.array([1.0 / r.weight for r in labelled.values() if r.weight is not None])
                estimates = {
                    ppi_stats.PPIPP: ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha),
                    ppi_stats.PPI: ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha, lam=1.0),
                    ppi_stats.CLASSICAL: ppi_stats.active_mean(y, f, pi, f_u, alpha=alpha, lam=0.0),
                }
            else:
                estimates = {
                    ppi_stats.PPIPP: ppi_stats.ppipp(y, f, f_u, alpha=alpha),
                    ppi_stats.PPI: ppi_stats.ppi(y, f, f_u, alpha=alpha),
                    ppi_stats.CLASSICAL: ppi_stats.classical(y, alpha=alpha),
                }
        except ppi_stats.PPIError as exc:
            raise CommandError(str(exc)) from None

        headline = METHODS.get(opts["method"], ppi_stats.PPIPP)
        notes: list[str] = []
        for key in ORDER:
            e = estimates[key]
            notes += [n for n in e.notes if n not in notes]
            if e.lower < 0.0 or e.upper > 1.0:
                note = (
                    "an interval runs past 0 or 1: with so few positive (or negative) labels the normal "
                    "approximation is rough; label more items"
                )
                if note not in notes:
                    notes.append(note)
        if not weighted:
            notes.append(
                "valid only if the labelled items are a simple random sample of the items scored ok "
                "(else give each row its weight, 1 / its inclusion probability)"
            )
        out: dict[str, Any] = {
            **{k: v for k, v in _as_dict(estimates[headline]).items() if k not in ("notes", "reference")},
            "alpha": alpha,
            "confidence": 1.0 - alpha,
            "positive": positive,
            "n_positive": int(y.sum()),
            "metric": metric,
            "inverted": bool(opts["invert"]),
            "weighted": bool(weighted),
            "n_not_ok": n_not_ok,
            "classical": _as_dict(estimates[ppi_stats.CLASSICAL]),
            "estimates": {k: _as_dict(estimates[k]) for k in ORDER},
            "notes": notes,
        }
        if opts["json"]:
            self.stdout.write(json.dumps(out, ensure_ascii=False))
        else:
            self.stdout.write(self._text(out, all_methods=opts["method"] == "all"))

    @staticmethod
    def _refusal(errors: list[str]) -> str:
        more = f"\n… and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        return "nothing estimated; fix these rows:\n" + "\n".join(errors[:MAX_ERRORS]) + more

    @staticmethod
    def _text(out: dict[str, Any], *, all_methods: bool) -> str:
        conf = f"{out['confidence'] * 100:g}%"
        lines = [
            f"population: {out['n_labelled'] + out['n_unlabelled']} items scored ok"
            + (f" ({out['n_not_ok']} not ok, left out)" if out["n_not_ok"] else "")
            + f"; {out['n_labelled']} labelled, {out['n_unlabelled']} unlabelled"
            + (" (weighted: inclusion probabilities given)" if out["weighted"] else ""),
            f"positive label {out['positive']!r}: {out['n_positive']} of {out['n_labelled']} labelled items; "
            f"metric {out['metric'] or '(unnamed)'}" + (", inverted (1 − score)" if out["inverted"] else ""),
        ]
        if not all_methods:
            lines.append(
                f"estimate ({out['method']}): {out['estimate']:.4f}, "
                f"{conf} CI [{out['ci_low']:.4f}, {out['ci_high']:.4f}]"
            )
        width = max(len(e["method"]) for e in out["estimates"].values()) + 2
        lines.append(
            f"  {'method':<{width}} {'estimate':>8}  {conf + ' CI':<18} "
            f"{'half-width':>10} {'lambda':>7}  effective labels"
        )
        for e in out["estimates"].values():
            eff = "∞" if e["effective_labels"] is None else f"{e['effective_labels']:.1f}"
            lines.append(
                f"  {e['method']:<{width}} {e['estimate']:>8.4f}  [{e['ci_low']:.4f}, {e['ci_high']:.4f}]  "
                f"{e['half_width']:>10.4f} {e['lambda']:>7.3f}  {eff}"
            )
        lines += [f"note: {n}" for n in out["notes"]]
        return "\n".join(lines)
