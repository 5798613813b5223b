"""Every route × method × role, filled with real objects, in the user's own study and in another one.

Two studies are built with one real object of every type a route names (``tests/access_world.py``):
assignments, pools, memberships, questions, items, aspects, cases, score runs, knowledge bases,
exports, validation studies, report, analysis and import jobs. Every route of the URL configuration
(the Django admin aside, with its own staff-only checks) is sent GET, POST, PUT, PATCH and DELETE by
each role — anonymous, an annotator who owns the assignment, a pool-mate, an adjudicator, a researcher —
naming the objects of their own study and, for each logged-in role, those of the other study.
The invited person's pages (``invitations/<id>/``) belong to the one account the invitation is bound to
(the world's annotator): everyone else, the study's researcher included, is answered 404.

The rule (SECURITY.md): objects a user may not see answer 404 (405 for a method the route does not
take, which is decided before any object is looked up); a study page above the user's role answers
403; an allowed role is never refused; nothing answers 5xx; anonymous visitors are sent to log in
(pages, 302) or refused (API, 401/403). Each role works on a fresh pair of studies, so what one
role's requests change cannot hide a refusal for another.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import get_resolver
from rest_framework.test import APIClient

from tests import access_world
from tests.test_access_policies import _policy_of

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

METHODS = ("get", "post", "put", "patch", "delete")
READ_FIRST = ("get",)
WRITES = ("post", "put", "patch", "delete")
DATA = {"value": "x", "name": "x", "reason": "x", "text": "x", "role": "annotator", "username": "x", "question": "pf"}
ROLES = ("anonymous", "annotator", "mate", "adjudicator", "researcher")
# Who may use a route of each policy in their own study (annotator routes: see _annotator_allowed).
ALLOWED = {
    "public": set(ROLES),
    "authenticated": {"annotator", "mate", "adjudicator", "researcher"},
    "researcher": {"researcher"},
    "adjudicator": {"adjudicator", "researcher"},
}
# A 404 that is the route's own answer for these objects, not an access refusal: the pool answers none
# of the questions a human measure is computed from ("pool … does not answer …").
DOMAIN_404 = {"api/adjudication/pools/<int:pk>/human-measures/<slug:measure>/"}
# The invited person's own pages: the world's invitation is bound to its annotator.
INVITEE_PREFIX = "invitations/"
# The readiness probe answers 503 while Concord is not ready (here: no worker has a heartbeat) by design; it is
# the probe's answer, not a server error (tests/test_ops.py checks when it is 200 and when 503).
NOT_READY_503 = {"readyz"}


def _all_routes() -> list[tuple[str, str]]:
    return [
        (route, _policy_of(callback) or "")
        for route, callback in access_world.routes(get_resolver().url_patterns)
        if not route.startswith("admin/")
    ]


def _annotator_allowed(route: str, role: str) -> bool:
    # Assignment routes: only the assignment's annotator. Pool routes: any active member of the pool.
    names = access_world.param_names(route)
    if not names:
        return role in ALLOWED["authenticated"]
    if names[0] == "pool_id":
        return role in {"annotator", "mate"}
    return role == "annotator"


# Pages without a study that need more than a login: creating a study needs the administrator's
# ``annotation.add_study`` permission (none of these roles has it); the guidelines preview is for researchers.
GATED = {
    ("console/new/", "get"): set(),
    ("console/new/", "post"): set(),
    ("api/console/studies/", "post"): set(),
    ("console/guidelines-preview/", "post"): {"researcher"},
}


def _allowed(route: str, policy: str, role: str, method: str = "get") -> bool:
    if (route, method) in GATED:
        return role in GATED[(route, method)]
    if policy == "annotator":
        return _annotator_allowed(route, role)
    return role in ALLOWED.get(policy, set())


def _send(client: APIClient, method: str, path: str):
    if method == "get":
        return client.get(path)
    return getattr(client, method)(path, DATA, format="json")


def _expected(route: str, policy: str, role: str, target: str, method: str, status: int) -> str | None:
    """None when ``status`` obeys the rule, else what was expected."""
    if status >= 500 and not (status == 503 and route in NOT_READY_503):
        return "no server error"
    names = access_world.param_names(route)
    if role == "anonymous":
        if policy == "public" or status in (302, 401, 403, 405):
            return None
        return "a login redirect or 401/403"
    if route.startswith(INVITEE_PREFIX):
        if target == "own" and role == "annotator":
            refused = status == 403 or (status == 404 and method == "get")
            return "not refused (their own invitation)" if refused else None
        return None if status in (404, 405) else "404 (another person's invitation)"
    if target == "other" and names and policy not in ("public", "authenticated"):
        return None if status in (404, 405) else "404 (another study's object)"
    if _allowed(route, policy, role, method):
        if status == 403 or (status == 404 and method == "get" and policy != "public" and route not in DOMAIN_404):
            return "not refused (the role may use it)"
        return None
    if policy == "annotator" or (names and names[0] != "slug"):
        return None if status in (404, 405) else "404 (an object the user may not see)"
    if names:
        return None if status in (403, 405) else "403 (a study page above the role)"
    return None if status in (403, 405) else "403 (a page above the role)"


def _walk(role: str, target: str) -> tuple[list[str], int]:
    own = access_world.build_world("own-study", "own")
    other = access_world.build_world("other-study", "other")
    world: dict[str, Any] = own if target == "own" else other
    client = APIClient()
    user = None if role == "anonymous" else own[role]
    problems: list[str] = []
    sent = 0
    routes = _all_routes()
    for methods in (READ_FIRST, WRITES):  # every read before any write can change the objects
        for route, policy in routes:
            if target == "other" and not access_world.param_names(route):
                continue  # the same page for either study: tried once, in the own study
            path = access_world.fill(route, world)
            for method in methods:
                if user is not None:
                    client.force_login(user)  # a logout or password change earlier does not leak into this one
                response = _send(client, method, path)
                sent += 1
                wrong = _expected(route, policy, role, target, method, response.status_code)
                if wrong:
                    problems.append(
                        f"{role} {method.upper()} {path} [{policy}] → {response.status_code}; expected {wrong}"
                    )
    return problems, sent


@pytest.mark.parametrize("role", ROLES)
def test_every_route_and_method_obeys_the_access_rule_in_the_own_study(role, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    problems, sent = _walk(role, "own")
    assert sent >= len(_all_routes()) * len(METHODS)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("role", [r for r in ROLES if r != "anonymous"])
def test_every_route_and_method_answers_404_for_another_studys_objects(role, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    problems, sent = _walk(role, "other")
    assert sent > 100 * len(METHODS)
    assert not problems, "\n".join(problems)


def test_the_matrix_covers_every_route_with_a_known_policy():
    routes = _all_routes()
    assert len(routes) > 100
    assert {policy for _, policy in routes} <= {"public", "authenticated", "annotator", "researcher", "adjudicator"}
    for route, _policy in routes:
        access_world.fill(route, access_world_names())  # every parameter names a known object


def access_world_names() -> dict[str, Any]:
    class Obj:
        pk = 1
        slug = "s"
        external_id = "e"
        key = "k"

    keys = ("study", "question", "item", "pool", "membership", "assignment", "aspect", "case", "run", "kb",
            "export", "validation", "report_job", "analysis_job", "import_job", "reopened", "other_run", "bulk_action",
            "judge", "judge_job", "invitation")  # fmt: skip
    return dict.fromkeys(keys, Obj())
