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


def retrieval_measures(
    ranking: list[int], relevant: set[int], k: int, *, n_relevant: int | None = None
) -> dict[str, float]:
    """All four measures for one ranked list of chunk ranks and a non-empty relevant set.

    ``relevant`` are the retrieved ranks that are relevant; ``n_relevant`` is how many relevant targets
    exist in all, retrieved or not (default: ``len(relevant)``). Missed targets lower Recall@k and enter the
    ideal ranking of nDCG; a list that retrieved none of them scores 0 on every measure.
    """
    total = len(relevant) if n_relevant is None else n_relevant
    if total < len(relevant):
        raise ValueError("n_relevant cannot be smaller than the relevant chunks retrieved")
    if total == 0:
        raise ValueError("retrieval measures are undefined for an empty relevant set")
    flags = [r in relevant for r in ranking]
    first = next((pos for pos, hit in enumerate(flags, start=1) if hit), None)
    dcg = sum(1.0 / math.log2(pos + 1) for pos, hit in enumerate(flags[:k], start=1) if hit)
    idcg = sum(1.0 / math.log2(pos + 1) for pos in range(1, min(k, total) + 1))
    return {
        "p@1": 1.0 if flags and flags[0] else 0.0,
        "recall@k": sum(flags[:k]) / total,
        "mrr": 1.0 / first if first else 0.0,
        "ndcg@k": dcg / idcg,
    }


@register
class RetrievalQuality(Metric):
    """Choices:

    - Two relevant sets, reported separately: the dataset's labelled targets (``is_target`` chunks) and the
      annotators' multi-label relevance (``human_relevant_ranks``). The item's value is the measure and
      set chosen by the parameters; all eight numbers are in the details.
    - The relevant targets are stored apart from what was retrieved: ``ItemInput.target_ids`` (the import's
      ``metadata.target_ids``) lists their document ids, retrieved or not. A retrieved chunk is a target hit
      when its document id is one of them (or it is flagged ``is_target``). A target the retriever missed
      still counts: Recall@k divides by all targets, nDCG's ideal ranking holds all of them, and an item
      whose targets were all missed scores 0 on every measure (state ok), so misses stay in every mean.
    - Without ``target_ids`` the only targets known are the retrieved chunks flagged ``is_target``: a miss
      cannot be seen there, and the details say so (``targets_known``: ``retrieved only``).
    - An empty relevant set (no target given at all; no human relevance labels, or annotators marking no
      chunk) makes every measure undefined: undetermined with the reason, never 0 or 1. Human relevance is
      judged on the retrieved chunks only (annotators see nothing else).
    - No model is involved: run it with the ``none`` backend.
    """

    name = "retrieval"
    version = "2.0"
    title = "Retrieval quality (P@1, Recall@k, MRR, nDCG@k)"
    definition = (
        "From the ranks of the retrieved chunks, Precision@1, Recall@k, mean reciprocal rank and nDCG@k "
        "(binary gains, log2 discount) are computed twice: against the dataset's labelled target chunks, and "
        "against the chunks annotators marked as supporting the answer. Targets the retriever missed count: "
        "an item whose targets were all missed scores 0. A measure is undefined when its relevant set is empty."
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
        target_ids = set(item.target_ids or [])
        target_hits = {c.rank for c in item.contexts if c.is_target or (c.document_id and c.document_id in target_ids)}
        retrieved_target_ids = {c.document_id for c in item.contexts if c.rank in target_hits and c.document_id}
        # Targets in all: the given ids, plus flagged chunks whose document is not among them (or has no id).
        n_targets = len(target_ids) + sum(
            1 for c in item.contexts if c.rank in target_hits and not (c.document_id and c.document_id in target_ids))
        relevant_sets: dict[str, tuple[set[int], int] | None] = {
            "target": (target_hits, n_targets),
            "human": None if item.human_relevant_ranks is None else (
                set(item.human_relevant_ranks) & set(ranking), len(set(item.human_relevant_ranks) & set(ranking))),
        }
        details: dict[str, Any] = {"k": k, "ranking": ranking,
                                   "targets_known": "given apart from retrieval" if item.target_ids is not None
                                   else "retrieved only"}
        if item.target_ids is not None:
            details["targets_missed"] = sorted(target_ids - retrieved_target_ids)
        for name, entry in relevant_sets.items():
            if entry is None:
                details[name] = {"state": "undetermined", "reason": "no human chunk-relevance labels"}
                continue
            relevant, total = entry
            if total == 0:
                why = "no target is given" if name == "target" else "annotators marked no chunk relevant"
                details[name] = {"state": "undetermined", "reason": why}
            else:
                measures = retrieval_measures(ranking, relevant, k, n_relevant=total)
                details[name] = {"state": "ok", "relevant": sorted(relevant), "n_relevant": total, **measures}
        chosen = details[params["relevance"]]
        details["value_is"] = f"{params['measure']} against {params['relevance']}"
        if chosen["state"] != "ok":
            return [UnitScore(ITEM, None, "undetermined", {**details, "reason": chosen["reason"]})]
        return [UnitScore(ITEM, chosen[params["measure"]], "ok", details)]
