"""Object routes answer strangers 404 and annotators 403.

The walk covers every route of the URL configuration that takes parameters, filled with the ids of a
real study's objects: a researcher of *another* study (who may not know the study exists) must get
404 — or 405 for a method the route does not take — and never 200, 302 or 403. An annotator of the
study must never get a 2xx on a researcher or adjudicator route, and exactly 403 on those that name
only the study (the annotator knows it exists, so the refusal is about the role).
"""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from annotation.models import Role
from tests import factories
from tests.test_access_policies import _policy_of

SKIP_PREFIXES = ("admin/", "accounts/", "api/schema", "api/docs")
PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
POST_DATA = {"value": "x", "name": "x", "reason": "x", "text": "x", "role": "annotator", "username": "x"}


def _routes(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def _world(db_study):
    study = db_study
    question = factories.make_question(study, "pf")
    item = factories.make_item(study, "it-1")
    factories.make_chunk(item)
    pool = factories.make_pool(study, "clinicians", questions=[question])
    annotator = factories.make_user("walk-annotator")
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"study": study, "question": question, "item": item, "pool": pool, "assignment": assignment,
            "annotator": annotator}


def _fill(route: str, world) -> str:
    def value(match: re.Match) -> str:
        conv, name = match.group("conv") or "str", match.group("name")
        if name == "slug":
            return world["study"].slug
        if conv == "int":
            for key in ("pool", "assignment", "item", "question"):
                if key in name:
                    return str(world[key].pk)
            return str(world["item"].pk)
        if name == "external_id":
            return world["item"].external_id
        if name == "fmt":
            return "csv"
        if name in ("question", "key"):
            return world["question"].key
        return "x"

    return "/" + PARAM.sub(value, route)


def test_a_researcher_of_another_study_gets_404_on_every_object_route(study):
    world = _world(study)
    stranger = factories.make_user("other-study-researcher")
    factories.make_study(owner=stranger, slug="their-own-study")
    client = APIClient()
    client.force_login(stranger)
    problems = []
    for route, _callback in _routes(get_resolver().url_patterns):
        if route.startswith(SKIP_PREFIXES) or not PARAM.search(route):
            continue
        path = _fill(route, world)
        for method, response in (("GET", client.get(path)), ("POST", client.post(path, POST_DATA))):
            if response.status_code not in (404, 405):
                problems.append(f"{method} {path} → {response.status_code}")
    assert not problems, "\n".join(problems)


def test_an_annotator_never_reaches_researcher_or_adjudicator_routes_of_their_own_study(study):
    world = _world(study)
    client = APIClient()
    client.force_login(world["annotator"])
    problems, checked = [], 0
    for route, callback in _routes(get_resolver().url_patterns):
        if route.startswith(SKIP_PREFIXES) or _policy_of(callback) not in ("researcher", "adjudicator"):
            continue
        path = _fill(route, world)
        only_the_study = [m.group("name") for m in PARAM.finditer(route)] == ["slug"]
        for method, response in (("GET", client.get(path)), ("POST", client.post(path, POST_DATA))):
            checked += 1
            if 200 <= response.status_code < 400:
                problems.append(f"{method} {path} → {response.status_code} (an annotator got through)")
            elif only_the_study and response.status_code not in (403, 405):
                problems.append(f"{method} {path} → {response.status_code} (expected 403)")
    assert checked > 20
    assert not problems, "\n".join(problems)


def test_an_adjudicator_is_refused_researcher_routes_with_403(study):
    world = _world(study)
    adjudicator = factories.make_user("walk-adjudicator")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    client = APIClient()
    client.force_login(adjudicator)
    problems = []
    for route, callback in _routes(get_resolver().url_patterns):
        if route.startswith(SKIP_PREFIXES) or _policy_of(callback) != "researcher":
            continue
        if [m.group("name") for m in PARAM.finditer(route)] != ["slug"]:
            continue
        path = _fill(route, world)
        for method, response in (("GET", client.get(path)), ("POST", client.post(path, POST_DATA))):
            if response.status_code not in (403, 405):
                problems.append(f"{method} {path} → {response.status_code} (expected 403)")
    assert not problems, "\n".join(problems)
