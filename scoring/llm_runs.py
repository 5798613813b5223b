"""A score run's side of the ``llm`` backend's limits (``scoring.backends.llm_limits``): its budget of requests
and tokens, counted on the run's row so that every worker scoring it shares one count, and the study's store of
valid answers (``LLMAnswer``).

The budget is checked and counted in one conditional UPDATE per request (autocommit, outside any transaction
of the caller's: the row lock lasts one statement), so two workers cannot both take the last request. Tokens
are known only once an answer arrives: the request that crosses ``max_run_tokens`` is allowed (the run may
overshoot by one answer's tokens), every later one is refused. A refused request fails its item as ``budget``;
the run goes on and records each such item, so what the budget left unscored is visible per item.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from scoring.backends.llm_limits import BudgetSpent
from scoring.models import LLMAnswer, ScoreRun


class RunBudget:
    def __init__(self, run_id: int, *, max_requests: int | None, max_tokens: int | None) -> None:
        self.run_id, self.max_requests, self.max_tokens = run_id, max_requests, max_tokens

    def take_request(self) -> None:
        rows = ScoreRun.objects.filter(pk=self.run_id)
        if self.max_requests is not None:
            rows = rows.filter(llm_requests__lt=self.max_requests)
        if self.max_tokens is not None:
            rows = rows.filter(llm_tokens__lt=self.max_tokens)
        if rows.update(llm_requests=F("llm_requests") + 1):
            return
        used = ScoreRun.objects.filter(pk=self.run_id).values("llm_requests", "llm_tokens").first()
        if used is None:
            raise BudgetSpent("llm backend: the run no longer exists", {"failure": "budget"})
        if self.max_requests is not None and used["llm_requests"] >= self.max_requests:
            spent = f"its {self.max_requests} requests (max_requests) are used"
        else:
            spent = f"{used['llm_tokens']} tokens are used of its {self.max_tokens} (max_run_tokens)"
        raise BudgetSpent(f"llm backend: the run's budget is spent: {spent}; nothing was sent for this item",
                          {"failure": "budget", "llm_requests": used["llm_requests"], "llm_tokens": used["llm_tokens"]})

    def add_tokens(self, tokens: int) -> None:
        if tokens > 0:
            ScoreRun.objects.filter(pk=self.run_id).update(llm_tokens=F("llm_tokens") + tokens)


class StudyAnswers:
    """The study's stored answers (a unique key per study: two workers storing the same answer keep one)."""

    def __init__(self, study_id: int) -> None:
        self.study_id = study_id

    def get(self, key: str) -> str | None:
        return LLMAnswer.objects.filter(study_id=self.study_id, key=key).values_list("content", flat=True).first()

    def put(self, key: str, content: str, facts: dict[str, Any]) -> None:
        answer = LLMAnswer(
            study_id=self.study_id, key=key, content=content, model=str(facts.get("model", ""))[:200],
            prompt=str(facts.get("prompt", ""))[:40], prompt_sha256=str(facts.get("prompt_sha256", ""))[:64],
        )
        LLMAnswer.objects.bulk_create([answer], ignore_conflicts=True)


def bind(backend: Any, run: ScoreRun) -> Any:
    """The backend as this run uses it: with the run's budget and the study's answers when it takes them
    (``for_run``: the llm backend), else unchanged."""
    for_run = getattr(backend, "for_run", None)
    if for_run is None:
        return backend
    budget = RunBudget(run.pk, max_requests=backend.max_requests, max_tokens=backend.max_run_tokens)
    return for_run(budget=budget, store=StudyAnswers(run.study_id))
