"""The PubHealthBench judge rubric (arXiv 2607.06641)."""

from __future__ import annotations

import statistics
from typing import Any

from scoring.metrics.base import ITEM, RUBRIC_CRITERIA, ItemInput, Judge, Metric, Retriever, UnitScore, register
from scoring.metrics.common import context_texts, require_backend


@register
class JudgeRubric(Metric):
    """Choices: one prompt rates all four criteria together (1–5 integers, validated); with several samples
    each criterion is the mean over samples, its standard deviation and range kept as the spread. The
    item's value is the unweighted mean of the four criteria. Only an LLM can do this: other backends
    are refused by name."""

    name = "rubric"
    version = "1.0"
    title = "Judge rubric (faithfulness, completeness, factual consistency, clarity)"
    definition = (
        "An LLM judge rates the answer from 1 to 5 on faithfulness to the retrieved context, completeness, "
        "factual consistency and clarity. The value is the mean of the four ratings; each rating, the judge's "
        "raw output, the prompt hash and the spread over repeated samples are kept."
    )
    units = ("item",)
    backends = ("llm",)
    parameters = {}

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        judged = backend.rubric(item.question, item.answer, context_texts(item))
        value = statistics.fmean(judged.ratings[c] for c in RUBRIC_CRITERIA)
        return [UnitScore(ITEM, value, "ok", {"ratings": judged.ratings, **judged.details})]
