"""Reversed instructions written without "not" are contradictions (``scoring.metrics.polarity``, used by
``scoring.metrics.contradiction.mismatches`` in every backend).

Hand-worked examples: each pair below says the same thing apart from one term and its opposite (issue 27's
list: before/after meals, increase/decrease insulin, stop/continue a blood thinner, recommended/contraindicated
in pregnancy, safe/dangerous to drive, …), so the check must report a ``polarity`` mismatch; the paraphrases
(synonyms on the same side, implicit negatives such as "seldom" for "not commonly", "with or without food"
against "with food") must pass. The natural set's test split (tests/scoring/data/natural_contradictions.jsonl,
never used for tuning) pins the rates measured when the check was built.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.backends import get_backend
from scoring.metrics import contradiction as C
from scoring.metrics import polarity as P

NATURAL = Path(__file__).parent / "data" / "natural_contradictions.jsonl"


@pytest.mark.parametrize(
    ("claim", "evidence", "group"),
    [
        ("Take omeprazole 30 minutes after breakfast.", "Take omeprazole 30 minutes before breakfast.", "timing"),
        ("Decrease your insulin dose when you exercise.", "Increase your insulin dose when you exercise.", "direction"),
        ("Carbohydrates lower blood sugar levels.", "Carbohydrates raise blood sugar levels.", "direction"),
        (
            "Stop the blood thinner before the dental procedure.",
            "Continue the blood thinner before the dental procedure.",
            "action",
        ),
        ("Folic acid is contraindicated in pregnancy.", "Folic acid is recommended in pregnancy.", "action"),
        (
            "It is dangerous to drive after taking this medicine.",
            "It is safe to drive after taking this medicine.",
            "safety",
        ),
        (
            "A dry cough is a rare side effect of ramipril.",
            "A dry cough is a common side effect of ramipril.",
            "frequency",
        ),
        ("Take the tablets on an empty stomach.", "Take the tablets with food.", "food"),
        ("Take simvastatin in the morning.", "Take simvastatin in the evening.", "time_of_day"),
        (
            "The pain is usually felt in the lower abdomen.",
            "The pain is usually felt in the upper abdomen.",
            "location",
        ),
        ("Most moles are malignant growths of the skin.", "Most moles are benign growths of the skin.", "nature"),
        (
            "Muscle relaxants are prescribed for long-term relief of back pain.",
            "Muscle relaxants are prescribed for short-term relief of back pain.",
            "chronicity",
        ),
        (
            "Lactic acidosis is a mild side effect of metformin.",
            "Lactic acidosis is a serious side effect of metformin.",
            "severity",
        ),
    ],
)
def test_each_kind_of_reversal_is_a_polarity_mismatch(claim, evidence, group):
    found = C.mismatches(claim, evidence)
    assert [m.kind for m in found] == ["polarity"], found
    assert found[0].claim.startswith(f"{group}: ")
    assert C.mismatches(evidence, evidence) == []


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        # Synonyms on the same side of a group.
        ("Carbohydrates can increase blood sugar levels.", "Carbohydrates can raise blood sugar levels."),
        ("Cutting down on salt brings blood pressure down.", "Eating less salt lowers blood pressure."),
        ("Omeprazole is taken half an hour ahead of breakfast.", "Take omeprazole 30 minutes before breakfast."),
        # Implicit negatives against a negated opposite: "seldom" is "not commonly", "skip" is "do not take".
        (
            "Esophagitis seldom causes neck muscle stiffness when swallowing.",
            "Neck muscle stiffness while swallowing is not commonly associated with esophagitis.",
        ),
        ("Skip the missed dose.", "Do not take the missed dose."),
        ("Most patients have no symptoms at first.", "Most patients are asymptomatic at first."),
        ("Stay off alcohol while you take it.", "Do not drink alcohol while you take it."),
        ("Avoid alcohol while taking it.", "Do not drink alcohol while taking it."),
        (
            "After long-term use the dose is lowered step by step instead of stopping suddenly.",
            "Do not stop taking it suddenly after long-term use; your doctor will reduce the dose gradually.",
        ),
        # Both antonyms kept, each about the same thing as in the evidence.
        (
            "Creatinine that is high in the blood and low in urine may indicate kidney problems.",
            "Creatinine levels that are high in the blood and low in urine may indicate kidney problems.",
        ),
    ],
)
def test_paraphrases_are_not_contradictions(claim, evidence):
    assert C.mismatches(claim, evidence) == []


@pytest.mark.parametrize(
    "claim",
    [
        "You can take amoxicillin with food.",
        "You can take amoxicillin with your meals.",
        "You can take amoxicillin on an empty stomach.",
    ],
)
def test_with_or_without_food_is_compatible_with_either(claim):
    # A disjunction of both poles holds both: it contradicts neither "with food" nor "on an empty stomach".
    evidence = "You can take amoxicillin with or without food."
    assert C.mismatches(claim, evidence) == []
    assert P.read(evidence).poles()["food"] == {0, 1}
    # "without" inside the disjunction is no negation either (it was read as one before).
    assert not P.read(evidence).negated


def test_with_or_without_is_no_negation_outside_food():
    evidence = "Acute bronchitis is a persistent cough with or without sputum."
    assert C.mismatches("Acute bronchitis is a persistent cough with sputum.", evidence) == []


def test_roles_swapped_between_two_antonyms_are_caught():
    # Each term is paired with the one of the other sentence that qualifies the same words.
    claim = "Creatinine levels that are low in the blood and high in urine may indicate kidney problems."
    evidence = "Creatinine levels that are high in the blood and low in urine may indicate kidney problems."
    assert [m.kind for m in C.mismatches(claim, evidence)] == ["polarity"]


def test_a_negation_scope_ends_at_but():
    # ConText: "not" negates "dangerous" (read as safe); "but" ends its scope, so "rare" stays rare.
    reading = P.read("It is not dangerous but rare.")
    assert [(t.group, t.pole, t.flipped) for t in reading.terms] == [("safety", 0, True), ("frequency", 1, False)]
    assert C.mismatches("It is not dangerous but rare.", "It is safe but rare.") == []
    # Without the terminator the scope runs on and reverses "common" as well.
    reading = P.read("It is not dangerous or common.")
    assert [(t.pole, t.flipped) for t in reading.terms] == [(0, True), (1, True)]


def test_a_negation_with_no_term_in_scope_is_the_sentences_negation():
    # "to hospital" is a term of a group that a negation does not reverse (care setting), so "not" stays the
    # sentence's negation.
    reading = P.read("Do not drive yourself to hospital.")
    assert reading.negated and [(t.group, t.flipped) for t in reading.terms] == [("setting", False)]
    assert [m.kind for m in C.mismatches("Drive yourself to hospital.", "Do not drive yourself to hospital.")] == [
        "negation"
    ]


def test_hypothetical_scope_is_compared_only_with_a_hypothetical():
    reading = P.read("Call your doctor if you cannot sleep.")
    assert reading.hypothetical and reading.negated_hypothetical and not reading.negated
    # Both conditional: the condition's negation differs.
    assert [
        m.kind for m in C.mismatches("Call your doctor if you cannot sleep.", "Call your doctor if you can sleep.")
    ] == ["negation"]
    # A negation inside "if ..." does not negate the instruction itself.
    assert C.mismatches("Call your doctor if you cannot sleep.", "Call your doctor.") == []


def test_the_worked_example_keeps_its_negation_kind():
    # Same words, one side negated: still reported as a negation, not as a polarity mismatch.
    found = C.mismatches("Do not use the eye drops four times a day.", "Use the eye drops four times a day.")
    assert [m.kind for m in found] == ["negation"]


def test_the_backends_call_a_reversed_instruction_contradicted():
    backend = get_backend("lexical")
    (j,) = backend.supports(
        ["Take omeprazole 30 minutes after breakfast."],
        ["Take omeprazole 30 minutes before breakfast. It reduces stomach acid."],
    )
    assert (j.verdict, j.label) == (False, "contradicted")
    assert j.details["contradiction"]["verdict_before"] is True  # unigram precision alone said supported
    assert j.details["contradiction"]["mismatches"][0]["kind"] == "polarity"


def _test_split() -> list[dict]:
    pairs = [json.loads(line) for line in NATURAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [p for p in pairs if p["split"] == "test"]


def _rates(flagged: list[tuple[dict, bool]]) -> tuple[float, float]:
    caught = [f for p, f in flagged if p["label"] == "contradicted"]
    alarms = [f for p, f in flagged if p["label"] == "supported"]
    return sum(caught) / len(caught), sum(alarms) / len(alarms)


def test_the_check_on_the_natural_test_split():
    # The check alone, claim against its evidence sentence. Measured when built (tuned on split=dev only):
    # test 63/112 contradictions caught (0.562), 8/105 paraphrases flagged (0.076); dev 0.821 / 0.018.
    # Before the polarity work: 18/112 caught.
    pairs = _test_split()
    caught, alarms = _rates([(p, bool(C.mismatches(p["claim"], p["evidence_sentence"]))) for p in pairs])
    assert caught >= 0.53
    assert alarms <= 0.10


def test_lexical_backend_on_the_natural_test_split():
    # Verdict False counts (contradicted or merely unsupported), as in bench/evaluations/contradiction_accuracy.py.
    # Measured when built: caught 65/112 (0.580), false alarms 25/105 (0.238), of which 18 come from unigram
    # precision below 0.5 without the check (0.171). Baseline before the polarity work: 0.232 / 0.248.
    backend = get_backend("lexical")
    flagged = [(p, not backend.supports([p["claim"]], [p["evidence"]])[0].verdict) for p in _test_split()]
    caught, alarms = _rates(flagged)
    assert caught >= 0.55
    assert alarms <= 0.26
