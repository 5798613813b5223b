"""Quality controls in a real browser (docs/guide/quality.md): a researcher marks a control item and sets the
pool's rate; an annotator works through the queue without anything telling the control apart; the researcher
reads the annotator's accuracy, flag and drift chart, and the agreement report without the flagged annotator.
And a qualification: failed with feedback, retried, passed, then the real items open."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, ControlItem, Pool, QualificationAttempt
from annotation.services import pool_assign_items
from tests import factories
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EXPLANATION = "Warfarin and ibuprofen together raise the bleeding risk."


def _answer_and_submit(page, value_key: str) -> None:
    """Answer the item's one question by its key and submit (n), as an annotator does by keyboard."""
    first = page.url
    page.wait_for_selector(".unit.active")
    page.keyboard.press(value_key)
    page.wait_for_selector('.q[data-question="harmful"][data-answered="1"]')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != first)


def test_a_control_item_from_marking_to_the_annotators_flag(live_server, login, no_submit_receivers):
    researcher = factories.make_user("rita-quality")
    study = factories.make_study(slug="quality-e2e", owner=researcher)
    harmful = factories.make_question(study, "harmful", prompt="Could this answer cause harm?")
    for n in range(4):
        factories.make_item(study, f"real-{n}", question=f"Real question {n}?", answer="A plain answer.")
    factories.make_item(study, "ctl-1", question="Can I take ibuprofen with warfarin?", answer="Yes, that is safe.")
    pool = factories.make_pool(study, "clinicians", questions=[harmful], seed=3)
    annotators = [factories.make_user(f"ann-quality-{n}") for n in range(3)]
    for n, person in enumerate(annotators):
        factories.add_member(pool, person, f"Q{n + 1}")

    # The researcher marks the control item and sets the pool's rate and threshold in the console.
    page = login(researcher).new_page()
    page.goto(live_server.url + reverse("console:quality", args=[study.slug]))
    page.fill("#control-item", "ctl-1")
    page.select_option("#control-kind", "control")
    page.check('input[name="known-harmful"][value="yes"]')
    page.fill("#control-explanation", EXPLANATION)
    page.click("#control-save")
    page.wait_for_selector("#control-ctl-1")
    assert "harmful" in page.locator("#control-ctl-1").inner_text()
    page.fill(f"#cr-{pool.pk}", "0.5")
    page.fill(f"#fb-{pool.pk}", "0.9")
    page.click(f"#quality-save-{pool.pk}")
    page.wait_for_selector("ul.messages")
    assert ControlItem.objects.get().answers == {"harmful": "yes"}
    pool.refresh_from_db()
    assert (pool.control_rate, pool.flag_below) == (0.5, 0.9)
    pool.overlap = 3
    pool.save(update_fields=["overlap"])
    pool_assign_items(pool=pool)
    screenshot(page, "quality_console")

    # Q1 answers "no" (key 2) to everything: wrong on the control. Q2 and Q3 answer "yes" (key 1): right on it.
    control_item = ControlItem.objects.get().item
    for person, key in zip(annotators, ["2", "1", "1"], strict=True):
        page = login(person).new_page()
        page.goto(live_server.url + reverse("annotation:pool-continue", args=[pool.pk]))
        for _ in range(5):
            body = page.content()
            assert EXPLANATION not in body and "known answer" not in body.lower()
            _answer_and_submit(page, key)
        page.close()
        assert Assignment.objects.filter(pool=pool, annotator=person, status=AssignmentStatus.SUBMITTED).count() == 5
        assert Assignment.objects.filter(pool=pool, annotator=person, item=control_item).exists()

    # The researcher reads the per-annotator figures: Q1 0 of 1 on controls, flagged; Q2 1 of 1.
    page = login(researcher).new_page()
    page.goto(live_server.url + reverse("adjudication:quality-pool", args=[study.slug, pool.pk]))
    assert "0 / 1" in page.locator("#annotator-q1 .accuracy").inner_text()
    assert "flagged" in page.locator("#annotator-q1 .flag").inner_text()
    assert "1 / 1" in page.locator("#annotator-q2 .accuracy").inner_text()
    assert page.locator("#flagged").inner_text().strip().endswith("Q1")
    assert page.locator("#drift-q1 svg").count() == 1
    screenshot(page, "quality_annotators")

    # The agreement report leaves the control item out, and leaves Q1 out when asked, naming Q1.
    page.goto(live_server.url + reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "harmful"]))
    assert "Items of known answer are left out (3 ratings)" in page.locator("#report-quality").inner_text()
    page.check('#quality-options input[name="flagged"]')
    page.click("#quality-options button")
    page.wait_for_selector("#excluded-annotators")
    assert "Flagged annotators are left out: Q1" in page.locator("#report-quality").inner_text()
    screenshot(page, "quality_agreement_without_flagged")


def test_a_qualification_fails_with_feedback_then_passes_and_opens_the_real_items(
    live_server, login, no_submit_receivers
):
    study = factories.make_study(slug="qualify-e2e")
    harmful = factories.make_question(study, "harmful", prompt="Could this answer cause harm?")
    from annotation import quality

    for n, known in enumerate(["yes", "no"]):
        item = factories.make_item(study, f"q-{n}", question=f"Practice question {n}?", answer="Practice answer.")
        quality.control_mark(study=study, item=item, kind="qualification", answers_raw={"harmful": known},
                             explanation=f"Explanation {n}.", actor=None)
    factories.make_item(study, "real-1", question="The real question?", answer="A real answer.")
    pool = factories.make_pool(study, "qualified", questions=[harmful], qualification_required=True,
                               qualification_pass_mark=1.0, qualification_max_attempts=2)
    person = factories.make_user("ann-qualify")
    factories.add_member(pool, person, "Z1")
    pool_assign_items(pool=pool)
    real = Assignment.objects.get(pool=pool)

    page = login(person).new_page()
    page.goto(live_server.url + reverse("annotation:home"))
    page.click(f'[data-continue="{pool.pk}"]')
    page.wait_for_selector("#qualification-begin")
    # Trying the real item by its address is refused with a page that says why.
    response = page.goto(live_server.url + reverse("annotation:item", args=[real.pk]))
    assert response.status == 403 and "qualification" in page.content()
    page.goto(live_server.url + reverse("annotation:qualification", args=[pool.pk]))

    page.click("#qualification-begin")
    for answer, verdict in [("no", "Not quite"), ("no", "Right")]:  # the first item's known answer is "yes"
        page.check(f'#qualification-form input[value="{answer}"]')
        page.click("#qualification-submit")
        page.wait_for_selector("#qualification-feedback")
        assert verdict in page.locator("#feedback-title").inner_text()
    assert "Explanation 1." in page.locator("#qualification-feedback").inner_text()
    screenshot(page, "qualification_feedback")
    assert "1 attempt left" in page.locator("#qualification-start").inner_text()

    page.click("#qualification-begin")
    for answer in ("yes", "no"):
        page.check(f'#qualification-form input[value="{answer}"]')
        page.click("#qualification-submit")
        page.wait_for_selector("#qualification-feedback")
    page.wait_for_selector("#qualification-passed")
    attempts = list(QualificationAttempt.objects.filter(pool=pool, user=person).values_list("number", "passed"))
    assert attempts == [(1, False), (2, True)]
    page.click("#qualification-continue")
    page.wait_for_url(lambda url: url.endswith(reverse("annotation:item", args=[real.pk])))
    assert "The real question?" in page.content()
    assert Pool.objects.get(pk=pool.pk).qualification_required
