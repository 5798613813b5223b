"""The PubHealthBench judge rubric (arXiv 2607.06641)."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import ITEM, RUBRIC_CRITERIA, ItemInput, Judge, Metric, Param, Retriever, UnitScore, register
from scoring.metrics.common import context_texts, require_backend


@register
class JudgeRubric(Metric):
    """PubHealthBench-RAG (arXiv 2607.06641, §3.5.2) judges free-form answers on four criteria and reports the
    judge's agreement with two human raters *per criterion* (Cohen's κ; usable for faithfulness and
    completeness, near zero for factual consistency). Concord follows that:

    - The item's value is one criterion's rating (``criterion``, default ``faithfulness``), never the mean of
      the four: a mean would hide the criterion the judge cannot rate. All four ratings are in the details;
      a run per criterion gives each its own validity report against the matching human question
      (``rubric_<criterion>`` of the pubhealth preset).
    - Faithfulness is judged against the reference chunk when one is marked (the item's ``is_target``
      chunks), as the paper scores free-form faithfulness against the single reference chunk; the other
      criteria see the whole retrieved context. Without a marked chunk, faithfulness is judged against the
      whole context and the details say so.
    - Scale: the digest of the paper reports faithfulness as pass rates and κ per criterion but does not give
      the judge's rating scale. Concord rates each criterion 1–5 (integers, validated), the scale of its
      pubhealth annotation questions, so judge and humans answer on the same scale; a pass/fail reading is the
      cut-off the researcher sets when binarising for a validation study. With several samples a criterion
      is the mean over samples, its standard deviation and range kept as the spread.
    - Only an LLM can do this: other backends are refused by name.
    """

    name = "rubric"
    version = "2.0"
    title = "Judge rubric (faithfulness, completeness, factual consistency, clarity)"
    definition = (
        "An LLM judge rates the answer from 1 to 5 on faithfulness (to the reference chunk when one is marked, "
        "else to the retrieved context), completeness, factual consistency and clarity. The value is the rating "
        "of the chosen criterion (each criterion is validated separately, as PubHealthBench reports them); all "
        "four ratings, the judge's raw output, the prompt hash and the spread over repeated samples are kept."
    )
    units = ("item",)
    backends = ("llm",)
    parameters = {
        "criterion": Param("faithfulness", "The criterion whose rating is the item's value.", str, RUBRIC_CRITERIA),
    }
    estimates = tuple(f"rubric_{c}" for c in RUBRIC_CRITERIA)

    def estimated_questions(self, params: dict[str, Any] | None = None) -> tuple[str, ...]:
        criterion = (params or {}).get("criterion", "faithfulness")
        return (f"rubric_{criterion}",)

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        reference = [c.text for c in sorted(item.contexts, key=lambda c: c.rank) if c.is_target]
        judged = backend.rubric(item.question, item.answer, context_texts(item), reference=reference or None)
        criterion = params["criterion"]
        return [UnitScore(ITEM, float(judged.ratings[criterion]), "ok", {
            "criterion": criterion, "ratings": judged.ratings,
            "faithfulness_against": "the reference chunk" if reference else "the whole retrieved context (no "
            "reference chunk is marked)", **judged.details})]
