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

Each backend module also registers its ``BackendDescriptor`` (``scoring.backends.base``): its queue and
default batch size, the settings it reads, the options a run may give it with their bounds, whether it can
run here without loading a model, and how to build it. ``BACKENDS`` holds them by name; a new backend is one
module here that registers its descriptor, imported below.

What each option means and defaults to is in its backend module's docstring; the rules a run's options must
follow are its descriptor's ``options``; docs/guide/run-scores.md tabulates every backend.

Transient failures (HTTP 429/5xx, timeouts) raise ``scoring.metrics.TransientBackendError`` after the
backend's own bounded retries; malformed answers raise ``scoring.metrics.BackendResponseError``.
"""

from __future__ import annotations

from typing import Any

# Importing each backend module registers its descriptor; the modules load their model libraries (torch,
# transformers, sentence-transformers, sklearn) only when a backend is built, so this costs no model load.
from scoring.backends import embedding, learned, lexical, llm, nli, none  # noqa: F401 - registration
from scoring.backends.base import (
    BACKENDS,
    Availability,
    Backend,
    BackendCapabilityError,
    BackendDescriptor,
    Judgement,
    Option,
)
from scoring.metrics.base import BackendUnavailable

BACKEND_NAMES = tuple(BACKENDS)

__all__ = [
    "BACKENDS",
    "BACKEND_NAMES",
    "Availability",
    "Backend",
    "BackendCapabilityError",
    "BackendDescriptor",
    "BackendUnavailable",
    "Judgement",
    "Option",
    "descriptor_of",
    "get_backend",
]


def descriptor_of(name: str) -> BackendDescriptor:
    """The registered backend ``name``; ``BackendUnavailable`` naming the known ones otherwise."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise BackendUnavailable(f"unknown backend {name!r}; known: {', '.join(BACKEND_NAMES)}") from None


def get_backend(name: str, **options: Any) -> Backend:
    """The backend ``name`` built for ``options`` (its model loaded once per process), or ``BackendUnavailable``
    with the reason; never another backend in its place."""
    return descriptor_of(name).build(**options)
