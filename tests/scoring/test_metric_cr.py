"""Context Relevance per chunk and for the whole context, on a hand-worked lexical example."""

from __future__ import annotations

import pytest

from scoring.backends import get_backend
from scoring.metrics import ChunkInput, ItemInput, get_metric
from scoring.services import unit_key

CHUNKS = ["Paracetamol reduces fever in children.", "Fever is common.", "The weather is sunny."]


def _item(chunks=CHUNKS) -> ItemInput:
    return ItemInput(id="i", question="What reduces fever in children?", answer="", sentences=[],
                     contexts=[ChunkInput(rank=r, text=t) for r, t in enumerate(chunks, start=1)])


@pytest.mark.parametrize(("aggregate", "expected"), [("mean", 4 / 9), ("max", 1.0)])
def test_cr_scores_each_chunk_and_aggregates_the_context(aggregate, expected):
    # Question content tokens {reduces, fever, children}: recall 3/3, 1/3, 0/3 (threshold 0.3 → 2 relevant).
    cr = get_metric("cr")
    scored = cr.score(_item(), get_backend("lexical"), cr.resolve_params({"aggregate": aggregate}))
    scores = {unit_key(s.unit): s for s in scored}
    assert [scores[f"c:{r}"].value for r in (1, 2, 3)] == pytest.approx([1.0, 1 / 3, 0.0])
    assert [scores[f"c:{r}"].details["relevant"] for r in (1, 2, 3)] == [True, True, False]
    assert scores["item"].value == pytest.approx(expected)
    assert scores["item"].details["relevant_fraction"] == pytest.approx(2 / 3)


def test_cr_without_chunks_is_undetermined():
    cr = get_metric("cr")
    (score,) = cr.score(_item([]), get_backend("lexical"), cr.resolve_params({}))
    assert (score.value, score.state) == (None, "undetermined")
