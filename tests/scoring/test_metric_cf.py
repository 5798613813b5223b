"""Conversational Faithfulness on hand-worked examples (ASTRID, arXiv 2501.08208, CF definition)."""

from __future__ import annotations

import pytest

from scoring.backends import get_backend
from scoring.backends.base import BackendCapabilityError
from scoring.metrics import ChunkInput, ItemInput, MetricError, get_metric
from scoring.services import unit_key
from tests.scoring.backend_double import BackendDouble


def _item(sentences: list[str], contexts: list[str] = ("Aspirin reduces fever and pain.",)) -> ItemInput:
    return ItemInput(
        id="i1", question="Does aspirin help?", answer=" ".join(sentences), sentences=list(sentences),
        contexts=[ChunkInput(rank=r, text=t) for r, t in enumerate(contexts, start=1)],
    )


def _by_key(scores):
    return {unit_key(s.unit): s for s in scores}


def test_cf_is_grounded_over_information_bearing_sentences():
    # 4 sentences: 2 conversational, 2 information-bearing of which 1 grounded → CF = 1/2.
    backend = BackendDouble(non_informative={"Hello!", "Let me know if you need more."}, supported={"A is B."})
    cf = get_metric("cf")
    scores = _by_key(cf.score(_item(["Hello!", "A is B.", "C is D.", "Let me know if you need more."]), backend,
                              cf.resolve_params({})))
    assert scores["item"].value == 0.5
    assert scores["item"].details["information_bearing"] == 2
    assert scores["item"].details["grounded"] == 1
    assert (scores["s:0"].state, scores["s:0"].value) == ("undetermined", None)
    assert (scores["s:1"].value, scores["s:2"].value) == (1.0, 0.0)
    assert scores["s:3"].state == "undetermined"


def test_cf_is_one_when_no_sentence_is_information_bearing():
    backend = BackendDouble(non_informative={"Hello!", "Take care."})
    cf = get_metric("cf")
    item_score = _by_key(cf.score(_item(["Hello!", "Take care."]), backend, cf.resolve_params({})))["item"]
    assert (item_score.value, item_score.state) == (1.0, "ok")
    assert "no information-bearing sentence" in item_score.details["reason"]
    assert backend.calls == []  # grounding is never asked for


def test_cf_of_an_empty_answer_is_one_and_says_so():
    cf = get_metric("cf")
    item_score = cf.score(_item([]), BackendDouble(), cf.resolve_params({}))[0]
    assert (item_score.value, item_score.details["reason"]) == (1.0, "the answer has no sentences")


def test_cf_with_lexical_backend_on_a_worked_example():
    # Context tokens {aspirin, reduces, fever, and, pain}. "Aspirin reduces fever." precision 3/3 ≥ 0.5;
    # "Aspirin cures cancer quickly." precision 1/4 < 0.5; "Hi there!" is too short to inform → CF = 1/2.
    cf = get_metric("cf")
    scores = _by_key(cf.score(_item(["Hi there!", "Aspirin reduces fever.", "Aspirin cures cancer quickly."]),
                              get_backend("lexical"), cf.resolve_params({})))
    assert scores["item"].value == 0.5
    assert scores["s:1"].details["grounding_details"]["score"] == 1.0
    assert scores["s:2"].details["grounding_details"]["score"] == 0.25
    assert scores["s:0"].details["information_bearing_details"]["rule"] == "too_short"


def test_cf_refuses_to_guess_information_bearing_with_a_backend_that_cannot_classify():
    nli_like = BackendDouble("nli", supported={"A is B."}, can_classify_information=False)
    cf = get_metric("cf")
    with pytest.raises(BackendCapabilityError, match="information-bearing"):
        cf.score(_item(["A is B."]), nli_like, cf.resolve_params({}))
    # Asking for the documented rule set explicitly works: "A is B." has < 2 content tokens under the rules,
    # so use a longer sentence.
    nli_like = BackendDouble("nli", supported={"Aspirin reduces fever."}, can_classify_information=False)
    scores = cf.score(_item(["Aspirin reduces fever.", "Thanks!"]), nli_like,
                      cf.resolve_params({"information_bearing": "rules"}))
    assert scores[0].value == 1.0
    assert scores[0].details["information_bearing_method"] == "rules"


def test_cf_rejects_a_backend_it_does_not_declare():
    cf = get_metric("cf")
    with pytest.raises(MetricError, match="allowed: embedding, lexical, nli, llm, learned"):
        cf.score(_item(["A is B."]), BackendDouble("none"), cf.resolve_params({}))


def test_cf_without_context_leaves_information_bearing_sentences_ungrounded():
    cf = get_metric("cf")
    scores = cf.score(_item(["Aspirin reduces fever."], contexts=()), get_backend("lexical"), cf.resolve_params({}))
    assert scores[0].value == 0.0
    assert "no context" in scores[0].details["note"]
