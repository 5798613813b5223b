"""ASTRID Conversational Faithfulness (arXiv 2501.08208)."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import ITEM, ItemInput, Judge, Metric, Param, Retriever, UnitScore, register, sentence_unit
from scoring.metrics.common import aggregate_param, context_texts, mean_probability, require_backend
from scoring.metrics.text import conversational_rule


@register
class ConversationalFaithfulness(Metric):
    """Choices where the paper leaves room:

    - Sentences are the stored import sentences; the context is all retrieved chunks of the item, in rank
      order, taken together (a sentence may be grounded by any of them). How "together" is read is the
      backend's: embedding compares with every context sentence (max cosine), lexical with the
      concatenation (unigram precision), nli takes each chunk as a premise and the max entailment
      probability (a concatenated context would be truncated at the model's maximum length), llm sees
      all chunks in one prompt.
    - Information-bearing classification is the backend's own (``informative``: embedding prototypes,
      lexical rules, an LLM prompt, a learned classifier) or, with ``information_bearing=rules``, the
      documented conversational rule set of ``scoring.backends.text`` whatever the backend. The nli backend
      cannot classify information-bearing sentences, so cf with nli needs ``information_bearing=rules``;
      it is never substituted silently.
    - With no information-bearing sentence (including an empty answer) CF = 1 with state ok, as the paper
      defines, and the details say why. With no context, each information-bearing sentence is ungrounded.
    - Per-sentence scores ``s:<i>``: 1/0 for grounded/ungrounded information-bearing sentences,
      ``undetermined`` for sentences that are not information-bearing (grounding is not asked of them).
    """

    name = "cf"
    # 1.1: the rule set keeps short clinical instructions; supports catches contradictions.
    # 1.2: grounding per passage: one chunk must support a sentence (backends.base.best_passage).
    # 1.3: the embedding backend's information-bearing threshold 0.6 → 0.3 (measured on 250 labelled sentences).
    version = "1.3"
    title = "Conversational Faithfulness (ASTRID)"
    definition = (
        "Each stored answer sentence is first classified as information-bearing or not (greetings, thanks, "
        "empathy, acknowledgements, questions to the user and follow-up offers carry no information). Each "
        "information-bearing sentence is then checked for grounding in the retrieved context: grounded when one "
        "retrieved chunk supports it on its own (words or facts spread over several chunks do not ground it). "
        "CF = grounded information-bearing sentences / information-bearing sentences; CF = 1 when the answer "
        "has no information-bearing sentence. Per-sentence verdicts are kept for comparison with annotators."
    )
    units = ("item", "sentence")
    backends = ("embedding", "lexical", "nli", "llm", "learned")
    estimates = ("perceived_faithfulness", "grounded")
    parameters = {
        "information_bearing": Param(
            "backend", "Who decides information-bearing: the backend itself or the documented rule set.",
            str, ("backend", "rules"),
        ),
        "informative_threshold": Param(None, "Backend threshold for information-bearing (None: backend default)."),
        "support_threshold": Param(None, "Backend threshold for grounding (None: backend default)."),
        "aggregate": aggregate_param(),
    }

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        sentences = item.sentences
        if params["information_bearing"] == "rules":
            info = [(conversational_rule(s) is None, {"method": "rules", "rule": conversational_rule(s)})
                    for s in sentences]
        else:
            judged = backend.informative(sentences, question=item.question,
                                         threshold=params["informative_threshold"]) if sentences else []
            info = [(bool(j.verdict), j.as_details()) for j in judged]
        bearing = [i for i, (is_info, _) in enumerate(info) if is_info]
        context = context_texts(item)
        grounding = (
            backend.supports([sentences[i] for i in bearing], context, threshold=params["support_threshold"])
            if bearing else []
        )
        grounded_by_index = {i: j for i, j in zip(bearing, grounding, strict=True)}

        units: list[UnitScore] = []
        verdicts = []
        for i, sentence in enumerate(sentences):
            is_info, info_details = info[i]
            entry: dict[str, Any] = {"index": i, "text": sentence, "information_bearing": is_info,
                                     "information_bearing_details": info_details}
            if is_info:
                g = grounded_by_index[i]
                entry["grounded"] = bool(g.verdict)
                entry["grounding_details"] = g.as_details()
                units.append(UnitScore(sentence_unit(i), 1.0 if g.verdict else 0.0, "ok", entry))
            else:
                units.append(UnitScore(sentence_unit(i), None, "undetermined",
                                       {**entry, "reason": "not information-bearing; grounding not assessed"}))
            verdicts.append(entry)

        n_grounded = sum(1 for j in grounding if j.verdict)
        details: dict[str, Any] = {
            "information_bearing": len(bearing),
            "grounded": n_grounded,
            "sentences": len(sentences),
            "information_bearing_method": params["information_bearing"],
            "context_chunks": len(context),
            "verdicts": verdicts,
        }
        if bearing and params["aggregate"] == "mean_probability":
            value = mean_probability(self.name, backend.name, grounding) or 0.0
            details["aggregate"] = "mean_probability"
        elif bearing:
            value = n_grounded / len(bearing)
        else:
            value = 1.0
            details["reason"] = (
                "the answer has no sentences"
                if not sentences
                else "no information-bearing sentence: CF = 1 by definition"
            )
        if bearing and not context:
            details["note"] = "the item has no context chunks; information-bearing sentences are ungrounded"
        return [UnitScore(ITEM, value, "ok", details), *units]
