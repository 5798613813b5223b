"""Every annotator and adjudicator page on a phone (360 px) and a tablet (768 px): nothing wider than the
screen (a wide table scrolls inside itself), every control a finger uses at least 44 px tall, the queue's
Continue button in view, and the item page's header never covering the unit under the cursor.
Screenshots at 360, 768 and 1280 px: tests/e2e/artifacts/screen_<width>_<page>.png."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import AdjudicationCase
from adjudication.services import item_disagreements_detect
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# What breaks a page on a small screen, measured in the browser.
TARGETS = "button, a.button, select, .opt, .option, input[type=submit], .topbar a"
MEASURE = """targets => {
  const small = [];
  for (const el of document.querySelectorAll(targets)) {
    const r = el.getBoundingClientRect();
    const name = `${el.tagName} "${el.textContent.trim().slice(0, 30)}"`;
    if (r.width > 0 && r.height > 0 && r.height < 44) small.push(`${name} ${Math.round(r.height)} px`);
  }
  const bar = [...document.querySelectorAll(".topbar a, .topbar .link, .topbar .who")]
    .map((el) => [el.textContent.trim(), el.getBoundingClientRect()]);
  const overlapping = [];
  bar.forEach(([a, r], i) => bar.slice(i + 1).forEach(([b, q]) => {
    const meet = r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom;
    if (meet) overlapping.push(`${a} / ${b}`);
  }));
  return {overflow: document.documentElement.scrollWidth - window.innerWidth, small, overlapping};
}"""
UNCOVERED = """key => {
  const unit = document.querySelector(`.unit[data-unit="${key}"]`);
  const r = unit.getBoundingClientRect();
  return unit.contains(document.elementFromPoint(r.left + 10, Math.max(r.top, 0) + 10));
}"""


@pytest.fixture
def pages():
    adjudicator = factories.make_user("ada-small")
    study = factories.make_study(slug="small-screens")
    factories.grant(study, adjudicator, "adjudicator")
    question = yes_no(study, "information_bearing", scope="sentence")
    pool, (a, b) = pool_with_members(study, [question], n=2)
    item = factories.make_item(study, "small-1", answer="Take 0.5 mg daily. Ask your doctor if it hurts.")
    submit_labels(pool, item, a, {("information_bearing", "s:0"): "yes"})
    submit_labels(pool, item, b, {("information_bearing", "s:0"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    case = AdjudicationCase.objects.get()
    answer = " ".join(f"Sentence {n} of a long answer about the dose." for n in range(12))
    assignment = factories.make_assignment(pool, factories.make_item(study, "small-2", answer=answer), a)
    return {
        "annotator": (a, {"queue": reverse("annotation:home"), "item": reverse("annotation:item", args=[assignment.pk]),
                          "history": reverse("annotation:history")}),
        "adjudicator": (adjudicator, {"cases": reverse("adjudication:queue", args=[study.slug]),
                                      "case": reverse("adjudication:case", args=[case.pk])}),
    }


@pytest.mark.parametrize("width", [360, 768])
def test_annotator_and_adjudicator_pages_fit_the_screen_with_44_px_targets(live_server, login, pages, width):
    for role, (user, urls) in pages.items():
        context = login(user)
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": 800})
        for name, url in urls.items():
            page.goto(live_server.url + url)
            measured = page.evaluate(MEASURE, TARGETS)
            screenshot(page, f"screen_{width}_{role}_{name}")
            assert measured["overflow"] <= 0, f"{name} at {width} px is {measured['overflow']} px too wide"
            assert measured["small"] == [], f"{name} at {width} px: targets under 44 px: {measured['small']}"
            assert measured["overlapping"] == [], f"{name} at {width} px: links overlap: {measured['overlapping']}"
            if name == "queue":
                continue_button = page.locator("a[data-continue]")
                assert continue_button.is_visible() and page.evaluate(
                    "el => { const r = el.getBoundingClientRect(); return r.right <= window.innerWidth; }",
                    continue_button.element_handle(),
                )
            if name == "item":
                page.wait_for_selector(".unit.active")
                for _ in range(6):
                    page.keyboard.press("j")
                key = page.locator(".unit.active").get_attribute("data-unit")
                assert key == "s:6" and page.evaluate(UNCOVERED, key), f"the header covers {key} at {width} px"
        page.close()
        context.clear_cookies()


def test_screenshots_at_desktop_width(live_server, login, pages):
    for role, (user, urls) in pages.items():
        context = login(user)
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 900})
        for name, url in urls.items():
            page.goto(live_server.url + url)
            assert page.evaluate(MEASURE, TARGETS)["overflow"] <= 0
            screenshot(page, f"screen_1280_{role}_{name}")
        page.close()
        context.clear_cookies()
