"""Retrieval measures against hand-worked values.

Definitions: Manning, Raghavan & Schütze, Introduction to Information Retrieval (2008), ch. 8 (precision
at k, recall); Voorhees (1999) for reciprocal rank; Järvelin & Kekäläinen (2002) for nDCG, with the
log2(i + 1) discount.
"""

from __future__ import annotations

import math

import pytest

from scoring.backends import get_backend
from scoring.metrics import ChunkInput, ItemInput, MetricError, get_metric
from scoring.metrics.retrieval import retrieval_measures

LOG3 = math.log2(3)
LOG5 = math.log2(5)


def test_measures_for_relevant_chunks_at_positions_two_and_four():
    # Ranking 1..5, relevant {2, 4}. P@1 = 0; MRR = 1/2; Recall@3 = 1/2;
    # DCG@3 = 1/log2(3); IDCG@3 = 1 + 1/log2(3) → nDCG@3 = 0.386853.
    m = retrieval_measures([1, 2, 3, 4, 5], {2, 4}, 3)
    assert m == pytest.approx({"p@1": 0.0, "recall@k": 0.5, "mrr": 0.5, "ndcg@k": (1 / LOG3) / (1 + 1 / LOG3)})
    assert m["ndcg@k"] == pytest.approx(0.386853, abs=1e-6)
    # k = 5: DCG = 1/log2(3) + 1/log2(5) = 1.061606; IDCG = 1.630930 → 0.650920; Recall@5 = 1.
    m5 = retrieval_measures([1, 2, 3, 4, 5], {2, 4}, 5)
    assert m5["ndcg@k"] == pytest.approx((1 / LOG3 + 1 / LOG5) / (1 + 1 / LOG3)) == pytest.approx(0.650920, abs=1e-6)
    assert m5["recall@k"] == 1.0


def test_measures_when_the_first_chunk_is_the_only_relevant_one():
    assert retrieval_measures([3, 1, 2], {3}, 2) == {"p@1": 1.0, "recall@k": 1.0, "mrr": 1.0, "ndcg@k": 1.0}


def _item(human=None) -> ItemInput:
    return ItemInput(id="i", question="q", answer="a", sentences=["a"], human_relevant_ranks=human,
                     contexts=[ChunkInput(rank=r, text=f"c{r}", is_target=(r == 3)) for r in (1, 2, 3, 4, 5)])


def test_retrieval_metric_reports_target_and_human_relevance_separately():
    metric = get_metric("retrieval")
    (score,) = metric.score(_item(human=[1, 3]), get_backend("none"), metric.resolve_params({"k": 3, "measure": "mrr"}))
    # Target {3}: MRR 1/3, nDCG@3 = (1/log2 4) / 1 = 0.5. Human {1, 3}: MRR 1, P@1 1, Recall@3 1.
    assert score.value == pytest.approx(1 / 3)
    assert score.details["target"]["ndcg@k"] == pytest.approx(0.5)
    assert score.details["human"]["mrr"] == 1.0
    assert score.details["human"]["ndcg@k"] == pytest.approx((1 + 1 / 2) / (1 + 1 / LOG3))
    (human,) = metric.score(_item(human=[1, 3]), get_backend("none"),
                            metric.resolve_params({"k": 3, "measure": "p@1", "relevance": "human"}))
    assert human.value == 1.0


@pytest.mark.parametrize(("human", "reason"), [(None, "no human chunk-relevance labels"),
                                               ([], "annotators marked no chunk relevant")])
def test_retrieval_against_empty_or_missing_human_relevance_is_undetermined(human, reason):
    metric = get_metric("retrieval")
    (score,) = metric.score(_item(human=human), get_backend("none"), metric.resolve_params({"relevance": "human"}))
    assert (score.state, score.value, score.details["reason"]) == ("undetermined", None, reason)


def test_retrieval_without_a_labelled_target_is_undetermined():
    item = ItemInput(id="i", question="q", answer="a", sentences=[], contexts=[ChunkInput(rank=1, text="c")])
    metric = get_metric("retrieval")
    (score,) = metric.score(item, get_backend("none"), metric.resolve_params({}))
    assert score.state == "undetermined"


def test_retrieval_needs_no_model_and_accepts_only_the_none_backend():
    metric = get_metric("retrieval")
    with pytest.raises(MetricError, match="allowed: none"):
        metric.score(_item(), get_backend("lexical"), metric.resolve_params({}))


# A missed target is a miss, not an undetermined item (Manning et al. 2008, §8.3-8.4: recall and precision
# count relevant documents whether or not they were retrieved; Voorhees 1999: reciprocal rank 0 when no
# relevant document is returned). Worked example: item A retrieves its target at rank 1 (P@1 = 1, RR = 1),
# item B's target was not retrieved (P@1 = 0, RR = 0): mean P@1 = 0.5, MRR = 0.5.
def _kb_item(item_id: str, retrieved: list[str], targets: list[str]) -> ItemInput:
    return ItemInput(id=item_id, question="q", answer="a", sentences=["a"], target_ids=targets,
                     contexts=[ChunkInput(rank=r, text=f"text {d}", document_id=d)
                               for r, d in enumerate(retrieved, start=1)])


def test_a_missed_target_scores_zero_and_stays_in_the_mean():
    metric = get_metric("retrieval")
    none = get_backend("none")
    values = {}
    for measure in ("p@1", "mrr"):
        params = metric.resolve_params({"measure": measure, "k": 3})
        hit = metric.score(_kb_item("A", ["d1", "d2", "d3"], ["d1"]), none, params)[0]
        miss = metric.score(_kb_item("B", ["d4", "d5", "d6"], ["d9"]), none, params)[0]
        assert (hit.state, miss.state) == ("ok", "ok")
        values[measure] = (hit.value + miss.value) / 2
        assert miss.details["targets_missed"] == ["d9"]
    assert values == {"p@1": 0.5, "mrr": 0.5}


def test_recall_and_ndcg_count_the_missed_target():
    # Targets {d1, d9}; d1 retrieved at rank 2, d9 missed. Recall@5 = 1/2 (not 1 because k >= chunks);
    # nDCG@5: DCG = 1/log2(3); IDCG = 1 + 1/log2(3) (both targets in the ideal ranking) → 0.386853.
    metric = get_metric("retrieval")
    item = _kb_item("C", ["d4", "d1", "d5"], ["d1", "d9"])
    (score,) = metric.score(item, get_backend("none"), metric.resolve_params({"k": 5}))
    assert score.details["target"]["recall@k"] == 0.5
    assert score.value == pytest.approx((1 / LOG3) / (1 + 1 / LOG3)) == pytest.approx(0.386853, abs=1e-6)
    # Were the missed target ignored, nDCG would be (1/log2 3) / 1 = 0.63093: the ideal ranking must hold it.
    assert score.value != pytest.approx(1 / LOG3)


def test_without_target_ids_only_flagged_chunks_are_targets_and_the_details_say_so():
    metric = get_metric("retrieval")
    (score,) = metric.score(_item(), get_backend("none"), metric.resolve_params({}))
    assert score.details["targets_known"] == "retrieved only"
