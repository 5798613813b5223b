"""ICAT_β on hand-worked examples (arXiv 2501.03545: ICAT_β = (1+β²)·f·c / (β²·f + c))."""

from __future__ import annotations

import pytest

from scoring.metrics import AspectInput, ChunkInput, ItemInput, MetricError, get_metric
from scoring.metrics.icat import icat_beta
from scoring.services import unit_key
from tests.scoring.backend_double import BackendDouble

CLAIMS = ["dose is 500 mg", "take with food", "avoid alcohol", "cures everything"]


def _item(aspects=None) -> ItemInput:
    aspects = aspects if aspects is not None else [
        AspectInput(1, "dose", "must_have"), AspectInput(2, "kidney", "must_have"),
        AspectInput(3, "everything", "nice_to_have"),
    ]
    return ItemInput(id="i", question="How to take it?", answer="...", sentences=["..."],
                     contexts=[ChunkInput(rank=1, text="ctx one"), ChunkInput(rank=2, text="ctx two")], aspects=aspects)


def _backend() -> BackendDouble:
    # 3 of 4 claims grounded; "cures everything" is not, so aspect "everything" stays uncovered.
    return BackendDouble("llm", statements=CLAIMS, supported=set(CLAIMS[:3]))


@pytest.mark.parametrize(
    ("f", "c", "beta", "expected"),
    [(0.5, 1.0, 1.0, 2 / 3), (0.5, 1.0, 2.0, 2.5 / 3), (0.75, 1 / 3, 1.0, 6 / 13), (0.0, 0.0, 1.0, 0.0),
     (1.0, 0.0, 1.0, 0.0)],
)
def test_icat_beta_matches_hand_computed_values(f, c, beta, expected):
    assert icat_beta(f, c, beta) == pytest.approx(expected)


def test_icat_combines_factuality_and_coverage_of_grounded_claims():
    # f = 3/4; covered: "dose" only (kidney by no claim, everything by an ungrounded claim) → c = 1/3;
    # ICAT_1 = 2·(3/4)·(1/3) / (3/4 + 1/3) = 6/13.
    icat = get_metric("icat")
    scores = {unit_key(s.unit): s for s in icat.score(_item(), _backend(), icat.resolve_params({}))}
    item = scores["item"]
    assert (item.details["factuality"], item.details["coverage"]) == (0.75, pytest.approx(1 / 3))
    assert item.value == pytest.approx(6 / 13)
    assert [scores[k].value for k in ("a:1", "a:2", "a:3")] == [1.0, 0.0, 0.0]


def test_icat_can_count_must_have_aspects_only_and_weigh_coverage_with_beta():
    # must-haves: dose (covered), kidney (not) → c = 1/2; β = 2: 5·0.75·0.5 / (4·0.75 + 0.5) = 1.875/3.5.
    icat = get_metric("icat")
    scores = icat.score(_item(), _backend(), icat.resolve_params({"aspects": "must_have", "beta": 2}))
    assert scores[0].details["coverage"] == 0.5
    assert scores[0].value == pytest.approx(1.875 / 3.5)


def test_icat_without_aspects_reports_factuality_and_leaves_icat_undetermined():
    icat = get_metric("icat")
    (score,) = icat.score(_item(aspects=[]), _backend(), icat.resolve_params({}))
    assert (score.state, score.value) == ("undetermined", None)
    assert score.details["factuality"] == 0.75
    assert score.details["coverage"] is None


def test_icat_without_claims_is_zero_as_the_authors_code_returns():
    # algoprog/ICAT icat.py: factuality = entailed_facts_count / len(facts) if facts else 0; coverage counts
    # subtopics supported by entailed facts (none); f1 = 0 when factuality + coverage = 0.
    icat = get_metric("icat")
    scores = icat.score(_item(), BackendDouble("llm", statements=[]), icat.resolve_params({}))
    assert (scores[0].state, scores[0].value) == ("ok", 0.0)
    assert (scores[0].details["factuality"], scores[0].details["coverage"]) == (0.0, 0.0)
    assert "no claims" in scores[0].details["reason"]


def test_icat_retrieves_ten_passages_per_claim_by_default():
    # The authors' icat.py: self.topk = 10, retrieved for each fact.
    icat = get_metric("icat")
    assert icat.resolve_params({})["k"] == 10
    retriever = _Retriever()
    icat.score(_item(), _backend(), icat.resolve_params({"source": "kb"}), retriever=retriever)
    assert retriever.queries and all(k == 10 for _, k in retriever.queries)


class _Retriever:
    def __init__(self) -> None:
        self.queries: list[tuple[str, int]] = []

    def retrieve(self, query: str, k: int) -> list[ChunkInput]:
        self.queries.append((query, k))
        return [ChunkInput(rank=i, text=f"kb passage for {query}", document_id=f"doc{i}") for i in range(1, k + 1)]


def test_icat_with_a_knowledge_base_retrieves_evidence_for_each_claim():
    retriever = _Retriever()
    backend = BackendDouble("llm", statements=CLAIMS[:2],
                            supported=lambda claim, evidence: evidence == [f"kb passage for {claim}"] * 2)
    icat = get_metric("icat")
    scores = icat.score(_item(), backend, icat.resolve_params({"source": "kb", "k": 2}), retriever=retriever)
    assert retriever.queries == [(CLAIMS[0], 2), (CLAIMS[1], 2)]
    assert scores[0].details["factuality"] == 1.0
    assert scores[0].details["claims"][0]["evidence"] == ["doc1", "doc2"]


def test_icat_with_source_kb_and_no_knowledge_base_fails_clearly():
    icat = get_metric("icat")
    with pytest.raises(MetricError, match="needs a knowledge base"):
        icat.score(_item(), _backend(), icat.resolve_params({"source": "kb"}), retriever=None)


def test_icat_without_llm_splits_a_compound_sentence_into_claims():
    # Context supports "Metformin lowers blood sugar" only. As one claim, the sentence's unigram precision
    # against the context is 4/7 (metformin, lowers, blood, sugar of its 7 tokens) ≥ 0.5 (the lexical default),
    # so it was grounded: factuality 1.0. Split: "Metformin lowers blood sugar" (4/4, grounded) and
    # "Metformin causes diarrhoea" (1/3, not grounded) → factuality 1/2; the one aspect ("lowers blood sugar")
    # is covered by the grounded claim → coverage 1 → ICAT_1 = 2·0.5·1 / (0.5 + 1) = 2/3.
    from scoring.backends import get_backend

    sentence = "Metformin lowers blood sugar and causes diarrhoea."
    item = ItemInput(id="i", question="What does metformin do?", answer=sentence, sentences=[sentence],
                     contexts=[ChunkInput(rank=1, text="Metformin lowers blood sugar.")],
                     aspects=[AspectInput(1, "Metformin lowers blood sugar", "must_have")])
    backend = get_backend("lexical")
    whole = backend.supports([sentence.rstrip(".")], ["Metformin lowers blood sugar."])[0]
    assert whole.verdict  # the old one-claim reading: grounded, factuality 1.0
    icat = get_metric("icat")
    score = icat.score(item, backend, icat.resolve_params({}))[0]
    assert [c["text"] for c in score.details["claims"]] == [
        "Metformin lowers blood sugar", "Metformin causes diarrhoea"]
    assert [c["grounded"] for c in score.details["claims"]] == [True, False]
    assert score.details["factuality"] == 0.5
    assert score.details["coverage"] == 1.0
    assert score.value == pytest.approx(2 / 3)
