"""ASTRID Context Relevance."""

from __future__ import annotations

import statistics
from typing import Any

from scoring.metrics.base import ITEM, ItemInput, Judge, Metric, Param, Retriever, UnitScore, chunk_unit, register
from scoring.metrics.common import require_backend


@register
class ContextRelevance(Metric):
    """Choices where the paper leaves room:

    - Per chunk (``c:<rank>``) the value is the backend's graded relevance of the chunk to the question, in
      [0, 1] (embedding: max cosine of the question to the chunk's sentences, clipped at 0; lexical: recall
      of the question's content words; llm: share of samples saying relevant; learned: the classifier's
      probability), with the thresholded verdict in the details — graded values let ROC AUC be computed
      against annotators' binary relevance.
    - The whole context (``item``) is the mean of the chunk values (``aggregate=mean``: how much of what
      was retrieved is relevant) or their max (``aggregate=max``: whether anything relevant was retrieved).
      The share of chunks judged relevant is in the details either way.
    - No chunks: undetermined.
    """

    name = "cr"
    version = "1.0"
    title = "Context Relevance (ASTRID)"
    definition = (
        "Each retrieved chunk is judged for relevance to the question, giving a graded value in [0, 1] per "
        "chunk. The context as a whole scores the mean of its chunks' values (or the max, as a parameter). "
        "An item without retrieved chunks has no context relevance."
    )
    units = ("item", "chunk")
    backends = ("embedding", "lexical", "llm", "learned")
    parameters = {
        "aggregate": Param("mean", "How chunk values combine into the item's value.", str, ("mean", "max")),
        "threshold": Param(None, "Backend threshold for a relevant chunk (None: backend default)."),
    }

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        chunks = sorted(item.contexts, key=lambda c: c.rank)
        if not chunks:
            return [UnitScore(ITEM, None, "undetermined", {"reason": "the item has no retrieved chunks"})]
        judged = backend.relevance(item.question, [c.text for c in chunks], threshold=params["threshold"])
        units = []
        values = []
        for chunk, j in zip(chunks, judged, strict=True):
            value = float(j.score) if j.score is not None else (1.0 if j.verdict else 0.0)
            values.append(value)
            details = {"relevant": bool(j.verdict), **j.as_details()}
            units.append(UnitScore(chunk_unit(chunk.rank), value, "ok", details))
        aggregate = statistics.fmean(values) if params["aggregate"] == "mean" else max(values)
        relevant = sum(1 for j in judged if j.verdict)
        return [UnitScore(ITEM, aggregate, "ok", {
            "aggregate": params["aggregate"], "chunks": len(chunks), "relevant_chunks": relevant,
            "relevant_fraction": relevant / len(chunks)}), *units]
