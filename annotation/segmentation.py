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
from pysbd.utils import TextSpan

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


class _Segmenter(pysbd.Segmenter):
    r"""pysbd's segmenter, with its sentence → character span step done by plain string search.

    pysbd finds each sentence in the original text with ``re.finditer(re.escape(sentence) + r"\s*")``:
    a new pattern per sentence, compiled every time since real sentences rarely repeat (a third to
    a half of pysbd's time on a short answer). ``str.find`` plus a whitespace scan gives the same spans: the
    same leftmost non-overlapping occurrences, ``\s`` being ``str.isspace`` for ``str`` patterns.
    tests/annotation/test_segmentation.py checks it against pysbd's own method.
    """

    def sentences_with_char_spans(self, sentences: list[str]) -> list[TextSpan]:
        if not all(sentences):
            # An empty pattern matches everywhere; pysbd never yields an empty sentence, but keep its reading.
            return super().sentences_with_char_spans(sentences)
        text = self.original_text
        n = len(text)
        spans: list[TextSpan] = []
        prior_end = 0
        for sent in sentences:
            position = 0
            while (start := text.find(sent, position)) >= 0:
                end = start + len(sent)
                while end < n and text[end].isspace():
                    end += 1
                if end > prior_end:
                    spans.append(TextSpan(text[start:end], start, end))
                    prior_end = end
                    break
                position = end
        return spans


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return _Segmenter(language="en", clean=False, char_span=True)


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
