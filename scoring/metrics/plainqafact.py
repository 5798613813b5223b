"""PlainQAFact: kind-aware factuality of plain-language summaries."""

from __future__ import annotations

from typing import Any

from scoring.metrics.base import (
    ITEM,
    ItemInput,
    Judge,
    Metric,
    MetricError,
    Param,
    Retriever,
    UnitScore,
    register,
    sentence_unit,
)
from scoring.metrics.common import require_backend

KINDS = ("simplification", "elaboration")


def weighted_mean(
    scores: dict[str, float | None], counts: dict[str, int], weights: dict[str, float | None]
) -> float | None:
    """Mean of the kinds' scores, weighted by the given weights or, where none is given, by sentence counts.
    Kinds without sentences are left out of the mean; None when no kind has sentences."""
    present = [k for k in KINDS if counts[k] > 0 and scores[k] is not None]
    if not present:
        return None
    use_counts = all(weights[k] is None for k in KINDS)
    if not use_counts and any(weights[k] is None for k in KINDS):
        raise MetricError("plainqafact: give both weights or neither")
    w: dict[str, float] = {}
    for k in present:
        given = weights[k]
        w[k] = float(counts[k]) if given is None else float(given)
    total = sum(w.values())
    if total <= 0:
        raise MetricError("plainqafact: weights must be positive")
    return sum(w[k] * (scores[k] or 0.0) for k in present) / total


QA_NAME = "PlainQAFact (QA-based)"
ENTAILMENT_NAME = "kind-aware entailment (PlainQAFact-style, no LLM)"
LLM_ENTAILMENT_NAME = "kind-aware entailment (PlainQAFact-style, LLM judge)"

# What decides the kind when no kind judge and no human kinds are used: each backend's own signal, described
# in the details (``kind_decision``) so a report never presents it as PlainQAFact's classifier.
_SAME_SIGNAL = {
    "lexical": "unigram precision of the sentence against the source (simplification at >= 0.6) - the same "
               "similarity the verifier uses against the same source (supported at >= 0.5), so every "
               "sentence called a simplification at the default thresholds is supported",
    "embedding": "max cosine to a source sentence - the same similarity the verifier uses against the same "
                 "source, so a sentence called a simplification is nearly always supported",
    "nli": "entailment by the source - the same model and premise the verifier uses, so a sentence called a "
           "simplification is supported unless the contradiction check overrules it",
}


def kind_decision(backend_name: str, use_human_kinds: bool, signals: set[str]) -> dict[str, Any]:
    """How the sentence kinds of a run were decided, for the details."""
    if use_human_kinds:
        return {"by": "human", "signal": "the annotators' sentence kinds (use_human_kinds)", "own_signal": True}
    if signals:
        return {"by": "kind judge", "signal": "; ".join(sorted(signals)), "own_signal": True}
    if backend_name == "llm":
        return {"by": "llm", "signal": "the llm kind prompt (sentence_kinds)", "own_signal": True}
    return {"by": "backend similarity", "own_signal": False,
            "signal": _SAME_SIGNAL.get(backend_name, f"the {backend_name} backend's own closeness to the source"),
            "instead": "name a trained kind judge (learned backend, option kind_model) or use_human_kinds=true"}


@register
class PlainQAFact(Metric):
    """PlainQAFact (digest of the paper; authors' code github.com/zhiwenyou103/PlainQAFact) is QA-based: a
    classifier tells source simplifications from elaborative explanations; for each sentence, answers are
    extracted and questions generated, the questions answered from the source abstract (simplifications) or
    the source plus k = 3 passages retrieved from medical knowledge (explanations), and the answers compared
    (BERTScore in the paper). The score is the weighted mean of the two kinds' scores.

    - ``method=auto`` (default): with the ``llm`` backend the QA pipeline (``qa_support``: the model extracts
      answers, writes questions and answers them from the evidence; overlap by SQuAD token F1, the F1 scorer
      of the authors' qaeval, because BERTScore needs a model Concord does not ship; no question-filtering
      step). A sentence's value is its mean answer F1. With any other backend the metric is *not*
      PlainQAFact: it is reported as "kind-aware entailment (PlainQAFact-style, no LLM)" (``details.method``),
      each sentence verified with ``supports`` (1/0). ``method=entailment`` forces that with llm too (named
      "... LLM judge"); ``method=qa`` with another backend is refused.
    - The kind classifier is the backend's ``sentence_kinds`` (not the paper's fine-tuned PubMedBERT), or the
      annotators' kinds with ``use_human_kinds``. With the learned backend it is a trained ``kind`` judge
      (option ``kind_model``, trained from the study's gold of the ``sentence_kind`` question): a signal of its
      own. With lexical, embedding and nli it is the verifier's own similarity to the same source, so every
      sentence called a simplification passes; ``details.kind_decision`` says which signal decided.

    - Kinds come from the backend (``sentence_kinds``: closeness to the source for embedding / lexical,
      entailment by the source for nli, a prompt for llm) or, with ``use_human_kinds=true``, from the
      item's human labels (sentences without a human kind are left out and counted in the details).
    - Simplifications are verified against the source only; elaborations against the source plus the top
      ``k`` knowledge-base passages retrieved with the sentence as query. The source is passed as one
      evidence passage (an NLI premise then sees the whole abstract).
      ``knowledge=kb`` (default) needs a knowledge base and fails the run without one; ``knowledge=none``
      verifies elaborations against the source only, and says so in the details.
    - The item's value is the weighted mean of the two kinds' supported fractions; by default the weights
      are the sentence counts (so the value equals supported / classified sentences). The explanation-only
      score (supported elaborations / elaborations) is in the details for validation studies.
      With ``knowledge=none`` every sentence is verified against the source alone, so with weights by count
      the value is supported / classified sentences against the source whatever the kinds are: RF with the
      source as the context (the details say so). The kinds change the value only through explicit weights
      (the mean of the two kinds' scores) and, with ``knowledge=kb``, the evidence of elaborations.
    - No source, or no classified sentence: undetermined.
    """

    name = "plainqafact"
    # 2.1: grounding per passage: one passage must support a claim (backends.base.best_passage).
    # 2.2: the non-LLM form is named "... no LLM" and says its kind signal; learned backend with a kind judge.
    version = "2.2"
    title = "PlainQAFact (QA-based, llm) / kind-aware entailment (PlainQAFact-style, no LLM)"
    definition = (
        "Each sentence of a plain-language summary is classified as a source simplification or an elaborative "
        "explanation. Simplifications are verified against the source abstract only; explanations against the "
        "source plus the top-k passages retrieved from a knowledge base. The score is the weighted mean of the "
        "two kinds' verified fractions (weights default to sentence counts); the explanation-only score is kept too."
    )
    units = ("item", "sentence")
    backends = ("embedding", "lexical", "nli", "llm", "learned")
    estimates = ("grounded",)
    parameters = {
        "method": Param("auto", "qa: PlainQAFact's QA pipeline (llm only); entailment: kind-aware entailment; "
                        "auto: qa with llm, entailment otherwise.", str, ("auto", "qa", "entailment")),
        "use_human_kinds": Param(False, "Use annotators' sentence kinds instead of the backend's.", bool),
        "knowledge": Param("kb", "Evidence for elaborations beyond the source.", str, ("kb", "none")),
        "k": Param(3, "Knowledge-base passages retrieved per elaboration.", int),
        "weight_simplification": Param(None, "Weight of simplifications (None with the other None: by count)."),
        "weight_elaboration": Param(None, "Weight of elaborations (None with the other None: by count)."),
        "support_threshold": Param(None, "Backend threshold for a supported sentence (None: backend default)."),
        "kind_threshold": Param(None, "Backend threshold for a simplification (None: backend default)."),
    }

    @classmethod
    def computed_as(cls, backend: str, params: dict[str, Any] | None = None) -> str:
        method = (params or {}).get("method", "auto")
        if backend == "llm":
            return LLM_ENTAILMENT_NAME if method == "entailment" else QA_NAME
        return ENTAILMENT_NAME

    def resolve_params(self, given: dict[str, Any] | None) -> dict[str, Any]:
        given = dict(given or {})
        # bool("false") is True: accept the strings a form or JSON client sends.
        if isinstance(given.get("use_human_kinds"), str):
            text = given["use_human_kinds"].strip().lower()
            if text not in ("true", "false", "1", "0", "yes", "no"):
                raise MetricError(f"plainqafact: use_human_kinds={given['use_human_kinds']!r} is not a boolean")
            given["use_human_kinds"] = text in ("true", "1", "yes")
        return super().resolve_params(given)

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        method = params["method"]
        if method == "auto":
            method = "qa" if backend.name == "llm" else "entailment"
        if method == "qa" and backend.name != "llm":
            raise MetricError("plainqafact: method=qa needs the llm backend (questions and answers by the model)")
        if params["knowledge"] == "kb" and retriever is None:
            raise MetricError("plainqafact: knowledge=kb needs a knowledge base, and none was given for this run")
        source = item.source_sentences or ([item.source] if item.source.strip() else [])
        if not source:
            return [UnitScore(ITEM, None, "undetermined", {"reason": "the item has no source document"})]
        sentences = item.sentences

        kinds: dict[int, str] = {}
        kind_details: dict[int, dict[str, Any]] = {}
        signals: set[str] = set()
        if params["use_human_kinds"]:
            # Keys may arrive as strings from JSON; indices are what count.
            human = {int(k): v for k, v in (item.sentence_kinds or {}).items()}
            for i in range(len(sentences)):
                if human.get(i) in KINDS:
                    kinds[i] = human[i]
                    kind_details[i] = {"source": "human"}
        elif sentences:
            for i, j in enumerate(backend.sentence_kinds(sentences, source, threshold=params["kind_threshold"])):
                kinds[i] = "simplification" if j.verdict else "elaboration"
                kind_details[i] = {"source": "backend", **j.as_details()}
                if j.details.get("signal"):
                    signals.add(str(j.details["signal"]))

        threshold = params["support_threshold"]
        verdicts: dict[int, Any] = {}
        # The source is one evidence passage, so an NLI premise sees the whole abstract (a simplification
        # often merges several source sentences); similarity backends split it into sentences themselves.
        source_passage = [" ".join(source)]
        evidence_of: dict[int, tuple[list[str], list[str]]] = {}
        for i in sorted(kinds):
            if kinds[i] == "simplification":
                evidence_of[i] = (source_passage, [])
                continue
            kb = retriever if params["knowledge"] == "kb" else None
            passages = kb.retrieve(sentences[i], params["k"]) if kb is not None else []
            evidence_of[i] = ([*source_passage, *(p.text for p in passages)],
                              [p.document_id or f"rank {p.rank}" for p in passages])
        order = sorted(evidence_of)
        if method == "qa":
            judged = backend.qa_support([sentences[i] for i in order], [evidence_of[i][0] for i in order])
            for i, j in zip(order, judged, strict=True):
                verdicts[i] = (j, evidence_of[i][1])
        else:
            simplifications = [i for i in order if kinds[i] == "simplification"]
            if simplifications:
                for i, j in zip(simplifications, backend.supports([sentences[i] for i in simplifications],
                                                                  source_passage, threshold=threshold), strict=True):
                    verdicts[i] = (j, [])
            for i in order:
                if kinds[i] == "elaboration":
                    verdicts[i] = (backend.supports([sentences[i]], evidence_of[i][0], threshold=threshold)[0],
                                   evidence_of[i][1])

        units: list[UnitScore] = []
        supported: dict[str, float] = {k: 0.0 for k in KINDS}
        counts = {k: 0 for k in KINDS}
        rows = []
        for i, sentence in enumerate(sentences):
            if i not in kinds:
                units.append(UnitScore(sentence_unit(i), None, "undetermined",
                                       {"text": sentence, "reason": "no human sentence kind"}))
                continue
            j, passages = verdicts[i]
            if method == "qa" and j.score is None:
                units.append(UnitScore(sentence_unit(i), None, "undetermined",
                                       {"text": sentence, "kind": kinds[i], "verification": j.as_details(),
                                        "reason": "no question could be asked about this sentence"}))
                continue
            value = float(j.score) if method == "qa" and j.score is not None else (1.0 if j.verdict else 0.0)
            counts[kinds[i]] += 1
            supported[kinds[i]] += value
            row = {"index": i, "text": sentence, "kind": kinds[i], "kind_details": kind_details[i],
                   "value": value, "supported": bool(j.verdict), "verification": j.as_details(),
                   "kb_passages": passages}
            rows.append(row)
            units.append(UnitScore(sentence_unit(i), value, "ok", row))

        per_kind: dict[str, float | None] = {k: (supported[k] / counts[k] if counts[k] else None) for k in KINDS}
        weights = {"simplification": params["weight_simplification"], "elaboration": params["weight_elaboration"]}
        item_value = weighted_mean(per_kind, counts, weights)
        details: dict[str, Any] = {
            "method": QA_NAME if method == "qa"
            else (LLM_ENTAILMENT_NAME if backend.name == "llm" else ENTAILMENT_NAME),
            "kind_decision": kind_decision(backend.name, params["use_human_kinds"], signals),
            "simplification_score": per_kind["simplification"],
            "explanation_score": per_kind["elaboration"],
            "counts": counts, "supported": supported,
            "weights": "by count" if all(v is None for v in weights.values()) else weights,
            "knowledge": params["knowledge"], "unclassified": len(sentences) - len(kinds), "sentences": rows,
        }
        if params["knowledge"] == "none":
            details["note"] = "elaborations verified against the source only (knowledge=none)"
            if details["weights"] == "by count":
                details["note"] += ("; with weights by count the value is supported / classified sentences against "
                                    "the source, whatever the kinds (RF with the source as the context)")
        if item_value is None:
            details["reason"] = "no classified sentence: PlainQAFact is undefined"
            return [UnitScore(ITEM, None, "undetermined", details), *units]
        return [UnitScore(ITEM, item_value, "ok", details), *units]
