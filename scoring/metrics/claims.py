"""Clause-level claim splitting without a model: a rule set over the words of one sentence.

ICAT counts atomic claims; without an LLM to extract them, a compound sentence ("Metformin lowers blood sugar
and causes liver failure") would be one claim, grounded or not as a whole. ``split_claims`` splits a sentence
where it asserts more than one thing:

- at ``;`` (a following "however," / "but" / "and" / "so" is dropped);
- at a coordinator (", and", ", but", ", yet", ", so", ", while", ", whereas", and "and" / "but" without a
  comma) that joins two clauses, each with its own verb: "A is X, but B is Y" → "A is X", "B is Y";
- at "and" / "but" joining predicates that share a subject, which is carried over: "X lowers A and raises B"
  → "X lowers A", "X raises B"; a modal is carried with it ("can start … and get better" → "… can get
  better"); predicates listed with commas before the "and" are split too ("X slows A, lowers B and reduces
  C"); "but" with no verb after it repeats the copula ("X is under review but still not approved" → "X is
  still not approved");
- at ", which" (a non-restrictive relative clause asserts something of its own): its subject is the
  determiner phrase just before the comma ("the retina, which is …" → "the retina is …"), or "This" when the
  clause comments on the whole preceding clause;
- at "because" (the two assertions; the causal link itself is not a separate claim).

It does not split lists of nouns or adjectives ("headache, nausea and insomnia", "harmless and temporary"),
restrictive relatives ("an azapirone which is …"), conditions ("Do not drive if …"), or anything inside
parentheses or quotes. Without a part-of-speech tagger, "verb" means: an auxiliary or modal, a word of the
clinical verb list below in one of its forms, or (for finding a clause's verb only) a word ending in "-ed".
Pronouns are not resolved ("it treats bacterial infections" stays as written).

Measured on the hand-labelled set ``tests/scoring/data/clause_claims.jsonl`` (65 clinical sentences, 30 of
them K-QA answers) by ``tests/scoring/test_claims_split.py``.
"""

from __future__ import annotations

import re


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


AUXILIARIES = _set(
    "is are was were be been am do does did has have had isn't aren't doesn't don't didn't wasn't weren't"
)
MODALS = _set("can could may might must should will would shall cannot can't won't shouldn't")
ADVERBS = _set(
    "also often usually typically frequently commonly rarely sometimes generally later still then always "
    "never not only mostly mainly quickly slowly gradually"
)
DETERMINERS = _set("the a an this these that those its their your his her our")
PREPOSITIONS = _set(
    "of in on at by for with from to into onto over under about after before during through without within "
    "between among against than as like per via"
)
INTRODUCTORY = _set("in like for during as after before at on with without")

# Base forms of verbs common in clinical answers; -s / -es / -ed / -d forms are derived.
_BASE_VERBS = (
    "absorb affect appear apply avoid become begin block boost break breathe bring build calm cause change check "
    "clear come contain continue control cover cure damage decrease delay depend develop die disappear drink "
    "drop ease eat enhance exacerbate fade feel fight find follow get give go grow happen harm heal help "
    "improve include increase irritate keep kill last lead leave lessen limit lower make manage mean "
    "need neutralise neutralize occur offer present prevent produce protect provide raise reach reduce "
    "relax relieve remain remove replace require resolve rest result return rinse rise run see seem "
    "settle show slow spread start stay stimulate stop suppress swell take tend thin treat trigger turn "
    "use vary weaken work worsen")
_IRREGULAR = (
    "made gave given took taken came become began begun brought built broke broken drank felt found got "
    "gotten grew grown kept led left meant ran saw seen shown spread went gone thinned rose risen ate eaten")


def _forms(base: str) -> set[str]:
    out = {base}
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        out.add(base + "es")
    elif base.endswith("y") and base[-2] not in "aeiou":
        out.add(base[:-1] + "ies")
    else:
        out.add(base + "s")
    if base.endswith("e"):
        out.add(base + "d")
    elif base.endswith("y") and base[-2] not in "aeiou":
        out.add(base[:-1] + "ied")
    else:
        out.add(base + "ed")
    return out


BASE_VERBS = _set(_BASE_VERBS)
VERBS = frozenset({f for b in BASE_VERBS for f in _forms(b)} | _set(_IRREGULAR))
_NOT_ED_VERBS = _set("need bed red seed speed feed shed blood")

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:\.\d+)?")
_CANDIDATE = re.compile(
    r"(?P<semi>\s*;\s*(?:(?:however|but|and|so)\b,?\s*)?)"
    r"|(?P<which>,\s*which\s+)"
    r"|(?P<because>,?\s+because\s+)"
    r"|(?P<coord>(?P<comma>,)?\s+(?P<conj>and|but|yet|so|while|whereas)\s+)",
    re.IGNORECASE,
)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _is_verb(word: str, *, loose: bool = False) -> bool:
    if word in AUXILIARIES or word in MODALS or word in VERBS:
        return True
    return loose and word.endswith("ed") and len(word) > 4 and word not in _NOT_ED_VERBS


def _has_verb(text: str) -> bool:
    return any(_is_verb(w, loose=True) for w in _words(text))


def _protected(text: str, position: int) -> bool:
    """Inside parentheses or double quotes at ``position``."""
    before = text[:position]
    return before.count("(") > before.count(")") or (before.count('"') % 2 == 1)


def _predicate_start(text: str) -> str | None:
    """The verb a bare predicate starts with (after adverbs), or None when ``text`` does not start with one."""
    for word in _words(text)[:4]:
        if word in ADVERBS:
            continue
        return word if _is_verb(word) else None
    return None


def _independent_clause(text: str) -> bool:
    """Starts with a subject (not a verb, adverb or preposition) followed within six words, before any comma,
    by a verb."""
    words = _words(text.split(",")[0])
    if not words or _is_verb(words[0]) or words[0] in ADVERBS or words[0] in PREPOSITIONS:
        return False
    return any(_is_verb(w, loose=True) for w in words[1:7])


def _subject_and_modal(clause: str) -> tuple[str, str, str]:
    """(subject, modal or "", first auxiliary or "") of a clause: the words before its first verb, without an
    introductory prepositional phrase ("In any case – pain …" → "pain")."""
    matches = list(_WORD.finditer(clause))
    words = [m.group().lower() for m in matches]
    aux_at = next((i for i, w in enumerate(words) if w in AUXILIARIES or w in MODALS), None)
    verb_at = next((i for i, w in enumerate(words) if w in VERBS), None)
    at = aux_at if aux_at is not None and (verb_at is None or aux_at <= verb_at) else verb_at
    if at is None or at == 0:
        return "", "", ""
    subject = clause[: matches[at].start()].strip()
    for separator in (" – ", " — ", ", "):
        head, sep, tail = subject.rpartition(separator)
        if sep and head and _words(head) and _words(head)[0] in INTRODUCTORY and "(" not in tail:
            subject = tail.strip()
            break
    modal = words[at] if words[at] in MODALS else ""
    aux = words[at] if words[at] in AUXILIARIES else ""
    return subject, matches[at].group() if modal else "", matches[at].group() if aux else ""


def _antecedent(left: str) -> str:
    """The determiner phrase that ends ``left`` (at most five words back), else "This"."""
    matches = list(_WORD.finditer(left))
    for back in range(1, min(6, len(matches)) + 1):
        word = matches[-back].group().lower()
        if word in DETERMINERS:
            return left[matches[-back].start():].strip()
        if word in PREPOSITIONS or _is_verb(word, loose=True):
            break
    return "This"


def _tidy(text: str) -> str:
    return text.strip().strip(",;:").strip()


def _split(text: str) -> list[str]:
    text = _tidy(text)
    for m in _CANDIDATE.finditer(text):
        if _protected(text, m.start()):
            continue
        left, right = _tidy(text[: m.start()]), _tidy(text[m.end():])
        if not left or not right:
            continue
        if m.group("semi") is not None:
            return [*_split(left), *_split(right)]
        if m.group("which") is not None:
            if _has_verb(left):
                return [*_split(left), *_split(f"{_antecedent(left)} {right}")]
            continue
        if m.group("because") is not None:
            if _has_verb(left) and _has_verb(right):
                return [*_split(left), *_split(right)]
            continue
        conj = m.group("conj").lower()
        if not _has_verb(left):
            continue
        left_words = _words(left)
        if _independent_clause(right) and (m.group("comma") or conj in ("and", "but", "yet")):
            return [*_split(left), *_split(right)]
        if conj not in ("and", "but", "yet"):
            if m.group("comma") and conj == "so" and _words(right)[0] in BASE_VERBS:
                return [*_split(left), *_split(right)]  # ", so take it …": an instruction of its own
            continue
        verb = _predicate_start(right)
        if verb is not None and not (left_words and left_words[-1] in BASE_VERBS):
            # Predicates sharing a subject; earlier comma-separated predicates ("slows A, lowers B and …").
            parts = [p.strip() for p in left.split(", ")]
            first_predicate = len(parts)
            while first_predicate > 1 and _predicate_start(parts[first_predicate - 1]) is not None:
                first_predicate -= 1
            head = ", ".join(parts[:first_predicate])
            subject, modal, _ = _subject_and_modal(head)
            carry = subject
            if modal and verb in BASE_VERBS:
                carry = f"{subject} {modal}".strip()
            predicates = [*parts[first_predicate:], right]
            return [*_split(head), *(c for p in predicates for c in _split(f"{carry} {p}".strip()))]
        if verb is None and conj == "but" and not any(_is_verb(w) for w in _words(right)):
            subject, _, aux = _subject_and_modal(left)
            if subject and aux:
                return [*_split(left), *_split(f"{subject} {aux} {right}")]
    return [text]


def split_claims(sentence: str) -> list[str]:
    """The atomic claims of one sentence, in order, in its own words (no final full stop)."""
    stripped = sentence.strip()
    while stripped and stripped[-1] in ".!":
        stripped = stripped[:-1].rstrip()
    if not stripped:
        return []
    return [c for c in _split(stripped) if _words(c)]
