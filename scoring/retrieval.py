"""Knowledge-base passages and hybrid retrieval (PubHealthBench RAG; docs/architecture.md).

Documents are cut into passages of ``size`` words that overlap by ``overlap`` words. Two rankings of
the passages are fused by weighted reciprocal-rank fusion::

    score(d) = α / (c + rank_dense(d)) + (1 − α) / (c + rank_sparse(d)),   c = 60, ranks from 1

The dense ranking orders passages by cosine similarity of their embeddings to the query's; the sparse
ranking by BM25 (the ``bm25s`` package). A passage missing from one ranking (BM25 gives it no score
because it shares no term with the query, or it lies beyond ``depth``) gets no share from that ranking,
rather than an invented rank.

``chunk_words``, ``parse_documents`` and ``rrf_fuse`` are pure. ``HybridRetriever`` reads a knowledge
base's passages once per process and keeps its indexes cached by (knowledge base, version, passage
count), so a worker rebuilds them only after an upload.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from django.db import transaction

from concord import parsers
from scoring.metrics import ChunkInput
from scoring.models import KnowledgeBase, Passage

RRF_C = 60
K = TypeVar("K", bound=Hashable)
Encoder = Callable[[list[str]], Any]


class DocumentError(ValueError):
    """An uploaded document file that cannot be read; the message names the line."""


def chunk_words(text: str, *, size: int, overlap: int) -> list[str]:
    """Passages of ``size`` whitespace-separated words, each starting ``size - overlap`` words after the
    previous one. The last passage may be shorter; no passage is a tail already inside its predecessor."""
    if size < 1:
        raise ValueError("passage size must be at least 1 word")
    if not 0 <= overlap < size:
        raise ValueError("overlap must be at least 0 and smaller than the passage size")
    words = text.split()
    if not words:
        return []
    step = size - overlap
    passages = []
    start = 0
    while True:
        passages.append(" ".join(words[start : start + size]))
        if start + size >= len(words):
            break
        start += step
    return passages


def parse_documents(content: str, *, filename: str) -> list[tuple[str, str]]:
    """(document id, text) pairs from an upload.

    A ``.jsonl`` file holds one object per line with ``text`` (required) and ``id`` (optional: the line
    number otherwise); any other file is one plain-text document named after the file.
    """
    if not filename.lower().endswith(".jsonl"):
        if not content.strip():
            raise DocumentError(f"{filename}: the document is empty")
        return [(filename, content)]
    documents: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = parsers.loads(line, strict=False)
        except ValueError as exc:  # not JSON, nested too deep, a number past int()'s limit
            raise DocumentError(f"line {number}: malformed JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(row, dict):
            raise DocumentError(f"line {number}: expected an object with a 'text' field")
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DocumentError(f"line {number}: field 'text' must be a non-empty string")
        doc_id = row.get("id", f"line-{number}")
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or str(doc_id).strip() == "":
            raise DocumentError(f"line {number}: field 'id' must be a non-empty string or integer")
        doc_id = str(doc_id).strip()
        if len(doc_id) > 200:
            raise DocumentError(f"line {number}: field 'id' is longer than 200 characters")
        if doc_id in seen:
            raise DocumentError(f"line {number}: document id {doc_id!r} appears twice in the file")
        seen.add(doc_id)
        documents.append((doc_id, text))
    if not documents:
        raise DocumentError(f"{filename}: no documents in the file")
    return documents


def rrf_fuse(dense: Sequence[K], sparse: Sequence[K], *, alpha: float, c: int = RRF_C) -> list[tuple[K, float]]:
    """Weighted reciprocal-rank fusion of two rankings (best first), highest fused score first.

    Ties keep the order of the better dense rank, then the better sparse rank, so the result is
    deterministic.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    dense_rank = {key: i for i, key in enumerate(dense, start=1)}
    sparse_rank = {key: i for i, key in enumerate(sparse, start=1)}
    scores: dict[K, float] = {}
    for key, rank in dense_rank.items():
        scores[key] = scores.get(key, 0.0) + alpha / (c + rank)
    for key, rank in sparse_rank.items():
        scores[key] = scores.get(key, 0.0) + (1.0 - alpha) / (c + rank)
    missing = len(dense) + len(sparse) + 1

    def order(key: K) -> tuple[float, int, int]:
        return (-scores[key], dense_rank.get(key, missing), sparse_rank.get(key, missing))

    return [(key, scores[key]) for key in sorted(scores, key=order)]


def dense_ranking(matrix: np.ndarray, query: np.ndarray, depth: int) -> list[int]:
    """Row indices of ``matrix`` by cosine similarity to ``query``, best first (rows are unit vectors)."""
    if matrix.shape[0] == 0:
        return []
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    sims = matrix @ (q / norm if norm else q)
    # A stable sort on the negated similarities keeps ties in passage order.
    return [int(i) for i in np.argsort(-sims, kind="stable")[:depth]]


def sparse_ranking(bm25_scores: np.ndarray, depth: int) -> list[int]:
    """Indices with a positive BM25 score, best first; passages sharing no term with the query are unranked."""
    order = np.argsort(-bm25_scores, kind="stable")
    return [int(i) for i in order[:depth] if bm25_scores[i] > 0]


def _unit_rows(vectors: Any) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


@dataclass
class _Index:
    passage_ids: list[int]
    texts: list[str]
    document_ids: list[str]
    bm25: Any
    dense: np.ndarray | None = None
    dense_identity: str = ""


_CACHE: dict[tuple[int, str, int, int], _Index] = {}
_CACHE_LOCK = threading.Lock()


def _tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s  # lazy: loaded only where a knowledge base is searched

    return bm25s.tokenize(texts, return_ids=False, show_progress=False)


def _load_index(knowledge_base_id: int) -> _Index:
    import bm25s  # lazy: loaded only where a knowledge base is searched

    kb = KnowledgeBase.objects.get(pk=knowledge_base_id)
    count = Passage.objects.filter(knowledge_base=kb).count()
    # created_at guards against a recreated knowledge base that reuses a deleted one's id.
    key = (kb.pk, kb.created_at.isoformat(), kb.version, count)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
    rows = list(Passage.objects.filter(knowledge_base=kb).order_by("id").values_list("id", "text", "document_id"))
    texts = [r[1] for r in rows]
    bm25 = bm25s.BM25()
    if texts:
        bm25.index(_tokenize(texts), show_progress=False)
    index = _Index(passage_ids=[r[0] for r in rows], texts=texts, document_ids=[r[2] for r in rows], bm25=bm25)
    with _CACHE_LOCK:
        # Older versions of the same knowledge base are never asked for again in this process.
        for stale in [k for k in _CACHE if k[0] == kb.pk]:
            del _CACHE[stale]
        _CACHE[key] = index
    return index


def passage_embeddings_ensure(*, knowledge_base_id: int, encode: Encoder, identity: str) -> int:
    """Embed the passages that have no embedding yet (or were embedded by another model) and store them.

    Returns how many passages were embedded. Embeddings are float32, little-endian, unit length.
    """
    kb = KnowledgeBase.objects.get(pk=knowledge_base_id)
    passages = Passage.objects.filter(knowledge_base=kb)
    if kb.embedding_model != identity:
        todo = list(passages.order_by("id"))
    else:
        todo = list(passages.filter(embedding__isnull=True).order_by("id"))
    if not todo:
        return 0
    vectors = _unit_rows(encode([p.text for p in todo])).astype("<f4")
    for passage, vector in zip(todo, vectors, strict=True):
        passage.embedding = vector.tobytes()
    with transaction.atomic():
        Passage.objects.bulk_update(todo, ["embedding"], batch_size=500)
        KnowledgeBase.objects.filter(pk=kb.pk).update(embedding_model=identity)
    return len(todo)


class HybridRetriever:
    """``scoring.metrics.Retriever`` over one knowledge base: dense (``encode``) + BM25, fused by RRF."""

    def __init__(
        self, *, knowledge_base_id: int, encode: Encoder, identity: str, alpha: float = 0.5, depth: int = 100
    ) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
        self.knowledge_base_id = knowledge_base_id
        self.encode = encode
        self.identity = identity
        self.alpha = alpha
        self.depth = depth

    def _dense(self, index: _Index) -> np.ndarray:
        if index.dense is not None and index.dense_identity == self.identity:
            return index.dense
        passage_embeddings_ensure(knowledge_base_id=self.knowledge_base_id, encode=self.encode, identity=self.identity)
        stored = dict(Passage.objects.filter(pk__in=index.passage_ids).values_list("id", "embedding"))
        matrix = np.stack([np.frombuffer(bytes(stored[pid]), dtype="<f4") for pid in index.passage_ids])
        index.dense, index.dense_identity = matrix, self.identity
        return matrix

    def rank(self, query: str) -> list[tuple[int, float]]:
        """(position in the index, fused score) for every passage either ranking retrieved."""
        index = _load_index(self.knowledge_base_id)
        if not index.passage_ids:
            return []
        matrix = self._dense(index)
        query_vector = _unit_rows(self.encode([query]))[0]
        dense = dense_ranking(matrix, query_vector, self.depth)
        query_tokens = _tokenize([query])[0]
        sparse = sparse_ranking(index.bm25.get_scores(query_tokens), self.depth) if query_tokens else []
        return rrf_fuse(dense, sparse, alpha=self.alpha)

    def retrieve(self, query: str, k: int) -> list[ChunkInput]:
        index = _load_index(self.knowledge_base_id)
        fused = self.rank(query)[:k]
        return [
            ChunkInput(rank=rank, text=index.texts[pos], document_id=index.document_ids[pos])
            for rank, (pos, _score) in enumerate(fused, start=1)
        ]
