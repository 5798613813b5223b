"""A validation study's report in a real browser: the planning job's progress shows, then the precision chart
loads (htmx polling) and draws, no script error."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.adjudication.analysis.test_planning import _study
from tests.e2e.conftest import ARTIFACTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_the_validation_report_draws_the_precision_chart(live_server, login, researcher, eager_tasks):
    s = _study(researcher)
    page = login(researcher).new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(live_server.url + reverse("adjudication:validation-report", args=[s["vs"].pk]))
    page.wait_for_selector("#precision svg.precision polyline")
    assert "still needed about" in page.locator("#precision-still").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#precision").screenshot(path=str(ARTIFACTS / "validation-precision-chart-e2e.png"))
    assert not errors
