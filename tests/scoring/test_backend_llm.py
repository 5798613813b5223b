"""The llm backend against a local OpenAI-compatible stub server (tests/scoring/llm_stub.py)."""

from __future__ import annotations

import json

import pytest

from scoring.backends import get_backend
from scoring.backends.llm import LLMBackend
from scoring.backends.prompts import PROMPTS
from scoring.metrics import (
    BackendResponseError,
    BackendUnavailable,
    ChunkInput,
    ItemInput,
    MetricError,
    TransientBackendError,
    get_metric,
    score_item,
)
from scoring.services import unit_key
from tests.scoring.llm_stub import content, stall, status, verdicts


def _backend(stub, **options) -> LLMBackend:
    options = {"max_retries": 2, "backoff_base": 0.01, "timeout": 5.0, **options}
    return LLMBackend(base_url=stub.base_url, model="judge-7b", api_key="k-test", **options)


ITEM = ItemInput(
    id="i1", question="Does aspirin reduce fever?", answer="Aspirin reduces fever. It cures cancer.",
    sentences=["Aspirin reduces fever.", "It cures cancer."],
    contexts=[ChunkInput(rank=1, text="Aspirin reduces fever and pain.")],
)


def test_llm_judgement_success_stores_prompt_hash_raw_output_and_model(llm_stub):
    llm_stub.queue(verdicts("supported", [True, False]))
    backend = _backend(llm_stub)
    first, second = backend.supports(["Aspirin reduces fever.", "It cures cancer."], ["Aspirin reduces fever."])
    assert (first.verdict, second.verdict) == (True, False)
    assert first.details["prompt_sha256"] == PROMPTS["supports"].sha256
    assert first.details["prompt_version"] == "1"
    assert json.loads(first.details["raw"][0])["verdicts"][1]["supported"] is False
    request = llm_stub.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["json"]["model"] == "judge-7b"
    assert request["headers"]["Authorization"] == "Bearer k-test"
    assert "[1] It cures cancer." in request["json"]["messages"][1]["content"]


def test_llm_metric_end_to_end_with_cf(llm_stub):
    llm_stub.queue(verdicts("information_bearing", [True, True]), verdicts("supported", [True, False]))
    cf = get_metric("cf")
    scores = score_item(cf, ITEM, _backend(llm_stub), cf.resolve_params({}))
    assert scores[0].value == 0.5
    assert len(llm_stub.requests) == 2
    assert all(s.details["backend_identity"].startswith("llm:judge-7b@") for s in scores)


def test_malformed_json_is_retried_then_recorded_as_a_failed_score(llm_stub):
    llm_stub.queue(content("Sure! The answer is yes."), content('{"verdicts": [{"index": 7, "supported": true}]}'),
                   content("{not json"))
    rf = get_metric("rf")
    backend = _backend(llm_stub)
    with pytest.raises(BackendResponseError):
        backend.supports(["a"], ["b"])
    assert len(llm_stub.requests) == 3  # 1 + max_retries attempts, then no more

    llm_stub.queue(*[content("not json at all")] * 3)
    (failed,) = score_item(rf, ITEM, backend, rf.resolve_params({}))
    assert (failed.state, failed.value, unit_key(failed.unit)) == ("failed", None, "item")
    assert "no valid answer to prompt statements" in failed.details["error"]
    assert failed.details["raw"] == ["not json at all"] * 3


def test_a_429_is_retried_with_backoff_and_then_succeeds(llm_stub):
    llm_stub.queue(status(429, headers={"Retry-After": "0"}), status(503), verdicts("relevant", [True]))
    (judgement,) = _backend(llm_stub).relevance("q", ["passage"])
    assert judgement.verdict is True
    assert len(llm_stub.requests) == 3


def test_timeouts_raise_the_transient_error_and_the_last_attempt_records_a_failed_state(llm_stub):
    llm_stub.queue(stall(), stall())
    backend = _backend(llm_stub, timeout=0.2, max_retries=1)
    ra = get_metric("ra")
    item = ItemInput(id="i", question="q", answer="a", sentences=["a"], scope_class="in_scope")
    with pytest.raises(TransientBackendError, match="timeout"):
        score_item(ra, item, backend, ra.resolve_params({}), final_attempt=False)
    assert len(llm_stub.requests) == 2
    llm_stub.queue(stall(), stall())
    (failed,) = score_item(ra, item, backend, ra.resolve_params({}), final_attempt=True)
    assert (failed.state, failed.details["error_type"]) == ("failed", "TransientBackendError")


def test_self_consistency_keeps_every_sample_and_the_spread(llm_stub):
    llm_stub.queue(verdicts("covered", [True, False]), verdicts("covered", [True, True]),
                   verdicts("covered", [True, False]))
    first, second = _backend(llm_stub, samples=3).covers(["dose", "timing"], ["Take 500 mg twice daily."])
    assert (first.verdict, first.details["agreement"]) == (True, 1.0)
    expected = (False, pytest.approx(1 / 3), [False, True, False])
    assert (second.verdict, second.score, second.details["votes"]) == expected
    assert second.details["agreement"] == pytest.approx(2 / 3)
    assert len(first.details["raw"]) == 3
    assert all(r["json"]["temperature"] == 0.7 for r in llm_stub.requests)


def test_rubric_reports_the_chosen_criterion_not_the_mean_with_all_four_and_their_spread(llm_stub):
    # PubHealthBench-RAG (arXiv 2607.06641) reports judge-human agreement per criterion (near zero for factual
    # consistency), so a criterion is never averaged with the others. Two samples: faithfulness 5 and 3.
    llm_stub.queue(
        content({"faithfulness": 5, "completeness": 3, "factual_consistency": 4, "clarity": 4, "rationale": "ok"}),
        content({"faithfulness": 3, "completeness": 3, "factual_consistency": 4, "clarity": 5, "rationale": "ok"}),
    )
    rubric = get_metric("rubric")
    (score,) = rubric.score(ITEM, _backend(llm_stub, samples=2), rubric.resolve_params({}))
    assert score.value == 4.0  # faithfulness: mean of 5 and 3; the four-criterion mean would be 3.875
    assert score.details["criterion"] == "faithfulness"
    assert score.details["ratings"] == {"faithfulness": 4, "completeness": 3, "factual_consistency": 4, "clarity": 4.5}
    assert score.details["spread"]["faithfulness"] == {"sd": 1.0, "min": 3, "max": 5}
    assert score.details["prompt_sha256"] == PROMPTS["rubric"].sha256
    assert rubric.estimated_questions(rubric.resolve_params({"criterion": "clarity"})) == ("rubric_clarity",)


def test_rubric_judges_faithfulness_against_the_marked_reference_chunk(llm_stub):
    llm_stub.queue(content({"faithfulness": 2, "completeness": 4, "factual_consistency": 4, "clarity": 5}))
    chunks = [ChunkInput(rank=1, text="Background passage."),
              ChunkInput(rank=2, text="The reference chunk.", is_target=True)]
    item = ItemInput(id="r", question="q", answer="a", sentences=["a"], contexts=chunks)
    rubric = get_metric("rubric")
    (score,) = rubric.score(item, _backend(llm_stub), rubric.resolve_params({"criterion": "clarity"}))
    assert score.value == 5.0
    assert score.details["faithfulness_against"] == "the reference chunk"
    assert score.details["prompt_sha256"] == PROMPTS["rubric_reference"].sha256
    prompt = llm_stub.requests[-1]["json"]["messages"][1]["content"]
    assert "Reference passage:\n[0] The reference chunk." in prompt


def test_a_rating_outside_one_to_five_is_malformed(llm_stub):
    llm_stub.queue(*[content({"faithfulness": 6, "completeness": 3, "factual_consistency": 4, "clarity": 4})] * 3)
    with pytest.raises(BackendResponseError, match="faithfulness=6"):
        _backend(llm_stub).rubric("q", "a", [])


def test_rubric_refuses_non_llm_backends_by_name():
    rubric = get_metric("rubric")
    with pytest.raises(MetricError, match="allowed: llm"):
        rubric.score(ITEM, get_backend("lexical"), rubric.resolve_params({}))


def test_unconfigured_llm_is_unavailable_with_a_clear_message(settings):
    settings.LLM_BASE_URL = None
    settings.LLM_MODEL = None
    with pytest.raises(BackendUnavailable, match="set LLM_BASE_URL"):
        get_backend("llm")


def test_llm_settings_configure_the_backend_and_a_rejected_key_makes_it_unavailable(settings, llm_stub):
    settings.LLM_BASE_URL = llm_stub.base_url
    settings.LLM_MODEL = "judge-7b"
    settings.LLM_MAX_RETRIES = 0
    backend = get_backend("llm")
    assert backend.identity.startswith(f"llm:judge-7b@{llm_stub.base_url}")
    llm_stub.queue(status(401))
    with pytest.raises(BackendUnavailable, match="HTTP 401"):
        backend.behaviour("q", "a")


def test_statement_extraction_and_behaviour_parse_their_shapes(llm_stub):
    llm_stub.queue(content({"statements": ["Aspirin reduces fever.", "  "]}), content({"behaviour": "escalate"}))
    backend = _backend(llm_stub)
    assert backend.statements("q", "a", ["a"]).texts == ["Aspirin reduces fever."]
    assert backend.behaviour("q", "a").behaviour == "escalate"


def test_sentence_kinds_are_validated_against_the_two_kinds(llm_stub):
    good = content({"verdicts": [{"index": 0, "kind": "simplification"}, {"index": 1, "kind": "elaboration"}]})
    llm_stub.queue(content({"verdicts": [{"index": 0, "kind": "summary"}, {"index": 1, "kind": "elaboration"}]}), good)
    simp, elab = _backend(llm_stub).sentence_kinds(["Drug X lowered BP.", "BP is blood pressure."], ["Drug X ..."])
    assert (simp.details["kind"], elab.details["kind"]) == ("simplification", "elaboration")
    assert len(llm_stub.requests) == 2  # the first answer named an unknown kind and was asked again


# PlainQAFact (digest; authors' code github.com/zhiwenyou103/PlainQAFact, qaeval F1Scorer = SQuAD compute_f1):
# answer extraction + question generation by the model, question answering on the evidence, answer overlap by
# token F1; an unanswered question scores 0. Worked example: one simplification with two questions, answered
# "500 mg" (gold "500 mg": F1 1) and null (F1 0) → sentence 0.5; the item (one sentence) 0.5.
def test_plainqafact_with_llm_runs_the_qa_pipeline_and_scores_by_token_f1(llm_stub):
    llm_stub.queue(
        verdicts("kind", ["simplification"]),
        content({"sentences": [{"index": 0, "pairs": [
            {"answer": "500 mg", "question": "What dose of paracetamol was given?"},
            {"answer": "children", "question": "Who received paracetamol?"}]}]}),
        content({"answers": [{"index": 0, "answer": "500 mg"}, {"index": 1, "answer": None}]}),
    )
    item = ItemInput(id="p", question="", answer="Children got 500 mg of paracetamol.",
                     sentences=["Children got 500 mg of paracetamol."],
                     source="Adults received 500 mg of paracetamol.")
    metric = get_metric("plainqafact")
    scores = metric.score(item, _backend(llm_stub), metric.resolve_params({"knowledge": "none"}))
    assert scores[0].value == 0.5
    assert scores[0].details["method"] == "PlainQAFact (QA-based)"
    qa = scores[1].details["verification"]["qa"]
    assert [row["f1"] for row in qa] == [1.0, 0.0]


def test_plainqafact_with_other_backends_is_named_kind_aware_entailment():
    metric = get_metric("plainqafact")
    item = ItemInput(id="p", question="", answer="Paracetamol lowers fever.", sentences=["Paracetamol lowers fever."],
                     source="Paracetamol lowers fever in children.")
    scores = metric.score(item, get_backend("lexical"), metric.resolve_params({"knowledge": "none"}))
    assert scores[0].details["method"] == "kind-aware entailment (PlainQAFact-style, no LLM)"
    assert scores[0].details["kind_decision"]["own_signal"] is False
    with pytest.raises(MetricError, match="method=qa needs the llm backend"):
        metric.score(item, get_backend("lexical"), metric.resolve_params({"knowledge": "none", "method": "qa"}))
