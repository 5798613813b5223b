"""Grounding per passage: a claim is supported when one evidence passage supports it, never by words or facts
spread over several passages (scoring.backends.base.best_passage), for every backend and for ICAT over a
knowledge base at any k.

The hand-written case: the claim "Warfarin tablets cause bleeding gums during pregnancy." has 7 tokens
(warfarin, tablets, cause, bleeding, gums, during, pregnancy). Each of the three chunks below holds at most 3 of
them (2/7, 3/7, 2/7 < the lexical threshold 0.5), all three together hold all 7 (unigram precision 1.0 pooled):
no chunk says warfarin causes bleeding gums in pregnancy, so the claim is not grounded.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from scoring import services
from scoring.backends import get_backend
from scoring.backends.base import Judgement, best_passage
from scoring.backends.llm import LLMBackend
from scoring.judges import services as judge_services
from scoring.metrics import AspectInput, ItemInput, get_metric
from scoring.retrieval import HybridRetriever
from tests.scoring.judge_support import labelled_jsonl
from tests.scoring.llm_stub import verdicts
from tests.waiting import STALL_SECONDS

SPREAD = "Warfarin tablets cause bleeding gums during pregnancy."
CHUNKS = [
    "Warfarin tablets are taken each evening.",  # warfarin, tablets: 2/7
    "Brushing too hard can cause bleeding gums.",  # cause, bleeding, gums: 3/7
    "Morning sickness is common during pregnancy.",  # during, pregnancy: 2/7
]
ONE_CHUNK = "Brushing too hard can cause bleeding gums."  # chunk 1 says it


@pytest.mark.parametrize("measure", ["unigram_precision", "rouge_l"])
def test_lexical_words_spread_over_three_chunks_do_not_ground_a_claim(measure):
    backend = get_backend("lexical", measure=measure)
    (spread,) = backend.supports([SPREAD], CHUNKS)
    assert spread.verdict is False and spread.label == "unsupported"
    assert spread.score == pytest.approx(3 / 7)  # the best single chunk, not the pooled 7/7
    assert spread.details["evidence_passage"] == {"index": 1, "text": CHUNKS[1]}
    assert spread.details["passages_supporting"] == 0


@pytest.mark.parametrize("measure", ["unigram_precision", "rouge_l"])
def test_lexical_a_claim_one_chunk_supports_is_grounded_with_that_chunk_as_its_evidence(measure):
    backend = get_backend("lexical", measure=measure)
    (claim,) = backend.supports([ONE_CHUNK], CHUNKS)
    assert claim.verdict is True and claim.score == pytest.approx(1.0)
    assert claim.details["evidence_passage"]["index"] == 1
    # Order does not matter: the supporting chunk is found wherever it lies.
    (moved,) = backend.supports([ONE_CHUNK], [CHUNKS[2], CHUNKS[0], CHUNKS[1]])
    assert moved.verdict is True and moved.details["evidence_passage"]["index"] == 2


def test_the_best_passage_is_a_supporting_one_even_where_another_scores_higher():
    # Passage 0 contradicts (verdict False, higher score), passage 1 supports: the claim is supported by 1.
    contradicting = Judgement(False, 0.9, {}, label="contradicted")
    supporting = Judgement(True, 0.6, {}, label="supported")
    chosen = best_passage([contradicting, supporting], ["p0", "p1"])
    assert chosen is supporting and chosen.details["evidence_passage"]["index"] == 1
    # None supports: the closest passage, by probability where the backend gives one, keeps its label.
    a = Judgement(False, 0.9, {}, label="contradicted", probability=0.0)
    b = Judgement(False, 0.2, {}, label="unsupported", probability=0.4)
    assert best_passage([a, b], ["p0", "p1"]) is b
    empty = best_passage([], [])
    assert empty.verdict is False and empty.label == "unsupported"


@pytest.mark.django_db
def test_learned_judge_applied_per_passage_does_not_ground_a_spread_claim(settings, tmp_path):
    # The tiny logistic judge the learned-backend tests build (tests/scoring/judge_support.py): lexical features
    # of (claim, evidence), trained on claims that copy their evidence (supported) or are off-topic.
    settings.VAR_DIR = tmp_path
    judge_services.judge_train_from_file(
        content=labelled_jsonl(),
        filename="claims.jsonl",
        task="supports",
        name="claims",
        actor=None,
        options={"feature_sets": ["lexical"], "folds": 3},
    )
    backend = get_backend("learned", model="claims")
    (pooled,) = backend.supports([SPREAD], [" ".join(CHUNKS)])  # one passage holding all the words
    assert pooled.verdict is True  # the judge itself would ground it on the pooled words...
    spread, one = backend.supports([SPREAD, ONE_CHUNK], CHUNKS)
    assert spread.verdict is False  # ...but no single chunk supports it
    assert one.verdict is True and one.details["evidence_passage"]["index"] == 1
    # The judgement is the best passage's: its probability is the highest over the three chunks.
    each = [backend.supports([SPREAD], [c])[0].probability for c in CHUNKS]
    assert spread.probability == pytest.approx(max(each))


@pytest.fixture
def llm_stub_backend(llm_stub):
    return llm_stub, LLMBackend(
        # The stub answers at once; a loaded machine may still be slow, so the read waits up to the stall period.
        base_url=llm_stub.base_url, model="judge-7b", api_key="k-test", max_retries=0, backoff_base=0.01,
        timeout=STALL_SECONDS,
    )


def test_llm_sees_one_passage_per_prompt_and_takes_the_best_passages_verdict(llm_stub_backend):
    stub, backend = llm_stub_backend
    # Per chunk, claims [SPREAD, ONE_CHUNK]: no chunk supports SPREAD; chunk 1 supports ONE_CHUNK.
    stub.queue(
        verdicts("supported", [False, False]),
        verdicts("supported", [False, True]),
        verdicts("supported", [False, False]),
    )
    spread, one = backend.supports([SPREAD, ONE_CHUNK], CHUNKS)
    assert len(stub.requests) == 3
    for request, chunk in zip(stub.requests, CHUNKS, strict=True):
        prompt = request["json"]["messages"][1]["content"]
        evidence = prompt.split("Evidence:\n", 1)[1].split("\n\nStatements:", 1)[0]
        assert evidence == f"[0] {chunk}"  # one passage, alone
    assert spread.verdict is False
    assert one.verdict is True and one.details["evidence_passage"] == {"index": 1, "text": CHUNKS[1]}


def test_embedding_words_spread_over_three_chunks_do_not_ground_a_claim(embedding_backend):
    spread, one = embedding_backend.supports([SPREAD, ONE_CHUNK], CHUNKS)
    assert spread.verdict is False
    assert one.verdict is True and one.details["evidence_passage"]["index"] == 1


# --- ICAT over a knowledge base: the same verdict at every k ---------------------------------------------------

KB_VOCAB = [
    "warfarin",
    "tablets",
    "cause",
    "bleeding",
    "gums",
    "during",
    "pregnancy",
    "evening",
    "brushing",
    "morning",
    "sickness",
    "insulin",
    "glucose",
]


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """A transparent stand-in for a sentence encoder: counts of a fixed vocabulary."""
    rows = []
    for text in texts:
        found = re.findall(r"\w+", text.lower())
        rows.append([float(found.count(word)) for word in KB_VOCAB])
    return np.array(rows, dtype=np.float32)


@pytest.fixture
def spread_kb(study, researcher):
    kb = services.knowledge_base_create(study=study, name="Leaflets", chunk_size=50, chunk_overlap=0, actor=researcher)
    documents = [{"id": f"d{i}", "text": text} for i, text in enumerate(CHUNKS)] + [
        {"id": "d3", "text": "Insulin lowers blood glucose in diabetes."},
        {"id": "d4", "text": "Check glucose before each insulin dose."},
    ]
    content = "\n".join(json.dumps(d) for d in documents).encode()
    services.knowledge_base_add_documents(knowledge_base=kb, filename="kb.jsonl", content=content, actor=researcher)
    return HybridRetriever(knowledge_base_id=kb.pk, encode=_bag_of_words, identity="bow", alpha=0.5)


@pytest.mark.django_db
@pytest.mark.parametrize("backend_name", ["lexical"])
def test_icat_over_a_knowledge_base_gives_a_spread_false_claim_the_same_verdict_at_k_1_3_and_10(
    spread_kb, backend_name
):
    icat = get_metric("icat")
    backend = get_backend(backend_name)
    item = ItemInput(
        id="i",
        question="Is warfarin safe in pregnancy?",
        answer=f"{SPREAD} {ONE_CHUNK}",
        sentences=[SPREAD, ONE_CHUNK],
        contexts=[],
        aspects=[AspectInput(1, "bleeding gums", "must_have")],
    )
    grounded = {}
    for k in (1, 3, 10):
        (unit, *_aspects) = icat.score(
            item, backend, icat.resolve_params({"source": "kb", "k": k}), retriever=spread_kb
        )
        claims = {c["text"]: c for c in unit.details["claims"]}
        assert len(claims[SPREAD]["evidence"]) == min(k, 5)  # k=3 and 10 do retrieve all three chunks
        grounded[k] = (claims[SPREAD]["grounded"], claims[ONE_CHUNK]["grounded"])
    assert grounded == {1: (False, True), 3: (False, True), 10: (False, True)}
