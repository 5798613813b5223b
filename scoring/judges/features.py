"""Features of a (text, evidence) pair or of a single text, for the trained judges.

Feature sets (``FEATURE_SETS``):

- ``embedding``: with evidence, [u·v, |u−v|, cos(u, v)] where u embeds the text and v the evidence
  sentence most similar to it (all-MiniLM-L6-v2 through the ``embedding`` backend); without evidence,
  the text's embedding u.
- ``lexical``: with evidence, against the evidence sentence with the highest unigram precision and
  against the evidence as a whole: unigram, content-word and bigram precision; the share of the
  text's numbers found in the evidence and whether any is missing; negation in the text without
  negation in the best sentence (and the reverse); log word count of text and evidence, and their
  ratio. Without evidence: log length, content-word share, whether the conversational rule set fires,
  digits, a question mark.
- ``combined``: both, plus the cosine similarity (already in ``embedding``).

Every feature is computed from the text alone, so a feature vector never sees a label.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Protocol

import numpy as np

from annotation.segmentation import split_sentences
from scoring.metrics.text import content_tokens, conversational_rule, tokens

FEATURE_SETS = ("embedding", "lexical", "combined")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NEGATIONS = frozenset({"no", "not", "never", "none", "nor", "neither", "without", "cannot", "nothing", "nobody"})


class Encoder(Protocol):
    identity: str

    def encode(self, texts: list[str]) -> np.ndarray: ...


def sentences_of(texts: list[str]) -> list[str]:
    """Sentences of the passages with the import's offline segmenter (as the backends split evidence)."""
    return [span.text for text in texts for span in split_sentences(text)]


def _precision(candidate: list[str], reference: set[str]) -> float:
    return sum(1 for t in candidate if t in reference) / len(candidate) if candidate else 0.0


def _bigrams(toks: list[str]) -> list[tuple[str, str]]:
    return list(itertools.pairwise(toks))


def _bigram_precision(candidate: list[str], reference: list[str]) -> float:
    ref = set(_bigrams(reference))
    grams = _bigrams(candidate)
    return sum(1 for g in grams if g in ref) / len(grams) if grams else 0.0


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _negated(toks: list[str]) -> bool:
    """A negation word, or a contraction ending in n't (tokenised as ``don`` ``t``)."""
    return any(t in _NEGATIONS for t in toks) or any(a.endswith("n") and b == "t" for a, b in _bigrams(toks))


def lexical_pair(text: str, evidence: str) -> list[float]:
    t_tok, t_content = tokens(text), content_tokens(text)
    candidates = sentences_of([evidence]) or [evidence]
    scored = [(_precision(t_tok, set(tokens(s))), s) for s in candidates]
    best = max(scored, key=lambda pair: pair[0])[1] if scored else ""
    feats: list[float] = []
    for ref in (best, evidence):
        r_tok = tokens(ref)
        feats += [
            _precision(t_tok, set(r_tok)),
            _precision(t_content, set(content_tokens(ref))),
            _bigram_precision(t_tok, r_tok),
        ]
    nums, ev_nums = _numbers(text), _numbers(evidence)
    feats += [
        (len(nums & ev_nums) / len(nums)) if nums else 1.0,
        1.0 if nums - ev_nums else 0.0,
    ]
    t_neg, b_neg = _negated(t_tok), _negated(tokens(best))
    feats += [1.0 if t_neg and not b_neg else 0.0, 1.0 if b_neg and not t_neg else 0.0]
    n_t, n_e = len(t_tok), len(tokens(evidence))
    feats += [math.log1p(n_t), math.log1p(n_e), n_t / (n_e + 1)]
    return feats


def lexical_single(text: str) -> list[float]:
    toks = tokens(text)
    return [
        math.log1p(len(toks)),
        len(content_tokens(text)) / len(toks) if toks else 0.0,
        1.0 if conversational_rule(text) is not None else 0.0,
        1.0 if _NUMBER.search(text) else 0.0,
        1.0 if text.strip().endswith("?") else 0.0,
    ]


def _embedding(encoder: Encoder, texts: list[str], evidence: list[str] | None) -> np.ndarray:
    u = encoder.encode(texts)
    if evidence is None:
        return np.asarray(u, dtype=float)
    v = np.zeros_like(u)
    split = [sentences_of([ev]) or [ev] for ev in evidence]
    # One encoder call for every evidence sentence of the batch.
    flat = list(dict.fromkeys(s for sents in split for s in sents))
    vecs = encoder.encode(flat) if flat else np.zeros((0, u.shape[1]))
    index = {s: i for i, s in enumerate(flat)}
    for i, sents in enumerate(split):
        rows = vecs[[index[s] for s in sents]]
        v[i] = rows[int((rows @ u[i]).argmax())]
    cos = (u * v).sum(axis=1, keepdims=True)
    return np.hstack([u * v, np.abs(u - v), cos]).astype(float)


def featurize(feature_set: str, encoder: Encoder | None, texts: list[str], evidence: list[str] | None) -> np.ndarray:
    """An (n, d) matrix of the feature set for n texts (with their evidence for pair tasks)."""
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"feature set must be one of {', '.join(FEATURE_SETS)}, got {feature_set!r}")
    if not texts:
        return np.zeros((0, 0))
    parts: list[np.ndarray] = []
    if feature_set in ("embedding", "combined"):
        if encoder is None:
            raise ValueError(f"the {feature_set} feature set needs the embedding model")
        parts.append(_embedding(encoder, texts, evidence))
    if feature_set in ("lexical", "combined"):
        rows = [lexical_pair(t, e) for t, e in zip(texts, evidence, strict=True)] if evidence is not None \
            else [lexical_single(t) for t in texts]
        parts.append(np.asarray(rows, dtype=float))
    return np.hstack(parts)


def needs_encoder(feature_set: str) -> bool:
    return feature_set in ("embedding", "combined")
