"""The ``llm`` backend: an OpenAI-compatible chat-completions endpoint over httpx (vLLM, Ollama, hosted).

Configuration: ``LLM_BASE_URL`` (e.g. ``http://127.0.0.1:8000/v1``), ``LLM_MODEL``, ``LLM_API_KEY``
(optional), ``LLM_TIMEOUT_SECONDS``, ``LLM_MAX_RETRIES``; each can be overridden as an option (``model``,
``api_key``, ``timeout``, ``max_retries``), as can ``samples`` (self-consistency, default 1), ``temperature``
(default 0 for one sample, 0.7 for more), ``backoff_base``, ``backoff_cap`` and ``json_mode``. Without a
base URL and a model the backend is unavailable. The endpoint is an administrator's choice (the environment,
or the server-side ``score`` command), never a researcher's: score runs refuse a ``base_url`` option. Its host
must resolve to public addresses only — loopback, private, link-local and unique-local addresses are refused
(the server would otherwise fetch its own network for whoever names the URL) unless
``LLM_ALLOW_PRIVATE_ENDPOINTS`` is set.

Every judgement is one prompt from ``prompts.PROMPTS`` per item (all sentences / claims numbered in one
request), repeated ``samples`` times for self-consistency. Each answer must be a JSON object of the
prompt's shape (``validate``); a malformed answer is asked again. One call makes at most
``1 + max_retries`` attempts, sharing that budget between malformed answers and transient failures
(HTTP 429, 5xx, timeouts, connection errors), with exponential backoff (``backoff_base · 2^attempt``
seconds, or the server's numeric Retry-After, capped at ``backoff_cap``). When the budget is spent the
call raises ``TransientBackendError`` (if the last failure was transient — the Celery task may retry the
item later) or ``BackendResponseError`` (malformed answers — the item is recorded as failed, raw outputs
kept). Other 4xx answers are configuration errors (``BackendUnavailable``) except 400/422, which fail the item.

An answer the model refuses (the ``refusal`` field of an OpenAI-style message, or ``finish_reason``
``content_filter``) or cuts off at its token limit (``finish_reason`` ``length``; the ``max_tokens`` option
sets the limit the request asks for) is not asked again — the same prompt would get the same answer — and
fails the item with that reason. Every failure names its kind in the failed score's details (``failure``:
``malformed``, ``refused``, ``truncated``, ``budget``, ``http``; transient failures are retried by the task
and fail the item as ``TransientBackendError`` on its last attempt), with the raw outputs.

Limits (``scoring.backends.llm_limits``): at most ``LLM_MAX_CONCURRENT_REQUESTS`` requests in flight from one
machine; a run's budget, ``max_requests`` and ``max_run_tokens`` (options; counted on the run across every
worker, ``scoring.llm_runs``), past which each item fails as ``budget`` without a request; and a cache of
valid answers keyed by the sha256 of the endpoint, model, temperature, JSON mode, token limit, messages and
sample number, kept per study (``cache`` option, on by default): the same prompt in a later run of the study
is answered from it without a request, and the judgement says so (``cached``).

Details stored with every judgement: prompt name, version and sha256, the model, the raw outputs of all
samples, and the spread across samples: for a verdict, the share of samples agreeing with the majority;
for a rating, the standard deviation and range. Ties between samples resolve to the negative verdict
(not supported / not covered / not relevant / not information-bearing), stated in the details.

``supports`` asks about each evidence passage in its own prompt (one request per passage, all claims in it),
so the model never grounds a claim on facts spread over several passages. Each verdict then passes the same
mismatch check as every backend (``scoring.metrics.contradiction``: negation, number, dose, frequency, unit,
drug, body part, polarity between the claim and the passage sentence sharing most of its content words): a mismatch
makes that passage contradict the claim even where the model said supported. The claim's judgement is the
best single passage's (``scoring.backends.base.best_passage``, reported as ``evidence_passage``).
"""

from __future__ import annotations

import copy
import hashlib
import ipaddress
import json
import re
import socket
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from scoring.backends.base import (
    AVAILABLE,
    BEHAVIOURS,
    RUBRIC_CRITERIA,
    SENTENCE_KINDS,
    Availability,
    Backend,
    BackendDescriptor,
    Behaviour,
    Judgement,
    Option,
    RubricJudgement,
    Statements,
    apply_contradiction,
    best_passage,
    register,
)
from scoring.backends.llm_limits import Budget, ResponseStore, request_slot
from scoring.backends.prompts import PROMPTS, PromptTemplate, numbered
from scoring.backends.text import sentences_of
from scoring.metrics.base import BackendResponseError, BackendUnavailable, TransientBackendError
from scoring.metrics.text import answer_f1

_LOCK = threading.Lock()
_BACKENDS: dict[str, LLMBackend] = {}
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def endpoint_check(base_url: str) -> None:
    """Refuse an endpoint that is not http(s), whose host does not resolve, or that resolves to a
    loopback, private, link-local, unique-local or unspecified address, unless the administrator set
    ``LLM_ALLOW_PRIVATE_ENDPOINTS`` (e.g. a vLLM server on this machine)."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendUnavailable(f"llm backend: the endpoint {base_url!r} must be an http(s) URL with a host")
    if settings.LLM_ALLOW_PRIVATE_ENDPOINTS:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except (socket.gaierror, UnicodeError) as exc:
        raise BackendUnavailable(f"llm backend: cannot resolve the endpoint host {parts.hostname!r}: {exc}") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified:
            raise BackendUnavailable(
                f"llm backend: the endpoint host {parts.hostname!r} resolves to the non-public address {address}; "
                "an administrator must set LLM_ALLOW_PRIVATE_ENDPOINTS=true to use a loopback or private endpoint"
            )


class MalformedAnswer(ValueError):
    pass


def parse_json_object(content: str) -> dict[str, Any]:
    match = _FENCE.match(content)
    text = match.group(1) if match else content
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedAnswer(f"not JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(value, dict):
        raise MalformedAnswer("the answer is JSON but not an object")
    return value


def validate_verdicts(obj: dict[str, Any], n: int, field: str, kind: type | tuple[Any, ...]) -> dict[int, Any]:
    """{index: value} from {"verdicts": [{"index": i, field: v}, ...]} covering exactly 0..n-1."""
    verdicts = obj.get("verdicts")
    if not isinstance(verdicts, list):
        raise MalformedAnswer('missing list "verdicts"')
    out: dict[int, Any] = {}
    for entry in verdicts:
        if not isinstance(entry, dict):
            raise MalformedAnswer("a verdict is not an object")
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n or index in out:
            raise MalformedAnswer(f"bad or repeated index {index!r} (expected 0..{n - 1})")
        value = entry.get(field)
        if isinstance(kind, tuple):
            if value not in kind:
                raise MalformedAnswer(f"{field}={value!r} is not one of {list(kind)}")
        elif not isinstance(value, kind):
            raise MalformedAnswer(f"{field}={value!r} is not a {kind.__name__}")
        out[index] = value
    if len(out) != n:
        raise MalformedAnswer(f"expected {n} verdicts, got {len(out)}")
    return out


def validate_rubric(obj: dict[str, Any]) -> dict[str, int]:
    ratings = {}
    for criterion in RUBRIC_CRITERIA:
        value = obj.get(criterion)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
            raise MalformedAnswer(f"{criterion}={value!r} is not an integer from 1 to 5")
        ratings[criterion] = value
    return ratings


def validate_qa_pairs(obj: dict[str, Any], n: int) -> dict[int, list[dict[str, str]]]:
    """{sentence index: [{"answer", "question"}, ...]} covering exactly 0..n-1."""
    entries = obj.get("sentences")
    if not isinstance(entries, list):
        raise MalformedAnswer('missing list "sentences"')
    out: dict[int, list[dict[str, str]]] = {}
    for entry in entries:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n or index in out:
            raise MalformedAnswer(f"bad or repeated index {index!r} (expected 0..{n - 1})")
        pairs = entry.get("pairs")
        if not isinstance(pairs, list):
            raise MalformedAnswer(f'sentence {index}: "pairs" must be a list')
        clean = []
        for pair in pairs:
            if not isinstance(pair, dict) or not all(isinstance(pair.get(k), str) for k in ("answer", "question")):
                raise MalformedAnswer(f"sentence {index}: each pair needs string answer and question")
            if pair["answer"].strip() and pair["question"].strip():
                clean.append({"answer": pair["answer"].strip(), "question": pair["question"].strip()})
        out[index] = clean
    if len(out) != n:
        raise MalformedAnswer(f"expected {n} sentences, got {len(out)}")
    return out


def validate_qa_answers(obj: dict[str, Any], n: int) -> dict[int, str | None]:
    """{question index: answer span or None} covering exactly 0..n-1."""
    entries = obj.get("answers")
    if not isinstance(entries, list):
        raise MalformedAnswer('missing list "answers"')
    out: dict[int, str | None] = {}
    for entry in entries:
        index = entry.get("index") if isinstance(entry, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n or index in out:
            raise MalformedAnswer(f"bad or repeated index {index!r} (expected 0..{n - 1})")
        answer = entry.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise MalformedAnswer(f"answer {index} must be a string or null")
        out[index] = answer.strip() if isinstance(answer, str) and answer.strip() else None
    if len(out) != n:
        raise MalformedAnswer(f"expected {n} answers, got {len(out)}")
    return out


class LLMBackend(Backend):
    name = "llm"
    defaults: ClassVar[dict[str, float]] = {}

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        max_retries: int = 3,
        samples: int = 1,
        temperature: float | None = None,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        json_mode: bool = True,
        max_tokens: int | None = None,
        cache: bool = True,
        max_requests: int | None = None,
        max_run_tokens: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if samples < 1:
            raise BackendUnavailable(f"llm backend: samples must be at least 1, got {samples}")
        if transport is None:
            # An injected transport routes requests itself (tests, in-process servers); only real
            # network endpoints are checked.
            endpoint_check(base_url)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_retries = int(max_retries)
        self.samples = int(samples)
        self.temperature = float(temperature if temperature is not None else (0.0 if samples == 1 else 0.7))
        self.backoff_base = float(backoff_base)
        self.backoff_cap = float(backoff_cap)
        self.json_mode = json_mode
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        self.cache = bool(cache)
        # The run's budget (enforced by the Budget a run binds, ``for_run``; unbound, nothing is counted).
        self.max_requests = None if max_requests is None else int(max_requests)
        self.max_run_tokens = None if max_run_tokens is None else int(max_run_tokens)
        self.budget: Budget | None = None
        self.store: ResponseStore | None = None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=float(timeout), headers=headers, transport=transport)
        self.identity = f"llm:{model}@{self.base_url} samples={self.samples} temperature={self.temperature}"
        # Running totals that scoring.services reads before and after each item to record its cost;
        # tokens count only answers whose body reports ``usage`` (not every endpoint does).
        self.usage = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "answers_with_usage": 0,
                      "cached_answers": 0}

    def for_run(self, *, budget: Budget | None, store: ResponseStore | None) -> LLMBackend:
        """This backend with a run's budget and answer store: a shallow copy sharing the HTTP connection
        pool and the usage totals (one per process per configuration, as ``from_settings`` keeps them)."""
        bound = copy.copy(self)
        bound.budget, bound.store = budget, store
        return bound

    @classmethod
    def from_settings(cls, **options: Any) -> LLMBackend:
        """The backend for these options (settings filling the gaps), one per process per configuration
        so that its HTTP connection pool is reused across batches."""
        base_url = options.pop("base_url", None) or settings.LLM_BASE_URL
        model = options.pop("model", None) or settings.LLM_MODEL
        if not base_url or not model:
            raise BackendUnavailable(
                "llm backend: not configured; set LLM_BASE_URL (an OpenAI-compatible endpoint, e.g. "
                "http://127.0.0.1:8000/v1) and LLM_MODEL"
            )
        options.setdefault("api_key", settings.LLM_API_KEY or "")
        options.setdefault("timeout", settings.LLM_TIMEOUT_SECONDS)
        options.setdefault("max_retries", settings.LLM_MAX_RETRIES)
        key = repr(sorted({"base_url": base_url, "model": model, **options}.items()))
        with _LOCK:
            if key not in _BACKENDS:
                _BACKENDS[key] = cls(base_url=base_url, model=model, **options)
            return _BACKENDS[key]

    # --- transport ----------------------------------------------------------------------------------

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after is not None:
            try:
                return min(float(retry_after), self.backoff_cap)
            except ValueError:
                pass
        return min(self.backoff_base * (2**attempt), self.backoff_cap)

    def _post(self, messages: list[dict[str, str]]) -> httpx.Response:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.budget is not None:
            self.budget.take_request()  # BudgetSpent: nothing is sent
        self.usage["requests"] += 1
        with request_slot(Path(settings.VAR_DIR) / "llm-slots", settings.LLM_MAX_CONCURRENT_REQUESTS):
            response = self.client.post(f"{self.base_url}/chat/completions", json=body)
        self._count_usage(response)
        return response

    def _cache_key(self, messages: list[dict[str, str]], sample: int) -> str:
        facts = {"base_url": self.base_url, "model": self.model, "temperature": self.temperature,
                 "json_mode": self.json_mode, "max_tokens": self.max_tokens, "messages": messages, "sample": sample}
        return hashlib.sha256(json.dumps(facts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def _count_usage(self, response: httpx.Response) -> None:
        if response.status_code >= 400:
            return
        try:
            usage = response.json().get("usage")
        except (ValueError, AttributeError):
            return
        if not isinstance(usage, dict):
            return
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if isinstance(prompt, int) and isinstance(completion, int) and not isinstance(prompt, bool) \
                and not isinstance(completion, bool) and prompt >= 0 and completion >= 0:
            self.usage["prompt_tokens"] += prompt
            self.usage["completion_tokens"] += completion
            self.usage["answers_with_usage"] += 1
            if self.budget is not None:
                self.budget.add_tokens(prompt + completion)

    def ask(self, prompt: PromptTemplate, validate: Callable[[dict[str, Any]], Any], **values: str) -> dict[str, Any]:
        """Run one prompt ``samples`` times; returns {"parsed": [...], "raw": [...], **prompt facts}."""
        messages = prompt.messages(**values)
        parsed, raw, cached = [], [], []
        for sample in range(self.samples):
            value, content, hit = self._one_sample(prompt, messages, validate, sample)
            parsed.append(value)
            raw.append(content)
            cached.append(hit)
        return {
            "parsed": parsed,
            "raw": raw,
            "cached": cached,
            "prompt": prompt.name,
            "prompt_version": prompt.version,
            "prompt_sha256": prompt.sha256,
            "model": self.model,
        }

    def _one_sample(
        self, prompt: PromptTemplate, messages: list[dict[str, str]], validate: Callable[[dict[str, Any]], Any],
        sample: int = 0,
    ) -> tuple[Any, str, bool]:
        """One valid answer (parsed, raw content, whether it came from the cache)."""
        key = self._cache_key(messages, sample) if self.cache and self.store is not None else None
        if key is not None:
            assert self.store is not None
            stored = self.store.get(key)
            if stored is not None:
                try:
                    value = validate(parse_json_object(stored))
                except (ValueError, KeyError, IndexError, TypeError):
                    pass  # only valid answers are stored; one that no longer validates is asked again
                else:
                    self.usage["cached_answers"] += 1
                    return value, stored, True
        failures: list[str] = []
        raw_outputs: list[str] = []
        last_transient = False
        for attempt in range(self.max_retries + 1):
            response = None
            try:
                response = self._post(messages)
            except httpx.TimeoutException as exc:
                failures.append(f"timeout: {exc}")
                last_transient = True
            except httpx.TransportError as exc:
                failures.append(f"connection error: {exc}")
                last_transient = True
            else:
                status = response.status_code
                if status == 429 or status >= 500:
                    failures.append(f"HTTP {status}")
                    last_transient = True
                elif status in (401, 403, 404):
                    raise BackendUnavailable(
                        f"llm backend: {self.base_url} answered HTTP {status} for model {self.model!r}: "
                        f"{response.text[:300]}"
                    )
                elif status >= 400:
                    raise BackendResponseError(
                        f"llm backend: HTTP {status} for prompt {prompt.name}: {response.text[:300]}",
                        {"prompt": prompt.name, "prompt_sha256": prompt.sha256, "failure": "http"},
                    )
                else:
                    content = ""
                    try:
                        choice = response.json()["choices"][0]
                        message = choice["message"]
                        content = message.get("content") or ""
                        self._refused_or_cut(prompt, choice, message, content)
                        value = validate(parse_json_object(content))
                        if key is not None:
                            assert self.store is not None
                            self.store.put(key, content, {"prompt": prompt.name, "prompt_sha256": prompt.sha256,
                                                          "model": self.model})
                        return value, content, False
                    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                        # ValueError covers MalformedAnswer and a body that is not JSON at all.
                        failures.append(f"malformed answer: {exc}")
                        raw_outputs.append(content or response.text[:2000])
                        last_transient = False
            if attempt < self.max_retries:
                time.sleep(self._delay(attempt, response))
        summary = "; ".join(failures)
        if last_transient:
            raise TransientBackendError(
                f"llm backend: {self.max_retries + 1} attempt(s) for prompt {prompt.name} failed: {summary}"
            )
        raise BackendResponseError(
            f"llm backend: no valid answer to prompt {prompt.name} after {self.max_retries + 1} attempt(s): {summary}",
            {"prompt": prompt.name, "prompt_sha256": prompt.sha256, "raw": raw_outputs, "failure": "malformed"},
        )

    def _refused_or_cut(self, prompt: PromptTemplate, choice: Any, message: Any, content: str) -> None:
        """Raise for an answer the model refused or cut off: asking again would get the same answer."""
        if not isinstance(choice, dict) or not isinstance(message, dict):
            raise TypeError("the choice or its message is not an object")
        refusal = message.get("refusal")
        finish = choice.get("finish_reason")
        facts = {"prompt": prompt.name, "prompt_sha256": prompt.sha256, "raw": [content], "finish_reason": finish}
        if (isinstance(refusal, str) and refusal.strip()) or finish == "content_filter":
            reason = refusal.strip()[:300] if isinstance(refusal, str) and refusal.strip() else "content filter"
            raise BackendResponseError(
                f"llm backend: the model refused to answer prompt {prompt.name}: {reason}",
                {**facts, "failure": "refused", "refusal": refusal if isinstance(refusal, str) else None},
            )
        if finish == "length":
            raise BackendResponseError(
                f"llm backend: the answer to prompt {prompt.name} was cut off at the token limit "
                f"(finish_reason=length{f', max_tokens={self.max_tokens}' if self.max_tokens else ''}); "
                "a larger max_tokens option lets the model finish",
                {**facts, "failure": "truncated"},
            )

    # --- aggregation ----------------------------------------------------------------------------------

    @staticmethod
    def _facts(answer: dict[str, Any]) -> dict[str, Any]:
        facts = {k: answer[k] for k in ("prompt", "prompt_version", "prompt_sha256", "model")}
        if any(answer.get("cached", ())):
            facts["cached"] = answer["cached"]  # per sample: answered from the study's cache, no request
        return facts

    def _vote(self, answer: dict[str, Any], n: int, field: str, raw_per_item: bool = True) -> list[Judgement]:
        samples: list[dict[int, bool]] = answer["parsed"]
        out = []
        for i in range(n):
            votes = [bool(s[i]) for s in samples]
            yes = sum(votes)
            verdict = yes > len(votes) - yes
            share_yes = yes / len(votes)
            out.append(Judgement(verdict, share_yes, {
                field: verdict, "votes": votes, "agreement": max(yes, len(votes) - yes) / len(votes),
                **self._facts(answer)}))
        # The raw outputs are per request, not per sentence: keep them once, on the first judgement.
        if out:
            out[0].details["raw"] = answer["raw"]
        return out

    def _verdicts(self, prompt: PromptTemplate, texts: list[str], field: str, **values: str) -> list[Judgement]:
        if not texts:
            return []
        answer = self.ask(prompt, lambda obj: validate_verdicts(obj, len(texts), field, bool),
                          items=numbered(texts), **values)
        return self._vote(answer, len(texts), field)

    # --- judgements -----------------------------------------------------------------------------------

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """One prompt per evidence passage, holding that passage alone as the evidence and every claim (so an
        answer of n claims against k passages costs k requests, each sample as configured); the mismatch check
        against that passage's sentences; the claim's judgement is the best single passage's
        (``best_passage``): the model never sees passages together, so it cannot ground a claim on facts
        spread over several of them."""
        passages = [e for e in evidence if e.strip()]
        if not claims:
            return []
        per_passage = [self._verdicts(PROMPTS["supports"], claims, "supported", evidence=numbered([passage]))
                       for passage in passages]
        sentences = [sentences_of([p]) for p in passages]
        return [
            best_passage([apply_contradiction(judged[i], claim, ss)
                          for judged, ss in zip(per_passage, sentences, strict=True)], passages)
            for i, claim in enumerate(claims)
        ]

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        return self._verdicts(PROMPTS["informative"], sentences, "information_bearing", question=question)

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        return self._verdicts(PROMPTS["relevance"], passages, "relevant", question=question)

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        return self._verdicts(PROMPTS["covers"], aspects, "covered", claims=numbered(claims))

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        if not sentences:
            return []
        answer = self.ask(
            PROMPTS["sentence_kinds"],
            lambda obj: validate_verdicts(obj, len(sentences), "kind", SENTENCE_KINDS),
            items=numbered(sentences), source=" ".join(source_sentences),
        )
        as_bool = {**answer, "parsed": [{i: k == "simplification" for i, k in s.items()} for s in answer["parsed"]]}
        out = self._vote(as_bool, len(sentences), "simplification")
        for j in out:
            j.details["kind"] = "simplification" if j.verdict else "elaboration"
        return out

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour:
        def check(obj: dict[str, Any]) -> str:
            value = obj.get("behaviour")
            if value not in BEHAVIOURS:
                raise MalformedAnswer(f"behaviour={value!r} is not one of {list(BEHAVIOURS)}")
            return value

        result = self.ask(PROMPTS["behaviour"], check, question=question, answer=answer)
        counts = Counter(result["parsed"])
        top = max(counts.values())
        # Ties resolve towards the more cautious reading: escalate, then refuse, then answer.
        winner = next(b for b in ("escalate", "refuse", "answer") if counts.get(b) == top)
        return Behaviour(winner, {"votes": result["parsed"], "agreement": top / len(result["parsed"]),
                                  "raw": result["raw"], **self._facts(result)})

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        def check(obj: dict[str, Any]) -> list[str]:
            value = obj.get("statements")
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise MalformedAnswer('"statements" must be a list of strings')
            return [s.strip() for s in value if s.strip()]

        prompt = PROMPTS["claims" if drop_conversational else "statements"]
        result = self.ask(prompt, check, question=question, answer=answer)
        # Statement lists cannot be voted on; the first sample is used, the others show the spread.
        counts = [len(s) for s in result["parsed"]]
        return Statements(result["parsed"][0], {
            "method": "llm extraction", "sample_counts": counts, "samples": result["parsed"],
            "raw": result["raw"], **self._facts(result)})

    def qa_support(self, sentences: list[str], evidence: list[list[str]]) -> list[Judgement]:
        """PlainQAFact's QA pipeline with the model doing answer extraction, question generation and question
        answering; answer overlap by SQuAD token F1 (``scoring.metrics.text.answer_f1``: the authors' qaeval
        F1 scorer; BERTScore, the paper's choice, needs a model Concord does not ship). Unanswered → F1 0.
        No question filtering step. Only the first sample is used for generation (questions cannot be voted)."""
        if not sentences:
            return []
        generated = self.ask(PROMPTS["qa_generate"], lambda obj: validate_qa_pairs(obj, len(sentences)),
                             items=numbered(sentences))
        pairs_by_sentence: dict[int, list[dict[str, str]]] = generated["parsed"][0]
        out: list[Judgement] = []
        for i, sentence_evidence in enumerate(evidence):
            pairs = pairs_by_sentence[i]
            facts = {"generation": {**self._facts(generated), "raw": generated["raw"] if i == 0 else None}}
            if not pairs:
                out.append(Judgement(None, None, {"reason": "no answer span to ask about", **facts}))
                continue
            n_questions = len(pairs)
            answered = self.ask(PROMPTS["qa_answer"], lambda obj, n=n_questions: validate_qa_answers(obj, n),
                                evidence=numbered(sentence_evidence), items=numbered([p["question"] for p in pairs]))
            predictions: dict[int, str | None] = answered["parsed"][0]
            rows = []
            for j, pair in enumerate(pairs):
                predicted = predictions[j]
                f1 = 0.0 if predicted is None else answer_f1(pair["answer"], predicted)
                rows.append({"question": pair["question"], "answer": pair["answer"], "predicted": predicted, "f1": f1})
            score = statistics.fmean(r["f1"] for r in rows)
            out.append(Judgement(score >= 0.5, score, {"qa": rows, "overlap": "SQuAD token F1",
                                                      "answering": {**self._facts(answered), "raw": answered["raw"]},
                                                      **facts}))
        return out

    def rubric(
        self, question: str, answer: str, context: list[str], *, reference: list[str] | None = None
    ) -> RubricJudgement:
        if reference:
            result = self.ask(PROMPTS["rubric_reference"], validate_rubric, question=question, answer=answer,
                              context=numbered(context), reference=numbered(reference))
        else:
            result = self.ask(PROMPTS["rubric"], validate_rubric, question=question, answer=answer,
                              context=numbered(context))
        ratings, spread = {}, {}
        for criterion in RUBRIC_CRITERIA:
            values = [s[criterion] for s in result["parsed"]]
            ratings[criterion] = statistics.fmean(values)
            spread[criterion] = {"sd": statistics.pstdev(values), "min": min(values), "max": max(values)}
        return RubricJudgement(ratings, {"samples": result["parsed"], "spread": spread, "raw": result["raw"],
                                         **self._facts(result)})


def _availability(options: Mapping[str, Any], study_id: int | None) -> Availability:
    """An endpoint and a model are configured (``LLM_BASE_URL``; the ``model`` option or ``LLM_MODEL``). The
    endpoint is neither resolved nor called here: that is the worker's ``endpoint_check`` and first request."""
    if settings.LLM_BASE_URL and (options.get("model") or settings.LLM_MODEL):
        return AVAILABLE
    return Availability(False, "no LLM endpoint configured: set LLM_BASE_URL and LLM_MODEL")


# Its own queue: the model runs at the endpoint and the worker waits on the network, not on a core, so many
# processes share a machine. Small batches: an item is several requests of seconds each.
DESCRIPTOR = register(BackendDescriptor(
    name="llm",
    queue="scoring-llm",
    batch_size=4,
    build=LLMBackend.from_settings,
    check=_availability,
    settings=("LLM_BASE_URL", "LLM_MODEL", "LLM_API_KEY", "LLM_TIMEOUT_SECONDS", "LLM_MAX_RETRIES",
              "LLM_ALLOW_PRIVATE_ENDPOINTS", "LLM_MAX_CONCURRENT_REQUESTS"),
    model_settings=("LLM_MODEL", "LLM_BASE_URL"),
    # The endpoint is the administrator's (LLM_BASE_URL): no base_url option (scoring.backend_options).
    options={
        "model": Option("text", max_length=200),
        "api_key": Option("text", max_length=500),
        "samples": Option("integer", bounds=(1, 10)),
        "max_retries": Option("integer", bounds=(0, 10)),
        "timeout": Option("number", bounds=(1, 300)),
        "temperature": Option("number", bounds=(0, 2), nullable=True),
        "backoff_base": Option("number", bounds=(0, 60)),
        "backoff_cap": Option("number", bounds=(0, 300)),
        "json_mode": Option("boolean"),
        "max_tokens": Option("integer", bounds=(1, 131072), nullable=True),
        "cache": Option("boolean"),
        "max_requests": Option("integer", bounds=(1, 100_000_000), nullable=True),
        "max_run_tokens": Option("integer", bounds=(1, 10_000_000_000), nullable=True),
    },
))
