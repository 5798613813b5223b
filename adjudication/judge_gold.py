"""The current gold of a study's question, for training judges (registered with ``scoring.judges.gold``
when the app loads: gold lives here, above the scoring layer)."""

from __future__ import annotations

from typing import Any

from adjudication.models import GoldLabel, GoldSource
from annotation.models import Study


def current_gold(study: Study, question_key: str) -> list[tuple[int, str, Any]]:
    """(item id, unit key, value) of every current, resolved gold label of the question. A unit with gold
    in several pools is kept once when the pools agree, and left out when they disagree."""
    rows = (
        GoldLabel.objects.filter(item__study=study, question__key=question_key, is_current=True)
        .exclude(source=GoldSource.UNRESOLVED)
        .values_list("item_id", "unit_key", "value")
    )
    values: dict[tuple[int, str], list[Any]] = {}
    for item_id, unit_key, value in rows:
        values.setdefault((item_id, unit_key), []).append(value)
    return [(item_id, unit_key, vals[0]) for (item_id, unit_key), vals in values.items()
            if all(v == vals[0] for v in vals)]
