"""RAGAS-style faithfulness ("RF"), the baseline the ASTRID paper compares CF with."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import ITEM, ItemInput, Judge, Metric, Param, Retriever, UnitScore, register
from scoring.metrics.common import aggregate_param, context_texts, mean_probability, require_backend


@register
class RagasFaithfulness(Metric):
    """Choices where RAGAS is vague or does not apply:

    - Statements come from the whole answer, as RAGAS extracts them ("one or more statements from each
      sentence in the given answer"; Es et al. 2023, §2): with the llm backend the RAGAS extraction prompt
      (``statements`` v2), with the other backends each stored sentence is one statement. Nothing is
      filtered: greetings, empathy and offers of help are statements the context does not support. That is
      exactly what ASTRID's CF changes (§2.2.1), so RF and CF differ on conversational answers by design.
    - Verification: each statement against the retrieved context taken together (``supports``).
    - No statements: RAGAS returns NaN; here the score is ``undetermined`` with value None and a reason.
    """

    name = "rf"
    version = "2.1"  # grounding per passage: one passage must support a claim (backends.base.best_passage)
    title = "Faithfulness, RAGAS-style (RF)"
    definition = (
        "Standalone statements are extracted from the whole answer and each is verified against the "
        "retrieved context: supported when one retrieved chunk supports it on its own. "
        "RF = supported statements / statements. An answer without statements has no "
        "RF: it is recorded as undetermined, never as a number."
    )
    units = ("item",)
    backends = ("embedding", "lexical", "nli", "llm", "learned")
    estimates = ("perceived_faithfulness",)
    parameters = {
        "support_threshold": Param(None, "Backend threshold for a supported statement (None: backend default)."),
        "aggregate": aggregate_param(),
    }

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        extracted = backend.statements(item.question, item.answer, item.sentences)
        statements = extracted.texts
        details: dict[str, Any] = {"statements": [], "extraction": extracted.details}
        if not statements:
            details["reason"] = "no statements in the answer: RF is undefined"
            return [UnitScore(ITEM, None, "undetermined", details)]
        verdicts = backend.supports(statements, context_texts(item), threshold=params["support_threshold"])
        details["statements"] = [
            {"text": s, "supported": bool(j.verdict), **{k: v for k, v in j.as_details().items() if k != "verdict"}}
            for s, j in zip(statements, verdicts, strict=True)
        ]
        supported = sum(1 for j in verdicts if j.verdict)
        details.update({"supported": supported, "n_statements": len(statements)})
        if params["aggregate"] == "mean_probability":
            details["aggregate"] = "mean_probability"
            return [UnitScore(ITEM, mean_probability(self.name, backend.name, verdicts), "ok", details)]
        return [UnitScore(ITEM, supported / len(statements), "ok", details)]
