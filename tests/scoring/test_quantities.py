"""Doses, durations and frequencies as pint quantities (``scoring.metrics.quantities``), hand-worked.

Sources of the equivalences used below:

- [SI] BIPM, *The International System of Units* (SI Brochure, 9th ed., 2019), Table 7 (prefixes: milli = 10⁻³,
  micro = 10⁻⁶) and Table 8 (non-SI units accepted for use with the SI: litre = 10⁻³ m³, minute, hour = 60 min,
  day = 24 h). pint's default definitions (``default_en.txt``) agree, and add week = 7 day.
- [BNF-Rx] BNF, "Guidance on prescribing", prescription writing: "quantities less than 1 gram should be written in
  milligrams, e.g. 500 mg, not 0.5 g; quantities less than 1 mg should be written in micrograms, e.g. 100
  micrograms, not 0.1 mg" (the two spellings are one quantity; the BNF only prefers one), and oral liquids are
  measured with "a 5-mL spoon".
- [BNF-Latin] BNF, "Latin abbreviations": o.d. = once daily, b.d. = twice daily, t.d.s. = three times daily, q.d.s. =
  four times daily, q.4h = every 4 hours. As rates per 24 hours: every 8 hours = 24/8 = 3 a day = t.d.s.
- [BNF-paracetamol] BNF, paracetamol, adult by mouth: "0.5–1 g every 4–6 hours; maximum 4 g per day".
- [BNF-alendronate] BNF, alendronic acid: "70 mg once weekly".
- [BNF-ibuprofen] BNF, ibuprofen, child: doses in "mg/kg" (per kilogram of the child's body weight).
- [WHO-IU] WHO Expert Committee on Biological Standardization: an International Unit is defined for each substance
  by its International Standard, so units convert to no mass in general (400 units of vitamin D are 10
  micrograms, but of heparin something else).
- [pint-non-int] pint, "Add support for other numerical types at the registry level" (hgrecco/pint commit
  d43c56a): ``UnitRegistry(non_int_type=Fraction)`` keeps magnitudes as Fractions, so comparisons are exact.

Daily totals (decided here, and documented in the module): a dose taken at a stated frequency is compared with
a dose per time, so "two puffs twice daily" = "4 puffs a day"; two plain doses are compared as doses and two
frequencies as frequencies ("two puffs twice daily" against "two puffs four times a day" is a frequency mismatch,
not a total one).
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.metrics import contradiction as C
from scoring.metrics import quantities as Q


def kinds(claim: str, evidence: str) -> list[str]:
    return [m.kind for m in C.mismatches(claim, evidence)]


def one(text: str) -> Q.Amount:
    (amount,) = Q.amounts(text)
    return amount


# --- parsing and exact conversion ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value", "unit"), [
    ("500 mg", Fraction(1, 2), "g"),  # [SI], [BNF-Rx]
    ("0.5 g", Fraction(500), "mg"),
    ("1,000 micrograms", Fraction(1), "mg"),  # [SI]: 1000 × 10⁻⁶ g = 10⁻³ g; "1,000" is one thousand
    ("100 micrograms", Fraction(1, 10), "mg"),  # [BNF-Rx]'s own pair
    ("0.07 g", Fraction(70), "mg"),  # exact: as floats 0.07 * 1000 = 70.00000000000001
    ("1,5 mg", Fraction(3, 2), "mg"),  # a decimal comma
    ("72 hours", Fraction(3), "day"),  # [SI] day = 24 h
    ("3 weeks", Fraction(21), "day"),  # pint: week = 7 day
    ("1 l", Fraction(1000), "ml"),  # [SI] Table 8
    ("one teaspoon", Fraction(5), "ml"),  # [BNF-Rx] the 5-mL spoon (pint's own teaspoon is the US 4.93 mL)
    ("2 tablespoons", Fraction(30), "ml"),
    ("20%", Fraction(1, 5), "dimensionless"),
    ("2 per cent", Fraction(1, 50), "dimensionless"),
])
def test_amounts_convert_exactly(text, value, unit):
    amount = one(text)
    converted = amount.low.to(unit)
    assert converted.magnitude == value
    assert isinstance(converted.magnitude, Fraction)  # [pint-non-int]: no float rounding anywhere


def test_ranges_bounds_and_compound_units():
    r = one("Take 1–2 tablets at night")
    assert (r.low.magnitude, r.high.magnitude, Q.dimension(r.unit)) == (1, 2, "tablets")
    up = one("up to 4 g a day")  # [BNF-paracetamol]'s maximum, as a bound [0, 4] g/day
    assert up.low.magnitude == 0 and up.high.to("g/day").magnitude == 4
    assert one("at least 3 days").high is None
    assert one("more than 2 weeks").low.to("day").magnitude == 14
    assert one("no more than 8 tablets in 24 hours").high.to("tablet/day").magnitude == 8
    assert one("250 mg/5 ml").low.to("mg/ml").magnitude == 50
    assert one("10 mg/kg").low.dimensionality == one("10 mg per kg").low.dimensionality
    assert one("10 mg/kg").low.dimensionality != Q.Q_(1).dimensionality  # per body weight, not a mass ratio
    assert one("5 mmol/L").low.to("mol/m**3").magnitude == 5
    assert [a.surface for a in Q.amounts("one of the two reasons")] == ["two"]  # a lone "one" is no quantity


@pytest.mark.parametrize(("text", "per_day"), [
    ("twice a day", [Fraction(2)]),  # [BNF-Latin] b.d.
    ("every 12 hours", [Fraction(2)]),
    ("every 8 hours", [Fraction(3)]),  # = t.d.s.
    ("three times daily", [Fraction(3)]),
    ("four times a day", [Fraction(4)]),  # q.d.s.
    ("every 4 hours", [Fraction(6)]),  # q.4h
    ("once weekly", [Fraction(1, 7)]),  # [BNF-alendronate]
    ("every other day", [Fraction(1, 2)]),
    ("daily", [Fraction(1)]),
    ("every 4 to 6 hours", [(Fraction(4), Fraction(6))]),  # [BNF-paracetamol]: a range, 4 to 6 doses a day
])
def test_frequencies_are_rates_per_time(text, per_day):
    rates, _ = Q.frequencies(text)
    got = [r.low.to("1/day").magnitude if r.point else (r.low.to("1/day").magnitude, r.high.to("1/day").magnitude)
           for r in rates]
    assert got == per_day


# --- the contradiction check's kinds ----------------------------------------------------------------------------

@pytest.mark.parametrize(("claim", "evidence", "expected"), [
    # equal quantities in other units: no mismatch
    ("Take 500 mg of paracetamol.", "Take 0.5 g of paracetamol.", []),  # [BNF-Rx]
    ("Take 1,000 micrograms of vitamin B12.", "Take 1 mg of vitamin B12.", []),  # [SI]
    ("Give 5 ml of the syrup.", "Give one teaspoon of the syrup.", []),  # [BNF-Rx] 5-mL spoon
    ("Take the antibiotic for 72 hours.", "Take the antibiotic for 3 days.", []),  # [SI]
    ("Give 10 mg/kg of ibuprofen.", "Give 0.01 g/kg of ibuprofen.", []),  # [BNF-ibuprofen]
    ("Take 400 units of vitamin D.", "Take 400 IU of vitamin D.", []),
    ("Take 400 IU of vitamin D.", "Take 10 micrograms of vitamin D.", []),  # [WHO-IU]: no conversion, no verdict
    # different quantities
    ("Take 10 mg of vitamin B12.", "Take 1,000 micrograms of vitamin B12.", ["dose"]),
    ("Take 5 g of paracetamol.", "Take 5 mg of paracetamol.", ["unit"]),
    ("Take the antibiotic for 3 weeks.", "Take the antibiotic for 3 days.", ["unit"]),
    ("Give 10 mg/kg of ibuprofen.", "Give 10 mg of ibuprofen.", ["unit"]),
    ("Give 10 mg per kg of ibuprofen.", "Give 20 mg/kg of ibuprofen.", ["dose"]),
    ("Give 10 ml of the syrup.", "Give one teaspoon of the syrup.", ["dose"]),
    ("Apply a 1% cream twice a day.", "Apply a 2% cream twice a day.", ["number"]),
    # frequencies
    ("Use the cream every 8 hours.", "Use the cream three times a day.", []),  # [BNF-Latin] t.d.s.
    ("Use the cream every 12 hours.", "Use the cream twice a day.", []),  # b.d.
    ("Use the cream every 4 hours.", "Use the cream three times a day.", ["frequency"]),  # 6 ≠ 3 a day
    ("Take one tablet once weekly.", "Take one tablet once a week.", []),
    ("Take one tablet once weekly.", "Take one tablet once a day.", ["frequency"]),
    ("Take 1 g four times a day.", "Take 1 g every 4 to 6 hours.", []),  # 4 within 4–6 a day
    ("Take 1 g three times a day.", "Take 1 g every 4 to 6 hours.", ["frequency"]),  # 3 outside 4–6
    # ranges and bounds [BNF-paracetamol]
    ("Take 6 g of paracetamol a day.", "Take up to 4 g of paracetamol a day.", ["dose"]),
    ("Take 2 g of paracetamol.", "Take up to 4 g of paracetamol.", []),
    ("Take up to 4 g of paracetamol.", "Take 4 g of paracetamol.", []),  # the same amount named
    ("Take up to 3 g of paracetamol.", "Take up to 4 g of paracetamol.", ["dose"]),  # two maxima differ
    ("Take 1 tablet at night.", "Take 1-2 tablets at night.", []),
    ("Take 3 tablets at night.", "Take 1-2 tablets at night.", ["dose"]),
    ("It lasts 1 to 2 weeks.", "It lasts 1 to 3 weeks.", []),  # inside the range
    ("It lasts 1 to 4 weeks.", "It lasts 1 to 3 weeks.", ["number"]),  # time: a number, not a dose
    ("Scores of 1-2 are normal.", "Scores of 1-3 are normal.", ["number"]),  # bare ranges: every number counts
    ("Scores of 1-3 are normal.", "Scores of 1-3 are normal.", []),
    # daily totals
    ("Use two puffs twice daily.", "Use 4 puffs a day.", []),
    ("Use two puffs twice daily.", "Use 6 puffs a day.", ["dose"]),
    ("Use two puffs twice daily.", "Use two puffs four times a day.", ["frequency"]),
    ("Take 1 g four times a day.", "Take up to 4 g a day.", []),  # 4 g/day: at the maximum
    ("Take 2 g four times a day.", "Take up to 4 g a day.", ["dose"]),  # 8 g/day exceeds it
    ("Take 1 g every 4 to 6 hours.", "Take no more than 4 g a day.", []),  # the BNF's own two statements
    ("Take 500 mg a day.", "Take 500 mg daily.", []),
    ("Take 3 tablets four times a day.", "Take no more than 8 tablets in 24 hours.", ["dose"]),
])
def test_quantity_mismatch_kinds(claim, evidence, expected):
    assert kinds(claim, evidence) == expected


def test_frequencies_compare_as_multisets():
    # Each rate of the claim must meet its own rate of the sentence: "weekly …, while … weekly" is not "daily …,
    # while … weekly", though both name weekly.
    evidence = "Liraglutide is given daily, while semaglutide is given weekly."
    assert kinds("Liraglutide is given weekly, while semaglutide is given weekly.", evidence) == ["frequency"]
    assert kinds("Liraglutide is given daily, while semaglutide is given weekly.", evidence) == []
    # a claim that states a frequency more than the sentence only lacks support
    assert kinds("Take it daily with water, and daily with food.", "Take it daily with water and with food.") == []


def test_mismatch_texts_show_the_quantities():
    (m,) = C.mismatches("Take 2 g four times a day.", "Take up to 4 g a day.")
    assert m.claim.endswith("= 8 g/day") and m.evidence == "up to 4 g a day"
    (m,) = C.mismatches("Use the cream once weekly.", "Use the cream once a day.")
    assert (m.claim, m.evidence) == ("1/7/day", "1/day")


def test_domain_count_units_live_in_the_registry():
    # tablets, drops, puffs and units are pint units, each its own dimension (not convertible to mass)
    for name in ("tablet", "capsule", "drop", "puff", "international_unit"):
        assert Q.registry().parse_units(name) is not None
    assert Q.Q_(2, "capsule") == Q.Q_(2, "tablet")  # one dose form, as before
    assert Q.Q_(2, "drop").dimensionality != Q.Q_(2, "tablet").dimensionality
    assert Q.Q_(1, "medicine_spoon").to("ml").magnitude == 5


@given(st.integers(min_value=1, max_value=10**7))
def test_milligrams_and_grams_agree_exactly(mg):
    grams = format(Decimal(mg) / 1000, "f")
    assert kinds(f"Take {mg} mg of the drug.", f"Take {grams} g of the drug.") == []
    assert kinds(f"Take {mg + 1} mg of the drug.", f"Take {grams} g of the drug.") == ["dose"]


def test_the_registry_is_built_on_first_use_not_at_import():
    # every web process imports the module through the URL configuration; building pint's registry there cost about
    # half a second at each start, whether or not a dose was ever read
    code = ("import sys; import scoring.metrics.quantities as q; assert 'pint' not in sys.modules, 'pint at import'; "
            "assert q._REGISTRY is None; q.amounts('2 g a day'); assert q._REGISTRY is q.registry()")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])
