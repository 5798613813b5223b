"""ASTRID Context Relevance."""

from __future__ import annotations

import statistics
from typing import Any

from scoring.metrics.base import ITEM, ItemInput, Judge, Metric, Param, Retriever, UnitScore, chunk_unit, register
from scoring.metrics.common import require_backend


@register
class ContextRelevance(Metric):
    """ASTRID (arXiv 2501.08208) defines Context Relevance as a binary judgement of whether the retrieved
    context is relevant to the question: the context as a whole, once. Choices where the paper leaves room:

    - ``aggregate=context`` (default, the paper's definition): the backend judges the whole retrieved
      context, its chunks joined in rank order, as one passage; the item's value is 1 (relevant) or 0.
      Backends decide as they do for any passage (embedding: max cosine of the question to the context's
      sentences ≥ its threshold; lexical: recall of the question's content words; llm: one prompt; learned:
      its classifier), so the binary value is the backend's thresholded verdict.
    - ``aggregate=mean`` / ``max`` (documented options, not the paper's): the mean or max of the graded
      per-chunk values — how much of what was retrieved is relevant, or whether anything is. Three chunks of
      which one is relevant give a mean of about 0.29, where the paper's judgement gives 1.
    - Per chunk (``c:<rank>``) the value is always the backend's graded relevance of that chunk in [0, 1]
      (embedding: max cosine to the chunk's sentences, clipped at 0; lexical: recall of the question's
      content words; llm: share of samples saying relevant; learned: the classifier's probability), with the
      thresholded verdict in the details, for comparison with annotators' per-chunk relevance.
    - No chunks: undetermined.
    """

    name = "cr"
    version = "2.0"
    title = "Context Relevance (ASTRID)"
    definition = (
        "Is the retrieved context, as a whole, relevant to the question? The backend judges the context (all "
        "chunks together) once: 1 when relevant, 0 otherwise, as ASTRID defines it. Each chunk also gets a "
        "graded relevance in [0, 1]; their mean or max can be chosen instead of the binary judgement. An item "
        "without retrieved chunks has no context relevance."
    )
    units = ("item", "chunk")
    backends = ("embedding", "lexical", "llm", "learned")
    estimates = ("context_relevant", "supports_answer")
    parameters = {
        "aggregate": Param("context", "The item's value: the binary judgement of the whole context (ASTRID), or "
                           "the mean / max of the per-chunk values.", str, ("context", "mean", "max")),
        "threshold": Param(None, "Backend threshold for a relevant chunk or context (None: backend default)."),
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
            chunk_details = {"relevant": bool(j.verdict), **j.as_details()}
            units.append(UnitScore(chunk_unit(chunk.rank), value, "ok", chunk_details))
        relevant = sum(1 for j in judged if j.verdict)
        details: dict[str, Any] = {"aggregate": params["aggregate"], "chunks": len(chunks),
                                   "relevant_chunks": relevant, "relevant_fraction": relevant / len(chunks),
                                   "chunk_mean": statistics.fmean(values)}
        if params["aggregate"] == "context":
            (whole,) = backend.relevance(item.question, ["\n\n".join(c.text for c in chunks)],
                                         threshold=params["threshold"])
            if whole.verdict is None:
                return [UnitScore(ITEM, None, "undetermined", {**details, "reason": "the backend could not decide",
                                                               "context_judgement": whole.as_details()}), *units]
            value = 1.0 if whole.verdict else 0.0
            details["context_judgement"] = whole.as_details()
        elif params["aggregate"] == "mean":
            value = statistics.fmean(values)
        else:
            value = max(values)
        return [UnitScore(ITEM, value, "ok", details), *units]
