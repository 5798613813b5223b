"""Mismatch detection between a claim and its best-matching evidence sentence (pure, no model).

Similarity backends cannot tell "Use the eye drops four times a day." from "Do not use the eye drops four
times a day.": the two share every content word (unigram precision 0.80, cosine 0.90). Every backend
therefore applies :func:`mismatches` to a claim and the evidence sentence that matches it best, and judges
the claim *contradicted* (verdict False, label ``contradicted``) when a mismatch is found.

Kinds of mismatch (``KINDS``), each checked only when the claim and the sentence say the same thing apart
from the slot: the F1 of their content words (slot words left out) is at least ``MIN_MATCH`` (0.5). That
cut-off was chosen on the test set's natural pairs (K-QA physicians' Entailment rows, BEGIN "Fully
attributable" responses): 0.5 keeps 5 of 212 supported natural pairs from being called contradicted
(overlap-of-the-claim ≥ 0.5 flagged 17), while catching as many rewritten contradictions.

- ``negation``: one of the two is negated and the other is not, read by medspaCy's ConText in
  ``scoring.metrics.polarity`` (triggers "not", "no", "never", "n't", "cannot", …; pseudo-triggers "not only",
  "with or without"; a scope ending at "but", "however", a clause mark, …; a negation inside "if …" compared only
  with another conditional). A negation whose scope holds a polarity term is read as that term's opposite ("not
  commonly" = rare), so "seldom" against "not commonly" or "skip it" against "do not take it" is no mismatch; the
  same term negated on one side only ("Do not use the drops" / "Use the drops") is a negation.
- ``polarity``: opposite terms about the same thing ("before" / "after meals", "raises" / "lowers blood
  pressure", "stop" / "continue", "recommended" / "contraindicated", "common" / "rare", …): the groups, their
  synonyms and their sources are in ``scoring.metrics.polarity``. A disjunction naming both poles ("with or
  without food") contradicts neither. Below ``MIN_MATCH`` this kind alone is still checked when the two match
  apart from their polarity terms (``POLARITY_MIN_MATCH``, F1 of the other content words, 0.3, tuned on the
  natural set's dev split: ``tests/scoring/data/natural_contradictions.jsonl``).
- ``frequency``: both state how often ("twice a day", "every 6 hours", "daily", "four times a day") and
  the rates per day differ.
- ``unit``: the same number with a different unit that is not an equal quantity ("5 mg" vs "5 g";
  "500 mg" vs "0.5 g" is equal and passes; "3 days" vs "3 weeks").
- ``dose``: a drug amount ("mg", "ml", "tablets", "drops", "units", …) whose number differs from the
  sentence's amount in the same unit.
- ``number``: any other number of the claim absent from the sentence while the sentence states numbers.
- ``drug``: the claim names a drug the sentence does not, and the sentence names a drug the claim does not
  (brand and generic names of the same drug are one drug, ``DRUG_SYNONYMS``), counting mentions.
- ``body_part``: likewise for body parts (singular and plural are one part; idioms such as "on the other
  hand" left out), and left against right.

A claim that merely adds a number, drug or body part the sentence does not mention is not contradicted
(that is a lack of support, which the backend judges). The lexicons are deliberately small and listed
below; the test set in ``tests/scoring/data/contradiction_pairs.jsonl`` measures what they catch, and the
natural set (``natural_contradictions.jsonl``, written independently of these lists) what the polarity check
catches (figures in ``docs/metrics/README.md``). ``NEGATORS`` and :func:`negated` are the old flat reading, kept for
the rewrite set's builder; :func:`mismatches` uses the scoped reading.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from scoring.metrics import polarity

KINDS = ("negation", "number", "dose", "frequency", "unit", "drug", "body_part", "polarity")
MIN_MATCH = 0.5
POLARITY_MIN_MATCH = 0.3

_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?|\d+(?:[.,]\d+)?%?")
NEGATORS = frozenset(["not", "no", "never", "cannot", "can't", "don't", "doesn't", "didn't", "won't", "shouldn't",
                      "isn't", "aren't", "wasn't", "weren't", "mustn't", "haven't", "hasn't", "couldn't", "wouldn't",
                      "without", "avoid", "avoided", "avoiding", "refrain", "nor", "neither", "none", "nothing"])

NUMBER_WORDS: dict[str, int | Fraction] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "hundred": 100, "half": Fraction(1, 2),
}
# unit word -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, Fraction]] = {}
for _names, _dim, _factor in (
    (("mg", "milligram", "milligrams"), "mass", Fraction(1)),
    (("g", "gram", "grams", "gm"), "mass", Fraction(1000)),
    (("kg", "kilogram", "kilograms"), "mass", Fraction(1000000)),
    (("mcg", "µg", "microgram", "micrograms", "ug"), "mass", Fraction(1, 1000)),
    (("ml", "millilitre", "millilitres", "milliliter", "milliliters", "cc"), "volume", Fraction(1)),
    (("l", "litre", "litres", "liter", "liters"), "volume", Fraction(1000)),
    (("iu", "unit", "units"), "units", Fraction(1)),
    (("tablet", "tablets", "pill", "pills", "capsule", "capsules"), "tablets", Fraction(1)),
    (("drop", "drops"), "drops", Fraction(1)),
    (("puff", "puffs"), "puffs", Fraction(1)),
    (("teaspoon", "teaspoons", "tsp"), "volume", Fraction(5)),
    (("tablespoon", "tablespoons", "tbsp"), "volume", Fraction(15)),
    (("second", "seconds"), "time", Fraction(1, 3600)),
    (("minute", "minutes", "min", "mins"), "time", Fraction(1, 60)),
    (("hour", "hours", "hr", "hrs", "h"), "time", Fraction(1)),
    (("day", "days"), "time", Fraction(24)),
    (("week", "weeks"), "time", Fraction(168)),
    (("month", "months"), "time", Fraction(730)),
    (("year", "years"), "time", Fraction(8760)),
    (("%", "percent", "per cent"), "percent", Fraction(1)),
):
    for _n in _names:
        UNITS[_n] = (_dim, _factor)
DOSE_DIMENSIONS = frozenset(["mass", "volume", "units", "tablets", "drops", "puffs"])
_PERIOD_HOURS = {"hour": 1, "day": 24, "night": 24, "week": 168, "month": 730, "year": 8760}

DRUG_SYNONYMS = {
    "tylenol": "paracetamol", "acetaminophen": "paracetamol", "panadol": "paracetamol",
    "advil": "ibuprofen", "motrin": "ibuprofen", "nurofen": "ibuprofen", "aleve": "naproxen",
    "lexapro": "escitalopram", "cipralex": "escitalopram", "prozac": "fluoxetine", "zoloft": "sertraline",
    "glucophage": "metformin", "lipitor": "atorvastatin", "zocor": "simvastatin", "crestor": "rosuvastatin",
    "coumadin": "warfarin", "eliquis": "apixaban", "xarelto": "rivaroxaban", "synthroid": "levothyroxine",
    "prilosec": "omeprazole", "nexium": "esomeprazole", "zantac": "ranitidine", "benadryl": "diphenhydramine",
    "claritin": "loratadine", "zyrtec": "cetirizine", "ventolin": "salbutamol", "albuterol": "salbutamol",
    "augmentin": "amoxicillin", "cipro": "ciprofloxacin", "valium": "diazepam", "xanax": "alprazolam",
    "ozempic": "semaglutide", "wegovy": "semaglutide", "viagra": "sildenafil", "plaquenil": "hydroxychloroquine",
    "keflex": "cephalexin", "flagyl": "metronidazole", "lasix": "furosemide", "neurontin": "gabapentin",
    "lyrica": "pregabalin", "wellbutrin": "bupropion", "adderall": "amphetamine", "ritalin": "methylphenidate",
    "accutane": "isotretinoin", "tamiflu": "oseltamivir", "aspirin": "aspirin", "asa": "aspirin",
}
DRUGS = frozenset([
    *DRUG_SYNONYMS.values(), "amoxicillin", "penicillin", "doxycycline", "azithromycin", "clarithromycin",
    "erythromycin", "prednisolone", "prednisone", "hydrocortisone", "dexamethasone", "insulin", "lisinopril",
    "ramipril", "amlodipine", "losartan", "bisoprolol", "atenolol", "propranolol", "metoprolol", "codeine",
    "morphine", "tramadol", "oxycodone", "fentanyl", "diclofenac", "citalopram", "venlafaxine", "duloxetine",
    "mirtazapine", "amitriptyline", "trazodone", "quetiapine", "olanzapine", "risperidone", "lithium",
    "lamotrigine", "levetiracetam", "valproate", "carbamazepine", "topiramate", "sumatriptan", "melatonin",
    "clopidogrel", "heparin", "digoxin", "spironolactone", "hydrochlorothiazide", "tamsulosin", "finasteride",
    "montelukast", "fluticasone", "budesonide", "latanoprost", "timolol", "chloramphenicol", "fusidic",
    "aciclovir", "acyclovir", "valacyclovir", "nitrofurantoin", "trimethoprim", "fluconazole", "clotrimazole",
    "terbinafine", "miconazole", "permethrin", "ivermectin", "mebendazole", "loperamide", "lansoprazole",
    "pantoprazole", "famotidine", "ondansetron", "metoclopramide", "domperidone", "estrogen", "progesterone",
    "testosterone", "levonorgestrel", "minoxidil", "tretinoin", "vitamin", "iron", "folic", "zinc", "magnesium",
    "calcium", "potassium", "methotrexate", "allopurinol", "colchicine", "cortisone", "antibiotics",
    "steroids", "statins",
])
BODY_PARTS: dict[str, str] = {}
for _part in (
    "eye", "ear", "nose", "mouth", "throat", "tongue", "tooth", "teeth", "lip", "jaw", "neck", "shoulder", "arm",
    "elbow", "wrist", "hand", "finger", "thumb", "chest", "breast", "back", "spine", "stomach", "abdomen", "belly",
    "hip", "leg", "thigh", "knee", "ankle", "foot", "feet", "toe", "heel", "head", "scalp", "face", "forehead",
    "cheek", "skin", "heart", "lung", "liver", "kidney", "bladder", "bowel", "colon", "brain", "bone", "muscle",
    "joint", "eyelid", "cornea", "retina", "lens", "pupil", "penis", "vagina", "uterus", "ovary", "testicle",
    "prostate", "rectum", "anus", "groin", "pelvis", "buttock", "nail", "hair", "gum", "sinus", "tonsil",
    "thyroid", "pancreas", "gallbladder", "spleen", "artery", "vein", "nerve", "calf", "shin",
):
    BODY_PARTS[_part] = _part
    BODY_PARTS[_part + "s"] = _part
BODY_PARTS.update({"teeth": "tooth", "feet": "foot", "eyes": "eye", "knees": "knee", "tooth": "tooth",
                   "foot": "foot", "lenses": "lens", "bellies": "belly", "ovaries": "ovary", "calves": "calf"})
SIDES = frozenset(["left", "right"])

_STOP = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by", "for",
        "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "this",
        "that", "these", "those", "there", "here", "i", "you", "he", "she", "we", "they", "me", "him", "her",
        "us", "them", "my", "your", "his", "our", "their", "do", "does", "did", "have", "has", "had", "will",
        "would", "shall", "should", "can", "could", "may", "might", "must", "what", "which", "who", "when",
        "where", "why", "how", "all", "any", "both", "each", "some", "such", "only", "also", "about", "into",
        "over", "under", "up", "out", "per", "every", "times", "time", "once", "twice", "daily", "weekly",
        "hourly"
    ]
)


@dataclass(frozen=True)
class Mismatch:
    kind: str  # one of KINDS
    claim: str
    evidence: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "claim": self.claim, "evidence": self.evidence}


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _number(token: str) -> Fraction | None:
    if token in NUMBER_WORDS:
        return Fraction(NUMBER_WORDS[token])
    if token[:1].isdigit():
        try:
            return Fraction(token.rstrip("%").replace(",", "."))
        except ValueError:
            return None
    return None


_N = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_COUNT = rf"(once|twice|thrice|{_N}\s+times?)"
_ADVERB_PERIOD = {"daily": "day", "nightly": "day", "weekly": "week", "monthly": "month", "hourly": "hour",
                  "yearly": "year", "annually": "year"}
_ADVERBS = "|".join(_ADVERB_PERIOD)
_ONCE = {"once": 1, "twice": 2, "thrice": 3}
_FREQ_COUNT_PERIOD = re.compile(rf"\b{_COUNT}\s+(?:a|an|per|each|every|in\s+a|at)\s+(hour|day|night|week|month|year)\b")
_FREQ_COUNT_ADVERB = re.compile(rf"\b{_COUNT}\s+({_ADVERBS})\b")
_FREQ_EVERY = re.compile(rf"\bevery\s+(other\s+|{_N}\s+)?(?:to\s+\d+\s+)?(hour|day|night|week|month|year)s?\b")
_FREQ_ADVERB = re.compile(rf"\b({_ADVERBS})\b")
_FREQ = (_FREQ_COUNT_PERIOD, _FREQ_COUNT_ADVERB, _FREQ_EVERY, _FREQ_ADVERB)


def _count(match: re.Match[str]) -> Fraction:
    word = match.group(1).split()[0]
    return Fraction(_ONCE[word]) if word in _ONCE else (_number(word) or Fraction(0))


def frequencies(text: str) -> tuple[set[Fraction], str]:
    """Rates per day of the frequency expressions in ``text``, and the text with them removed."""
    rates: set[Fraction] = set()
    rest = text.lower()
    for m in _FREQ_COUNT_PERIOD.finditer(rest):
        rates.add(_count(m) * 24 / _PERIOD_HOURS[m.group(3)])
    rest = _FREQ_COUNT_PERIOD.sub(" ", rest)
    for m in _FREQ_COUNT_ADVERB.finditer(rest):
        rates.add(_count(m) * 24 / _PERIOD_HOURS[_ADVERB_PERIOD[m.group(3)]])
    rest = _FREQ_COUNT_ADVERB.sub(" ", rest)
    for m in _FREQ_EVERY.finditer(rest):
        every = m.group(1)
        n = Fraction(2) if every and every.strip() == "other" else (_number(every.strip()) if every else Fraction(1))
        rates.add(Fraction(24) / (_PERIOD_HOURS[m.group(3)] * (n or 1)))
    rest = _FREQ_EVERY.sub(" ", rest)
    for m in _FREQ_ADVERB.finditer(rest):
        rates.add(Fraction(24, _PERIOD_HOURS[_ADVERB_PERIOD[m.group(1)]]))
    rest = _FREQ_ADVERB.sub(" ", rest)
    return rates, rest


def quantities(text: str) -> list[tuple[Fraction, str | None, str]]:
    """(value, unit or None, surface) for each number in ``text`` (frequency expressions removed first)."""
    ws = words(text)
    out: list[tuple[Fraction, str | None, str]] = []
    for i, w in enumerate(ws):
        if w == "one" and not (i + 1 < len(ws) and ws[i + 1] in UNITS):
            continue  # "one of the", "the right one": rarely a quantity worth comparing
        value = _number(w)
        if value is None:
            continue
        unit = None
        if w.endswith("%"):
            unit = "%"
        elif i + 1 < len(ws) and ws[i + 1] in UNITS:
            unit = ws[i + 1]
        out.append((value, unit, w if unit is None else f"{w} {unit}"))
    return out


def _canonical(value: Fraction, unit: str | None) -> tuple[str | None, Fraction]:
    if unit is None:
        return None, value
    dim, factor = UNITS[unit]
    return dim, value * factor


_IDIOMS = re.compile(r"\b(on the (other|one) hand|at hand|first[- ]?hand|hand in hand|back (to|home|then|in|up|down|"
                     r"and forth)|come back|came back|go back|went back|get back|look back|face to face|head of|"
                     r"ahead|heads? up|by heart|at heart)\b", re.IGNORECASE)


def drug_mentions(text: str) -> Counter[str]:
    """Drug names (brand names mapped to the generic name), with how often each is named."""
    return Counter(DRUG_SYNONYMS.get(w, w) for w in words(text) if w in DRUGS or w in DRUG_SYNONYMS)


def part_mentions(text: str) -> Counter[str]:
    """Body parts (singular), with how often each is named; idioms ("on the other hand") left out."""
    return Counter(BODY_PARTS[w] for w in words(_IDIOMS.sub(" ", text)) if w in BODY_PARTS)


def drugs(text: str) -> set[str]:
    return set(drug_mentions(text))


def body_parts(text: str) -> set[str]:
    return set(part_mentions(text))


def negated(text: str) -> bool:
    return any(w in NEGATORS or w.endswith("n't") for w in words(text))


def _content(text: str) -> set[str]:
    out = set()
    for w in words(text):
        if w in _STOP or w in NEGATORS or w.endswith("n't") or _number(w) is not None or w in UNITS:
            continue
        if w in DRUGS or w in DRUG_SYNONYMS or w in BODY_PARTS or w in SIDES:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


def overlap(claim: str, sentence: str) -> float:
    """Share of the claim's content words (slot words left out, crude plural folding) found in the sentence."""
    c = _content(claim)
    return len(c & _content(sentence)) / len(c) if c else 1.0


def mismatches(claim: str, sentence: str, *, min_match: float = MIN_MATCH) -> list[Mismatch]:
    """Every mismatch between ``claim`` and the evidence ``sentence`` (empty when they agree or are unrelated)."""
    if not claim.strip() or not sentence.strip():
        return []
    c_read, s_read = polarity.read(claim), polarity.read(sentence)
    if match_f1(claim, sentence) < min_match:
        # Below the gate only the polarity check, on its own gate: the two match apart from the polarity terms.
        if polarity.match(c_read, s_read) < POLARITY_MIN_MATCH:
            return []
        return [Mismatch("polarity", f"{o.group}: {o.claim}", o.evidence)
                for o in polarity.oppositions(c_read, s_read) if not o.by_negation]
    opposed = polarity.oppositions(c_read, s_read)
    found: list[Mismatch] = []
    if polarity.negation_differs(c_read, s_read):
        c_neg, s_neg = polarity.negated_against(c_read, s_read), polarity.negated_against(s_read, c_read)
        if c_neg == s_neg:  # the difference is in hypothetical scope ("if it does not improve")
            c_neg = polarity.negated_against(c_read, s_read, hypothetical=True)
            s_neg = polarity.negated_against(s_read, c_read, hypothetical=True)
        found.append(Mismatch("negation", "negated" if c_neg else "affirmed", "negated" if s_neg else "affirmed"))
    elif any(o.by_negation for o in opposed):
        o = next(o for o in opposed if o.by_negation)
        found.append(Mismatch("negation", o.claim, o.evidence))
    c_rates, c_rest = frequencies(claim)
    s_rates, s_rest = frequencies(sentence)
    if c_rates and s_rates and not (c_rates & s_rates):
        found.append(Mismatch("frequency", _rates(c_rates), _rates(s_rates)))
    found.extend(_quantity_mismatches(quantities(c_rest), quantities(s_rest)))
    # Mentions are compared as multisets: "paracetamol, sold as Lexapro" against "escitalopram, sold as Lexapro"
    # names escitalopram once less and paracetamol once more.
    c_drugs, s_drugs = drug_mentions(claim), drug_mentions(sentence)
    if c_drugs - s_drugs and s_drugs - c_drugs:
        found.append(Mismatch("drug", ", ".join(sorted(c_drugs - s_drugs)), ", ".join(sorted(s_drugs - c_drugs))))
    c_parts, s_parts = part_mentions(claim), part_mentions(sentence)
    c_sides, s_sides = SIDES & set(words(claim)), SIDES & set(words(sentence))
    if c_parts - s_parts and s_parts - c_parts:
        found.append(Mismatch("body_part", ", ".join(sorted(c_parts - s_parts)),
                              ", ".join(sorted(s_parts - c_parts))))
    elif c_sides and s_sides and not (c_sides & s_sides):
        found.append(Mismatch("body_part", ", ".join(sorted(c_sides)), ", ".join(sorted(s_sides))))
    found.extend(Mismatch("polarity", f"{o.group}: {o.claim}", o.evidence) for o in opposed if not o.by_negation)
    return found


def _rates(rates: set[Fraction]) -> str:
    return ", ".join(f"{float(r):g}/day" for r in sorted(rates))


def _quantity_mismatches(
    claim_q: list[tuple[Fraction, str | None, str]], sentence_q: list[tuple[Fraction, str | None, str]]
) -> list[Mismatch]:
    """Quantities compared as multisets ("HSV-2 and HSV-2" against "HSV-1 and HSV-2" names 2 once too often)."""
    if not claim_q or not sentence_q:
        return []
    s_canonical = Counter(_canonical(v, u) for v, u, _ in sentence_q)
    unmatched = []
    for value, unit, surface in claim_q:
        key = _canonical(value, unit)
        if s_canonical[key] > 0:
            s_canonical[key] -= 1
        elif unit is None and any(v == value for v, _, _ in sentence_q):
            continue  # a bare "5" against "5 mg": the claim does not say otherwise
        else:
            unmatched.append((value, unit, surface))
    s_values = {v for v, _, _ in sentence_q}
    out: list[Mismatch] = []
    for value, unit, surface in unmatched:
        dim = UNITS[unit][0] if unit else None
        if unit is not None and value in s_values:
            same_value = [s for v, u, s in sentence_q if v == value and u is not None]
            if not same_value:
                continue  # "5 mg" against a bare "5": the sentence does not say otherwise
            out.append(Mismatch("unit", surface, ", ".join(same_value)))
            continue
        same_dim = [s for v, u, s in sentence_q if u is not None and UNITS[u][0] == dim] if dim else []
        if same_dim:
            out.append(Mismatch("dose" if dim in DOSE_DIMENSIONS else "number", surface, ", ".join(same_dim)))
        elif unit is None and any(u is None for _, u, _ in sentence_q):
            out.append(Mismatch("number", surface, ", ".join(s for _, u, s in sentence_q if u is None)))
        elif dim is not None and not any(u is not None for _, u, _ in sentence_q):
            out.append(Mismatch("number", surface, ", ".join(s for _, _, s in sentence_q)))
    return out


def match_f1(claim: str, sentence: str) -> float:
    """F1 of the two sentences' content words (slot words left out): high only when they say the same thing."""
    c, e = _content(claim), _content(sentence)
    common = len(c & e)
    return 2 * common / (len(c) + len(e)) if common else 0.0


def best_sentence(claim: str, sentences: list[str]) -> int | None:
    """Index of the sentence whose content words match the claim's best (F1, so that a long passage that
    happens to contain the claim's words does not win over the sentence it paraphrases); ties: the first."""
    best, best_score = None, -1.0
    for i, sentence in enumerate(sentences):
        score = match_f1(claim, sentence)
        if score > best_score:
            best, best_score = i, score
    return best


def check(claim: str, sentences: list[str], best_index: int | None = None) -> tuple[list[Mismatch], int | None]:
    """Mismatches between ``claim`` and its best-matching sentence: ``best_index`` when the backend has
    its own notion of best match (the embedding's max cosine), else :func:`best_sentence`."""
    index = best_sentence(claim, sentences) if best_index is None or not 0 <= best_index < len(sentences) \
        else best_index
    if index is None:
        return [], None
    return mismatches(claim, sentences[index]), index
