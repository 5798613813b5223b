"""The protocol's order in a real browser: the up and down buttons move the row in the table at once,
say what moved, and keep the keyboard on the moved question's button."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.console import services as svc
from tests import factories

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _focus_reaches(page, label: str) -> None:
    """htmx moves the focus (autofocus) when the swapped table settles, a moment after it is drawn: wait for
    it, however long that takes, and fail on a wrong control."""
    page.wait_for_function("() => document.activeElement && document.activeElement.hasAttribute('aria-label')")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == label


def _keys(page) -> list[str]:
    return [code.inner_text() for code in page.locator("table.questions tbody tr td:nth-child(2) code").all()]


def test_moving_a_question_redraws_the_table_says_so_and_keeps_focus(live_server, login):
    rita = factories.make_user("rita-order")
    study = svc.study_create(owner=rita, name="Order e2e", presets=["astrid"])
    page = login(rita).new_page()
    page.goto(live_server.url + reverse("console:protocol", args=[study.slug]))
    before = _keys(page)
    assert len(before) >= 3
    page.get_by_role("button", name=f"Move {before[0]} down").click()
    expected = [before[1], before[0], *before[2:]]
    page.wait_for_function(
        "expected => [...document.querySelectorAll('table.questions tbody tr td:nth-child(2) code')]"
        ".map(c => c.textContent).join(',') === expected",
        arg=",".join(expected),
    )
    assert list(study.questions.values_list("key", flat=True)) == expected
    assert page.get_by_role("status").inner_text() == f"Question {before[0]!r} moved down to place 2."
    _focus_reaches(page, f"Move {before[0]} down")
    # Up again, by keyboard: Shift+Tab to the up button, Enter.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "expected => [...document.querySelectorAll('table.questions tbody tr td:nth-child(2) code')]"
        ".map(c => c.textContent).join(',') === expected",
        arg=",".join(before),
    )
    assert page.get_by_role("status").inner_text() == f"Question {before[0]!r} moved up to place 1."
    # The first row's up button is disabled, so the focus goes to its down button.
    _focus_reaches(page, f"Move {before[0]} down")
