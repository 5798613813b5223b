"""Amounts, doses, durations and frequencies read as pint quantities, for the contradiction check.

``scoring.metrics.contradiction`` compares the numbers of a claim with those of its evidence sentence; this
module reads them. Every amount is a :class:`Amount`: an interval of pint quantities (a point, a range such as
"1–2 tablets", or a bound such as "up to 4 g a day" = [0, 4] g/day, "at least 3 days" = [3 days, ∞)). Every
frequency is a :class:`Amount` too, a rate per time ("twice a day" = 2/day = "every 12 hours"; "every 4 to 6
hours" = [4, 6]/day; "once weekly" = 1/week).

Arithmetic is exact: the registry is built with ``non_int_type=Fraction`` (pint's docs, "Using decimal or
fraction types": magnitudes stay ``fractions.Fraction``), numbers are read as Fractions, and quantities are
compared in base units with ``==`` (no tolerance), so "500 mg" = "0.5 g" and "1,000 micrograms" = "1 mg" exactly.

Units are pint's own (mg, g, kg, mcg/µg/ug, ml/mL/cc, l, mmol, %, seconds … years) plus these, defined in the
registry (:data:`DEFINITIONS`):

- count units pint does not know, each its own dimension: ``tablet`` (also pill, capsule: one dose form, so "2
  tablets" = "2 capsules" as before), ``drop``, ``puff``; and ``international_unit`` (IU, "units"), whose mass
  depends on the substance (WHO International Standards), so it converts to nothing else;
- ``medicine_spoon`` = 5 mL ("teaspoon", "tsp") and ``medicine_tablespoon`` = 15 mL: the BNF's "5-mL spoon"
  (BNF, "Guidance on prescribing", oral liquid preparations); pint's own ``teaspoon`` is the US customary 4.93 mL;
- ``kilogram_body_weight``: the "kg" of "mg/kg" ("10 mg/kg", "10 mg per kg") is the patient's weight, so
  "mg/kg" is a dose per body weight, not pint's dimensionless mass ratio (10 mg/kg ≠ 10 ppm).

Compound units: "mg/kg", "mmol/L", "mg/ml", "mg/day", "4 g per day", "4 g a day", "2 puffs each day".

Daily totals: a dose taken at a stated frequency is compared with a dose per time ("two puffs twice daily" =
4 puffs/day = "4 puffs a day"; "1 g four times a day" is 4 g/day, within "up to 4 g a day"; "2 g four times a
day" exceeds it): see :func:`totals`. Two plain doses are still compared as doses, and two frequencies as
frequencies.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# pint's generic types (Quantity[int | float | complex …]) do not describe Fraction magnitudes; quantities and units
# are typed as Any here, and every value that leaves this module is a Fraction, a str or an Amount.
Quantity = Any
Unit = Any

DEFINITIONS = """
tablet = [dose_form] = tab = pill = capsule = cap
drop = [drop] = gtt
puff = [puff] = actuation = inhalation
international_unit = [biological_activity] = IU = iu = unit
medicine_spoon = 5 milliliter = spoonful
medicine_tablespoon = 15 milliliter
kilogram_body_weight = [body_weight] = kg_bw
@alias gram = gm
"""

_REGISTRY: Any = None
_REGISTRY_LOCK = threading.Lock()


def registry() -> Any:
    """The unit registry (pint's, with the definitions above), built on first use (about half a second: importing
    pint and parsing its definitions), once per process: every web process imports this module through the URL
    configuration, and most never read a dose."""
    global _REGISTRY
    if _REGISTRY is None:
        with _REGISTRY_LOCK:
            if _REGISTRY is None:
                import pint

                built: Any = pint.UnitRegistry(non_int_type=Fraction, cache_folder=None, on_redefinition="raise")
                for line in DEFINITIONS.strip().splitlines():
                    built.define(line)
                _REGISTRY = built
    return _REGISTRY


def Q_(*args: Any) -> Quantity:
    """A quantity of the registry: ``Q_(2, "tablet")``, ``Q_(Fraction(1, 2))``."""
    return registry().Quantity(*args)

# Surface words read as units (pint parses almost any short word: "a" is a year, "in" an inch, "at" an atmosphere,
# "unit" a micro-nit), with the spellings whose pint meaning is not the clinical one.
_SPELLING = {"teaspoon": "medicine_spoon", "teaspoons": "medicine_spoon", "tsp": "medicine_spoon",
             "tablespoon": "medicine_tablespoon", "tablespoons": "medicine_tablespoon",
             "tbsp": "medicine_tablespoon", "%": "percent", "per cent": "percent", "µg": "microgram"}
UNIT_WORDS = frozenset([
    "mg", "milligram", "milligrams", "g", "gram", "grams", "gm", "kg", "kilogram", "kilograms", "mcg", "µg", "ug",
    "microgram", "micrograms", "ml", "millilitre", "millilitres", "milliliter", "milliliters", "cc", "l", "litre",
    "litres", "liter", "liters", "mmol", "millimole", "millimoles", "mol", "iu", "unit", "units", "tablet", "tablets",
    "tab", "tabs", "pill", "pills", "capsule", "capsules", "drop", "drops", "puff", "puffs", "teaspoon", "teaspoons",
    "tsp", "tablespoon", "tablespoons", "tbsp", "spoonful", "spoonfuls", "second", "seconds", "minute", "minutes",
    "min", "mins", "hour", "hours", "hr", "hrs", "h", "day", "days", "week", "weeks", "month", "months", "year",
    "years", "%", "percent", "per cent",
])
_TIME = {"hour": "hour", "day": "day", "night": "day", "week": "week", "month": "month", "year": "year"}
NUMBER_WORDS: dict[str, Fraction] = {w: Fraction(n) for w, n in (
    ("zero", 0), ("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5), ("six", 6), ("seven", 7),
    ("eight", 8), ("nine", 9), ("ten", 10), ("eleven", 11), ("twelve", 12), ("fifteen", 15), ("twenty", 20),
    ("thirty", 30), ("forty", 40), ("fifty", 50), ("hundred", 100))}
NUMBER_WORDS["half"] = Fraction(1, 2)

# Dimensions whose amounts are doses (the ``dose`` kind); time and percent are plain numbers (``number``).
_DOSE_BASE = ("[mass]", "[length]", "[substance]", "[dose_form]", "[drop]", "[puff]", "[biological_activity]")


def number(token: str) -> Fraction | None:
    """A number token as a Fraction: "500", "0.5", "1,000" (thousands), "1,5" (decimal comma), "two", "half"."""
    token = token.lower()
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    if not token[:1].isdigit():
        return None
    token = token.rstrip("%")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+", token):
        token = token.replace(",", "")
    try:
        return Fraction(token.replace(",", "."))
    except ValueError:
        return None


def unit_of(word: str) -> Unit | None:
    """The pint unit a surface word names ("mg", "Tablets", "%", "teaspoon"), or None if it is not a unit word."""
    word = word.lower()
    if word not in UNIT_WORDS:
        return None
    return registry().parse_units(_SPELLING.get(word, word))


def dimension(unit: Unit | str | None) -> str | None:
    """A name for a unit's dimension: "mass", "volume", "time", "percent", "tablets", … or the dimensionality."""
    if unit is None:
        return None
    if isinstance(unit, str):
        unit = unit_of(unit)
        if unit is None:
            return None
    if unit == registry().percent:
        return "percent"
    dims = dict(registry().get_dimensionality(unit))
    names: dict[tuple[tuple[str, int], ...], str] = {
        (("[mass]", 1),): "mass", (("[length]", 3),): "volume", (("[time]", 1),): "time",
        (("[dose_form]", 1),): "tablets", (("[drop]", 1),): "drops", (("[puff]", 1),): "puffs",
        (("[biological_activity]", 1),): "units", (("[substance]", 1),): "substance"}
    key = tuple(sorted((k, int(v)) for k, v in dims.items()))
    return names.get(key, " ".join(f"{k}^{v}" for k, v in key) or "dimensionless")


DOSE_DIMENSIONS = frozenset(["mass", "volume", "units", "tablets", "drops", "puffs", "substance"])


def is_dose(dim: str | None) -> bool:
    """A drug amount: a dose dimension, or a compound of one ("mg/day", "mg/kg", "mmol/L"); not time or percent."""
    if dim is None:
        return False
    return dim in DOSE_DIMENSIONS or ("^" in dim and any(b in dim for b in _DOSE_BASE))


@dataclass(frozen=True)
class Amount:
    """An interval [low, high] of one unit (``high`` None = no upper bound); a point when low == high.

    ``numbers``: the numbers as written (in ``unit``), ``unit``: None for a bare number, ``surface``: the text.
    """

    low: Quantity
    high: Quantity | None
    numbers: tuple[Fraction, ...]
    unit: Unit | None
    surface: str
    total: bool = False  # a daily total worked out from a dose and a frequency (see :func:`totals`)

    @property
    def dim(self) -> str | None:
        return dimension(self.unit)

    @property
    def point(self) -> bool:
        return self.high is not None and self.low == self.high

    def dimensionality(self) -> Any:
        return self.low.dimensionality

    def within(self, other: Amount) -> bool:
        """This interval lies inside ``other`` (same dimensionality; exact comparison in base units)."""
        if self.dimensionality() != other.dimensionality():
            return False
        if self.low < other.low:
            return False
        if other.high is None:
            return True
        return self.high is not None and self.high <= other.high

    def overlaps(self, other: Amount) -> bool:
        if self.dimensionality() != other.dimensionality():
            return False
        return (other.high is None or self.low <= other.high) and (self.high is None or other.low <= self.high)

    def same(self, other: Amount) -> bool:
        """The same interval (the same quantity when both are points), in whatever units each is written."""
        if self.dimensionality() != other.dimensionality() or (self.unit is None) != (other.unit is None):
            return False
        return self.low == other.low and (self.high == other.high if self.high is not None and other.high is not None
                                          else self.high is other.high)

    def times(self, rate: Amount) -> Amount:
        """This dose taken at ``rate``: the daily total (an interval when either is one)."""
        per_day = self.unit / registry().day
        low = (self.low * rate.low).to(per_day)
        high = None if self.high is None or rate.high is None else (self.high * rate.high).to(per_day)
        return Amount(low, high, (low.magnitude,) if high is None or high == low else (low.magnitude, high.magnitude),
                      low.units, f"{self.surface} × {rate.surface} = {_fmt(low, high)}", total=True)


def _fmt(low: Quantity, high: Quantity | None) -> str:
    unit = _unit_text(low.units)
    if high is None:
        return f"≥ {float(low.magnitude):g} {unit}"
    if high == low:
        return f"{float(low.magnitude):g} {unit}"
    return f"{float(low.magnitude):g}–{float(high.to(low.units).magnitude):g} {unit}"


def _unit_text(unit: Unit) -> str:
    # pint's own formatter cannot write Fraction exponents on Python 3.11 ("unsupported format string")
    def name(k: str) -> str:  # "mg", "ml", "mmol" by their symbols; "day", "tablet", "puff" by their names
        by_symbol = dimension(registry().parse_units(k)) in ("mass", "volume", "substance", "percent")
        return registry().get_symbol(k) if by_symbol else k

    num = [name(k) for k, v in unit._units.items() if v > 0]
    den = [name(k) for k, v in unit._units.items() if v < 0]
    return " ".join(num) + ("/" + "/".join(den) if den else "") if num else "/" + "/".join(den)


# --- frequencies -------------------------------------------------------------------------------------------------

_N = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_COUNT = rf"(once|twice|thrice|{_N}\s+times?)"
_ADVERB_PERIOD = {"daily": "day", "nightly": "day", "weekly": "week", "monthly": "month", "hourly": "hour",
                  "yearly": "year", "annually": "year"}
_ADVERBS = "|".join(_ADVERB_PERIOD)
_ONCE = {"once": 1, "twice": 2, "thrice": 3}
FREQ_COUNT_PERIOD = re.compile(
    rf"\b{_COUNT}\s+(?:a|an|per|each|every|in\s+a|at)\s+(hour|day|night|week|month|year)\b")
FREQ_COUNT_ADVERB = re.compile(rf"\b{_COUNT}\s+({_ADVERBS})\b")
FREQ_EVERY = re.compile(
    rf"\bevery\s+(other\s+|{_N}\s+)?(?:(?:to|-|–|or)\s*{_N}\s+)?(hour|day|night|week|month|year)s?\b")
FREQ_ADVERB = re.compile(rf"\b({_ADVERBS})\b")
FREQ_PATTERNS = (FREQ_COUNT_PERIOD, FREQ_COUNT_ADVERB, FREQ_EVERY, FREQ_ADVERB)


def _rate(count: Fraction, period: Quantity, surface: str) -> Amount:
    q = (Q_(count) / period).to(1 / registry().day)
    return Amount(q, q, (count,), q.units, surface)


def _count(match: re.Match[str]) -> Fraction:
    word = match.group(1).split()[0]
    return Fraction(_ONCE[word]) if word in _ONCE else (number(word) or Fraction(0))


def frequencies(text: str) -> tuple[list[Amount], str]:
    """Rates per time of the frequency expressions in ``text`` (as 1/day), and the text with them removed.

    "twice a day", "2 times per day", "three times daily", "once weekly", "every 6 hours", "every other day",
    "every 4 to 6 hours" (a range: 4 to 6 a day), "daily", "nightly", "weekly", "hourly".
    """
    rates: list[Amount] = []
    rest = text.lower()
    for m in FREQ_COUNT_PERIOD.finditer(rest):
        rates.append(_rate(_count(m), Q_(1, _TIME[m.group(3)]), m.group(0)))
    rest = FREQ_COUNT_PERIOD.sub(" ", rest)
    for m in FREQ_COUNT_ADVERB.finditer(rest):
        rates.append(_rate(_count(m), Q_(1, _ADVERB_PERIOD[m.group(3)]), m.group(0)))
    rest = FREQ_COUNT_ADVERB.sub(" ", rest)
    for m in FREQ_EVERY.finditer(rest):
        every, upper, unit = m.group(1), m.group(3), _TIME[m.group(4)]
        first = Fraction(2) if every and every.strip() == "other" else (number(every.strip()) if every else None)
        first = first or Fraction(1)
        last = number(upper) if upper else None
        if last:  # "every 4 to 6 hours": from one dose every 6 hours to one every 4
            slow, fast = _rate(Fraction(1), Q_(last, unit), ""), _rate(Fraction(1), Q_(first, unit), "")
            low, high = min(slow.low, fast.low), max(slow.low, fast.low)
            rates.append(Amount(low, high, (first, last), low.units, m.group(0)))
        else:
            rates.append(_rate(Fraction(1), Q_(first, unit), m.group(0)))
    rest = FREQ_EVERY.sub(" ", rest)
    for m in FREQ_ADVERB.finditer(rest):
        rates.append(_rate(Fraction(1), Q_(1, _ADVERB_PERIOD[m.group(1)]), m.group(0)))
    rest = FREQ_ADVERB.sub(" ", rest)
    return rates, rest


def rates_conflict(claim: list[Amount], sentence: list[Amount]) -> bool:
    """Both state how often and a rate of the claim meets none of the sentence's rates still unanswered, while
    one is left (rates compared as multisets, like amounts: "given weekly …, while … weekly" against "given
    daily …, while … weekly" conflicts). Ranges meet when they overlap: "four times a day" meets "every 4 to 6
    hours", "three times a day" does not. A claim that states a frequency more than the sentence does is not a
    conflict (a lack of support)."""
    if not claim or not sentence:
        return False
    left = list(sentence)
    unmet = []
    for c in claim:
        met = next((s for s in left if c.overlaps(s)), None)
        if met is None:
            unmet.append(c)
        else:
            left.remove(met)
    return bool(unmet and left)


# --- amounts ---------------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:[.,]\d+)?%?|per\s+cent\b|[a-zµ]+(?:['’][a-z]+)?|[/%]|[-–—]")
_UPPER = ("up to", "no more than", "not more than", "not exceeding", "not to exceed", "maximum of", "maximum",
          "max", "at most", "a maximum of", "less than", "fewer than", "under", "below")
_LOWER = ("at least", "no less than", "not less than", "minimum of", "a minimum of", "minimum", "more than",
          "over", "above")
_RANGE = frozenset(["-", "–", "—", "to"])
_PER = frozenset(["/", "per", "a", "an", "each", "every"])


def _bound(tokens: list[str], i: int) -> tuple[str, str] | None:
    """("upper" or "lower", the phrase) when the number at ``i`` follows a bound phrase ("up to", "more than")."""
    before = " ".join(tokens[max(0, i - 3):i])
    for side, phrases in (("upper", _UPPER), ("lower", _LOWER)):
        for phrase in sorted(phrases, key=len, reverse=True):
            if before == phrase or before.endswith(" " + phrase):
                return side, phrase
    return None


def amounts(text: str) -> list[Amount]:
    """Each number of ``text`` with its unit, range and bound (frequency expressions should be removed first).

    "500 mg", "0.5 g", "1,000 micrograms", "1–2 tablets", "up to 4 g a day", "10 mg/kg", "5 mmol/L", "3 weeks",
    "20%", a bare "5". "one" counts only before a unit ("one of the", "the right one" are not quantities).
    """
    tokens = [t.replace("’", "'") for t in _TOKEN.findall(text.lower())]
    tokens = ["per cent" if t.startswith("per") and t.endswith("cent") else t for t in tokens]
    out: list[Amount] = []
    i = 0
    while i < len(tokens):
        w = tokens[i]
        first = number(w)
        if first is None or (w == "one" and not (i + 1 < len(tokens) and unit_of(tokens[i + 1]) is not None)):
            i += 1
            continue
        start, j, nums, scale = i, i + 1, [first], Fraction(1)
        unit = registry().percent if w.endswith("%") else None
        second = number(tokens[j + 1]) if unit is None and j + 1 < len(tokens) and tokens[j] in _RANGE else None
        if second is not None:
            nums.append(second)
            j += 2
            if tokens[j - 1].endswith("%"):
                unit = registry().percent
        if unit is None and j < len(tokens) and unit_of(tokens[j]) is not None:
            unit = unit_of(tokens[j])
            j += 1
            # a compound unit: "mg/kg", "mg per kg", "mmol/L", "g a day", "puffs each day", and with a number in
            # the denominator "8 tablets in 24 hours", "250 mg/5 ml" (the BNF's "max. 4 g per day", "250 mg/5 mL")
            k = j + 1
            count = number(tokens[k]) if k < len(tokens) and tokens[j] in _PER | {"in"} else None
            if count:
                k += 1
            if k < len(tokens) and tokens[j] in _PER | {"in"}:
                den_word = "day" if tokens[k] == "night" else tokens[k]
                den = unit_of(den_word)
                if den is not None and (tokens[j] in ("/", "per") or dimension(den) == "time") \
                        and (tokens[j] != "in" or count is not None):
                    if den_word in ("kg", "kilogram", "kilograms"):  # "per kg": of the patient's body weight
                        den = registry().kilogram_body_weight
                    unit = unit / den
                    scale = 1 / Fraction(count or 1)
                    j = k + 1
        surface = " ".join(tokens[start:j])
        bound = _bound(tokens, start) if len(nums) == 1 else None
        qs = [Q_(n * scale, unit) if unit is not None else Q_(n) for n in nums]
        if bound is not None:
            surface = f"{bound[1]} {surface}"
        if bound is not None and bound[0] == "upper":
            low, high = Q_(0, unit) if unit is not None else Q_(0), qs[0]
        elif bound is not None:
            low, high = qs[0], None
        else:
            low, high = min(qs), max(qs)
        out.append(Amount(low, high, tuple(nums), unit, surface))
        i = j
    return out


def totals(doses: list[Amount], rates: list[Amount]) -> list[Amount]:
    """Daily totals of a text's doses when it states exactly one frequency ("2 puffs twice daily" = 4 puffs/day).

    Only plain doses (mass, volume, tablets, drops, puffs, units: not already per time) are multiplied; a text
    with two frequencies is ambiguous about which dose goes with which, and gets no totals.
    """
    if len(rates) != 1:
        return []
    return [a.times(rates[0]) for a in doses if a.unit is not None and a.dim in DOSE_DIMENSIONS]


def per_time(a: Amount) -> bool:
    return a.unit is not None and dict(a.dimensionality()).get("[time]", 0) < 0


def agrees(claim: Amount, sentence: Amount) -> bool:
    """The claim's amount says nothing against the sentence's: the same quantity, or inside the sentence's range
    or bound ("2 g" within "up to 4 g"; "1 tablet" within "1–2 tablets"), or the same bound value ("up to 4 g"
    against "4 g"). Two bounds of one direction agree only when equal ("up to 3 g" ≠ "up to 4 g")."""
    if claim.same(sentence):
        return True
    if claim.unit is None or sentence.unit is None:
        return False
    if claim.dimensionality() != sentence.dimensionality():
        return False
    if not sentence.point and claim.within(sentence):
        claim_bound = claim.high is None or (claim.low.magnitude == 0 and not claim.point)
        sentence_bound = sentence.high is None or (sentence.low.magnitude == 0 and not sentence.point)
        return not (claim_bound and sentence_bound)
    if sentence.point and not claim.point:  # "up to 4 g" against "4 g": the same amount
        return bool((claim.high is not None and claim.high == sentence.high) or claim.low == sentence.low)
    return False


def _per_day(a: Amount) -> Amount:
    """A dose per time read without its period ("500 mg a day" -> "500 mg"), to meet a text that states no period."""
    day = Q_(1, "day")
    low = (a.low * day).to_reduced_units()
    high = None if a.high is None else (a.high * day).to(low.units)
    return Amount(low, high, a.numbers, low.units, a.surface)


def rates_text(rates: list[Amount]) -> str:
    """"2/day", "4–6/day", "1/7/day" (once weekly): exact rates per day."""
    def text(r: Amount) -> str:
        if r.high is None or r.high == r.low:
            return f"{r.low.magnitude}/day"
        return f"{r.low.magnitude}–{r.high.magnitude}/day"
    return ", ".join(text(r) for r in rates)


def compare(claim: str, sentence: str) -> list[tuple[str, str, str]]:
    """(kind, claim side, sentence side) for each ``frequency``, ``unit``, ``dose`` or ``number`` mismatch.

    - ``frequency``: both state how often and no rate of the claim meets one of the sentence's
      (:func:`rates_conflict`).
    - amounts are compared as multisets ("HSV-2 and HSV-2" against "HSV-1 and HSV-2" names 2 once too often); an
      amount of the claim is answered by an equal one of the sentence (exactly, in base units), by a range or
      bound that holds it (:func:`agrees`), or through daily totals (:func:`totals`). One left unanswered is a
      ``unit`` mismatch when the sentence has its number with another unit that is not an equal quantity ("5 mg"
      / "5 g", "3 days" / "3 weeks"), a ``dose`` mismatch when the sentence has a dose of the same dimension,
      and a ``number`` mismatch for other numbers (time, percent, bare numbers) the sentence contradicts.
      A claim that adds a number the sentence has nothing to set against is not contradicted.
    """
    c_rates, c_rest = frequencies(claim)
    s_rates, s_rest = frequencies(sentence)
    out: list[tuple[str, str, str]] = []
    if rates_conflict(c_rates, s_rates):
        out.append(("frequency", rates_text(c_rates), rates_text(s_rates)))
    c_q, s_q = amounts(c_rest), amounts(s_rest)
    if not c_q or not s_q:
        return out
    c_totals = {id(a): totals([a], c_rates)[0] for a in c_q if totals([a], c_rates)}
    s_totals = totals(s_q, s_rates)
    remaining = list(s_q)
    unmatched: list[Amount] = []
    for c in c_q:
        exact = next((s for s in remaining if c.same(s)), None)
        if exact is not None:
            remaining.remove(exact)
            continue
        if any(agrees(c, s) and not c.same(s) for s in s_q):
            continue
        if c.unit is None and all(any(n in s.numbers for s in s_q) for n in c.numbers):
            continue  # a bare "5" against "5 mg": the claim does not say otherwise
        # Totals come from frequencies, which meet when they overlap ("every 4 to 6 hours"), so totals do too:
        # "1 g every 4 to 6 hours" (4 to 6 g a day) meets the BNF's "maximum 4 g per day" for paracetamol.
        total = c_totals.get(id(c))
        if total is not None and any(agrees(total, s) or total.overlaps(s) for s in s_q if per_time(s)):
            continue  # "1 g four times a day" against "up to 4 g a day"
        if per_time(c) and any(agrees(c, t) or c.overlaps(t) for t in s_totals):
            continue  # "4 puffs a day" against "2 puffs twice a day"
        if per_time(c) and not s_rates and any(agrees(_per_day(c), s) for s in s_q):
            continue  # "500 mg a day" against "take 500 mg": the sentence does not say how often
        if c.unit is not None and c.dim in DOSE_DIMENSIONS and not c_rates \
                and any(per_time(s) and agrees(c, _per_day(s)) for s in s_q):
            continue  # "take 500 mg" against "500 mg a day"
        unmatched.append(c)
    s_values = {n for s in s_q for n in s.numbers}
    for c in unmatched:
        total = c_totals.get(id(c))
        if c.unit is not None and set(c.numbers) <= s_values:
            same_value = [s.surface for s in s_q if s.unit is not None and set(s.numbers) == set(c.numbers)]
            if same_value:
                out.append(("unit", c.surface, ", ".join(same_value)))
            continue  # "5 mg" against a bare "5": the sentence does not say otherwise
        same_dim = [s.surface for s in s_q if s.unit is not None and s.dim == c.dim] if c.dim else []
        total_dim = [s.surface for s in s_q if per_time(s) and s.dim == total.dim] if total is not None else []
        if same_dim:
            out.append(("dose" if is_dose(c.dim) else "number", c.surface, ", ".join(same_dim)))
        elif total is not None and total_dim:
            out.append(("dose", total.surface, ", ".join(total_dim)))
        elif c.unit is None and any(s.unit is None for s in s_q):
            out.append(("number", c.surface, ", ".join(s.surface for s in s_q if s.unit is None)))
        elif c.dim is not None and not any(s.unit is not None for s in s_q):
            out.append(("number", c.surface, ", ".join(s.surface for s in s_q)))
    return out
