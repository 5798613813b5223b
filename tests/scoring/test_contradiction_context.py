"""medspaCy's ConText as the polarity check's negation / hypothetical / historical / experiencer reader.

Hand-worked examples of the algorithm's parts (Harkema, Dowling, Thornblade, Chapman: "ConText: An algorithm for
determining negation, experiencer, and temporal status from clinical reports", J Biomed Inform 42(5):839–851,
2009; medspaCy's implementation: Eyre et al., "Launching into clinical space with medspaCy", AMIA Annu Symp Proc
2021:438–447): a trigger's scope runs forward and stops at a termination term ("no evidence of CHF, *but* there is
pneumonia", Harkema et al. §2.2), a pseudo-trigger holds a trigger word and triggers nothing ("*not only*"), a
conditional ("if") makes what it scopes over hypothetical, and "history of" / "family" mark the temporal status
and the experiencer (the paper's historical and experiencer values). The sentences are written for these tests.
"""

from __future__ import annotations

from scoring.metrics import contradiction as C
from scoring.metrics import polarity as P


def terms(sentence: str) -> list[tuple[str, str, int, bool]]:
    return [(t.group, t.text, t.pole, t.flipped) for t in P.read(sentence).terms]


def test_one_pipeline_is_built_and_shared():
    nlp = P.pipeline()
    assert P.pipeline() is nlp
    assert nlp.pipe_names == ["medspacy_context"]
    context = nlp.get_pipe("medspacy_context")
    literals = {r.literal for r in context.rules}
    # Concord's own rules and medspaCy's defaults are both there ("has been ruled out" is a default only).
    assert {"not only", "n't", "but", "if", "has been ruled out"} <= literals


def test_a_pseudo_trigger_negates_nothing():
    # "not only" contains "not" but is a pseudo-trigger: "lower" keeps its pole, the sentence is not negated.
    reading = P.read("Not only does it lower blood pressure.")
    assert [(t.group, t.pole, t.flipped) for t in reading.terms] == [("direction", 1, False)]
    assert not reading.negated and reading.modifiers == []
    claim = "Not only does it lower blood pressure, it also slows the heart."
    assert C.mismatches(claim, "It lowers blood pressure and slows the heart.") == []
    # The same "not" as a trigger reverses "lower": a contradiction.
    found = C.mismatches("It does not lower blood pressure, and it slows the heart.", "It lowers blood pressure.")
    assert [m.kind for m in found] == ["polarity"]


def test_a_termination_term_ends_the_negation_scope():
    # "but" ends the scope of "not": "stop" is negated (continue), "lower" is not.
    assert terms("Do not stop the tablets but lower the dose.") == [
        ("action", "stop", 0, True),
        ("direction", "lower", 1, False),
    ]
    # "although" is one of Concord's terminators (medspaCy's defaults lack it).
    assert terms("Do not stop the tablets although you may lower the dose.") == [
        ("action", "stop", 0, True),
        ("direction", "lower", 1, False),
    ]
    # A terminator whose own window would reach past the scope it ends still ends it (the one-token scope of
    # Concord's termination rules, see polarity.concord_rules).
    assert terms("Do not stop the tablets but lower the dose slowly over the next two weeks.") == [
        ("action", "stop", 0, True),
        ("direction", "lower", 1, False),
        ("speed", "slowly", 1, False),
    ]
    # Without a terminator the scope reaches "lower" (NegEx's window: MAX_SCOPE tokens).
    assert terms("Do not stop or lower the dose.") == [("action", "stop", 0, True), ("direction", "lower", 0, True)]


def test_and_before_a_new_clause_ends_the_scope():
    # "and you should …" opens a clause (CLAUSE_JOINTS); "or lower" above did not.
    assert terms("Do not stop the tablets and you should lower the dose.") == [
        ("action", "stop", 0, True),
        ("direction", "lower", 1, False),
    ]


def test_if_makes_its_scope_hypothetical():
    reading = P.read("If the pain does not improve, see a doctor.")
    assert reading.hypothetical
    assert [(t.group, t.hypothetical) for t in reading.terms] == [("course", True)]
    assert [category for category, _ in reading.modifiers] == ["HYPOTHETICAL", "NEGATED_EXISTENCE"]
    # A conditional's negation is compared only with another conditional: against an unconditional instruction
    # it is no contradiction; against the opposite conditional it is.
    assert C.mismatches("If the pain does not improve, see a doctor.", "See a doctor.") == []
    found = C.mismatches("If the pain improves, see a doctor.", "If the pain does not improve, see a doctor.")
    assert [(m.kind, m.claim, m.evidence) for m in found] == [("polarity", "course: improves", "not improve")]


def test_a_trigger_that_begins_a_term_is_that_term():
    # "no more than" is the bound "at most", not a negation of the sentence (prune_on_target_overlap).
    reading = P.read("No more than 4 tablets a day.")
    assert [(t.group, t.pole, t.flipped) for t in reading.terms] == [("bound", 1, False)]
    assert not reading.negated and reading.modifiers == []


def test_a_default_backward_rule_from_medspacy_negates_the_term_before_it():
    # "has been ruled out" is one of medspaCy's default rules (a backward trigger), not one of Concord's lists.
    reading = P.read("A severe reaction has been ruled out.")
    assert [(t.group, t.pole, t.flipped) for t in reading.terms] == [("severity", 0, True)]
    assert reading.modifiers == [("NEGATED_EXISTENCE", "has been ruled out")]


def test_historical_and_experiencer_are_recorded_not_compared():
    family = P.read("There is a family history of high blood pressure.")
    assert family.family and family.historical
    assert [(t.group, t.family, t.historical) for t in family.terms] == [("amount", True, True)]
    relative = P.read("Her mother had a history of severe asthma.")
    assert relative.family and relative.historical
    assert ("FAMILY", "mother") in relative.modifiers
    patient = P.read("You have high blood pressure.")
    assert not patient.family and not patient.historical
    # Recorded only (docs/metrics/README.md: the dev split gives no evidence for comparing them).
    assert C.mismatches("There is a family history of high blood pressure.", "You have high blood pressure.") == []


def test_the_cached_reading_of_a_sentence_is_read_afresh_each_time():
    # ConText's modifiers are cached per sentence; the terms they flip are new objects on every read.
    first = P.read("Do not stop the tablets.")
    first.terms[0].pole ^= 1
    first.terms[0].flipped = False
    again = P.read("Do not stop the tablets.")
    assert [(t.group, t.pole, t.flipped) for t in again.terms] == [("action", 0, True)]
