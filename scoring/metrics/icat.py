"""ICAT (arXiv 2501.03545): factuality and coverage of expected aspects, combined as an F_β-style mean."""

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
    aspect_unit,
    register,
)
from scoring.metrics.common import aggregate_param, context_texts, fraction, mean_probability, require_backend


def icat_beta(factuality: float, coverage: float, beta: float) -> float:
    """(1+β²)·f·c / (β²·f + c); 0 when both are 0 (the limit along any path where f·c = 0)."""
    denominator = beta * beta * factuality + coverage
    return 0.0 if denominator == 0 else (1 + beta * beta) * factuality * coverage / denominator


@register
class ICAT(Metric):
    """Choices where the paper leaves room:

    - Claims: with the llm backend, an atomic-claim extraction prompt; otherwise each stored sentence that
      passes the conversational rule set, split into clause-level claims by a rule set
      (``scoring.metrics.claims.split_claims``: coordinated clauses, predicates sharing a subject, ", which"
      and "because" clauses; noun lists and conditions stay whole), so "X lowers A and causes B" is two
      claims, and a compound sentence with one supported half scores 1/2, not 1.
    - Evidence by default (``source=context``) is the item's own retrieved chunks, so "factuality" is then
      faithfulness to the retrieved context, not truth about the world; ``source=kb`` checks each claim
      against passages retrieved from a knowledge base instead.
    - Evidence: ``source=context`` verifies every claim against the item's retrieved chunks; ``source=kb``
      retrieves the top ``k`` knowledge-base passages *for each claim* (default 10, the ``topk = 10`` of the
      authors' ``icat.py``, github.com/algoprog/ICAT) and verifies the claim against them. Either way a claim is
      grounded when one passage on its own supports it, as the authors' code breaks on the first entailing
      document: every backend's ``supports`` judges each passage alone and reports the best one as the evidence
      (``scoring.backends.base.best_passage``), so words spread over several passages never ground a claim and
      the verdict does not grow with ``k``. A run with ``source=kb`` and no knowledge base is an error, not a
      silent switch to the context.
    - Coverage counts the item's aspects as given (the service passes accepted aspects of the current
      version), optionally only must-haves (``aspects=must_have``); an aspect is covered when the backend's
      claim–aspect matching finds it among the *grounded* claims. Per-aspect results are ``a:<id>`` units.
    - No claims: as the authors' code (``factuality = entailed / len(facts) if facts else 0``; coverage counts
      aspects supported by grounded claims, so none), factuality 0 and coverage 0, ICAT_β = 0, state ok, with
      the reason in the details.
    - No aspects: the authors' code returns coverage 0 for a query without subtopics; Concord records the
      item as undetermined instead, because an item without expected aspects is a data gap, not an answer
      that covers nothing, and a 0 would pull a mean down for the dataset's omission. The factuality is in the
      details.
    """

    name = "icat"
    # 2.1: grounding per passage: one passage must support a claim (backends.base.best_passage).
    # 2.2: without an LLM, claims are clause-level (scoring.metrics.claims), not whole sentences.
    version = "2.2"
    title = "ICAT_β (factuality × aspect coverage)"
    definition = (
        "The answer is split into atomic claims; a claim is grounded when one evidence passage (a retrieved "
        "chunk, or a passage retrieved from a knowledge base for the claim) entails it. Factuality = grounded claims / "
        "claims. Coverage = expected aspects covered by the grounded claims / expected aspects. ICAT_β = "
        "(1+β²)·factuality·coverage / (β²·factuality + coverage), 0 when both are 0; β > 1 weighs coverage more."
    )
    units = ("item", "aspect")
    backends = ("embedding", "lexical", "nli", "llm", "learned")
    estimates = ("aspect_covered", "aspect_entailment")
    parameters = {
        "beta": Param(1.0, "β of ICAT_β (> 0)."),
        "source": Param("context", "Evidence: the item's chunks or a knowledge base.", str, ("context", "kb")),
        "k": Param(10, "Passages retrieved per claim when source=kb (the authors' code uses 10).", int),
        "aspects": Param("all", "Which aspects count for coverage.", str, ("all", "must_have")),
        "support_threshold": Param(None, "Backend threshold for a grounded claim (None: backend default)."),
        "coverage_threshold": Param(None, "Backend threshold for a covered aspect (None: backend default)."),
        "aggregate": aggregate_param(),
    }

    def score(
        self, item: ItemInput, backend: Judge, params: dict[str, Any], *, retriever: Retriever | None = None
    ) -> list[UnitScore]:
        require_backend(self, backend)
        beta = params["beta"]
        if not beta > 0:
            raise MetricError(f"icat: beta must be positive, got {beta}")
        if params["source"] == "kb" and retriever is None:
            raise MetricError("icat: source=kb needs a knowledge base, and none was given for this run")
        if params["k"] < 1:
            raise MetricError(f"icat: k must be at least 1, got {params['k']}")

        extracted = backend.statements(item.question, item.answer, item.sentences, drop_conversational=True)
        claims = extracted.texts
        threshold = params["support_threshold"]
        claim_rows: list[dict[str, Any]] = []
        if params["source"] == "context":
            verdicts = backend.supports(claims, context_texts(item), threshold=threshold) if claims else []
            evidence_ids: list[list[str]] = [[c.unit_key for c in item.contexts] for _ in claims]
        else:
            assert retriever is not None  # source=kb without a knowledge base was refused above
            verdicts, evidence_ids = [], []
            for claim in claims:
                passages = retriever.retrieve(claim, params["k"])
                verdicts.extend(backend.supports([claim], [p.text for p in passages], threshold=threshold))
                evidence_ids.append([p.document_id or f"rank {p.rank}" for p in passages])
        for claim, j, ev in zip(claims, verdicts, evidence_ids, strict=True):
            claim_rows.append({"text": claim, "grounded": bool(j.verdict), "evidence": ev, **j.as_details()})
        grounded = [c for c, j in zip(claims, verdicts, strict=True) if j.verdict]
        # No claims: factuality 0, as the authors' code returns (not undefined).
        factuality = fraction(len(grounded), len(claims)) if claims else 0.0
        if params["aggregate"] == "mean_probability" and claims:  # the continuous factuality (Concord's extension)
            factuality = mean_probability(self.name, backend.name, verdicts)

        aspects = [a for a in item.aspects if params["aspects"] == "all" or a.importance == "must_have"]
        aspect_units: list[UnitScore] = []
        covered = 0
        if aspects:
            if grounded:
                matches = backend.covers([a.text for a in aspects], grounded, threshold=params["coverage_threshold"])
            else:
                matches = None
            for index, aspect in enumerate(aspects):
                if matches is None:
                    is_covered, info = False, {"reason": "no grounded claims"}
                else:
                    is_covered, info = bool(matches[index].verdict), matches[index].as_details()
                covered += is_covered
                aspect_units.append(UnitScore(aspect_unit(aspect.ref), 1.0 if is_covered else 0.0, "ok",
                                              {"text": aspect.text, "importance": aspect.importance,
                                               "covered": is_covered, **info}))
        coverage = fraction(covered, len(aspects))

        details: dict[str, Any] = {
            "beta": beta, "source": params["source"], "factuality": factuality, "coverage": coverage,
            "claims": claim_rows, "n_claims": len(claims), "n_grounded": len(grounded),
            "n_aspects": len(aspects), "n_covered": covered, "extraction": extracted.details,
        }
        if not claims:
            details["reason"] = "no claims: factuality 0 and no aspect covered, as the authors' icat.py returns"
        if coverage is None:
            details["reason"] = "no expected aspects: coverage, and so ICAT, is undefined"
            return [UnitScore(ITEM, None, "undetermined", details), *aspect_units]
        assert factuality is not None
        return [UnitScore(ITEM, icat_beta(factuality, coverage, beta), "ok", details), *aspect_units]
