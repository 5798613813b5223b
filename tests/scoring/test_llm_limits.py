"""The llm backend in production: refusals, cut-off answers, a run's budget of requests and tokens, the study's
answer cache and the machine-wide concurrency limit, against the local OpenAI-compatible server
(tests/scoring/llm_stub.py), through the real score-run path where the behaviour belongs to a run."""

from __future__ import annotations

import threading

import pytest
from django.urls import reverse

from scoring import services
from scoring.backends.llm import LLMBackend
from scoring.backends.llm_limits import WAITING, BudgetSpent
from scoring.llm_runs import RunBudget, StudyAnswers
from scoring.metrics import ItemInput, get_metric, score_item
from scoring.models import LLMAnswer, RunStatus, Score, ScoreRun
from tests import factories
from tests.scoring.llm_stub import content, ollama_error, refused, status, verdicts
from tests.scoring.runs_support import eager_celery
from tests.waiting import join, wait_for


def _backend(stub, **options) -> LLMBackend:
    options = {"max_retries": 2, "backoff_base": 0.01, "timeout": 5.0, **options}
    return LLMBackend(base_url=stub.base_url, model="judge-7b", **options)


ITEM = ItemInput(id="i", question="Is the drug safe in pregnancy?", answer="It is safe.",
                 sentences=["It is safe."], scope_class="in_scope")


def _behaviour_item(n: int) -> ItemInput:
    return ItemInput(id=f"i{n}", question=f"question {n}", answer=f"answer {n}", sentences=[f"answer {n}"],
                     scope_class="in_scope")


# --- refusals and cut-off answers: one request, a failed item that says why --------------------------------


def test_a_refusal_fails_the_item_as_refused_without_asking_again(llm_stub):
    llm_stub.queue(refused("I can't help with medical questions."))
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, _backend(llm_stub), ra.resolve_params({}))
    assert (failed.state, failed.details["failure"]) == ("failed", "refused")
    assert "refused to answer prompt behaviour: I can't help with medical questions." in failed.details["error"]
    assert len(llm_stub.requests) == 1  # the same prompt would be refused again: not retried


def test_a_content_filter_stop_is_a_refusal(llm_stub):
    llm_stub.queue(content("", finish_reason="content_filter"))
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, _backend(llm_stub), ra.resolve_params({}))
    assert failed.details["failure"] == "refused" and "content filter" in failed.details["error"]
    assert len(llm_stub.requests) == 1


def test_an_answer_cut_off_at_the_token_limit_fails_as_truncated_and_names_the_limit(llm_stub):
    llm_stub.queue(content('{"behaviour": "ans', finish_reason="length"))
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, _backend(llm_stub, max_tokens=8), ra.resolve_params({}))
    assert (failed.state, failed.details["failure"]) == ("failed", "truncated")
    assert "finish_reason=length, max_tokens=8" in failed.details["error"]
    assert failed.details["raw"] == ['{"behaviour": "ans']
    assert llm_stub.requests[0]["json"]["max_tokens"] == 8  # the limit is asked of the server
    assert len(llm_stub.requests) == 1


def test_an_answer_that_stops_normally_is_not_truncated_even_when_max_tokens_is_set(llm_stub):
    llm_stub.queue(content({"behaviour": "answer"}, finish_reason="stop"))
    ra = get_metric("ra")
    (scored,) = score_item(ra, ITEM, _backend(llm_stub, max_tokens=64), ra.resolve_params({}))
    assert scored.state == "ok" and scored.value == 1.0


def test_an_ollama_style_error_body_is_shown_and_fails_the_item_as_http(llm_stub):
    llm_stub.queue(ollama_error(400, 'model "judge-7b" does not support JSON mode'))
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, _backend(llm_stub), ra.resolve_params({}))
    assert failed.details["failure"] == "http"
    assert 'does not support JSON mode' in failed.details["error"]


def test_a_prose_answer_is_malformed_retried_and_then_failed_as_malformed(llm_stub):
    llm_stub.queue(*[content("I'm sorry, as an AI I cannot give medical advice.")] * 3)
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, _backend(llm_stub), ra.resolve_params({}))
    assert failed.details["failure"] == "malformed"
    assert len(llm_stub.requests) == 3


# --- the run's budget ------------------------------------------------------------------------------


@pytest.fixture
def run(study, researcher):
    return ScoreRun.objects.create(study=study, metric="ra", metric_version="x", backend="llm",
                                   created_by=researcher)


def test_a_request_budget_allows_exactly_that_many_requests_then_fails_items_without_sending(llm_stub, run):
    llm_stub.default = content({"behaviour": "answer"})
    backend = _backend(llm_stub).for_run(budget=RunBudget(run.pk, max_requests=3, max_tokens=None), store=None)
    ra = get_metric("ra")
    states = [score_item(ra, _behaviour_item(n), backend, ra.resolve_params({}))[0] for n in range(5)]
    assert [s.state for s in states] == ["ok", "ok", "ok", "failed", "failed"]
    assert states[3].details["failure"] == "budget"
    assert "its 3 requests (max_requests) are used" in states[3].details["error"]
    assert len(llm_stub.requests) == 3
    run.refresh_from_db()
    assert run.llm_requests == 3


def test_a_token_budget_counts_reported_tokens_and_refuses_once_they_reach_it(llm_stub, run):
    # Hand-worked: 100 tokens per answer (60 + 40) and a budget of 250: requests 1, 2 and 3 start with 0, 100 and
    # 200 tokens used (< 250) and are sent; the fourth finds 300 >= 250 and is refused. The run overshoots by the
    # third answer's 50 tokens, as documented (tokens are known only once the answer arrives).
    llm_stub.default = content({"behaviour": "answer"}, usage={"prompt_tokens": 60, "completion_tokens": 40,
                                                               "total_tokens": 100})
    backend = _backend(llm_stub).for_run(budget=RunBudget(run.pk, max_requests=None, max_tokens=250), store=None)
    ra = get_metric("ra")
    states = [score_item(ra, _behaviour_item(n), backend, ra.resolve_params({}))[0].state for n in range(4)]
    assert states == ["ok", "ok", "ok", "failed"]
    run.refresh_from_db()
    assert (run.llm_requests, run.llm_tokens) == (3, 300)
    with pytest.raises(BudgetSpent, match="300 tokens are used of its 250"):
        RunBudget(run.pk, max_requests=None, max_tokens=250).take_request()


def test_retries_count_against_the_budget(llm_stub, run):
    llm_stub.queue(status(503), content({"behaviour": "answer"}))
    backend = _backend(llm_stub).for_run(budget=RunBudget(run.pk, max_requests=1, max_tokens=None), store=None)
    ra = get_metric("ra")
    (failed,) = score_item(ra, ITEM, backend, ra.resolve_params({}))
    assert failed.details["failure"] == "budget"  # the retry after the 503 would have been a second request
    assert len(llm_stub.requests) == 1


def test_a_run_with_a_budget_scores_what_it_can_and_shows_every_item_the_budget_left(
    llm_stub, settings, study, researcher, client, django_capture_on_commit_callbacks,
):
    settings.LLM_BASE_URL, settings.LLM_MODEL = llm_stub.base_url, "judge-7b"
    for n in range(4):
        factories.make_item(study, f"q-{n}", question=f"Question {n}?", answer=f"Answer {n}.",
                            scope_class="in_scope")
    llm_stub.default = content({"behaviour": "answer"})
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(study=study, metric="ra", backend="llm", actor=researcher, parameters=None,
                                       backend_options={"max_requests": 2, "backoff_base": 0})
    run.refresh_from_db()
    assert run.status == RunStatus.DONE, run.error
    assert (run.n_done, run.n_failed, run.llm_requests) == (2, 2, 2)
    failed = Score.objects.filter(run=run, state="failed")
    assert sorted(s.details["failure"] for s in failed) == ["budget", "budget"]
    client.force_login(researcher)
    page = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    assert "2 requests of at most 2" in page
    assert page.count("<td>budget</td>") == 2


# --- the study's answer cache ------------------------------------------------------------------------


def test_a_second_run_of_the_same_prompts_is_answered_from_the_study_cache_without_requests(
    llm_stub, settings, study, researcher, django_capture_on_commit_callbacks,
):
    settings.LLM_BASE_URL, settings.LLM_MODEL = llm_stub.base_url, "judge-7b"
    for n in range(3):
        factories.make_item(study, f"q-{n}", question=f"Question {n}?", answer=f"Answer {n}.",
                            scope_class="in_scope")
    llm_stub.default = content({"behaviour": "refuse"})

    def start(**options):
        with eager_celery(), django_capture_on_commit_callbacks(execute=True):
            run = services.score_run_start(study=study, metric="ra", backend="llm", actor=researcher, parameters=None,
                                           backend_options=options)
        run.refresh_from_db()
        assert run.status == RunStatus.DONE, run.error
        return run

    first = start()
    assert (len(llm_stub.requests), first.llm_requests) == (3, 3)
    assert LLMAnswer.objects.filter(study=study).count() == 3
    second = start()
    assert (len(llm_stub.requests), second.llm_requests) == (3, 0)  # no request at all
    values = lambda r: sorted(Score.objects.filter(run=r).values_list("item__external_id", "value"))  # noqa: E731
    assert values(second) == values(first)
    cached = Score.objects.filter(run=second).first()
    assert cached.details["detector"]["cached"] == [True]  # the judgement says it came from the cache
    third = start(cache=False)  # asked again, and the answers are the model's now
    assert (len(llm_stub.requests), third.llm_requests) == (6, 3)


def test_the_cache_is_per_study_and_keyed_by_model_and_sample(llm_stub, study, researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    llm_stub.default = content({"behaviour": "answer"})
    ra = get_metric("ra")

    def ask(study_id, **options):
        backend = _backend(llm_stub, **options).for_run(budget=None, store=StudyAnswers(study_id))
        return score_item(ra, ITEM, backend, ra.resolve_params({}))[0]

    ask(study.pk)
    ask(study.pk)
    assert len(llm_stub.requests) == 1
    ask(other.pk)  # another study's answers are not read
    assert len(llm_stub.requests) == 2
    ask(study.pk, temperature=0.5)  # another temperature is another prompt
    assert len(llm_stub.requests) == 3
    ask(study.pk, samples=2)  # the first sample is cached (temperature 0.7 now: a new key), both asked
    assert len(llm_stub.requests) == 5


def test_failed_answers_are_never_cached(llm_stub, study):
    llm_stub.queue(*[content("not json")] * 3, content({"behaviour": "answer"}))
    ra = get_metric("ra")
    backend = _backend(llm_stub).for_run(budget=None, store=StudyAnswers(study.pk))
    assert score_item(ra, ITEM, backend, ra.resolve_params({}))[0].state == "failed"
    assert not LLMAnswer.objects.exists()
    assert score_item(ra, ITEM, backend, ra.resolve_params({}))[0].state == "ok"
    assert LLMAnswer.objects.count() == 1


# --- the machine-wide concurrency limit ----------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2])
def test_no_more_requests_are_in_flight_than_the_limit(llm_stub, settings, tmp_path, limit):
    """Four callers at once with a limit of ``limit``: the server holds every request until all four callers are
    either answering or waiting for a slot; only then is it released. Without the limit all four would be in
    flight at that moment."""
    settings.VAR_DIR = tmp_path
    settings.LLM_MAX_CONCURRENT_REQUESTS = limit
    llm_stub.default = verdicts("relevant", [True])
    llm_stub.hold()
    backend = _backend(llm_stub, max_retries=0, timeout=600)
    errors: list[BaseException] = []

    def call():
        try:
            backend.relevance("q", ["passage"])
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    # Every caller is accounted for once each is either being answered or waiting for a slot; a caller waits only
    # when every slot is held, and a held slot's request is at the server by then, so exactly ``limit`` are.
    wait_for(lambda: llm_stub.in_flight + WAITING.count == 4,
             what="every caller in flight or waiting for a slot",
             progress=[lambda: llm_stub.in_flight, lambda: WAITING.count],
             report=lambda: f"in flight {llm_stub.in_flight}, waiting {WAITING.count}")
    held = (llm_stub.in_flight, WAITING.count)
    llm_stub.release()
    for t in threads:
        join(t, what="a caller")
    assert not errors
    assert held == (limit, 4 - limit)
    assert llm_stub.max_in_flight == limit
    assert len(llm_stub.requests) == 4


def test_without_a_limit_every_caller_is_in_flight_at_once(llm_stub, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.LLM_MAX_CONCURRENT_REQUESTS = 0
    llm_stub.default = verdicts("relevant", [True])
    llm_stub.hold()
    backend = _backend(llm_stub, max_retries=0, timeout=600)
    threads = [threading.Thread(target=backend.relevance, args=("q", ["p"])) for _ in range(3)]
    for t in threads:
        t.start()
    wait_for(lambda: llm_stub.in_flight == 3, what="three requests in flight",
             progress=lambda: llm_stub.in_flight)
    llm_stub.release()
    for t in threads:
        join(t, what="a caller")
    assert llm_stub.max_in_flight == 3
