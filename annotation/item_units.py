"""The units of one item, read from the database: which unit keys each question scope has (what a complete
assignment answers), where alignments may point, and how a unit is named to people. Unit keys themselves
are formatted and parsed in ``annotation.units``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from annotation import units
from annotation.models import Aspect, AspectStatus, Chunk, Sentence


@dataclass
class ItemUnits:
    """The units of one item, loaded lazily per scope (a label save needs only one scope)."""

    item_id: int

    @cached_property
    def _sentences(self) -> list[tuple[str, int]]:
        rows = Sentence.objects.filter(item_id=self.item_id).order_by("part", "index").values_list("part", "index")
        return list(rows)

    @cached_property
    def answer_sentences(self) -> list[int]:
        return [index for part, index in self._sentences if part == "answer"]

    @cached_property
    def source_sentences(self) -> list[int]:
        return [index for part, index in self._sentences if part == "source"]

    @cached_property
    def chunk_ranks(self) -> list[int]:
        return list(Chunk.objects.filter(item_id=self.item_id).order_by("rank").values_list("rank", flat=True))

    @cached_property
    def aspect_ids(self) -> list[int]:
        return list(current_aspects(self.item_id).values_list("id", flat=True))

    def keys_for(self, scope: str) -> list[str]:
        if scope == "item":
            return [units.ITEM]
        if scope == "sentence":
            return [units.sentence(i) for i in self.answer_sentences]
        if scope == "chunk":
            return [units.chunk(r) for r in self.chunk_ranks]
        if scope == "aspect":
            return [units.aspect(a) for a in self.aspect_ids]
        return []

    def alignment_targets(self, scope: str) -> list[int]:
        """Sentence alignments point into the source document; aspect evidence (and item-level
        alignments) point into the answer's own sentences."""
        return self.source_sentences if scope == "sentence" else self.answer_sentences

    def describe(self, unit_key: str) -> str:
        if not units.is_valid(unit_key):
            return unit_key
        unit = units.parse(unit_key)
        position = None
        if unit.kind == units.ASPECT and unit.ref in self.aspect_ids:
            position = self.aspect_ids.index(unit.ref) + 1  # type: ignore[arg-type]
        return units.describe(unit_key, aspect_position=position)


def assignment_units(*, item_id: int) -> ItemUnits:
    return ItemUnits(item_id=item_id)


def current_aspects(item_id: int):
    accepted = Aspect.objects.filter(item_id=item_id, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
    return accepted.order_by("id")
