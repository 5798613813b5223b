"""Undo in a real browser: the page comes back at the undone unit, in view and under the keyboard cursor,
however far down the item it was."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Label
from tests import factories
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

IN_VIEW = """id => { const r = document.getElementById(id).getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight; }"""


def test_an_undo_far_down_a_long_item_comes_back_at_the_undone_sentence(live_server, login):
    annotator = factories.make_user("una-undo")
    study = factories.make_study(slug="undo-e2e")
    question = factories.make_question(study, "ib", scope="sentence", prompt="Does it bear information?")
    answer = " ".join(f"Sentence number {n} says something about the dose." for n in range(30))
    item = factories.make_item(study, "undo-1", answer=answer)
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    page.wait_for_selector("#unit-s-0.active")
    last = page.locator("#unit-s-29")
    last.scroll_into_view_if_needed()
    last.click()
    page.wait_for_selector("#unit-s-29.active")
    page.keyboard.press("1")
    page.wait_for_selector('#unit-s-29 .q[data-question="ib"][data-answered="1"]')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    page.evaluate("window.scrollTo(0, 0)")
    assert not page.evaluate(IN_VIEW, "unit-s-29")
    page.keyboard.press("Control+z")
    page.wait_for_selector("ul.messages")  # the page was drawn again
    assert "Undone" in page.locator("ul.messages").inner_text()
    page.wait_for_selector("#unit-s-29.active")
    assert page.evaluate(IN_VIEW, "unit-s-29")
    assert page.evaluate("document.activeElement.id") == "unit-s-29"
    assert Label.objects.get().value is None
    screenshot(page, "undo_back_at_the_unit")
