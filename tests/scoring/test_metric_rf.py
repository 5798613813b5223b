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


def test_rf_with_lexical_backend_uses_rule_filtered_sentences_as_statements():
    # "Thanks for asking!" is dropped by the rules; "metformin lowers blood glucose" has precision 4/4,
    # "metformin causes hair growth" 1/4 → RF = 1/2.
    rf = get_metric("rf")
    (score,) = rf.score(
        _item(["Thanks for asking!", "Metformin lowers blood glucose.", "Metformin causes hair growth."]),
        get_backend("lexical"), rf.resolve_params({}),
    )
    assert score.value == 0.5
    assert score.details["n_statements"] == 2
    assert score.details["extraction"]["dropped"] == [{"index": 0, "rule": "thanks"}]
