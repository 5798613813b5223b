"""RAGAS-style faithfulness on hand-worked examples (RF = supported statements / statements)."""

from __future__ import annotations

from scoring.backends import get_backend
from scoring.metrics import ChunkInput, ItemInput, get_metric
from tests.scoring.backend_double import BackendDouble


def _item(sentences: list[str], context: str = "Metformin lowers blood glucose in type 2 diabetes.") -> ItemInput:
    return ItemInput(id="i1", question="What does metformin do?", answer=" ".join(sentences),
                     sentences=list(sentences), contexts=[ChunkInput(rank=1, text=context)])


def test_rf_is_supported_statements_over_statements():
    backend = BackendDouble(statements=["S1", "S2", "S3"], supported={"S1", "S3"})
    rf = get_metric("rf")
    (score,) = rf.score(_item(["whatever"]), backend, rf.resolve_params({}))
    assert score.value == 2 / 3
    assert [s["supported"] for s in score.details["statements"]] == [True, False, True]


def test_rf_without_statements_is_undetermined_not_nan():
    rf = get_metric("rf")
    (score,) = rf.score(_item(["Hello!"]), BackendDouble(statements=[]), rf.resolve_params({}))
    assert (score.value, score.state) == (None, "undetermined")
    assert "no statements" in score.details["reason"]


def test_rf_with_lexical_backend_takes_every_sentence_of_the_answer_as_a_statement():
    # RAGAS filters nothing: "Thanks for asking!" is a statement (precision 0 against the context);
    # "metformin lowers blood glucose" has precision 4/4, "metformin causes hair growth" 1/4 → RF = 1/3.
    rf = get_metric("rf")
    (score,) = rf.score(
        _item(["Thanks for asking!", "Metformin lowers blood glucose.", "Metformin causes hair growth."]),
        get_backend("lexical"), rf.resolve_params({}),
    )
    assert score.value == 1 / 3
    assert score.details["n_statements"] == 3


# ASTRID's motivating contrast (arXiv 2501.08208, §2.2.1): RAGAS faithfulness counts conversational sentences
# as statements, CF counts only information-bearing ones. Worked example (issue 14, point 1): five sentences,
# of which two are information-bearing; the context supports only the eye-drops sentence.
# CF = 1 grounded / 2 information-bearing = 0.5; RF = 1 supported / 5 statements = 0.2.
WORKED_ANSWER = ["Hello!", "I'm sorry to hear that.", "Use the eye drops four times a day.",
                 "Paracetamol is fine for pain.", "Let me know if you have more questions."]
WORKED_CONTEXT = "Use the eye drops four times a day."


def _worked_item() -> ItemInput:
    return ItemInput(id="w", question="How often do I use my eye drops?", answer=" ".join(WORKED_ANSWER),
                     sentences=list(WORKED_ANSWER), contexts=[ChunkInput(rank=1, text=WORKED_CONTEXT)])


def test_worked_example_cf_half_rf_fifth_with_a_stated_backend():
    backend = BackendDouble(supported={"Use the eye drops four times a day."},
                            non_informative={"Hello!", "I'm sorry to hear that.",
                                             "Let me know if you have more questions."})
    cf, rf = get_metric("cf"), get_metric("rf")
    assert cf.score(_worked_item(), backend, cf.resolve_params({}))[0].value == 0.5
    assert rf.score(_worked_item(), backend, rf.resolve_params({}))[0].value == 0.2


def test_worked_example_cf_half_rf_fifth_with_the_lexical_backend():
    lexical = get_backend("lexical")
    cf, rf = get_metric("cf"), get_metric("rf")
    cf_score = cf.score(_worked_item(), lexical, cf.resolve_params({}))[0]
    rf_score = rf.score(_worked_item(), lexical, rf.resolve_params({}))[0]
    assert (cf_score.value, cf_score.details["information_bearing"]) == (0.5, 2)
    assert (rf_score.value, rf_score.details["n_statements"]) == (0.2, 5)


def test_icat_claims_still_leave_out_conversational_sentences():
    backend = get_backend("lexical")
    claims = backend.statements("q", "", WORKED_ANSWER, drop_conversational=True).texts
    assert claims == ["Use the eye drops four times a day.", "Paracetamol is fine for pain."]
    assert backend.statements("q", "", WORKED_ANSWER).texts == WORKED_ANSWER
