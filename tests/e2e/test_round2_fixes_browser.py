"""The interaction bugs a real-browser walkthrough found, each checked in the browser where it was seen:
the adjudicator's save moves on and a decided case changes only by a revision; the export card reads
"Q&A" and a gold-only card says its labels are not in it; the planning and data manager guides are linked
where they are needed; and the console's small refusals (a bulk action that changes nothing, an old import
preview next to a new upload, a duplicate study name, the status filter's words)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from adjudication.models import AdjudicationCase, ExportJob, GoldLabel
from adjudication.services import item_disagreements_detect
from annotation.console import services as console
from annotation.models import AssignmentStatus, ImportJob
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no
from tests.annotation.console_helpers import ITEMS, jsonl
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_saving_a_case_by_keys_opens_the_next_and_a_decided_case_needs_a_reason(live_server, login):
    adjudicator = factories.make_user("ada-moves-on")
    study = factories.make_study(slug="moves-on-e2e")
    factories.grant(study, adjudicator, "adjudicator")
    question = yes_no(study, "information_bearing", scope="sentence")
    pool, (a, b) = pool_with_members(study, [question], n=2)
    for n in range(2):
        item = factories.make_item(study, f"mo-{n}", answer="Take 0.5 mg daily. Hello!")
        submit_labels(pool, item, a, {("information_bearing", "s:0"): "yes"})
        submit_labels(pool, item, b, {("information_bearing", "s:0"): "no"})
        item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    first, second = AdjudicationCase.objects.order_by("opened_at", "pk")
    page = login(adjudicator).new_page()
    page.goto(live_server.url + reverse("adjudication:case", args=[first.pk]))
    page.keyboard.press("1")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(re.compile(rf"/adjudication/cases/{second.pk}/$"))
    assert f"Case #{first.pk} decided: gold version 1 saved. This is the next open case." in (
        page.locator("ul.messages").inner_text()
    )
    page.keyboard.press("2")
    page.keyboard.press("Control+Enter")
    page.locator("#decision").get_by_text("No open case is left in this study.").wait_for()
    assert page.locator("#save-decision").inner_text().startswith("Revise decision")
    # The same keys again on the decided case: the reason is asked for (the browser holds the form on the
    # empty required field, which takes the focus), and nothing is written.
    page.keyboard.press("1")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'revise-reason'")
    assert page.evaluate("document.getElementById('revise-reason').validity.valueMissing")
    assert GoldLabel.objects.filter(item=second.item).count() == 1
    screenshot(page, "adjudicator_decided_case_revision")


def test_the_export_card_reads_q_and_a_and_a_gold_only_card_says_it_has_no_labels(
    live_server, login, eager_tasks
):
    researcher = factories.make_user("rita-card")
    study = factories.make_study(owner=researcher, slug="card-e2e", name="Q&A pilot")
    factories.grant(study, researcher, "researcher")
    question = yes_no(study, "pf", scope="item")
    pool, (a, b) = pool_with_members(study, [question], n=2)
    item = factories.make_item(study, "card-1")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "yes"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    page = login(researcher).new_page()
    page.goto(live_server.url + reverse("adjudication:exports", args=[study.slug]))
    cards = []
    for gold_only in (False, True):
        page.select_option("#format", "jsonl")
        page.set_checked("#export-gold-only", gold_only)
        page.click("form button.primary:has-text('Export')")
        page.wait_for_function("n => document.querySelectorAll('#export-jobs a[href$=\"part=card\"]').length === n",
                               arg=len(cards) + 1)
        job = ExportJob.objects.order_by("-pk").first()
        href = reverse("adjudication:export-download", args=[job.pk]) + "?part=card"
        assert page.locator(f'#export-jobs a[href="{href}"]').count() == 1
        cards.append(page.request.get(live_server.url + href).text())
    whole, gold = cards
    assert "# Q&A pilot — Concord export" in whole and "&amp;" not in whole
    assert "| P | pf | binary | 1 |" in whole
    agreement = gold.split("## Agreement")[1].split("## Gold provenance")[0]
    assert "labels not in this export (gold only)" in agreement and "no submitted labels" not in agreement


def test_the_planning_and_data_manager_guides_are_reached_from_their_pages(live_server, login, eager_tasks):
    researcher = factories.make_user("rita-guides")
    study = factories.make_study(owner=researcher, slug="guides-e2e")
    factories.grant(study, researcher, "researcher")
    pool = factories.make_pool(study, questions=[yes_no(study, "pf")])
    page = login(researcher).new_page()
    page.goto(live_server.url + reverse("console:pool", args=[study.slug, pool.pk]))
    page.locator("#pool-plan").get_by_role("link", name="Planning a validation").first.click()
    assert page.locator("h1").inner_text() == "Planning a validation"
    page.goto(live_server.url + reverse("adjudication:data-manager", args=[study.slug]))
    page.get_by_role("link", name="How the data manager works").click()
    assert page.locator("h1").inner_text() == "Data manager"
    page.goto(live_server.url + reverse("help:page", args=["adjudicate"]))
    assert page.get_by_role("heading", name="Keys").count() == 1


def test_the_consoles_small_refusals_say_why(live_server, login, eager_tasks, tmp_path):
    researcher = factories.make_user("rita-console")
    researcher.user_permissions.add(Permission.objects.get(codename="add_study", content_type__app_label="annotation"))
    study = console.study_create(owner=researcher, name="Console pilot", presets=["astrid"])
    pool = factories.make_pool(study, "PF", questions=list(study.questions.all()[:1]), overlap=1)
    kim = factories.make_user("kim-console")
    factories.add_member(pool, kim, "P-A1")
    item = factories.make_item(study, "dm-1")
    factories.make_assignment(pool, item, kim, status=AssignmentStatus.SUBMITTED)
    page = login(researcher).new_page()

    # A duplicate study name: refused, naming the first.
    page.goto(live_server.url + reverse("console:study_create"))
    page.fill("#id_name", "console pilot")
    page.click("text=Create study")
    page.get_by_text("you already have a study named 'console pilot'").wait_for()

    # The status filter reads as words; a re-queue of items with nothing skipped says why.
    page.goto(live_server.url + reverse("adjudication:data-manager", args=[study.slug]))
    assert "Not assigned" in page.locator("#dm-pool-state").inner_text()
    page.check(f"input[name=item][value='{item.pk}']")
    page.select_option("#dm-action", "requeue")
    page.select_option("#dm-target-pool", str(pool.pk))
    page.click("text=Review the action")
    page.get_by_text("nothing to re-queue: none of these 1 item has a skipped assignment in pool PF").wait_for()

    # A new upload supersedes the older dry run, whose Import button goes.
    page.goto(live_server.url + reverse("console:items", args=[study.slug]))
    for name, records in (("first.jsonl", ITEMS), ("second.jsonl", ITEMS[:1])):
        upload = tmp_path / name
        upload.write_bytes(jsonl(*records))
        page.set_input_files("#id_file", str(upload))
        page.click("button:has-text('Upload and check')")
        page.locator(".import-job", has_text=name).get_by_text("Checked, ready to import").wait_for()
    page.reload()
    old = ImportJob.objects.get(filename="first.jsonl")
    card = page.locator(f"#import-job-{old.pk}")
    assert "Superseded by a newer upload" in card.inner_text() and card.get_by_role("button").count() == 0
    screenshot(page, "console_superseded_import")
