"""Retrieval quality from chunk ranks: P@1, Recall@k, MRR, nDCG@k (PubHealthBench, arXiv 2607.06641).

Standard definitions with binary relevance, over the chunks as ranked (sorted by rank; position 1 first):

- P@1 = 1 if the first chunk is relevant, else 0 (Manning, Raghavan & Schütze, *Introduction to
  Information Retrieval*, 2008, §8.4, precision at k).
- Recall@k = |relevant ∩ first k| / |relevant| (ibid. §8.3).
- MRR: the reciprocal of the position of the first relevant chunk, 0 when none is retrieved (Voorhees,
  TREC-8 QA track, 1999); averaged over items by whoever aggregates.
- nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{i≤k} rel_i / log2(i + 1) and IDCG@k the DCG of the ideal
  ranking, i.e. Σ_{i ≤ min(k, |relevant|)} 1 / log2(i + 1) (Järvelin & Kekäläinen, ACM TOIS 20(4), 2002;
  the log2(i+1) discount of Burges et al. 2005 that trec_eval uses).
"""

from __future__ import annotations

import math
from typing import Any

from scoring.metrics.base import ITEM, ItemInput, Judge, Metric, MetricError, Param, Retriever, UnitScore, register
from scoring.metrics.common import require_backend

MEASURES = ("p@1", "recall@k", "mrr", "ndcg@k")


def retrieval_measures(ranking: list[int], relevant: set[int], k: int) -> dict[str, float]:
    """All four measures for one ranked list of chunk ranks and a non-empty relevant set."""
    if not relevant:
        raise ValueError("retrieval measures are undefined for an empty relevant set")
    flags = [r in relevant for r in ranking]
    first = next((pos for pos, hit in enumerate(flags, start=1) if hit), None)
    dcg = sum(1.0 / math.log2(pos + 1) for pos, hit in enumerate(flags[:k], start=1) if hit)
    idcg = sum(1.0 / math.log2(pos + 1) for pos in range(1, min(k, len(relevant)) + 1))
    return {
        "p@1": 1.0 if flags and flags[0] else 0.0,
        "recall@k": sum(flags[:k]) / len(relevant),
        "mrr": 1.0 / first if first else 0.0,
        "ndcg@k": dcg / idcg,
    }


@register
class RetrievalQuality(Metric):
    """Choices:

    - Two relevant sets, reported separately: the dataset's labelled targets (``is_target`` chunks) and the
      annotators' multi-label relevance (``human_relevant_ranks``). The item's value is the measure and
      set chosen by the parameters; all eight numbers are in the details.
    - Relevant chunks are those among the item's retrieved chunks (a target that was not retrieved cannot
      be represented), so Recall@k with k ≥ the number of chunks is 1 whenever anything is relevant.
    - An empty relevant set (no target labelled; no human relevance labels, or annotators marking no chunk)
      makes every measure undefined: undetermined with the reason, never 0 or 1.
    - No model is involved: run it with the ``none`` backend.
    """

    name = "retrieval"
    version = "1.0"
    title = "Retrieval quality (P@1, Recall@k, MRR, nDCG@k)"
    definition = (
        "From the ranks of the retrieved chunks, Precision@1, Recall@k, mean reciprocal rank and nDCG@k "
        "(binary gains, log2 discount) are computed twice: against the dataset's labelled target chunks, and "
        "against the chunks annotators marked as supporting the answer. A measure is undefined when its "
        "relevant set is empty."
    )
    units = ("item",)
    backends = ("none",)
    parameters = {
        "k": Param(5, "Cut-off for Recall@k and nDCG@k.", int),
        "measure": Param("ndcg@k", "The measure stored as the item's value.", str, MEASURES),
        "relevance": Param("target", "The relevant set for the item's value.", str, ("target", "human")),
    }

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        k = params["k"]
        if k < 1:
            raise MetricError(f"retrieval: k must be at least 1, got {k}")
        ranking = [c.rank for c in sorted(item.contexts, key=lambda c: c.rank)]
        relevant_sets: dict[str, set[int] | None] = {
            "target": {c.rank for c in item.contexts if c.is_target},
            "human": None if item.human_relevant_ranks is None else set(item.human_relevant_ranks) & set(ranking),
        }
        details: dict[str, Any] = {"k": k, "ranking": ranking}
        for name, relevant in relevant_sets.items():
            if relevant is None:
                details[name] = {"state": "undetermined", "reason": "no human chunk-relevance labels"}
            elif not relevant:
                why = "no chunk is labelled as target" if name == "target" else "annotators marked no chunk relevant"
                details[name] = {"state": "undetermined", "reason": why}
            else:
                measures = retrieval_measures(ranking, relevant, k)
                details[name] = {"state": "ok", "relevant": sorted(relevant), **measures}
        chosen = details[params["relevance"]]
        details["value_is"] = f"{params['measure']} against {params['relevance']}"
        if chosen["state"] != "ok":
            return [UnitScore(ITEM, None, "undetermined", {**details, "reason": chosen["reason"]})]
        return [UnitScore(ITEM, chosen[params["measure"]], "ok", details)]
