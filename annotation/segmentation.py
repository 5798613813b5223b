"""Offline sentence segmentation, run once at import.

pysbd (rule-based, no model download) does the splitting; on top of it, a boundary is removed when
the left piece ends with an abbreviation that clinical text uses mid-sentence ("approx.", "Dr.",
"e.g.") and pysbd still split after it. Offsets index into the original text and exclude the
surrounding whitespace, so ``text[start:end] == sentence``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pysbd

# Abbreviations after which a sentence never ends in clinical prose (lower-cased, with the dot).
_NON_TERMINAL = {
    "approx.", "dr.", "drs.", "mr.", "mrs.", "ms.", "prof.", "e.g.", "i.e.", "vs.", "cf.", "etc.,", "incl.",
    "no.", "fig.", "approx", "ca.", "max.", "min.", "st.", "mt.", "resp.", "b.i.d.", "t.i.d.", "q.i.d.",
    "q.d.", "p.o.", "i.v.", "i.m.", "s.c.", "p.r.n.", "a.m.", "p.m.", "wk.", "yr.", "mo.", "hr.", "hrs.",
}
_LAST_TOKEN = re.compile(r"(\S+)\s*$")


@dataclass(frozen=True)
class Span:
    text: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def split_sentences(text: str) -> list[Span]:
    if not text or not text.strip():
        return []
    raw = [(s.start, s.end) for s in _segmenter().segment(text)]
    merged: list[list[int]] = []
    for start, end in raw:
        if merged:
            prev_text = text[merged[-1][0] : merged[-1][1]]
            match = _LAST_TOKEN.search(prev_text)
            last = match.group(1).lower() if match else ""
            # A non-terminal abbreviation followed by more text on the same line joins the next piece.
            if last in _NON_TERMINAL and "\n" not in prev_text[match.start() :]:
                merged[-1][1] = end
                continue
        merged.append([start, end])
    spans: list[Span] = []
    for start, end in merged:
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        s, e = start + lead, end - trail
        if e > s:
            spans.append(Span(text=text[s:e], start=s, end=e))
    return spans
