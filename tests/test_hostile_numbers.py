"""Hostile numbers and hostile JSON on every route: never a 500, and the 400 or 404 where it matters.

* **Deep JSON** (issue Q, finding 6): a body nested thousands of levels deep made the standard library's
  decoder raise RecursionError inside DRF's parser, a 500 on every endpoint that reads a body, the
  anonymous token endpoint included. Every API route × write method × role (anonymous included) is sent
  one; wherever the view reads the body the answer is 400 naming the limit (``concord.parsers``).
* **Hostile numbers** (finding 7): ``str.isdigit()`` accepts ``"²"`` and ``"٣"``, which ``int()`` refuses or
  reads as another digit, and ``int()`` refuses more than 4,300 digits; a 400-digit id overflows the
  database. Every integer path segment, and every query parameter and form field a route reads (found by
  watching what each route reads from ``request.GET`` / ``request.POST`` / a form-encoded ``request.data``),
  is sent each of them in turn.
* **Page sizes** (finding 14): ``?limit=`` is bounded on every paginated endpoint (``concord.pagination``).

Each request runs in a savepoint that is rolled back, so every request sees the same, untouched world.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import transaction
from django.http import QueryDict
from django.urls import get_resolver
from rest_framework.request import Request
from rest_framework.test import APIClient

from tests import access_world
from tests.test_access_matrix import _all_routes, _allowed

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator", "mate", "adjudicator", "researcher")
WRITES = ("post", "put", "patch", "delete")
DEPTH = 5_000  # far past the decoder's recursion limit (about 1,000) and orjson's (1,024)
DEEP_JSON = '{"value": ' * DEPTH + "1" + "}" * DEPTH
DEEP_MESSAGE = "nested more than 64 levels deep"

SUPERSCRIPT_TWO, ARABIC_INDIC_THREE = "²", "٣"
DIGITS_5000, DIGITS_400 = "9" * 5000, "9" * 400
HOSTILE_NUMBERS = {
    "a superscript two": SUPERSCRIPT_TWO,
    "an Arabic-Indic three": ARABIC_INDIC_THREE,
    "5,000 digits": DIGITS_5000,
    "400 digits": DIGITS_400,
}


# --- Plumbing ---------------------------------------------------------------------------------------


def _client() -> APIClient:
    client = APIClient()
    client.raise_request_exception = False  # a 500 is an answer to record, not an exception to stop at
    return client


def _send(client: APIClient, method: str, path: str, data: Any = None, fmt: str | None = None, **extra: Any):
    """One request in a savepoint rolled back afterwards: what it changes, the next request does not see."""
    with transaction.atomic():
        if method == "get":
            response = client.get(path, data or {}, **extra)
        elif fmt == "raw":
            response = getattr(client, method)(path, data, content_type="application/json", **extra)
        else:
            response = getattr(client, method)(path, data or {}, format=fmt, **extra)
        transaction.set_rollback(True)
    return response


def _login(client: APIClient, user: Any, route: str = "") -> None:
    """Log ``user`` in: by token on an API route (the path whose first statement reads the token and the
    assignment the URL names, in SQL), by session on a page; anonymous for None."""
    client.logout()
    client.credentials()
    if user is None:
        return
    if route.startswith("api/"):
        from annotation.accounts.tokens import token_issue

        client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(user=user).key}")
    else:
        client.force_login(user)


def _view_class(callback: Any) -> Any:
    return getattr(callback, "cls", None) or getattr(callback, "view_class", None)


def _methods(callback: Any) -> tuple[str, ...]:
    """The methods a route's view answers (a function view: GET and POST, its decorators say which)."""
    cls = _view_class(callback)
    if cls is None:
        return ("get", "post")
    return tuple(m for m in ("get", "post", "put", "patch", "delete") if hasattr(cls, m))


def _callbacks() -> dict[str, Any]:
    return {route: callback for route, callback in access_world.routes(get_resolver().url_patterns)}


def _acting_role(route: str, policy: str, method: str) -> str:
    """The role whose request gets furthest into the route: the most senior one it allows."""
    for role in ("researcher", "adjudicator", "annotator", "mate"):
        if _allowed(route, policy, role, method):
            return role
    return "researcher"


def _body_text(response: Any) -> str:
    if getattr(response, "streaming", False):
        return ""
    return response.content.decode("utf-8", "replace")


# --- 6. Deeply nested JSON ------------------------------------------------------------------------


@contextmanager
def _watch_body_reads() -> Iterator[list[bool]]:
    """Records, per request, whether the view read its body (DRF parsed it)."""
    seen: list[bool] = []
    original = Request._parse

    def spy(self: Request) -> Any:
        seen.append(True)
        return original(self)

    Request._parse = spy  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        Request._parse = original  # type: ignore[method-assign]


# At least this many endpoints read the body of each role's requests (the token endpoint anyone's; the
# annotator their label save, skip, proposal, time; the researcher the console, scoring and reports).
MIN_BODIES_READ = {"anonymous": 1, "mate": 1, "annotator": 5, "adjudicator": 3, "researcher": 25}


@pytest.mark.slow
@pytest.mark.parametrize("role", ROLES)
def test_a_body_nested_thousands_deep_answers_400_on_every_api_endpoint_for_every_role(role):
    world = access_world.build_world("own-study", "own")
    client, callbacks = _client(), _callbacks()
    problems, refused = [], 0
    with _watch_body_reads() as parsed:
        for route, _policy in _all_routes():
            if not route.startswith("api/"):
                continue
            _login(client, None if role == "anonymous" else world[role], route)
            path = access_world.fill(route, world)
            for method in WRITES:
                if method not in _methods(callbacks[route]):
                    continue
                parsed.clear()
                response = _send(client, method, path, DEEP_JSON, fmt="raw")
                where = f"{role} {method.upper()} {path} → {response.status_code}"
                if response.status_code >= 500:
                    problems.append(f"{where}: a server error")
                elif parsed and response.status_code != 415:  # 415: an upload endpoint that takes no JSON
                    if response.status_code != 400 or DEEP_MESSAGE not in _body_text(response):
                        problems.append(f"{where}: read the body but did not refuse it as too deep")
                    else:
                        refused += 1
    assert not problems, "\n".join(problems)
    assert refused >= MIN_BODIES_READ[role]


def test_nesting_is_counted_outside_strings_and_allowed_up_to_64_levels():
    from concord.parsers import MAX_JSON_DEPTH, TooDeep, loads, nests_deeper_than

    assert MAX_JSON_DEPTH == 64
    at_limit, past_limit = "[" * 64 + "]" * 64, '{"a": ' * 65 + "1" + "}" * 65
    assert loads(at_limit) == eval(at_limit) and not nests_deeper_than(at_limit)  # noqa: S307 (brackets only)
    assert nests_deeper_than(past_limit)
    with pytest.raises(TooDeep, match="more than 64 levels"):
        loads(past_limit)
    # Brackets inside strings, escaped quotes among them, nest nothing.
    quoted = json.dumps(["[" * 500, '\\"{' * 100, {"k": "]" * 70}])
    assert not nests_deeper_than(quoted) and loads(quoted)[0] == "[" * 500
    # Not JSON at all, but a decoder would recurse into every bracket before it found out.
    assert nests_deeper_than("[" * 100_000) and nests_deeper_than("[1," * 100) and nests_deeper_than("{" * 65)
    # The other ways text is not JSON stay ValueErrors of their own: not TooDeep, never a RecursionError.
    for text in ("1" * 5000, "[NaN]", "[1,", "{'a': 1}"):
        with pytest.raises(ValueError) as refused:
            loads(text)
        assert not isinstance(refused.value, TooDeep)


@pytest.mark.django_db
def test_a_body_a_million_levels_deep_is_refused_before_it_is_decoded():
    body = "[" * 1_000_000 + "]" * 1_000_000
    response = _client().post("/api/token/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "error": "parse_error", "detail": "JSON parse error - arrays and objects nested more than 64 levels deep"
    }


def _deep(levels: int = DEPTH) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.django_db
def test_json_text_in_a_form_field_nested_too_deep_is_refused_on_every_path_that_decodes_it(
    researcher, annotator, adjudicator, study
):
    from adjudication.models import AdjudicationCase
    from annotation.accounts.tokens import token_issue
    from annotation.models import Role
    from scoring.models import KnowledgeBase, ScoreRun
    from tests import factories

    tags = factories.make_question(
        study, "tags", kind="multilabel",
        options=[{"value": "a", "label": "A", "key": "1"}, {"value": "b", "label": "B", "key": "2"}],
    )
    item = factories.make_item(study, "deep-1")
    pool = factories.make_pool(study, "deep-pool", questions=[tags])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    case = AdjudicationCase.objects.create(pool=pool, item=item, unit_key="item", question=tags)
    kb = KnowledgeBase.objects.create(study=study, name="deep-kb")
    client = _client()

    # The label save's value, form-encoded: DRF's JSONField decodes the text.
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(user=annotator).key}")
    labels = client.put(
        f"/api/assignments/{assignment.pk}/labels/",
        {"question": "tags", "unit_key": "item", "value": _deep(), "base_version": "0"}, format="multipart",
    )
    assert labels.status_code == 400 and labels.json()["details"] == {"value": ["Value must be valid JSON."]}
    # An adjudicator's decision on a multilabel case, the list sent as JSON text.
    client.credentials()
    client.force_login(adjudicator)
    decision = client.post(f"/api/adjudication/cases/{case.pk}/decision/", {"value": _deep()}, format="json")
    assert decision.status_code == 400 and decision.json()["detail"] == "value must be a JSON list"
    # A run's backend options on the start page.
    client.force_login(researcher)
    start = client.post(
        f"/scoring/studies/{study.slug}/runs/start",
        {"metric": "ra", "ra__backend": "lexical", "backend_options": DEEP_JSON},
    )
    assert start.status_code == 400 and "Backend options must be a JSON object (arrays and objects nested" in (
        start.content.decode()
    )
    # A line of a knowledge base's JSONL document.
    document = client.post(
        f"/api/scoring/knowledge-bases/{kb.pk}/documents/",
        {"filename": "kb.jsonl", "content": '{"text": "ok"}\n' + _deep() + "\n"}, format="json",
    )
    assert document.status_code == 400
    assert "line 2: malformed JSON (arrays and objects nested" in document.json()["detail"]
    assert not ScoreRun.objects.exists() and not kb.passages.exists()


# --- 7. Hostile numbers in path segments, query parameters and form fields -----------------------

INT_PARAM = re.compile(r"<int:(\w+)>")


@pytest.mark.slow
def test_a_hostile_number_in_an_id_segment_of_any_route_answers_404():
    """``²`` and ``٣`` are not ``[0-9]``, 5,000 digits are more than the converter reads, and 400 digits name
    no row (the converter takes at most 18): the URL resolves to nothing or to a missing object."""
    world = access_world.build_world("own-study", "own")
    client, callbacks = _client(), _callbacks()
    problems, sent = [], 0
    for route, policy in _all_routes():
        for name in INT_PARAM.findall(route):
            for method in _methods(callbacks[route]):
                _login(client, world[_acting_role(route, policy, method)], route)
                for label, number in HOSTILE_NUMBERS.items():
                    path = _fill_with(route, world, name, number)
                    response = _send(client, method, path)
                    sent += 1
                    if response.status_code not in (404, 405):
                        problems.append(f"{method.upper()} {route} with {name} = {label} → {response.status_code}")
    assert sent > 300
    assert not problems, "\n".join(problems)


@pytest.mark.django_db
def test_an_invitation_link_naming_a_hostile_user_id_is_an_invalid_link():
    """The invitation link's first segment is a user id in base64 (Django's password-reset view reads it)."""
    from django.utils.http import urlsafe_base64_encode

    client = _client()
    for number in HOSTILE_NUMBERS.values():
        response = client.get(f"/accounts/invitation/{urlsafe_base64_encode(number.encode())}/x-y/")
        assert response.status_code == 200 and response.context["validlink"] is False


def _fill_with(route: str, world: dict[str, Any], name: str, value: str) -> str:
    """``route`` naming ``world``'s objects, with ``value`` for the parameter ``name``."""
    marker = "999999999"
    path = access_world.fill(route, world, missing=name)
    before, _, after = path.partition(f"/{marker}")
    return f"{before}/{value}{after}"


class _Reads:
    """The names a request reads from its query string and form (QueryDicts, and mappings made of them)."""

    def __init__(self) -> None:
        self.names: set[str] = set()


class _RecordingDict(dict):
    reads: _Reads

    def get(self, key: Any, default: Any = None) -> Any:
        self.reads.names.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.reads.names.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self.reads.names.add(key)
        return super().__contains__(key)


@contextmanager
def _watch_reads() -> Iterator[_Reads]:
    reads = _Reads()
    originals = {name: getattr(QueryDict, name) for name in ("get", "getlist", "__getitem__", "__contains__", "dict")}

    def recording(name: str) -> Any:
        original = originals[name]

        def method(self: QueryDict, *args: Any, **kwargs: Any) -> Any:
            if name == "dict":
                mapping = _RecordingDict(original(self))
                mapping.reads = reads
                return mapping
            if args:
                reads.names.add(args[0])
            return original(self, *args, **kwargs)

        return method

    for name in originals:
        setattr(QueryDict, name, recording(name))
    try:
        yield reads
    finally:
        for name, original in originals.items():
            setattr(QueryDict, name, original)


def _valid(name: str, route: str, world: dict[str, Any]) -> str | None:
    """A value of ``name`` that ``route`` accepts, so that the request reads on past it (None: leave it out)."""
    pool, run, other_run, question = world["pool"], world["run"], world["other_run"], world["question"]
    if name == "question" and "consensus-rule" in route and not route.startswith("api/"):
        return str(question.pk)
    if name == "kind" and "analysis-jobs" in route:
        return "raters"
    if name == "kind" and "/questions/" in route:
        return "binary"
    if name == "status" and route.startswith("api/assignments"):
        return "assigned"
    if name == "value" and route.startswith("api/assignments"):
        return json.dumps("yes")  # form-encoded into a JSON field: JSON text
    if name == "format":
        return "jsonl" if "exports" in route else None
    if name == "questions" and "/pools/" in route:
        return str(question.pk) if not route.startswith("api/") else question.key
    values = {
        "pool": pool.pk, "to_pool": pool.pk, "metric_pool": pool.pk, "target_pool": pool.pk, "run": run.pk,
        "runs": f"{run.pk},{other_run.pk}", "with": other_run.pk, "metric_run": run.pk, "compare_run": other_run.pk,
        "question": question.key, "target_question": question.key, "questions": question.key,
        "source": f"run:{run.pk}", "features": f"run:{run.pk}", "target": f"{pool.pk}|{question.key}",
        "n_boot": 200, "seed": 1, "k": 2, "page": 1, "items": 1, "overlap": 1, "chunk_size": 200, "chunk_overlap": 40,
        "confidence": 3, "expected_version": 0, "base_version": 0, "unit_key": "item", "value": "yes",
        "half_width": "0.1", "stop_at_half_width": "0.1", "epochs": 1, "folds": 2, "metric": "ra",
        "backend": "lexical", "ra__backend": "lexical", "batch_size": 10, "retrieval_alpha": "0.5", "seconds": 5,
        "name": "hostile-numbers", "kind": "agreement", "template": "astrid", "target_mode": "majority",
        "visibility": "nothing", "role": "annotator", "username": world["mate"].get_username(),
        "email": "someone@example.org", "decision": "accept", "status": "open", "state": "ok", "limit": 10,
        "offset": 0, "n_splits": 2, "n_repeats": 1, "task": "supports", "positive": "yes", "text": "a document",
        "filename": "doc.txt", "content": "a document", "majority": "true", "rationale": "because", "reason": "x",
        "importance": "must_have", "direction": "up", "action": "set", "study": world["study"].slug,
    }  # fmt: skip
    return None if name not in values else str(values[name])


# Parameters that embed an id in a longer value: the hostile number goes where the id goes.
EMBEDDED = {"source": "run:{}", "features": "run:{}", "target": "{}|pf", "unit_key": "s:{}"}
# Django's own, and the discovery's filler.
NOT_READ_BY_US = {"csrfmiddlewaretoken", "unread"}
# DRF's ?format= (a renderer's name, no number), except where a form field of that name picks an export's format.
DRF_FORMAT = "format"


def _discover(client: APIClient, method: str, path: str, route: str, world: dict[str, Any]) -> set[str]:
    """The names a request to ``route`` reads, given valid values for those it read before (until no new one)."""
    names: set[str] = set()
    for _ in range(6):
        # A field nothing reads, so that a view that reads only a non-empty form (``request.POST or None``) does.
        data = {"unread": "1", **{n: v for n in names if (v := _valid(n, route, world)) is not None}}
        with _watch_reads() as reads:
            _send(client, method, path, data, fmt=None if method == "get" else "multipart")
        if reads.names <= names:
            break
        names |= reads.names
    names = {n for n in names if isinstance(n, str)} - NOT_READ_BY_US
    return names if "exports" in route else names - {DRF_FORMAT}


# Where it matters which refusal: an id that names nothing answers 404 where the route looks it up by
# key or id, 400 where a form or filter needs a well-formed id; a number out of its bounds answers 400.
EXPECTED: dict[tuple[str, str, str], int] = {
    ("GET", "api/assignments/", "pool"): 400,  # the list filter
    ("GET", "api/assignments/", "limit"): 400,
    ("GET", "api/assignments/", "offset"): 400,
    ("GET", "api/scoring/runs/<int:run_id>/scores/", "limit"): 400,
    ("GET", "api/scoring/runs/<int:run_id>/scores/", "offset"): 400,
    ("GET", "api/console/studies/<slug:slug>/items/", "page"): 400,
    ("POST", "assignments/<int:pk>/labels/", "question"): 404,  # the label save
    ("PUT", "api/assignments/<int:pk>/labels/", "question"): 404,
    ("PUT", "api/assignments/<int:pk>/labels/", "unit_key"): 400,
    ("PUT", "api/assignments/<int:pk>/labels/", "base_version"): 400,
    ("GET", "scoring/runs/<int:run_id>/compare/", "with"): 404,  # compare
    ("POST", "adjudication/pools/<int:pk>/consensus-rule/", "question"): 400,  # consensus rules
    ("POST", "scoring/studies/<slug:slug>/runs/start", "knowledge_base"): 400,
    ("POST", "scoring/studies/<slug:slug>/runs/start", "batch_size"): 400,
    ("POST", "api/scoring/studies/<slug:slug>/runs/", "knowledge_base"): 400,
    ("POST", "console/<slug:slug>/pools/", "questions"): 400,
    ("POST", "console/<slug:slug>/pools/<int:pool_id>/", "questions"): 400,
    ("POST", "console/<slug:slug>/members/<int:membership_id>/move/", "to_pool"): 400,
    ("POST", "api/console/studies/<slug:slug>/members/<int:membership_id>/move/", "to_pool"): 400,
    ("POST", "api/console/studies/<slug:slug>/pools/", "overlap"): 400,
    ("POST", "api/adjudication/studies/<slug:slug>/validation-studies/", "target_pool"): 400,
    ("POST", "adjudication/cases/<int:pk>/", "confidence"): 400,
    ("POST", "adjudication/cases/<int:pk>/", "expected_version"): 400,
    ("POST", "api/adjudication/cases/<int:pk>/decision/", "confidence"): 400,
    ("POST", "api/adjudication/cases/<int:pk>/decision/", "expected_version"): 400,
    ("GET", "adjudication/studies/<slug:slug>/reports/comparison/", "runs"): 400,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/comparison/", "pool"): 400,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/raters/report/", "run"): 400,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/outcome/", "pool"): 400,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/validity/", "source"): 404,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/", "n_boot"): 400,
    ("GET", "api/adjudication/studies/<slug:slug>/reports/agreement/<int:pool_id>/<slug:question>/", "seed"): 400,
    ("POST", "api/adjudication/studies/<slug:slug>/reports/jobs/", "pool"): 400,
}  # fmt: skip

@pytest.mark.slow
def test_a_hostile_number_in_any_parameter_a_route_reads_never_answers_500():
    """Each name a route reads, alone hostile among valid values of the others: as text in the query string
    or a multipart form, and on API routes also as a bare JSON number (400 digits, and 1e400, which JSON
    reads as infinity)."""
    world = access_world.build_world("own-study", "own")
    client, callbacks = _client(), _callbacks()
    problems, fuzzed, read = [], 0, 0
    checked = set(EXPECTED)
    for route, policy in _all_routes():
        path = access_world.fill(route, world)
        for method in _methods(callbacks[route]):
            _login(client, world[_acting_role(route, policy, method)], route)
            names = _discover(client, method, path, route, world)
            read += len(names)
            base = {n: v for n in names if (v := _valid(n, route, world)) is not None}
            for name in sorted(names):
                template = EMBEDDED.get(name, "{}")
                sent = [(label, template.format(number), None) for label, number in HOSTILE_NUMBERS.items()]
                if route.startswith("api/") and method != "get":
                    sent += [("a bare 400-digit JSON number", DIGITS_400, "json"), ("1e400 in JSON", "1e400", "json")]
                for label, value, as_json in sent:
                    if as_json:
                        body = json.dumps({**base, name: "<n>"}).replace('"<n>"', value)
                        response = _send(client, method, path, body, fmt="raw")
                    else:
                        fmt = None if method == "get" else "multipart"
                        response = _send(client, method, path, {**base, name: value}, fmt=fmt)
                    fuzzed += 1
                    status = response.status_code
                    expected = EXPECTED.get((method.upper(), route, name))
                    if status >= 500 or (expected is not None and status != expected):
                        wanted = f"; expected {expected}" if expected else ""
                        problems.append(f"{method.upper()} {route} with {name} = {label} → {status}{wanted}")
                    checked.discard((method.upper(), route, name))
    assert read > 200 and fuzzed > 1000
    assert not problems, "\n".join(problems)
    assert not checked, f"never read, so never checked: {sorted(checked)}"


@pytest.mark.django_db
def test_a_400_digit_backend_option_is_refused_with_a_400_naming_it(researcher, study, settings):
    from scoring.models import ScoreRun

    # An endpoint is configured, so the page reaches the options (it checks the backend is available first).
    settings.LLM_BASE_URL, settings.LLM_MODEL = "https://93.184.216.34/v1", "judge"

    client = _client()
    client.force_login(researcher)
    api = client.post(
        f"/api/scoring/studies/{study.slug}/runs/",
        '{"metric": "cf", "backend": "llm", "backend_options": {"samples": ' + DIGITS_400 + "}}",
        content_type="application/json",
    )
    assert api.status_code == 400
    assert api.json()["detail"] == "llm.samples must be an integer between 1 and 10, got a number of 400 digits"
    page = client.post(
        f"/scoring/studies/{study.slug}/runs/start",
        {"metric": "cf", "cf__backend": "llm", "backend_options": '{"max_retries": -' + DIGITS_400 + "}"},
    )
    assert page.status_code == 400 and "llm.max_retries must be an integer between 0 and 10" in page.content.decode()
    assert not ScoreRun.objects.exists()


@pytest.mark.django_db
def test_an_answer_past_64_bits_or_a_sentence_number_past_int_is_refused(annotator, study):
    from annotation.models import Label
    from tests import factories

    how_many = factories.make_question(study, "how_many", kind="number", options=[])
    where = factories.make_question(study, "where", kind="alignment", scope="sentence", options=[])
    item = factories.make_item(study, "n-1", answer="One. Two.")
    pool = factories.make_pool(study, "n-pool", questions=[how_many, where])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client = _client()
    client.force_login(annotator)
    url = f"/api/assignments/{assignment.pk}/labels/"
    number = '{"question": "how_many", "unit_key": "item", "base_version": 0, "value": ' + DIGITS_400 + "}"
    response = _send(client, "put", url, number, fmt="raw")
    assert response.status_code == 400 and "must lie within" in response.json()["detail"]
    for text in (DIGITS_400, DIGITS_5000, "-" + DIGITS_400):
        page = _send(client, "post", f"/assignments/{assignment.pk}/labels/", {
            "question": "how_many", "unit_key": "item", "value": text, "base_version": "0",
        }, HTTP_HX_REQUEST="true")
        assert page.status_code == 400, text[:10]
    for index in ("0" * 5000, DIGITS_400, SUPERSCRIPT_TWO):
        body = {"question": "where", "unit_key": "s:0", "base_version": 0, "value": [index]}
        response = _send(client, "put", url, body, fmt="json")
        assert response.status_code == 400 and "is not a sentence number" in response.json()["detail"]
    assert not Label.objects.exists()


def test_unit_keys_and_detail_paths_with_hostile_numbers_name_nothing():
    from adjudication.analysis.raters import _walk
    from annotation import units

    for key in ("s:" + DIGITS_5000, "a:" + DIGITS_400, "c:" + SUPERSCRIPT_TWO, "s:" + ARABIC_INDIC_THREE):
        assert not units.is_valid(key)
        with pytest.raises(units.InvalidUnitKey):
            units.parse(key)
    assert units.parse("a:" + "9" * 18).ref == 10**18 - 1
    details = {"samples": [{"clarity": 3}, {"clarity": 4}]}
    assert _walk(details, "samples.1.clarity") == 4
    for part in (SUPERSCRIPT_TWO, "0" * 5000, DIGITS_400):
        assert _walk(details, f"samples.{part}.clarity") is None


@pytest.mark.django_db
def test_a_report_job_body_that_is_not_an_object_of_plain_values_is_refused(researcher, study):
    client = _client()
    client.force_login(researcher)
    for route in ("reports/jobs/", "reports/analysis-jobs/"):
        url = f"/api/adjudication/studies/{study.slug}/{route}"
        for body, detail in (
            ("[1, 2]", "the body must be a JSON object or a form"),
            ('{"kind": {"a": 1}}', "kind must be text, a number or a list of them"),
            ('{"kind": 5}', "kind must be"),
        ):
            response = _send(client, "post", url, body, fmt="raw")
            assert response.status_code == 400 and response.json()["detail"].startswith(detail), (route, body)


# --- 14. Page sizes ------------------------------------------------------------------------------

MAX_LIMIT = 1000  # concord.pagination.MAX_LIMIT, as the API documents it


@pytest.mark.slow
def test_every_endpoint_that_reads_limit_refuses_a_billion_and_documents_the_maximum():
    world = access_world.build_world("own-study", "own")
    client, callbacks = _client(), _callbacks()
    paginated = []
    for route, policy in _all_routes():
        if route.startswith("api/") and "get" in _methods(callbacks[route]):
            _login(client, world[_acting_role(route, policy, "get")], route)
            path = access_world.fill(route, world)
            if "limit" in _discover(client, "get", path, route, world):
                paginated.append(route)
                for limit in (10**9, MAX_LIMIT + 1, 0, -1):
                    response = _send(client, "get", path, {"limit": limit})
                    assert response.status_code == 400, (route, limit)
                    assert response.json()["detail"] == "limit must be a whole number from 1 to 1000"
                assert _send(client, "get", path, {"limit": MAX_LIMIT}).status_code == 200
    assert sorted(paginated) == ["api/assignments/", "api/scoring/runs/<int:run_id>/scores/"]
    from concord.pagination import MAX_LIMIT as configured

    assert configured == MAX_LIMIT
    _login(client, world["researcher"], "")
    schema = client.get("/api/schema/", {"format": "json"}).json()
    documented = {
        path: parameter["schema"]
        for path, operations in schema["paths"].items()
        for parameter in operations.get("get", {}).get("parameters", [])
        if parameter["name"] == "limit"
    }
    assert documented == {
        "/api/assignments/": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        "/api/scoring/runs/{run_id}/scores/": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
    }


@pytest.mark.django_db
def test_a_page_holds_at_most_1000_results_and_the_rest_follow(researcher, study):
    from scoring.models import Score, ScoreRun
    from tests import factories

    item = factories.make_item(study, "many")
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", created_by=researcher, status="done"
    )
    Score.objects.bulk_create(
        Score(run=run, item=item, unit_key=f"s:{i}", value=0.5, state="ok", details={}) for i in range(1001)
    )
    client = _client()
    client.force_login(researcher)
    url = f"/api/scoring/runs/{run.pk}/scores/"
    first = client.get(url, {"limit": 1000}).json()
    assert first["count"] == 1001 and len(first["results"]) == 1000 and "offset=1000" in first["next"]
    rest = client.get(first["next"]).json()
    assert len(rest["results"]) == 1 and rest["next"] is None
    assert len(client.get(url).json()["results"]) == 100
    assert client.get(url, {"offset": DIGITS_400}).status_code == 400
    assert client.get(url, {"offset": 10**12}).json()["results"] == []


# --- One way to read ids and JSON from requests -------------------------------------------------


ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
APPS = ("annotation", "scoring", "adjudication")


def _sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path, path.read_text()


DRF_JSON_PARSER = re.compile(
    r"from rest_framework\.parsers import [^\n]*\bJSONParser\b|rest_framework\.parsers\.JSONParser"
)


def test_json_from_clients_is_decoded_only_through_the_bounded_loader():
    """No request-facing module decodes JSON with json.loads or DRF's own parser (the recursion limit)."""
    offenders = []
    for path, text in _sources():
        relative = path.relative_to(ROOT).as_posix()
        request_facing = path.name in ("views.py", "api.py", "forms.py") or "/web/" in relative
        if DRF_JSON_PARSER.search(text):
            offenders.append(f"{relative}: DRF's JSONParser (use concord.parsers.JSONParser)")
        if request_facing and re.search(r"\bjson\.loads\(", text):
            offenders.append(f"{relative}: json.loads (use concord.parsers.loads)")
    assert not offenders, "\n".join(offenders)


def test_no_request_code_trusts_isdigit_alone():
    """``str.isdigit()`` is true of ``"²"``: where digits are read, ``isascii()`` and a length bound go with it
    (or concord.params does the reading)."""
    offenders = []
    for path, text in _sources():
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("scoring/metrics/"):  # metrics read numbers in answer text, not ids
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if ".isdigit()" in line and not (".isascii()" in line and "len(" in line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.django_db
def test_a_query_parameter_named_items_does_not_break_the_data_managers_page(researcher, study):
    """Found by the walk above: the page's template read ``params.items``, which is the query's own "items"
    when it has one, and unpacked its text as pairs (a 500)."""
    client = _client()
    client.force_login(researcher)
    for value in ("1", SUPERSCRIPT_TWO, DIGITS_400):
        assert client.get(f"/adjudication/studies/{study.slug}/data/", {"items": value, "q": "x"}).status_code == 200
