"""Chunking and weighted reciprocal-rank fusion (pure), and the hybrid retriever over a knowledge base."""

from __future__ import annotations

import re

import numpy as np
import pytest

from scoring import services
from scoring.retrieval import DocumentError, HybridRetriever, chunk_words, parse_documents, rrf_fuse

WORDS = " ".join(f"w{i}" for i in range(1, 11))


def test_chunks_overlap_by_the_given_number_of_words():
    assert chunk_words(WORDS, size=4, overlap=1) == ["w1 w2 w3 w4", "w4 w5 w6 w7", "w7 w8 w9 w10"]


def test_the_last_chunk_may_be_shorter_and_no_chunk_is_a_tail_of_its_predecessor():
    assert chunk_words("a b c d e f g h i", size=4, overlap=0) == ["a b c d", "e f g h", "i"]
    assert chunk_words("a b c d", size=4, overlap=2) == ["a b c d"]
    assert chunk_words("   ", size=4, overlap=1) == []


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (3, 3), (3, -1)])
def test_chunking_refuses_impossible_sizes(size, overlap):
    with pytest.raises(ValueError):
        chunk_words(WORDS, size=size, overlap=overlap)


def test_rrf_fuses_a_hand_worked_example():
    # dense A,B,C and sparse C,A,D with alpha 0.5, c 60 (PubHealthBench's formula, worked by hand):
    # A = .5/61 + .5/62 = 0.0162612, C = .5/63 + .5/61 = 0.0161332, B = .5/62 = 0.0080645, D = .5/63 = 0.0079365
    fused = rrf_fuse(["A", "B", "C"], ["C", "A", "D"], alpha=0.5)
    assert [k for k, _ in fused] == ["A", "C", "B", "D"]
    assert [round(s, 7) for _, s in fused] == [0.0162612, 0.0161332, 0.0080645, 0.0079365]


def test_a_low_alpha_lets_the_sparse_ranking_lead():
    # alpha 0.2: C = .2/63 + .8/61 = 0.0162894 beats A = .2/61 + .8/62 = 0.0161819; D = .8/63 beats B = .2/62
    fused = rrf_fuse(["A", "B", "C"], ["C", "A", "D"], alpha=0.2)
    assert [k for k, _ in fused] == ["C", "A", "D", "B"]
    assert fused[0][1] == pytest.approx(0.2 / 63 + 0.8 / 61)


def test_alpha_one_is_the_dense_ranking_and_ties_keep_the_dense_order():
    fused = rrf_fuse(["B", "A"], ["A", "C"], alpha=1.0)
    assert [k for k, _ in fused] == ["B", "A", "C"]
    assert fused[2][1] == 0.0


def test_alpha_outside_the_unit_interval_is_refused():
    with pytest.raises(ValueError):
        rrf_fuse(["A"], ["A"], alpha=1.5)


def test_jsonl_documents_are_read_with_ids_and_errors_name_the_line():
    docs = parse_documents('{"id": "d1", "text": "alpha"}\n\n{"text": "beta"}\n', filename="kb.jsonl")
    assert docs == [("d1", "alpha"), ("line-3", "beta")]
    with pytest.raises(DocumentError, match="line 2: malformed JSON"):
        parse_documents('{"text": "ok"}\n{"text": \n', filename="kb.jsonl")
    with pytest.raises(DocumentError, match="line 1: field 'text'"):
        parse_documents('{"id": "x"}\n', filename="kb.jsonl")
    with pytest.raises(DocumentError, match="appears twice"):
        parse_documents('{"id": "x", "text": "a"}\n{"id": "x", "text": "b"}\n', filename="kb.jsonl")
    assert parse_documents("plain text", filename="notes.txt") == [("notes.txt", "plain text")]


VOCAB = ["insulin", "glucose", "diabetes", "asthma", "inhaler", "lungs", "fracture", "bone", "cast", "dose"]


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """A transparent stand-in for a sentence encoder: counts of a fixed vocabulary."""
    rows = []
    for text in texts:
        tokens = re.findall(r"\w+", text.lower())
        rows.append([float(tokens.count(word)) for word in VOCAB])
    return np.array(rows, dtype=np.float32)


@pytest.fixture
def kb(study, researcher):
    kb = services.knowledge_base_create(study=study, name="Leaflets", chunk_size=12, chunk_overlap=0, actor=researcher)
    content = "\n".join(
        [
            '{"id": "diabetes", "text": "Insulin lowers blood glucose in diabetes; '
            'check glucose before each insulin dose."}',
            '{"id": "asthma", "text": "An inhaler opens the lungs quickly during asthma attacks."}',
            '{"id": "fracture", "text": "A fracture of the bone is held still in a cast for weeks."}',
        ]
    )
    services.knowledge_base_add_documents(
        knowledge_base=kb, filename="leaflets.jsonl", content=content.encode(), actor=researcher
    )
    return kb


@pytest.mark.django_db
def test_hybrid_retrieval_finds_the_passage_about_the_query(kb):
    retriever = HybridRetriever(knowledge_base_id=kb.pk, encode=_bag_of_words, identity="bow", alpha=0.5)
    top = retriever.retrieve("What insulin dose for diabetes?", k=2)
    assert top[0].document_id == "diabetes" and top[0].rank == 1
    assert len(top) == 2 and top[1].rank == 2


@pytest.mark.django_db
def test_dense_embeddings_are_stored_once_and_reused(kb):
    calls: list[int] = []

    def counting(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return _bag_of_words(texts)

    retriever = HybridRetriever(knowledge_base_id=kb.pk, encode=counting, identity="bow-counting", alpha=0.5)
    retriever.retrieve("asthma inhaler", k=1)
    retriever.retrieve("bone cast", k=1)
    assert calls[0] == kb.passages.count()  # passages embedded once, then one encode per query
    assert calls[1:] == [1, 1]
    kb.refresh_from_db()
    assert kb.embedding_model == "bow-counting"
    assert not kb.passages.filter(embedding__isnull=True).exists()


@pytest.mark.django_db
def test_alpha_zero_ranks_by_bm25_alone_and_ignores_passages_without_query_terms(kb):
    retriever = HybridRetriever(knowledge_base_id=kb.pk, encode=_bag_of_words, identity="bow", alpha=0.0)
    ranked = retriever.rank("cast")
    assert ranked[0][1] == pytest.approx(1 / 61)
    # Passages sharing no term with the query get nothing from BM25 and, at alpha 0, nothing at all.
    assert all(score == 0.0 for _, score in ranked[1:])


@pytest.mark.django_db
def test_an_upload_invalidates_the_cached_index(kb, researcher):
    retriever = HybridRetriever(knowledge_base_id=kb.pk, encode=_bag_of_words, identity="bow", alpha=0.5)
    assert retriever.retrieve("asthma", k=1)[0].document_id == "asthma"
    services.knowledge_base_add_documents(
        knowledge_base=kb,
        filename="more.jsonl",
        content=b'{"id": "asthma-2", "text": "asthma asthma asthma inhaler inhaler lungs"}',
        actor=researcher,
    )
    assert retriever.retrieve("asthma", k=1)[0].document_id == "asthma-2"
