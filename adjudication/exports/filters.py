"""What a researcher limited an export to: gold only, chosen pools, chosen questions (``ExportFilters``).

The filters are stored with the export job (``ExportJob.filters``), written to the header's ``filters``
and described on the card; a limited export cannot rebuild a study.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ExportFilters:
    """What a researcher limited an export to. Empty lists mean "all".

    * ``pools``: only the labels, assignments, gold and cases of these pools (by name), and only the
      items that have an assignment or a gold label in one of them;
    * ``questions``: only the labels, gold and cases of these questions (by key), and only those
      questions in the header;
    * ``gold_only``: only items with current gold (within the pools and questions above), and no
      individual annotator labels or assignments: the adjudicated reference alone.
    """

    pools: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    gold_only: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ExportFilters:
        data = data or {}
        return cls(pools=tuple(sorted(data.get("pools") or ())), questions=tuple(sorted(data.get("questions") or ())),
                   gold_only=bool(data.get("gold_only")))

    def as_dict(self) -> dict[str, Any]:
        return {"pools": list(self.pools), "questions": list(self.questions), "gold_only": self.gold_only}

    @property
    def active(self) -> bool:
        return bool(self.pools or self.questions or self.gold_only)

    def describe(self) -> str:
        parts = []
        if self.gold_only:
            parts.append("gold only")
        if self.pools:
            parts.append("pools " + ", ".join(self.pools))
        if self.questions:
            parts.append("questions " + ", ".join(self.questions))
        return "; ".join(parts) or "everything"

    def apply(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """The record as limited, or None when the item is left out."""
        if not self.active:
            return record
        pools, questions = set(self.pools), set(self.questions)

        def keep(entry: dict[str, Any]) -> bool:
            return (not pools or entry["pool"] in pools) and (not questions or entry["question"] in questions)

        in_pools = not pools or any(a["pool"] in pools for a in record["assignments"]) or any(
            g["pool"] in pools for g in record["gold"]
        )
        gold = [g for g in record["gold"] if keep(g)]
        if not in_pools or (self.gold_only and not any(g["is_current"] for g in gold)):
            return None
        return {
            **record,
            "labels": [] if self.gold_only else [lab for lab in record["labels"] if keep(lab)],
            "assignments": [] if self.gold_only else [
                a for a in record["assignments"] if not pools or a["pool"] in pools
            ],
            "gold": gold,
            "cases": [c for c in record["cases"] if keep(c)],
        }
