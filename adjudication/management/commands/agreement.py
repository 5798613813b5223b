"""``python manage.py agreement FILE``: inter-rater agreement of a ``unit,rater,value`` CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.management.report_text import format_agreement_text
from adjudication.stats import agreement as ag


def read_ratings(path: Path) -> tuple[list[str], list[str], dict[tuple[int, int], str]]:
    """Units and raters in order of first appearance, and each (unit, rater)'s raw value."""
    try:
        fh = path.open(newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    units: dict[str, int] = {}
    raters: dict[str, int] = {}
    values: dict[tuple[int, int], str] = {}
    with fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None or [f.strip() for f in reader.fieldnames] != ["unit", "rater", "value"]:
            raise CommandError(f"{path}: the header must be exactly unit,rater,value (got {reader.fieldnames})")
        for line, row in enumerate(reader, start=2):
            unit, rater, value = (row["unit"] or "").strip(), (row["rater"] or "").strip(), (row["value"] or "").strip()
            if not unit or not rater:
                raise CommandError(f"{path}, line {line}: unit and rater are required")
            u = units.setdefault(unit, len(units))
            r = raters.setdefault(rater, len(raters))
            if (u, r) in values:
                raise CommandError(f"{path}, line {line}: rater {rater!r} rated unit {unit!r} twice")
            if value:
                values[(u, r)] = value
    if not values:
        raise CommandError(f"{path}: no ratings")
    return list(units), list(raters), values


def _as_number(value: str, line_hint: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise CommandError(f"{line_hint}: {value!r} is not a number (interval level needs numbers)") from None


def build_codes(
    n_units: int, n_raters: int, values: dict[tuple[int, int], str], *, level: str, scale: list[str] | None
) -> tuple[np.ndarray, list[Any] | None, list[str]]:
    """The units × raters matrix for the level, the categorical scale (or None) and notes."""
    notes: list[str] = []
    codes = np.full((n_units, n_raters), np.nan)
    if level == "interval":
        numbers = {key: _as_number(v, f"unit {key[0] + 1}") for key, v in values.items()}
        if scale is not None:
            scale_numbers = [_as_number(s, "--scale") for s in scale]
            off = sorted({v for v in numbers.values() if v not in scale_numbers})
            if off:
                raise CommandError(f"values not on the declared scale: {off[:10]}")
        for (u, r), x in numbers.items():
            codes[u, r] = x
        return codes, None, notes
    if scale is None:
        if level == "ordinal":
            raise CommandError("the ordinal level needs --scale v1,v2,… in order (the order is not guessed)")
        scale = sorted(set(values.values()))
        notes.append("no --scale given: the scale is the values observed, in alphabetical order")
    position = {v: i for i, v in enumerate(scale)}
    off = sorted({v for v in values.values() if v not in position})
    if off:
        raise CommandError(f"values not on the declared scale {scale}: {off[:10]}")
    for (u, r), v in values.items():
        codes[u, r] = position[v]
    return codes, scale, notes


class Command(BaseCommand):
    help = "Agreement of a CSV with header unit,rater,value: percent agreement, Fleiss κ, Krippendorff α, Cohen κ."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--level", choices=["nominal", "ordinal", "interval"], default="nominal")
        parser.add_argument("--scale", help="the declared scale, comma-separated, in order")
        parser.add_argument(
            "--weights",
            choices=["none", "linear", "quadratic"],
            default="none",
            help="Cohen's κ weights (needs an ordered --scale)",
        )
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=1000,
            metavar="N",
            help="bootstrap resamples for Fleiss κ and Krippendorff α intervals (0: none)",
        )
        parser.add_argument("--seed", type=int, default=0, metavar="S")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["bootstrap"] < 0:
            raise CommandError("--bootstrap must be 0 or more")
        scale = [s.strip() for s in opts["scale"].split(",")] if opts["scale"] else None
        if scale is not None and (len(scale) < 2 or len(set(scale)) != len(scale) or "" in scale):
            raise CommandError("--scale needs at least two distinct, non-empty values")
        if opts["weights"] != "none" and scale is None:
            raise CommandError("--weights linear|quadratic needs the ordered --scale (weights are scale distances)")
        units, raters, values = read_ratings(opts["file"])
        codes, cat_scale, notes = build_codes(len(units), len(raters), values, level=opts["level"], scale=scale)
        if opts["level"] == "interval" and scale is not None:
            # κ statistics over the declared numeric scale, α over the numbers themselves.
            cat_scale = scale
            cat_codes = np.full_like(codes, np.nan)
            nums = [float(s) for s in scale]
            for i, x in enumerate(nums):
                cat_codes[codes == x] = i
            summary = ag.agreement_summary(
                cat_codes,
                level="ordinal",
                scale=cat_scale,
                rater_names=raters,
                weights=opts["weights"],
                n_boot=opts["bootstrap"],
                seed=opts["seed"],
            )
            alpha = ag.krippendorff_alpha(codes, "interval", n_boot=opts["bootstrap"], seed=opts["seed"])
            summary["krippendorff_alpha"] = alpha.as_dict()
            summary["level"] = "interval"
        else:
            summary = ag.agreement_summary(
                codes,
                level=opts["level"],
                scale=cat_scale,
                rater_names=raters,
                weights=opts["weights"],
                n_boot=opts["bootstrap"],
                seed=opts["seed"],
            )
        summary["notes"] = notes
        if opts["json"]:
            self.stdout.write(json.dumps(summary, ensure_ascii=False))
        else:
            self.stdout.write(format_agreement_text(summary))
