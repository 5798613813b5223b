"""Accessibility held by CI: axe-core (axe-playwright-python) checks every page each role opens — the pages
of tests/test_hostile_input.py's walk over every route, htmx fragments opened as pages included — for WCAG
2.1 A and AA, and allows no violation; a skip link is the first stop of the keyboard; the item page's keys
dialog keeps the focus inside it; every control of the item page has a name in the accessibility tree."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from tests import factories
from tests.test_hostile_input import _fill, _page_routes, hostile_study  # noqa: F401 - the fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
# Django masks its CSRF token afresh in every response: the only part of two renderings of one page that differs.
CSRF_TOKEN = re.compile(rb'(name="csrfmiddlewaretoken" value=")[A-Za-z0-9]+"')


def _rendering(body: bytes) -> str:
    """What axe would see of a page, as a digest: its HTML with the per-response CSRF token left out. Two paths
    that render the same HTML (a page that ignores the report parameters) are one page to check."""
    return hashlib.sha256(CSRF_TOKEN.sub(rb'\1"', body)).hexdigest()


def _extra_pages(h: dict, researcher) -> list[str]:
    """Pages the walk over routes cannot fill from the hostile study alone: every help page, the new-study
    form, an import's dry run, two runs side by side, a learned judge's training job."""
    from django.contrib.auth.models import Permission

    from adjudication.models import ValidationStudy
    from annotation.models import ImportJob, ImportJobStatus
    from scoring.models import JudgeTrainJob, ScoreRun, TrainedJudge

    researcher.user_permissions.add(Permission.objects.get(codename="add_study", content_type__app_label="annotation"))
    guide = Path(settings.BASE_DIR) / "docs" / "guide"
    slugs = [p.stem for p in guide.glob("*.md") if p.stem != "index"] + ["import-format"]
    slugs += [f"metric-{p.stem}" for p in (Path(settings.BASE_DIR) / "docs" / "metrics").glob("*.md")
              if p.stem != "README"]
    job = ImportJob.objects.create(
        study=h["study"], filename="<b>items</b>.jsonl", stored_name="x", status=ImportJobStatus.INVALID,
        summary={"message": "1 error"}, errors=[{"location": "line 2", "field": "question", "reason": "missing"}],
        requested_by=researcher,
    )
    other = ScoreRun.objects.create(study=h["study"], metric=h["run"].metric, metric_version=h["run"].metric_version,
                                    backend="lexical", status=h["run"].status)
    judge = TrainedJudge.objects.create(
        name="grounding-a11y", study=h["study"], task="supports", source_kind="study", source_study=h["study"],
        source_question="pf", data_hash="0" * 64, model_type="logistic", feature_set="lexical", n=40, n_positive=20,
        cv={"auc": 0.8}, path="judges/none", trained_by=researcher,
    )
    job = JudgeTrainJob.objects.create(
        study=h["study"], name="grounding-a11y-2", question_key="pf", task="supports", status="failed",
        error="<b>too few</b> labels", requested_by=researcher,
    )
    validation = ValidationStudy.objects.create(
        study=h["study"], name="<i>validation</i>", template="astrid", metric_run=h["run"], target_pool=h["imported"],
        target_question=h["question"], positive="yes", created_by=researcher,
    )
    return [
        reverse("scoring:judges:detail", args=[h["study"].slug, judge.pk]),
        reverse("scoring:judges:job", args=[h["study"].slug, job.pk]),
        reverse("adjudication:validation-report", args=[validation.pk]),
        reverse("help:index"), *(reverse("help:page", args=[slug]) for slug in sorted(set(slugs))),
        reverse("console:study_create"),
        reverse("console:import_job", args=[h["study"].slug, job.pk]),
        reverse("scoring:run-compare", args=[h["run"].pk]) + f"?with={other.pk}",
    ]


def test_every_page_each_role_opens_has_no_wcag_21_aa_violation(
    live_server, login, browser_context, hostile_study, researcher, annotator, adjudicator  # noqa: F811
):
    axe = Axe()
    h = hostile_study
    run, imported = h["run"].pk, h["imported"].pk
    # Report pages render their figures only with parameters: the hostile pool, question and run.
    report_query = f"?run={run}&runs={run}&source=run:{run}&pool={imported}&question=pf&features=run:{run}"
    extra = _extra_pages(h, researcher)
    checked: list[str] = []
    violations: list[str] = []
    seen: set[str] = set()
    for who in (researcher, adjudicator, annotator):
        page = login(who).new_page()
        paths = []
        for route, params in _page_routes():
            if route.startswith("api/") or "download" in route or "logout" in route:
                continue  # JSON, files, and the logout (a POST) are not pages
            path = _fill(route, params, h)
            if path is not None:
                paths += [path, path + report_query]
        for path in [*paths, *extra]:
            response = page.request.get(live_server.url + path)
            if response.status != 200 or "text/html" not in response.headers.get("content-type", ""):
                continue  # a page this role may not open (403/404), a report without its parameters, a file
            rendering = _rendering(response.body())
            if rendering in seen:
                continue  # the same HTML as a page already checked: the parameters changed nothing on it
            seen.add(rendering)
            page.goto(live_server.url + path)
            checked.append(f"{who.get_username()} {path}")
            for violation in axe.run(page, options=WCAG_21_AA).response["violations"]:
                targets = [node["target"] for node in violation["nodes"][:3]]
                violations.append(f"{who.get_username()} {path}: {violation['id']} ({violation['impact']}) {targets}")
        page.context.clear_cookies()
        page.close()
    # Before logging in: the login page, and the page a new account's invitation link opens.
    newcomer = factories.make_user("newcomer-a11y")
    uid, token = urlsafe_base64_encode(force_bytes(newcomer.pk)), default_token_generator.make_token(newcomer)
    page = browser_context.new_page()
    for path in (reverse("login"), reverse("account:invitation", args=[uid, token])):
        page.goto(live_server.url + path)
        assert page.locator("input[type=password], input[name=username]").count() >= 1, path
        checked.append(f"anonymous {path}")
        for violation in axe.run(page, options=WCAG_21_AA).response["violations"]:
            targets = [node["target"] for node in violation["nodes"][:3]]
            violations.append(f"anonymous {path}: {violation['id']} ({violation['impact']}) {targets}")
    page.close()
    # The walk reaches every role's main pages (a broken fixture would check nothing and pass).
    assert any("/adjudication/cases/" in p for p in checked) and any("/assignments/" in p for p in checked)
    assert any("/plan/" in p for p in checked) and any("/reports/validity/?" in p for p in checked)
    assert sum("/help/" in p for p in checked) >= 3 * 15 and any("/compare/" in p for p in checked)
    assert any("/judges/" in p for p in checked) and any("/validation/" in p for p in checked)
    assert violations == []


def test_the_first_tab_reaches_a_skip_link_that_moves_to_the_content(live_server, login, annotator):
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:home"))
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
    assert page.evaluate("document.activeElement.getBoundingClientRect().top >= 0")  # shown once focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_the_keys_dialog_keeps_the_focus_inside_and_every_item_control_has_a_name(live_server, login):
    annotator = factories.make_user("ana-a11y")
    study = factories.make_study(slug="a11y-e2e")
    question = factories.make_question(study, "ib", scope="sentence", prompt="Does it bear information?")
    item = factories.make_item(study, "a11y-1", answer="Take 0.5 mg daily. Ask your doctor.")
    factories.make_chunk(item, 1, "The usual dose is 0.5 mg daily.")
    pool = factories.make_pool(study, questions=[question, factories.make_question(study, "pf")])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    page.wait_for_selector(".unit.active")
    page.keyboard.press("?")
    page.wait_for_selector("#keys-overlay:not(.hidden)")
    for key in ("Tab", "Tab", "Shift+Tab", "Tab"):
        page.keyboard.press(key)
        assert page.evaluate("document.getElementById('keys-overlay').contains(document.activeElement)"), key
    page.keyboard.press("Escape")
    page.wait_for_selector("#keys-overlay.hidden", state="attached")
    # Every control of the page, as a screen reader meets it: a role and a name.
    snapshot = page.locator("main").aria_snapshot()
    unnamed = [line.strip() for line in snapshot.splitlines()
               if line.strip().startswith(("- button", "- radio", "- checkbox", "- textbox", "- combobox", "- link"))
               and '"' not in line]
    assert 'radio "1 Yes"' in snapshot and 'button "Undo my last change' in snapshot
    assert unnamed == []
