"""A fast path in front of annotation.segmentation.split_sentences, with identical results.

pysbd costs about a millisecond per short paragraph, which dominates a large import. Most answers
are plain prose whose sentence boundaries are unambiguous: every ``.``, ``!`` or ``?`` ends a
lower-case word that is no abbreviation and is followed by one space and a capital letter. For text
made only of such sentences pysbd's rules have nothing to decide, so the boundaries are computed
directly; anything else (digits next to a dot, abbreviations, quotes, brackets, new lines, lists,
repeated punctuation, unusual characters) goes to the full segmenter. One-line text without
quotes, brackets or list markers is first cut at such unambiguous boundaries, and only the pieces
that need it go to pysbd, so one "e.g." does not send a whole answer to the slow path. Text on
several lines without list markers is segmented line by line when every line is such plain prose.
tests/annotation/test_segmentation.py checks that the paths give the same spans as pysbd alone on
generated clinical-style text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from annotation.segmentation import _NON_TERMINAL, Span
from annotation.segmentation import split_sentences as split_sentences_full

# Letters, digits, single spaces and in-sentence punctuation; an apostrophe only inside a word.
_PLAIN = re.compile(r"[A-Za-z0-9,;:\- ]*(?:[A-Za-z]'[A-Za-z][A-Za-z0-9,;:\- ]*)*")
_TERMINAL = re.compile(r"[.!?]")


@lru_cache(maxsize=1)
def _abbreviations() -> frozenset[str]:
    from pysbd.lang.english import English

    abbreviation = English.Abbreviation
    words = set(abbreviation.ABBREVIATIONS) | set(abbreviation.PREPOSITIVE_ABBREVIATIONS)
    words |= set(abbreviation.NUMBER_ABBREVIATIONS)
    words |= {w.rstrip(".,") for w in _NON_TERMINAL}
    return frozenset(w.lower() for w in words)


# One sentence of such prose from a given position: its body, then its terminal mark. The body holds no
# terminal mark, so a match ends at the first one after that position.
_PLAIN_SENTENCE = re.compile(_PLAIN.pattern + r"[.!?]")
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _word_start(text: str, end: int) -> int:
    """Where the run of ASCII letters that ends at ``end`` starts (``end`` itself when there is none)."""
    start = end
    while start and text[start - 1] in _LETTERS:
        start -= 1
    return start


def _fast_spans(text: str) -> list[Span] | None:
    """The spans when ``text`` is unambiguous plain prose, else None."""
    if not text or text[0] == " " or "  " in text:
        return None
    abbreviations = _abbreviations()
    match_sentence = _PLAIN_SENTENCE.match
    spans: list[Span] = []
    start = 0
    n = len(text)
    while start < n:
        match = match_sentence(text, start)
        if match is None:
            return None  # something other than plain prose, or a last sentence without a terminal mark
        end = match.end()
        # The body ends with a lower-case word of two or more letters that is no abbreviation.
        token = text[max(start, _word_start(text, end - 1)) : end - 1]
        if len(token) < 2 or not token.islower() or token in abbreviations:
            return None
        if end < n:
            # Exactly one space, then a capital letter that is not a lone initial ("A. Smith").
            if end + 2 > n or text[end] != " " or not ("A" <= text[end + 1] <= "Z"):
                return None
            if end + 2 < n and text[end + 2] in ".!? ":
                return None
        spans.append(Span(text=text[start:end], start=start, end=end))
        start = end + 1
    return spans


# Text the piecewise path accepts: one line, no quotes or brackets (pysbd's rules for those look
# across sentence boundaries) and no list markers ("1." "a)" "iv."), which pysbd recognises by
# looking at the whole text.
_PIECEWISE_TEXT = re.compile(r"[A-Za-z0-9,;:\-'./%!? ]+")
_LIST_MARKER = re.compile(r"(?:^|\s)(?:\d{1,3}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)](?=\s|$)")


def _safe_cuts(text: str) -> list[int]:
    """Positions after a ``.``/``!``/``?`` where every segmenter must end a sentence: the word before
    is a whole lower-case word of two or more letters and no abbreviation, and one space and a
    capitalised word follow."""
    abbreviations = _abbreviations()
    cuts: list[int] = []
    n = len(text)
    for match in _TERMINAL.finditer(text):
        end = match.end()
        if end + 2 >= n or text[end] != " " or not ("A" <= text[end + 1] <= "Z") or not text[end + 2].islower():
            continue
        word_start = _word_start(text, end - 1)
        if word_start > 0 and text[word_start - 1] != " ":
            continue
        token = text[word_start : end - 1]
        if len(token) < 2 or not token.islower() or token in abbreviations:
            continue
        cuts.append(end)
    return cuts


def _piecewise_spans(text: str) -> list[Span] | None:
    """Split at the safe cuts, then each piece by the fast path or, failing that, by pysbd."""
    if not text or text[0] == " " or text[-1] == " " or "  " in text:
        return None
    if _PIECEWISE_TEXT.fullmatch(text) is None or _LIST_MARKER.search(text):
        return None
    spans: list[Span] = []
    start = 0
    for cut in [*_safe_cuts(text), len(text)]:
        piece = text[start:cut]
        piece_spans = _fast_spans(piece)
        if piece_spans is None:
            piece_spans = split_sentences_full(piece)
        spans.extend(Span(text=s.text, start=s.start + start, end=s.end + start) for s in piece_spans)
        start = cut + 1
    return spans


_LINE = re.compile(r"[^\n]+")


def _one_line(text: str) -> list[Span]:
    spans = _fast_spans(text)
    if spans is None:
        spans = _piecewise_spans(text)
    return spans if spans is not None else split_sentences_full(text)


def split_sentences(text: str) -> list[Span]:
    if "\n" not in text:
        return _one_line(text)
    if _LIST_MARKER.search(text):
        # pysbd numbers list items by looking at every line together.
        return split_sentences_full(text)
    # A line of unambiguous prose ends its last sentence at the line break, so lines that the fast path
    # reads alone are segmented on their own. A line that needs pysbd is not: pysbd's reading of a line's
    # end depends on what follows it ("etc. I" then a new line is one sentence, alone it is two), so then
    # the whole text goes to the full segmenter.
    spans: list[Span] = []
    for line in _LINE.finditer(text):
        offset = line.start()
        line_spans = _fast_spans(line.group(0))
        if line_spans is None:
            return split_sentences_full(text)
        spans.extend(Span(text=s.text, start=s.start + offset, end=s.end + offset) for s in line_spans)
    return spans
