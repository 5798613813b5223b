"""Build the contradiction test set from the K-QA and BEGIN copies under data/demo/ (deterministic).

    .venv/bin/python bench/data/build_contradiction_set.py [--out tests/scoring/data/contradiction_pairs.jsonl]

Every record is a (claim, evidence) pair with the expected label ``contradicted`` or ``supported``, the kind
it exercises (negation, number, dose, frequency, unit, drug, body_part; ``natural`` for pairs whose label the
dataset's own annotators gave), where its text comes from (file, line or row, field) and the rewrite applied.

* Contradictions: one sentence of a K-QA physician answer (``Free_form_answer``), a K-QA ``Must_have`` /
  ``Nice_to_have`` statement, or a BEGIN CMU-DoG knowledge sentence, with exactly one slot changed (a negation
  added or removed; a number, dose, frequency, unit, drug or body part replaced). The evidence is the
  unchanged passage the sentence comes from (the whole answer, the statement, or the BEGIN knowledge), so a
  backend has to find the matching sentence itself. K-QA has few doses and frequencies (34 and 42 sentences),
  so those sentences give two rewrites each (the second marked ``variant 2``).
* Supported paraphrases of the same kinds: the same sources with a meaning-preserving rewrite that keeps the
  slot (contraction ↔ expansion of the negation, digits ↔ words, an equal quantity in another unit, an
  equivalent frequency, a brand ↔ generic drug name, or a synonym of a word outside the slot); a dose
  sentence's second rewrite states the same quantity in the neighbouring unit (500 mg → 500000 mcg).
* ``natural``: K-QA ``NLI_medical_annotator.csv`` rows whose physicians' majority label is Entailment
  (supported) or Contradiction (contradicted), claim against the LLM answer; BEGIN CMU-DoG responses labelled
  "Fully attributable" to their knowledge (supported).

The lexicons of ``scoring.metrics.contradiction`` decide which sentences carry a slot, so the rewritten kinds
measure what those lexicons catch on real sentences, not how far they generalise; ``natural`` rows do not
depend on them.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotation.segmentation import split_sentences  # noqa: E402
from scoring.metrics import contradiction as C  # noqa: E402
from scoring.metrics import quantities as Q  # noqa: E402
from scoring.metrics.text import tokens  # noqa: E402

KQA = ROOT / "data/demo/kqa/questions_w_answers.jsonl"
KQA_NLI = ROOT / "data/demo/kqa/NLI_medical_annotator.csv"
BEGIN = ROOT / "data/demo/begin_cmudog/begin_dev_cmu.tsv"
PER_KIND = 70

NUM_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
SYNONYMS = {
    "doctor": "physician", "physician": "doctor", "medication": "medicine", "medicine": "medication",
    "common": "frequent", "start": "begin", "begin": "start", "big": "large", "large": "big", "film": "movie",
    "movie": "film", "many": "numerous", "often": "frequently", "usually": "typically", "typically": "usually",
    "important": "essential", "treatment": "therapy", "therapy": "treatment", "reduce": "lower",
    "people": "individuals", "children": "kids", "kids": "children", "quickly": "rapidly", "help": "aid",
    "however": "nevertheless", "also": "additionally", "symptoms": "signs", "risk": "chance", "seek": "get",
    "consult": "see", "recommended": "advised", "advised": "recommended", "may": "might", "might": "may",
    "can": "may", "severe": "serious", "serious": "severe", "mild": "slight", "worsen": "get worse",
    "likely": "probable", "great": "excellent", "good": "fine", "funny": "amusing", "famous": "well-known",
    "character": "role", "plays": "portrays", "starred": "appeared", "released": "came out", "story": "plot",
}
CONTRACT = [("do not", "don't"), ("does not", "doesn't"), ("is not", "isn't"), ("are not", "aren't"),
            ("cannot", "can't"), ("should not", "shouldn't"), ("will not", "won't"), ("did not", "didn't"),
            ("was not", "wasn't"), ("has not", "hasn't"), ("have not", "haven't"), ("could not", "couldn't"),
            ("would not", "wouldn't"), ("must not", "mustn't")]
AUX = re.compile(r"\b(is|are|was|were|can|should|will|may|could|would|must|has|have|does|do|did)\b(?! not\b)(?!n't)",
                 re.IGNORECASE)
NEG = re.compile(r"\s*\b(not|never)\b|n't\b|\bno\b\s*", re.IGNORECASE)
DRUG_SWAP = ["ibuprofen", "paracetamol", "aspirin", "metformin", "amoxicillin", "omeprazole", "sertraline",
             "prednisone", "warfarin", "codeine", "loratadine", "diazepam"]
PART_SWAP = ["eye", "ear", "knee", "elbow", "hand", "foot", "chest", "stomach", "neck", "shoulder", "skin", "liver",
             "kidney", "lung", "heart", "brain", "arm", "leg", "mouth", "nose", "hip", "ankle", "wrist", "head"]
UNIT_SWAP = {"mg": "g", "g": "mg", "mcg": "mg", "ml": "l", "milligrams": "grams", "grams": "milligrams",
             "days": "weeks", "weeks": "months", "months": "years", "years": "months", "hours": "days",
             "minutes": "hours", "day": "week", "week": "month", "month": "year", "year": "month", "hour": "day",
             "minute": "hour", "units": "mg", "tablets": "mg", "drops": "ml"}
UNIT_SPELL = {"mg": "milligrams", "g": "grams", "mcg": "micrograms", "ml": "millilitres", "hrs": "hours",
              "mins": "minutes", "kg": "kilograms"}
EQUAL_TIME = {("week", 1): "7 days", ("weeks", 2): "14 days", ("day", 1): "24 hours", ("days", 2): "48 hours",
              ("days", 3): "72 hours", ("hours", 24): "1 day", ("hours", 48): "2 days", ("days", 7): "1 week",
              ("days", 14): "2 weeks", ("months", 12): "1 year", ("year", 1): "12 months", ("hours", 72): "3 days",
              ("weeks", 4): "28 days", ("minutes", 60): "1 hour", ("hour", 1): "60 minutes", ("days", 10): "240 hours",
              ("weeks", 6): "42 days", ("weeks", 3): "21 days", ("months", 6): "half a year", ("days", 5): "120 hours",
              ("months", 3): "a quarter of a year", ("years", 2): "24 months", ("minutes", 30): "half an hour"}
FREQ_EQUAL = {"once a day": "once daily", "once daily": "once a day", "twice a day": "two times a day",
              "twice daily": "twice a day", "two times a day": "twice a day", "three times a day": "every 8 hours",
              "four times a day": "every 6 hours", "every 12 hours": "twice a day", "every 6 hours": "four times a day",
              "every 8 hours": "three times a day", "every 4 hours": "six times a day", "daily": "every day",
              "every day": "daily", "weekly": "once a week", "once a week": "weekly", "monthly": "once a month",
              "once a month": "monthly", "3 times a day": "three times a day", "2 times a day": "twice a day",
              "4 times a day": "four times a day", "every 24 hours": "once a day", "every other day": "every 48 hours",
              "per day": "a day", "a day": "per day", "each day": "every day", "every week": "weekly",
              "hourly": "every hour", "nightly": "every night", "every night": "nightly", "annually": "yearly",
              "yearly": "annually", "every year": "yearly", "once a year": "annually"}
FREQ_CHANGE = [("once a day", "twice a day"), ("once daily", "three times daily"), ("twice a day", "once a day"),
               ("twice daily", "once daily"), ("three times a day", "once a day"), ("four times a day", "twice a day"),
               ("every 12 hours", "every 4 hours"), ("every 6 hours", "every 12 hours"),
               ("every 8 hours", "every 2 hours"), ("every 4 hours", "every 8 hours"), ("every day", "every week"),
               ("daily", "weekly"), ("weekly", "daily"), ("monthly", "weekly"), ("every week", "every day"),
               ("once a week", "once a day"), ("once a month", "once a week"), ("every other day", "every day"),
               ("per day", "per week"), ("a day", "a week"), ("each day", "each week"), ("hourly", "daily"),
               ("nightly", "weekly"), ("every night", "every week"), ("annually", "monthly"), ("yearly", "monthly"),
               ("every year", "every month"), ("once a year", "once a month"), ("a week", "a day"),
               ("per week", "per day"), ("a month", "a week"), ("a year", "a month")]


def sentences(text: str) -> list[str]:
    """The passage's sentences as Concord's import segmenter (and so every backend) splits them."""
    return [span.text.strip() for span in split_sentences(text) if len(tokens(span.text)) >= 4]


def sources() -> list[dict]:
    """(text, passage, provenance) for every candidate sentence, K-QA first then BEGIN knowledge."""
    out = []
    for n, line in enumerate(KQA.read_text(encoding="utf-8").splitlines(), start=1):
        record = json.loads(line)
        answer = record["Free_form_answer"].replace("\n", " ")
        for s in sentences(answer):
            out.append({"text": s, "passage": answer, "source": f"kqa/questions_w_answers.jsonl line {n} "
                                                                  "Free_form_answer"})
        for field in ("Must_have", "Nice_to_have"):
            for i, statement in enumerate(record.get(field) or []):
                if statement and len(tokens(statement)) >= 4:
                    out.append({"text": statement, "passage": statement,
                                "source": f"kqa/questions_w_answers.jsonl line {n} {field}[{i}]"})
    with BEGIN.open(encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh, delimiter="\t"), start=2):
            knowledge = row["knowledge"]
            for s in sentences(knowledge):
                out.append({"text": s, "passage": knowledge,
                            "source": f"begin_cmudog/begin_dev_cmu.tsv line {n} knowledge"})
    return out


def _sub_once(pattern: str, repl: str, text: str) -> str | None:
    new, n = re.subn(pattern, repl, text, count=1, flags=re.IGNORECASE)
    return new if n else None


def synonym(text: str) -> str | None:
    for word in re.findall(r"[A-Za-z]+", text):
        low = word.lower()
        if low in SYNONYMS:
            return _sub_once(rf"\b{word}\b", SYNONYMS[low], text)
    return None


# --- contradictions: (rewritten claim, description) or None ---------------------------------------------

def c_negation(s: str, variant: int) -> tuple[str, str] | None:
    if C.negated(s):
        new = NEG.sub(lambda m: " " if m.group(0).strip().lower() in ("no",) else "", s, count=1)
        new = re.sub(r"\bca\b", "can", re.sub(r"\bwo\b", "will", new))
        new = re.sub(r"\s{2,}", " ", new).strip()
        return (new, "negation removed") if new != s and not C.negated(new) else None
    m = AUX.search(s)
    if not m:
        return None
    return s[: m.end()] + " not" + s[m.end():], f"'not' added after '{m.group(0)}'"


def _replace_number(s: str, variant: int, want_unit: str) -> tuple[str, str] | None:
    for m in re.finditer(r"\b(\d+(?:\.\d+)?)(\s*)([A-Za-z%]+)?", s):
        if _in_frequency(s, m.start()):
            continue
        unit = (m.group(3) or "").lower()
        dim = Q.dimension(unit) if unit in Q.UNIT_WORDS else None
        kind = "dose" if dim in Q.DOSE_DIMENSIONS else ("time" if dim else "plain")
        if kind != want_unit and not (want_unit == "number" and kind in ("plain", "time")):
            continue
        value = Fraction(m.group(1))
        if variant == 1:
            new = value * 2 if value < 1000 else value + 3
        else:
            new = value / 2 if value >= 2 and value % 2 == 0 else value + 1
        text = f"{float(new):g}"
        return s[: m.start(1)] + text + s[m.end(1):], f"{m.group(1)} -> {text}"
    return None


def _in_frequency(s: str, pos: int) -> bool:
    low = s.lower()
    for pattern in Q.FREQ_PATTERNS:
        for m in pattern.finditer(low):
            if m.start() <= pos < m.end():
                return True
    return False


def c_number(s: str, variant: int) -> tuple[str, str] | None:
    return _replace_number(s, variant, "number")


def c_dose(s: str, variant: int) -> tuple[str, str] | None:
    return _replace_number(s, variant, "dose")


def c_frequency(s: str, variant: int) -> tuple[str, str] | None:
    low = s.lower()
    changes = FREQ_CHANGE if variant == 1 else [(a, b) for a, b in FREQ_CHANGE[::-1]]
    for old, new in changes:
        m = re.search(rf"\b{re.escape(old)}\b", low)
        if m:
            out = s[: m.start()] + new + s[m.end():]
            if C.frequencies(out)[0] and C.frequencies(out)[0] != C.frequencies(s)[0]:
                return out, f"'{old}' -> '{new}'"
    m = re.search(r"\b(\d+|one|two|three|four|five|six)\s+times\b", low)
    if m:
        n = C._number(m.group(1)) or Fraction(1)
        new_n = f"{int(n) + variant}"
        return s[: m.start(1)] + new_n + s[m.end(1):], f"{m.group(1)} times -> {new_n} times"
    return None


def c_unit(s: str, variant: int) -> tuple[str, str] | None:
    for m in re.finditer(r"\b(\d+(?:\.\d+)?)\s*([A-Za-z]+)\b", s):
        unit = m.group(2).lower()
        if unit in UNIT_SWAP and not _in_frequency(s, m.start()):
            new = UNIT_SWAP[unit]
            return s[: m.start(2)] + new + s[m.end(2):], f"unit {m.group(2)} -> {new}"
    return None


def c_drug(s: str, variant: int) -> tuple[str, str] | None:
    for word in re.findall(r"[A-Za-z]+", s):
        low = word.lower()
        if low in C.DRUGS or low in C.DRUG_SYNONYMS:
            canonical = C.DRUG_SYNONYMS.get(low, low)
            if canonical in ("vitamin", "iron", "zinc", "calcium", "magnesium", "potassium", "folic", "statins",
                             "steroids", "antibiotics"):
                continue
            present = C.drugs(s)
            choice = next(d for d in DRUG_SWAP[variant:] + DRUG_SWAP if d not in present and d != canonical)
            return _sub_once(rf"\b{word}\b", choice, s) or s, f"{word} -> {choice}"
    return None


def c_body_part(s: str, variant: int) -> tuple[str, str] | None:
    for word in re.findall(r"[A-Za-z]+", s):
        low = word.lower()
        if low in C.BODY_PARTS and low not in ("back", "hair", "lens", "nail", "head", "hand", "face", "arm"):
            part = C.BODY_PARTS[low]
            present = C.body_parts(s)
            choice = next(p for p in PART_SWAP if p not in present and p != part)
            plural = low != part
            return _sub_once(rf"\b{word}\b", choice + ("s" if plural else ""), s) or s, f"{word} -> {choice}"
    for old, new in (("left", "right"), ("right", "left")):
        if re.search(rf"\b{old}\b", s) and C.body_parts(s):
            return _sub_once(rf"\b{old}\b", new, s) or s, f"{old} -> {new}"
    return None


# --- supported paraphrases that keep the slot --------------------------------------------------------------

def p_negation(s: str) -> tuple[str, str] | None:
    if not C.negated(s):
        return None
    for long, short in CONTRACT:
        for a, b in ((long, short), (short, long)):
            new = _sub_once(rf"\b{re.escape(a)}\b" if a[-1] != "'" else re.escape(a), b, s)
            if new:
                return new, f"'{a}' -> '{b}'"
    new = _sub_once(r"\b(\w+) n't\b", r"\1 not", s)  # BEGIN's tokenised "is n't"
    if new:
        return new, "n't -> not"
    syn = synonym(s)
    return (syn, "synonym outside the negation") if syn else None


def p_number(s: str) -> tuple[str, str] | None:
    for m in re.finditer(r"(?<![\d.,/])\b(\d{1,2})\b(?!\s*(?:%|[.,/]\d))", s):
        n = int(m.group(1))
        if 0 < n <= 12 and not _in_frequency(s, m.start()):
            return s[: m.start()] + NUM_WORDS[n] + s[m.end():], f"{n} -> {NUM_WORDS[n]}"
    if C.quantities(C.frequencies(s)[1]):
        syn = synonym(s)
        return (syn, "synonym outside the number") if syn else None
    return None


COUNTED = r"(tablets?|capsules?|pills?|drops?|puffs?|units?|teaspoons?|tablespoons?)"
UNIT_ABBR = {"milligrams": "mg", "milligram": "mg", "grams": "g", "gram": "g", "micrograms": "mcg",
             "microgram": "mcg", "millilitres": "ml", "milliliters": "ml", "kilograms": "kg", "kilogram": "kg"}


def p_dose(s: str) -> tuple[str, str] | None:
    counted = re.search(rf"(?<![\d.,/])\b(\d{{1,2}})\s+{COUNTED}\b", s, flags=re.IGNORECASE)
    if counted and 0 < int(counted.group(1)) <= 12:  # a counted dose: digits -> words (2 tablets -> two tablets)
        word = NUM_WORDS[int(counted.group(1))]
        return s[: counted.start(1)] + word + s[counted.end(1):], f"{counted.group(1)} -> {word}"
    words = re.search(rf"\b({'|'.join(NUM_WORDS[1:])})\s+{COUNTED}\b", s, flags=re.IGNORECASE)
    if words:  # and back: two pills -> 2 pills
        digit = str(NUM_WORDS.index(words.group(1).lower()))
        return s[: words.start(1)] + digit + s[words.end(1):], f"{words.group(1)} -> {digit}"
    spelled = re.search(rf"\b(\d+(?:\.\d+)?)\s*({'|'.join(UNIT_ABBR)})\b", s, flags=re.IGNORECASE)
    if spelled:  # 2.4 grams -> 2.4 g
        abbr = UNIT_ABBR[spelled.group(2).lower()]
        return s[: spelled.start(2)] + abbr + s[spelled.end(2):], f"{spelled.group(2)} -> {abbr}"
    for m in re.finditer(r"\b(\d+(?:\.\d+)?)\s*(mg|g|mcg|ml|kg)\b", s, flags=re.IGNORECASE):
        unit = m.group(2).lower()
        if unit == "mg" and Fraction(m.group(1)) >= 100:
            grams = f"{float(Fraction(m.group(1)) / 1000):g} g"
            return s[: m.start()] + grams + s[m.end():], f"{m.group(0)} -> {grams} (equal)"
        return s[: m.start(2)] + UNIT_SPELL[unit] + s[m.end(2):], f"{m.group(2)} -> {UNIT_SPELL[unit]}"
    return None


SCALE_EQUAL = {"mg": (1000, "mcg"), "g": (1000, "mg"), "mcg": (Fraction(1, 1000), "mg"), "ml": (1, "cc"),
               "kg": (1000, "g")}


def p_dose_rescaled(s: str) -> tuple[str, str] | None:
    """A second meaning-preserving dose rewrite: the same quantity in the neighbouring unit (500 mg ->
    500000 mcg, 1 g -> 1000 mg, 5 ml -> 5 cc), or the unit spelled out where the first rewrite rescaled."""
    pattern = rf"\b(\d+(?:\.\d+)?)\s*(mg|g|mcg|ml|kg|{'|'.join(UNIT_ABBR)})\b"
    for m in re.finditer(pattern, s, flags=re.IGNORECASE):
        unit = UNIT_ABBR.get(m.group(2).lower(), m.group(2).lower())
        if unit == "mg" and m.group(2).lower() == "mg" and Fraction(m.group(1)) >= 100:  # first gave grams
            return s[: m.start(2)] + UNIT_SPELL[unit] + s[m.end(2):], f"{m.group(2)} -> {UNIT_SPELL[unit]}"
        factor, new_unit = SCALE_EQUAL[unit]
        value = f"{float(Fraction(m.group(1)) * factor):g}"
        # The end of a range ("1-5 mg"): both ends are rescaled ("1000-5000 mcg"), or the range would change.
        start = re.search(r"(\d+(?:\.\d+)?)(\s*(?:-|–|to)\s*)$", s[: m.start()])
        if start:
            low = f"{float(Fraction(start.group(1)) * factor):g}"
            old = s[start.start(1) : m.end()]
            new = f"{low}{start.group(2)}{value} {new_unit}"
            return s[: start.start(1)] + new + s[m.end():], f"{old} -> {new} (equal)"
        return s[: m.start()] + f"{value} {new_unit}" + s[m.end():], f"{m.group(0)} -> {value} {new_unit} (equal)"
    return None


def p_frequency(s: str) -> tuple[str, str] | None:
    low = s.lower()
    for old, new in FREQ_EQUAL.items():
        m = re.search(rf"\b{re.escape(old)}\b", low)
        if m:
            out = s[: m.start()] + new + s[m.end():]
            if C.frequencies(out)[0] == C.frequencies(s)[0]:
                return out, f"'{old}' -> '{new}' (equal)"
    return None


def p_unit(s: str) -> tuple[str, str] | None:
    for m in re.finditer(r"\b(\d+)\s*([A-Za-z]+)\b", s):
        key = (m.group(2).lower(), int(m.group(1)))
        in_range = re.search(r"\d\s*(-|–|to|or)\s*$", s[: m.start()])  # "1 to 2 weeks": not one quantity
        if key in EQUAL_TIME and not _in_frequency(s, m.start()) and not in_range:
            return s[: m.start()] + EQUAL_TIME[key] + s[m.end():], f"{m.group(0)} -> {EQUAL_TIME[key]} (equal)"
    return p_dose(s) if re.search(r"\b\d+(?:\.\d+)?\s*(mg|g|mcg|ml|kg)\b", s, re.IGNORECASE) else None


def p_drug(s: str) -> tuple[str, str] | None:
    brands = {v: k for k, v in C.DRUG_SYNONYMS.items() if k != v}
    for word in re.findall(r"[A-Za-z]+", s):
        low = word.lower()
        if low in C.DRUG_SYNONYMS and C.DRUG_SYNONYMS[low] != low:
            return _sub_once(rf"\b{word}\b", C.DRUG_SYNONYMS[low], s) or s, f"{word} -> generic name"
        if low in brands:
            return _sub_once(rf"\b{word}\b", brands[low].capitalize(), s) or s, f"{word} -> brand name"
    if C.drugs(s):
        syn = synonym(s)
        return (syn, "synonym outside the drug name") if syn else None
    return None


def p_body_part(s: str) -> tuple[str, str] | None:
    if not C.body_parts(s):
        return None
    syn = synonym(s)
    return (syn, "synonym outside the body part") if syn else None


def _second_paraphrase(kind: str, s: str) -> tuple[str, str] | None:
    """A second supported rewrite of a sentence whose kind is scarce (doses, frequencies): for a dose, the
    same quantity in another unit (``p_dose_rescaled``); otherwise a synonym of a word outside the slot,
    applied on top of the first rewrite when there is one."""
    if kind == "dose":
        rescaled = p_dose_rescaled(s)
        if rescaled:
            return rescaled
    first = PARAPHRASE[kind](s)
    base = first[0] if first else s
    syn = synonym(base)
    if not syn:
        return None
    return syn, (first[1] + " and " if first else "") + f"synonym outside the {kind}"


def has_slot(kind: str, s: str) -> bool:
    q = C.quantities(C.frequencies(s)[1])
    return {
        "negation": True,
        "number": any(u is None or Q.dimension(u) == "time" for _, u, _ in q),
        "dose": any(u is not None and Q.is_dose(Q.dimension(u)) for _, u, _ in q),
        "frequency": bool(C.frequencies(s)[0]),
        "unit": any(u is not None for _, u, _ in q),
        "drug": bool(C.drugs(s)),
        "body_part": bool(C.body_parts(s)) or bool({"left", "right"} & set(tokens(s))),
    }[kind]


CONTRADICT = {"negation": c_negation, "number": c_number, "dose": c_dose, "frequency": c_frequency,
              "unit": c_unit, "drug": c_drug, "body_part": c_body_part}
PARAPHRASE = {"negation": p_negation, "number": p_number, "dose": p_dose, "frequency": p_frequency,
              "unit": p_unit, "drug": p_drug, "body_part": p_body_part}
KQA_ONLY = {"dose", "frequency", "drug"}  # BEGIN's movie knowledge has no doses; its "drugs" are "Iron Man"


def build() -> list[dict]:
    pool = sources()
    records: list[dict] = []
    for kind in CONTRADICT:  # the kinds this builder rewrites (the check also has `polarity`, not built here)
        made: dict[str, list[dict]] = defaultdict(list)
        # Interleave K-QA and BEGIN so both datasets are represented where the kind occurs in both.
        kqa = [c for c in pool if c["source"].startswith("kqa")]
        begin = [] if kind in KQA_ONLY else [c for c in pool if c["source"].startswith("begin")]
        ordered = ([c for pair in zip(kqa, begin + [None] * len(kqa), strict=False) for c in pair if c is not None]
                   if begin else kqa)
        seen: set[str] = set()
        for variant in (1, 2):
            for cand in ordered:
                s = cand["text"]
                if (s in seen and variant == 1) or not has_slot(kind, s):
                    continue
                if len(made["contradicted"]) < PER_KIND:
                    got = CONTRADICT[kind](s, variant)
                    if got and got[0] != s and (variant == 1 or s in seen):
                        made["contradicted"].append(_record(kind, "contradicted", got, cand, variant))
                if len(made["supported"]) < PER_KIND and (variant == 1 or s in seen):
                    para = PARAPHRASE[kind](s) if variant == 1 else _second_paraphrase(kind, s)
                    if para and para[0] != s:
                        made["supported"].append(_record(kind, "supported", para, cand, variant))
                seen.add(s)
            if len(made["contradicted"]) >= PER_KIND and len(made["supported"]) >= PER_KIND:
                break
        records.extend(made["contradicted"] + made["supported"])
    records.extend(natural())
    for i, r in enumerate(records):
        r["id"] = i
    return records


def _record(kind: str, label: str, got: tuple[str, str], cand: dict, variant: int) -> dict:
    transform = got[1] + (" (variant 2)" if variant == 2 else "")
    return {"kind": kind, "label": label, "claim": got[0], "evidence": cand["passage"],
            "evidence_sentence": cand["text"], "source": cand["source"], "transform": transform}


def natural() -> list[dict]:
    out = []
    with KQA_NLI.open(encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh)):
            label = {"Entailment": "supported", "Contradiction": "contradicted"}.get(row["majority_label"])
            if label:
                out.append({"kind": "natural", "label": label, "claim": row["claim"], "evidence": row["answer"],
                            "evidence_sentence": "", "source": f"kqa/NLI_medical_annotator.csv row {n} "
                            f"(majority_label {row['majority_label']})", "transform": "none"})
    with BEGIN.open(encoding="utf-8") as fh:
        for n, row in enumerate(csv.DictReader(fh, delimiter="\t"), start=2):
            if row["begin_label"] == "Fully attributable":
                out.append({"kind": "natural", "label": "supported", "claim": row["response"],
                            "evidence": row["knowledge"], "evidence_sentence": "",
                            "source": f"begin_cmudog/begin_dev_cmu.tsv line {n} (begin_label Fully attributable)",
                            "transform": "none"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "tests/scoring/data/contradiction_pairs.jsonl"))
    args = parser.parse_args()
    records = build()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        counts[r["kind"], r["label"]] += 1
    for (kind, label), n in sorted(counts.items()):
        print(f"{kind:10s} {label:13s} {n}")
    print(f"{len(records)} pairs -> {out}")


if __name__ == "__main__":
    main()
