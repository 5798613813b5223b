"""API fuzzing: every operation of the OpenAPI schema at /api/schema/, as each role
with token authentication, on a small study: no 500s and no response that breaks its documented schema
(schemathesis' not_a_server_error and response_schema_conformance checks).

Requests go in-process to the WSGI application (no server, no network); a few examples per operation
keep the whole file well under a minute and a half. Path parameters are either the fixture study's real
ids (so the handlers run past their access checks) or whatever schemathesis draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from adjudication.models import AdjudicationCase, ExportJob
from annotation.console import services as svc
from annotation.models import Aspect, Role
from scoring.models import KnowledgeBase, ScoreRun
from tests import factories

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 5
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture
def fixture_study(researcher, annotator, adjudicator) -> dict[str, Any]:
    study = factories.make_study(owner=researcher, slug="fuzz-study")
    question = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "pool-a", questions=[question])
    membership = factories.add_member(pool, annotator, "A1")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    item = factories.make_item(study, "q1", answer="Take 0.5 mg daily. See a doctor.")
    factories.make_chunk(item, 1)
    aspect = Aspect.objects.create(
        item=item, text="the dose", origin="proposed", status="proposed", proposed_by=annotator
    )
    assignment = factories.make_assignment(pool, item, annotator)
    case = AdjudicationCase.objects.create(pool=pool, item=item, unit_key="item", question=question)
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", created_by=researcher
    )
    kb = KnowledgeBase.objects.create(study=study, name="guidelines")
    job = ExportJob.objects.create(study=study, format="jsonl", requested_by=researcher)
    invitation = svc.pool_member_add_or_invite(pool=pool, username="someone-else", actor=researcher)
    return {
        "slug": study.slug,
        "pool_id": pool.pk,
        "run_id": run.pk,
        "kb_id": kb.pk,
        "key": question.key,
        "question": question.key,
        "membership_id": membership.pk,
        "invitation_id": invitation.pk,
        "measure": "human_cf",
        # ``id`` names a different object on each route.
        "id": {
            "aspects": aspect.pk,
            "cases": case.pk,
            "exports": job.pk,
            "pools": pool.pk,
            "assignments": assignment.pk,
        },
    }


@contextmanager
def _wsgi_app() -> Iterator[Any]:
    # As Django's test client does: a request must not close the test's database connection (its
    # transaction holds the fixture study). Django's own client reconnects these signals after each of
    # its requests, so no test-client request may run inside this block.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _known_path_parameters(path: str, names: list[str], known: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in names:
        if name == "id":
            kind = next((part for part in path.split("/") if part in known["id"]), None)
            if kind is not None:
                values[name] = known["id"][kind]
        elif name in known:
            values[name] = known[name]
    return values


def _schema(client, researcher) -> Any:
    client.force_login(researcher)
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    client.logout()
    schema = schemathesis.openapi.from_dict(response.json())
    return schema


def _fuzz_every_operation(schema: Any, headers: dict[str, str], known: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Failures, and the operations that answered 2xx at least once (so that a broken login cannot
    pass the test with nothing but 401s)."""
    failures: list[str] = []
    succeeded: set[str] = set()
    for result in schema.get_all_operations():
        operation = result.ok()

        @hsettings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(), use_known=st.booleans())
        def check(case: Any, use_known: bool) -> None:
            if use_known and case.path_parameters:
                case.path_parameters.update(
                    _known_path_parameters(case.operation.path, list(case.path_parameters), known)
                )
            response = case.call_and_validate(headers=headers, checks=CHECKS)
            if 200 <= response.status_code < 300:
                succeeded.add(f"{case.operation.method.upper()} {case.operation.path}")

        try:
            check()
        except BaseException as exc:  # schemathesis raises an exception group; every operation is fuzzed
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:1500]}")
    return failures, succeeded


# Operations each role must reach (2xx) in the run: proof that the token worked and ids were real.
MUST_SUCCEED = {
    "anonymous": set(),
    "annotator": {"GET /api/assignments/"},
    "adjudicator": {"GET /api/adjudication/studies/{slug}/cases/", "GET /api/adjudication/cases/{id}/"},
    "researcher": {
        "GET /api/console/studies/{slug}/",
        "GET /api/console/studies/{slug}/items/",
        "GET /api/scoring/runs/{run_id}/",
        "GET /api/scoring/runs/{run_id}/scores/",
        "GET /api/adjudication/studies/{slug}/exports/",
        "GET /api/adjudication/exports/{id}/",
        "GET /api/console/studies/{slug}/invitations/{invitation_id}/",
    },
}


@pytest.mark.parametrize("role", ["anonymous", "annotator", "adjudicator", "researcher"])
def test_no_api_operation_answers_500_or_breaks_its_schema(role, request, client, researcher, fixture_study):
    schema = _schema(client, researcher)
    headers: dict[str, str] = {}
    if role != "anonymous":
        user = request.getfixturevalue(role)
        headers["Authorization"] = f"Token {Token.objects.create(user=user).key}"
    with _wsgi_app() as app:
        schema.app = app
        failures, succeeded = _fuzz_every_operation(schema, headers, fixture_study)
    assert not failures, "\n\n".join(failures)
    assert MUST_SUCCEED[role] <= succeeded, sorted(succeeded)
    if role == "anonymous":
        assert not succeeded - {"POST /api/token/"}, sorted(succeeded)
