"""Sentence splitting for the backends, with the import's offline segmenter (``annotation.segmentation_fast``:
pysbd's sentences, with a fast path for plain prose that gives the same ones).

Tokenisation and the conversational rule set are pure and live in ``scoring.metrics.text``, shared
with the metrics; they are re-exported here for the backends.
"""

from __future__ import annotations

from functools import lru_cache

from annotation.segmentation_fast import split_sentences
from scoring.metrics.text import (
    CONVERSATIONAL_FILLERS,
    CONVERSATIONAL_PATTERNS,
    MIN_CONTENT_TOKENS,
    STOPWORDS,
    content_tokens,
    conversational_rule,
    tokens,
)

__all__ = [
    "CONVERSATIONAL_FILLERS",
    "CONVERSATIONAL_PATTERNS",
    "MIN_CONTENT_TOKENS",
    "STOPWORDS",
    "content_tokens",
    "conversational_rule",
    "sentences_of",
    "tokens",
]


@lru_cache(maxsize=4096)
def _split_cached(text: str) -> tuple[str, ...]:
    return tuple(span.text for span in split_sentences(text))


def sentences_of(texts: list[str]) -> list[str]:
    """Sentences of several passages, in order, using the same offline segmenter as the import."""
    out: list[str] = []
    for text in texts:
        out.extend(_split_cached(text))
    return out
