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
Numbers, units, doses, durations and frequencies are read as pint quantities with exact Fractions by
``scoring.metrics.quantities`` (its docstring lists the units, the custom ones — tablets, drops, puffs, IU, the
5-mL spoon, mg per kg of body weight — and the sources); ranges ("1–2 tablets", "every 4 to 6 hours") and bounds
("up to 4 g a day", "more than 2 weeks") are intervals.

- ``frequency``: both state how often ("twice a day" = "every 12 hours" = 2/day, "once weekly" = 1/7 a day,
  "every 4 to 6 hours" = 4 to 6 a day) and a rate of the claim meets none of the sentence's (as multisets;
  ranges meet when they overlap: "three times a day" against "every 4 to 6 hours" is a mismatch).
- ``unit``: the same number with a different unit that is not an equal quantity ("5 mg" vs "5 g";
  "500 mg" vs "0.5 g" is equal and passes; "3 days" vs "3 weeks"; "10 mg/kg" vs "10 mg").
- ``dose``: a drug amount (mass, volume, tablets, drops, puffs, units, mmol, and these per time or per kg)
  that is neither equal to the sentence's amount of the same dimension nor inside its range or bound: "6 g a
  day" against "up to 4 g a day" is a mismatch, "2 g" against "up to 4 g" is not. A dose with one stated
  frequency is also compared as a daily total with a dose per time ("2 g four times a day" = 8 g/day exceeds
  "up to 4 g a day"; "two puffs twice daily" = "4 puffs a day").
- ``number``: any other number of the claim (time, percent, bare numbers) absent from the sentence while the
  sentence states numbers.
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
from scoring.metrics import quantities as quantities_

KINDS = ("negation", "number", "dose", "frequency", "unit", "drug", "body_part", "polarity")
MIN_MATCH = 0.5
POLARITY_MIN_MATCH = 0.3

_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?|\d+(?:[.,]\d+)?%?")
NEGATORS = frozenset(["not", "no", "never", "cannot", "can't", "don't", "doesn't", "didn't", "won't", "shouldn't",
                      "isn't", "aren't", "wasn't", "weren't", "mustn't", "haven't", "hasn't", "couldn't", "wouldn't",
                      "without", "avoid", "avoided", "avoiding", "refrain", "nor", "neither", "none", "nothing"])

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
    return quantities_.number(token)


def frequencies(text: str) -> tuple[set[Fraction | tuple[Fraction, Fraction]], str]:
    """Rates per day of the frequency expressions in ``text`` (a (low, high) pair for a range such as "every 4 to 6
    hours"), and the text with them removed."""
    rates, rest = quantities_.frequencies(text)
    return {r.low.magnitude if r.point or r.high is None else (r.low.magnitude, r.high.magnitude) for r in rates}, rest


def quantities(text: str) -> list[tuple[Fraction, object | None, str]]:
    """(value, pint unit or None, surface) for each number in ``text`` (frequency expressions removed first); a
    range gives its first number."""
    return [(a.numbers[0], a.unit, a.surface) for a in quantities_.amounts(text)]


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
        if w in _STOP or w in NEGATORS or w.endswith("n't") or _number(w) is not None or w in quantities_.UNIT_WORDS:
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
    found.extend(Mismatch(kind, c, e) for kind, c, e in quantities_.compare(claim, sentence))
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
