"""PlainQAFact: kind-aware verification and the weighted mean, on hand-worked examples."""

from __future__ import annotations

import pytest

from scoring.metrics import ChunkInput, ItemInput, MetricError, get_metric
from scoring.services import unit_key
from tests.scoring.backend_double import BackendDouble

SOURCE = ["Drug X lowered blood pressure in 200 adults.", "Side effects were mild."]
SENTENCES = ["S-simp-ok-1", "S-simp-ok-2", "S-simp-bad", "E-elab-needs-kb"]


class _Retriever:
    def retrieve(self, query: str, k: int) -> list[ChunkInput]:
        return [ChunkInput(rank=i, text=f"KB:{query}", document_id=f"kb{i}") for i in range(1, k + 1)]


SOURCE_PASSAGE = " ".join(SOURCE)


def _supported(claim: str, evidence: list[str]) -> bool:
    # Simplifications are supported when marked ok and the evidence is exactly the source; the elaboration
    # only when knowledge-base passages were added to the source.
    if claim.startswith("S-"):
        return claim.startswith("S-simp-ok") and evidence == [SOURCE_PASSAGE]
    return evidence[0] == SOURCE_PASSAGE and f"KB:{claim}" in evidence


def _backend() -> BackendDouble:
    return BackendDouble("nli", supported=_supported, simplifications=set(SENTENCES[:3]))


def _item(**kw) -> ItemInput:
    return ItemInput(
        id="i",
        question="q",
        answer=" ".join(SENTENCES),
        sentences=SENTENCES,
        source=" ".join(SOURCE),
        source_sentences=SOURCE,
        **kw,
    )


KB = _Retriever()


def _scores(params, backend=None, retriever=KB, item=None):
    metric = get_metric("plainqafact")
    return {
        unit_key(s.unit): s
        for s in metric.score(
            item or _item(), backend or _backend(), metric.resolve_params(params), retriever=retriever
        )
    }


def test_plainqafact_weights_kinds_by_count_by_default():
    # Simplifications 2/3 supported, elaborations 1/1 → by count (3:1) = 3/4; explanation-only = 1.
    scores = _scores({"k": 2})
    assert scores["item"].value == pytest.approx(0.75)
    assert scores["item"].details["simplification_score"] == pytest.approx(2 / 3)
    assert scores["item"].details["explanation_score"] == 1.0
    assert scores["s:3"].details["kind"] == "elaboration"
    assert scores["s:3"].details["kb_passages"] == ["kb1", "kb2"]
    assert [scores[f"s:{i}"].value for i in range(4)] == [1.0, 1.0, 0.0, 1.0]


def test_plainqafact_uses_given_weights():
    # Equal weights: (2/3 + 1) / 2 = 5/6.
    scores = _scores({"weight_simplification": 1, "weight_elaboration": 1})
    assert scores["item"].value == pytest.approx(5 / 6)


def test_plainqafact_without_knowledge_base_verifies_elaborations_against_source_only():
    scores = _scores({"knowledge": "none"}, retriever=None)
    assert scores["item"].details["explanation_score"] == 0.0
    assert scores["item"].value == pytest.approx(0.5)  # (2 + 0) / 4


def test_plainqafact_with_kb_knowledge_needs_a_retriever():
    with pytest.raises(MetricError, match="needs a knowledge base"):
        _scores({}, retriever=None)


def test_plainqafact_can_use_human_sentence_kinds():
    # Humans call sentence 0 an elaboration and leave sentence 2 unlabelled: simplification 1/1 (S-simp-ok-2),
    # elaborations: S-simp-ok-1 (an "S-" claim, needs the exact source as evidence, gets source + KB → not
    # supported) and E-elab-needs-kb (supported) → 1/2. By count: 2/3.
    kinds = {0: "elaboration", 1: "simplification", 3: "elaboration"}
    scores = _scores({"use_human_kinds": "true"}, item=_item(sentence_kinds=kinds))
    assert scores["item"].value == pytest.approx(2 / 3)
    assert scores["s:2"].state == "undetermined"
    assert scores["item"].details["unclassified"] == 1


def test_plainqafact_without_a_source_is_undetermined():
    item = ItemInput(id="i", question="q", answer="a", sentences=["a"])
    (score,) = get_metric("plainqafact").score(
        item, _backend(), get_metric("plainqafact").resolve_params({}), retriever=_Retriever()
    )
    assert (score.state, score.value) == ("undetermined", None)
