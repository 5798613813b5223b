"""The adjudicator's case page in a real browser: a decision made by keyboard only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.services import item_disagreements_detect
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

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
    page.keyboard.press("c")
    page.keyboard.press("c")  # confidence 2
    page.keyboard.press("g")  # guideline gap
    page.keyboard.press("r")
    page.keyboard.type("States a dose, so it bears information.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("table.history tr.current")
    gold = GoldLabel.objects.get()
    assert (gold.value, gold.confidence, gold.guideline_gap, gold.source) == ("yes", 2, True, "adjudicated")
    assert gold.rationale == "States a dose, so it bears information."
    assert "(current)" in page.locator("table.history").inner_text()
    assert not errors
