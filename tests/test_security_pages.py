"""Every page satisfies the Content-Security-Policy, and uploads are never served inline.

The test walks whatever routes the URL configuration has, as each role of a small study, fills route
parameters with that study's objects, and checks each response: the CSP header is always there; an
HTML page has no inline <script>, no <style> element, no style= attribute, no inline event handler
and no javascript: URL (all of which the policy `script-src 'self'; style-src 'self'` would block);
anything that is neither HTML nor JSON is sent as an attachment. Routes answering 403/404/405 for a
role are fine: access is another test's subject.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from django.views.static import serve

from annotation.models import Aspect, Label, Role
from concord.middleware import CONTENT_SECURITY_POLICY
from tests import factories

_PARAM = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")
# A few pages of the Django admin, as staff: it is part of the site and runs under the same policy.
_ADMIN_ROUTES = ["admin/", "admin/annotation/study/", "admin/auth/user/"]


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    # The personas' passwords are hashed on creation and checked at each log-in; what these tests
    # exercise does not depend on the hash's cost.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _walk(patterns: list, prefix: str = "") -> Iterator[str]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def _routes() -> list[str]:
    return [r for r in _walk(get_resolver().url_patterns) if not r.startswith("admin/") and not r.startswith("^")]


class _InlineCodeFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name.lower(): value or "" for name, value in attrs}
        if tag == "script" and "src" not in names and names.get("type", "").lower() != "application/json":
            self.problems.append(f"inline <script> at line {self.getpos()[0]}")
        if tag == "style":
            self.problems.append(f"<style> element at line {self.getpos()[0]}")
        for name, value in names.items():
            if name == "style":
                self.problems.append(f'style="{value}" on <{tag}> at line {self.getpos()[0]}')
            elif name.startswith("on") or name.startswith("hx-on"):
                self.problems.append(f"inline handler {name} on <{tag}> at line {self.getpos()[0]}")
            elif name in {"href", "src", "action", "formaction"} and value.strip().lower().startswith("javascript:"):
                self.problems.append(f"javascript: URL in {name} on <{tag}> at line {self.getpos()[0]}")


def inline_code_problems(html: str) -> list[str]:
    finder = _InlineCodeFinder()
    finder.feed(html)
    finder.close()
    return finder.problems


@pytest.fixture
def site(study, researcher, annotator, adjudicator, tmp_path) -> dict[str, Any]:
    """A small study with one object of every kind the routes address."""
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    question = factories.make_question(study)
    item = factories.make_item(study, "kqa-001")
    factories.make_chunk(item)
    aspect = Aspect.objects.create(item=item, text="Mentions the dose", status="proposed", origin="proposed")
    pool = factories.make_pool(study, "clinicians", questions=[question])
    membership = factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    label = Label.objects.create(
        assignment=assignment,
        question=question,
        unit_key="item",
        value="yes",
        updated_by=annotator,
        updated_at=timezone.now(),
    )
    objects: dict[str, Any] = {
        "slug": study.slug,
        "study": study.pk,
        "pool": pool.pk,
        "item": item.pk,
        "external_id": item.external_id,
        "assignments": assignment.pk,
        "aspects": aspect.pk,
        "question": question.pk,
        "question_slug": question.key,
        "key_slug": question.key,
        "labels": label.pk,
        "membership": membership.pk,
    }
    export_file = tmp_path / "demo-study.jsonl"
    export_file.write_text('{"item": "kqa-001"}\n')
    for app_label, model_name, key, make in _app_objects(study, pool, item, question, researcher, export_file):
        objects[key] = make(apps.get_model(app_label, model_name)).pk
    return objects


def _app_objects(study, pool, item, question, researcher, export_file):
    # One real object of each model the adjudication and scoring routes name.
    return [
        (
            "adjudication",
            "AdjudicationCase",
            "cases",
            lambda m: m.objects.create(pool=pool, item=item, unit_key="item", question=question),
        ),
        (
            "adjudication",
            "ExportJob",
            "exports",
            lambda m: m.objects.create(
                study=study,
                format="jsonl",
                status="done",
                path=str(export_file),
                size_bytes=export_file.stat().st_size,
                requested_by=researcher,
            ),
        ),
        (
            "scoring",
            "ScoreRun",
            "runs",
            lambda m: m.objects.create(
                study=study, metric="rouge_l", metric_version="1", backend="lexical", created_by=researcher
            ),
        ),
        (
            "scoring",
            "KnowledgeBase",
            "knowledge-bases",
            lambda m: m.objects.create(study=study, name="Guidelines", created_by=researcher),
        ),
    ]


def _fill(route: str, objects: dict[str, Any]) -> str:
    """Route pattern → URL, each parameter taken from the object its name (or, for ``pk``, the path
    segment before it) names; an unknown parameter gets an id that exists nowhere."""

    def value(match: re.Match) -> str:
        name = match["name"]
        if name == "pk":
            key = route[: match.start()].rstrip("/").rsplit("/", 1)[-1]
        elif match["converter"] == "slug" and name != "slug":
            key = f"{name}_slug"
        elif name in {"slug", "external_id"}:
            key = name
        else:
            key = {"run": "runs", "kb": "knowledge-bases", "case": "cases", "job": "exports"}.get(
                name.removesuffix("_id"), name.removesuffix("_id")
            )
        if match["converter"] == "str" and name == "fmt":
            return "csv"
        return str(objects.get(key, 999999))

    return "/" + _PARAM.sub(value, route)


def _clients(site: dict[str, Any]) -> dict[str, Client]:
    users = get_user_model().objects
    # Server errors are the API fuzzing tests' subject; here they only mean a page that cannot be checked.
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role, username in [
        ("annotator", "anna-annotator"),
        ("adjudicator", "adam-adjudicator"),
        ("researcher", "rita-researcher"),
    ]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(users.get(username=username))
    staff = users.create(username="stan-staff", is_staff=True, is_superuser=True)
    clients["staff"] = Client(raise_request_exception=False)
    clients["staff"].force_login(staff)
    return clients


def test_every_page_any_role_can_open_carries_the_csp_and_no_inline_code(site):
    problems: list[str] = []
    opened_html = 0
    for role, client in _clients(site).items():
        routes = [_fill(r, site) for r in _routes()]
        if role == "staff":
            routes += ["/" + r for r in _ADMIN_ROUTES]
        for url in routes:
            response = client.get(url)
            if response.get("Content-Security-Policy") != CONTENT_SECURITY_POLICY:
                problems.append(f"{role} GET {url}: no Content-Security-Policy header")
            content_type = response.get("Content-Type", "")
            body = b"".join(response.streaming_content) if response.streaming else response.content
            if content_type.startswith("text/html") and response.status_code != 500:
                opened_html += response.status_code == 200
                problems += [f"{role} GET {url}: {p}" for p in inline_code_problems(body.decode())]
            if response.status_code != 200:
                continue
            if content_type.startswith(("text/html", "application/json", "application/vnd.oai.openapi")):
                continue
            if not response.get("Content-Disposition", "").startswith("attachment"):
                problems.append(f"{role} GET {url}: {content_type} served inline")
    assert opened_html >= 10, "the walk opened too few pages to mean anything"
    assert not problems, "\n".join(problems)


def test_the_checker_finds_each_kind_of_inline_code():
    html = (
        '<script>alert(1)</script><script src="/static/x.js"></script><script type="application/json">{}</script>'
        '<style>p{}</style><p style="color:red">x</p><button onclick="go()">b</button><a hx-on:click="x">y</a>'
        '<a href="javascript:void(0)">z</a>'
    )
    found = inline_code_problems(html)
    assert len(found) == 6
    assert not inline_code_problems('<script src="/static/a.js" defer></script><a href="/x">ok</a>')


def test_the_csp_forbids_inline_script_and_style_and_framing():
    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"


def _callbacks(patterns: list) -> Iterator[tuple[str, Any]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _callbacks(entry.url_patterns)
        elif isinstance(entry, URLPattern):
            yield str(entry.pattern), entry.callback


def test_uploaded_files_are_not_served_by_any_route():
    # Uploads (imports, knowledge-base documents) are read by services, never sent back as files:
    # no route serves MEDIA_ROOT, and whitenoise serves only collected static files.
    serving = [route for route, callback in _callbacks(get_resolver().url_patterns) if callback is serve]
    assert not serving, f"routes serving files from disk: {serving}"
    media = settings.MEDIA_ROOT.resolve()
    for static_dir in [settings.STATIC_ROOT, *settings.STATICFILES_DIRS]:
        static_dir = static_dir.resolve()
        assert not media.is_relative_to(static_dir) and not static_dir.is_relative_to(media)


def test_an_export_download_is_an_attachment_and_is_recorded_without_its_content(site, researcher):
    from annotation import audit
    from annotation.models import AuditEvent

    client = Client()
    client.force_login(researcher)
    response = client.get(f"/adjudication/exports/{site['exports']}/download/")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    assert response["X-Content-Type-Options"] == "nosniff"
    (event,) = AuditEvent.objects.filter(table_name="adjudication_exportdownload")
    assert event.operation == "INSERT" and event.actor_id == researcher.pk
    assert event.new_row["job_id"] == site["exports"]
    assert "kqa-001" not in json.dumps(event.new_row)
    assert audit.chain_verify().ok
