"""``python manage.py validity FILE``: a metric against a binary human label, or two metrics paired."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.management.report_text import format_validity_text
from adjudication.stats import validity as va

SINGLE = ["unit", "score", "label"]
PAIRED = ["unit", "score_a", "score_b", "label"]


def _number(value: str, where: str) -> float:
    if value == "":
        return math.nan
    try:
        x = float(value)
    except ValueError:
        raise CommandError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(x):
        raise CommandError(f"{where}: {value!r} is not a finite number")
    return x


def read_scores(path: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    """Columns of the CSV as arrays; an empty score is missing (that unit is excluded and counted)."""
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        reader = csv.DictReader(fh)
        header = [f.strip() for f in reader.fieldnames or []]
        if header not in (SINGLE, PAIRED):
            raise CommandError(
                f"{path}: the header must be unit,score,label or unit,score_a,score_b,label (got {header})"
            )
        columns: dict[str, list[float]] = {c: [] for c in header[1:]}
        seen: set[str] = set()
        for line, raw in enumerate(reader, start=2):
            row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
            unit = row["unit"]
            if not unit:
                raise CommandError(f"{path}, line {line}: unit is required")
            if unit in seen:
                raise CommandError(f"{path}, line {line}: unit {unit!r} appears twice")
            seen.add(unit)
            if row["label"] not in ("0", "1"):
                raise CommandError(f"{path}, line {line}: label must be 0 or 1, got {row['label']!r}")
            for c in header[1:]:
                columns[c].append(_number(row[c], f"{path}, line {line}, {c}"))
    if not seen:
        raise CommandError(f"{path}: no rows")
    return header, {c: np.array(v) for c, v in columns.items()}


class Command(BaseCommand):
    help = "ROC AUC (DeLong and bootstrap CIs), correlations, and the paired DeLong test from a CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=1000,
            metavar="N",
            help="stratified bootstrap resamples for the AUC interval (0: none)",
        )
        parser.add_argument("--seed", type=int, default=0, metavar="S")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 or more")
        header, cols = read_scores(opts["file"])
        paired = header == PAIRED
        scores = cols["score_a"] if paired else cols["score"]
        summary = va.validity_summary(
            scores,
            cols["label"],
            scores_b=cols["score_b"] if paired else None,
            n_boot=opts["bootstrap"],
            seed=opts["seed"],
        )
        summary.pop("roc", None)
        if opts["json"]:
            self.stdout.write(json.dumps(summary, ensure_ascii=False))
        else:
            self.stdout.write(format_validity_text(summary))
