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


# ASTRID (arXiv 2501.08208): "Context Relevance is a binary judgment of whether the retrieved context is
# relevant to the query". Worked example: three chunks of which only the first is relevant. The paper's
# judgement of the context as a whole is 1; the per-chunk mean of graded values is not the paper's metric.
SWIM = ["You should avoid swimming for two weeks after cataract surgery.", "The car park is open all day.",
        "Our clinic has a new waiting room."]


def _swim_item() -> ItemInput:
    return ItemInput(id="s", question="When can I go swimming after cataract surgery?", answer="", sentences=[],
                     contexts=[ChunkInput(rank=r, text=t) for r, t in enumerate(SWIM, start=1)])


def test_cr_default_is_the_binary_judgement_of_the_whole_context():
    cr = get_metric("cr")
    assert cr.resolve_params({})["aggregate"] == "context"
    scored = {unit_key(s.unit): s for s in cr.score(_swim_item(), get_backend("lexical"), cr.resolve_params({}))}
    # Question content tokens {go, swimming, after, cataract, surgery}: chunk 1 recalls 4/5, chunks 2, 3 none.
    assert [scored[f"c:{r}"].value for r in (1, 2, 3)] == pytest.approx([0.8, 0.0, 0.0])
    assert scored["item"].value == 1.0
    assert scored["item"].details["context_judgement"]["verdict"] is True
    # The per-chunk mean stays available as a documented option: 0.8 / 3 = 0.267, not the paper's 1.
    mean = cr.score(_swim_item(), get_backend("lexical"), cr.resolve_params({"aggregate": "mean"}))[0]
    assert mean.value == pytest.approx(0.8 / 3)


def test_cr_binary_judgement_is_zero_for_an_irrelevant_context():
    cr = get_metric("cr")
    item = ItemInput(id="x", question="When can I go swimming after cataract surgery?", answer="", sentences=[],
                     contexts=[ChunkInput(rank=1, text=SWIM[1]), ChunkInput(rank=2, text=SWIM[2])])
    assert cr.score(item, get_backend("lexical"), cr.resolve_params({}))[0].value == 0.0
