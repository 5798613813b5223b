"""The adjudicator's case page in a real browser: a decision made by keyboard only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.services import item_disagreements_detect
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no
from tests.e2e.conftest import Keys, record_keystrokes, screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def case():
    adjudicator = factories.make_user("ada-adjudicator")
    study = factories.make_study(slug="adjudication-e2e")
    factories.grant(study, adjudicator, "adjudicator")
    question = yes_no(study, "information_bearing", scope="sentence")
    pool, (a, b) = pool_with_members(study, [question], n=2)
    item = factories.make_item(study, "e2e-1", answer="Take 0.5 mg daily. <img src=x onerror=alert(1)>")
    submit_labels(pool, item, a, {("information_bearing", "s:0"): "yes"})
    submit_labels(pool, item, b, {("information_bearing", "s:0"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    return AdjudicationCase.objects.get(), adjudicator


def test_a_decision_made_by_keyboard_only_becomes_gold_and_shows_in_the_history(live_server, login, case):
    case, adjudicator = case
    page = login(adjudicator).new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server.url + reverse("adjudication:case", args=[case.pk]))
    assert page.locator("mark#unit-mark").inner_text() == "Take 0.5 mg daily."
    page.keyboard.press("1")  # the first option: yes
    page.keyboard.press("c")  # focuses the confidence
    page.keyboard.press("4")  # confidence 4 (it once cycled: c c c c gave 4, a single c gave 1)
    page.keyboard.press("g")  # guideline gap
    page.keyboard.press("r")
    page.keyboard.type("States a dose, so it bears information.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("table.history tr.current")
    gold = GoldLabel.objects.get()
    assert (gold.value, gold.confidence, gold.guideline_gap, gold.source) == ("yes", 4, True, "adjudicated")
    assert gold.rationale == "States a dose, so it bears information."
    assert "(current)" in page.locator("table.history").inner_text()
    assert not errors


def test_a_case_resolved_in_two_keystrokes(live_server, login, case, debug_mode):
    case, adjudicator = case
    page = login(adjudicator).new_page()
    page.goto(live_server.url + reverse("adjudication:case", args=[case.pk]))
    page.wait_for_selector("#decision-form")
    keys = Keys(page)
    keys.press("2")  # the second option: no
    keys.press("s")  # save the decision
    page.wait_for_selector("table.history tr.current")
    case.refresh_from_db()
    assert case.status == "resolved" and GoldLabel.objects.get().value == "no"
    record_keystrokes("adjudication case resolved (option + save)", keys.count)
    assert keys.count == 2


def test_u_saves_the_case_as_unresolved(live_server, login, case, debug_mode):
    """htmx drops the submitter of form.requestSubmit(button): the key clicks the button, so that
    ``unresolved=1`` is sent (the server used to answer 400)."""
    case, adjudicator = case
    page = login(adjudicator).new_page()
    responses = []
    page.on("response", lambda r: responses.append(r.status) if r.request.method == "POST" else None)
    page.goto(live_server.url + reverse("adjudication:case", args=[case.pk]))
    page.wait_for_selector("#decision-form")
    page.keyboard.press("u")
    page.wait_for_selector("table.history tr.current")
    case.refresh_from_db()
    assert case.status == "unresolved" and responses == [200]
    gold = GoldLabel.objects.get()
    assert (gold.source, gold.value) == ("unresolved", None)
    screenshot(page, f"adjudication_unresolved_by_u_{'debug_on' if debug_mode else 'debug_off'}")


def test_a_refused_decision_is_shown_in_place_with_debug_on_and_off(live_server, login, case, debug_mode):
    case, adjudicator = case
    page = login(adjudicator).new_page()
    page.goto(live_server.url + reverse("adjudication:case", args=[case.pk]))
    page.wait_for_selector("#decision-form")
    page.keyboard.press("s")  # no value chosen
    page.wait_for_selector("#decision .error[role=alert]")
    assert "choose a value" in page.locator("#decision .error").inner_text()
    assert page.locator("header.topbar").is_visible() and page.locator("mark#unit-mark").is_visible()
    assert not GoldLabel.objects.exists()
    screenshot(page, f"adjudication_error_in_place_{'debug_on' if debug_mode else 'debug_off'}")
