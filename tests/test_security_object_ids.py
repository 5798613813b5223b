"""An object named by its own id answers 404 to everyone who may not see it, members of its study included.

A 403 for an id that exists in the annotator's study, next to a 404 for one that does not, lets an
annotator count cases (disagreements: the count moves as people submit), score runs, exports and
aspect proposals. Each route naming such an object must answer a member without the role exactly as
it answers an id that does not exist.
"""

from __future__ import annotations

import pytest
from django.urls import get_resolver
from rest_framework.test import APIClient

from adjudication.models import AdjudicationCase
from tests import access_world, factories
from tests.test_access_policies import _policy_of

pytestmark = pytest.mark.django_db

# Routes whose first object parameter is an object with its own id (not scoped by the study's slug).
OBJECT_ROUTES = [
    "adjudication/cases/<int:pk>/",
    "adjudication/aspects/<int:pk>/decide/",
    "adjudication/pools/<int:pk>/consensus-rule/",
    "adjudication/exports/<int:pk>/download/",
    "adjudication/validation/<int:pk>/",
    "adjudication/validation/<int:pk>/run/",
    "adjudication/validation/<int:pk>/download.<str:fmt>",
    "scoring/runs/<int:run_id>/",
    "scoring/runs/<int:run_id>/cancel",
    "scoring/knowledge-bases/<int:kb_id>/",
    "api/adjudication/cases/<int:pk>/",
    "api/adjudication/cases/<int:pk>/decision/",
    "api/adjudication/aspects/<int:pk>/decision/",
    "api/adjudication/pools/<int:pk>/consensus-rules/",
    "api/adjudication/pools/<int:pk>/human-measures/<slug:measure>/",
    "api/adjudication/exports/<int:pk>/",
    "api/adjudication/validation-studies/<int:pk>/",
    "api/adjudication/validation-studies/<int:pk>/run/",
    "api/scoring/runs/<int:run_id>/",
    "api/scoring/runs/<int:run_id>/cancel/",
    "api/scoring/runs/<int:run_id>/scores/",
    "api/scoring/knowledge-bases/<int:kb_id>/documents/",
]


def _first_param(route: str) -> str:
    return access_world.param_names(route)[0]


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_the_routes_listed_exist():
    known = {route for route, _ in access_world.routes(get_resolver().url_patterns)}
    assert set(OBJECT_ROUTES) <= known, set(OBJECT_ROUTES) - known


def _policies() -> dict[str, str | None]:
    return {route: _policy_of(cb) for route, cb in access_world.routes(get_resolver().url_patterns)}


@pytest.mark.parametrize("who", ["annotator", "adjudicator"])
def test_a_member_without_the_role_cannot_tell_an_existing_id_from_a_missing_one(who):
    world = access_world.build_world("own", "own")
    policies = _policies()
    client = APIClient()
    client.force_login(world[who])
    problems, checked = [], 0
    for route in OBJECT_ROUTES:
        if who == "adjudicator" and policies[route] != "researcher":
            continue  # cases and aspects are the adjudicator's own
        real = access_world.fill(route, world)
        absent = access_world.fill(route, world, missing=_first_param(route))
        for method in ("get", "post"):
            checked += 1
            seen = getattr(client, method)(real).status_code
            missing = getattr(client, method)(absent).status_code
            if seen != missing or seen not in (404, 405):
                problems.append(f"{method.upper()} {real} → {seen}, a missing id → {missing}")
    assert checked >= 20
    assert not problems, "\n".join(problems)


def test_an_annotator_cannot_count_disagreements_by_case_id():
    world = access_world.build_world("own", "own")
    client = APIClient()
    client.force_login(world["annotator"])
    next_id = world["case"].pk + 1
    before = client.get(f"/api/adjudication/cases/{next_id}/").status_code
    other_item = factories.make_item(world["study"], "another")
    AdjudicationCase.objects.create(pool=world["pool"], item=other_item, unit_key="item", question=world["question"])
    after = client.get(f"/api/adjudication/cases/{next_id}/").status_code
    assert before == after == 404
