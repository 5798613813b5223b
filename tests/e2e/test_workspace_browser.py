"""The annotator workspace in a real browser."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Assignment, AssignmentStatus, Label, LabelHistory
from annotation.protocols import study_protocol_apply
from annotation.services import pool_assign_items
from tests import factories
from tests.e2e.conftest import ARTIFACTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# What the clinician answers, per unit: sentence 1 carries information, sentence 2 is a courtesy.
SENTENCES = {"s:0": [("information_bearing", "yes"), ("grounded", "supported")], "s:1": [("information_bearing", "no")]}
CHUNKS = {"c:1": [("context_relevant", "yes")], "c:2": [("context_relevant", "no")]}
ITEM = [
    ("perceived_faithfulness", "4"),
    ("scope_class", "in_scope"),
    ("refused", "no"),
    ("refusal_appropriate", "yes"),
    ("harmful", "none"),
    ("helpful", "somewhat_helpful"),
    ("inappropriate", "none"),
]


@pytest.fixture
def astrid(settings):
    settings.ASSIGNMENT_SUBMITTED_HANDLERS = []
    annotator = factories.make_user("nora-nurse")
    study = factories.make_study(slug="astrid-e2e", guidelines="Label **every** sentence.")
    questions = {q.key: q for q in study_protocol_apply(study=study, presets="astrid")}
    items = []
    for n in range(2):
        item = factories.make_item(
            study,
            f"e2e-{n}",
            answer="Take 0.5 mg of X once daily. I hope this helps!",
            question="What dose of X should I take?",
        )
        factories.make_chunk(item, 1, "X: the usual dose is 0.5 mg once daily.")
        factories.make_chunk(item, 2, "An unrelated passage about Y.")
        items.append(item)
    pool = factories.make_pool(study, "clinicians", questions=list(questions.values()))
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"annotator": annotator, "questions": questions, "pool": pool}


def key_of(questions, key, value) -> str:
    return next(o["key"] for o in questions[key].options if o["value"] == value)


def answered(page, unit_key, question):
    unit = "unit-" + unit_key.replace(":", "-")
    page.wait_for_selector(f'#{unit} .q[data-question="{question}"][data-answered="1"]')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")


def test_an_astrid_item_labelled_by_keyboard_only_survives_a_reload_and_submits(live_server, login, astrid):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector("#unit-s-0.active")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "item_page.png"), full_page=True)
    first_url = page.url

    # The cursor starts on sentence 1; each answer is saved and the cursor moves on by itself.
    for units in (SENTENCES, CHUNKS, {"item": ITEM}):
        for unit_key, answers in units.items():
            assert page.locator(".unit.active").get_attribute("data-unit") == unit_key
            for question, value in answers:
                page.keyboard.press(key_of(astrid["questions"], question, value))
                answered(page, unit_key, question)
    assert "Saved on the server" in page.locator("#save-status").inner_text()
    assert Label.objects.filter(value__isnull=False).count() == 3 + 2 + len(ITEM)

    # The help overlay opens and closes from the keyboard.
    page.keyboard.press("?")
    assert page.locator("#keys-overlay").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#keys-overlay").is_visible()

    page.reload()
    page.wait_for_selector(".unit.active")
    for units in (SENTENCES, CHUNKS, {"item": ITEM}):
        for unit_key, answers in units.items():
            unit = "#unit-" + unit_key.replace(":", "-")
            for question, value in answers:
                checked = page.locator(f'{unit} .q[data-question="{question}"] input[value="{value}"]')
                assert checked.is_checked(), f"{question} at {unit_key} is not shown after reload"

    # j / k and the arrows move the cursor between units.
    active = lambda: page.locator(".unit.active").get_attribute("data-unit")  # noqa: E731
    assert active() == "s:0"
    for key, expected in [("j", "s:1"), ("ArrowDown", "c:1"), ("k", "s:1"), ("ArrowUp", "s:0")]:
        page.keyboard.press(key)
        assert active() == expected

    page.keyboard.press("n")
    page.wait_for_url(lambda url: url != first_url and "/assignments/" in url)
    submitted = Assignment.objects.get(pool=astrid["pool"], status=AssignmentStatus.SUBMITTED)
    assert first_url.endswith(reverse("annotation:item", args=[submitted.pk]))
    assert submitted.labels.exclude(value__isnull=True).count() == 3 + 2 + len(ITEM)


def test_submitting_too_early_lists_what_is_missing(live_server, login, astrid):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector("#unit-s-0.active")
    page.keyboard.press("n")
    page.wait_for_selector(".submit-errors")
    assert "Sentence 1: Does this sentence carry clinical information?" in page.locator(".submit-errors").inner_text()
    assert not Assignment.objects.filter(status=AssignmentStatus.SUBMITTED).exists()


def test_two_tabs_editing_one_label_show_the_conflict_and_lose_nothing(live_server, login, astrid):
    context = login(astrid["annotator"])
    assignment = Assignment.objects.filter(annotator=astrid["annotator"]).order_by("order_key").first()
    url = live_server.url + reverse("annotation:item", args=[assignment.pk])
    first, second = context.new_page(), context.new_page()
    for tab in (first, second):
        tab.goto(url)
        tab.wait_for_selector(".unit.active")

    pf = '#unit-item .q[data-question="perceived_faithfulness"]'
    first.locator(f'{pf} label:has(input[value="4"])').click()
    first.wait_for_selector(f'{pf}[data-answered="1"]')
    second.locator(f'{pf} label:has(input[value="2"])').click()
    conflict = second.locator(f"{pf} .conflict")
    conflict.wait_for()
    text = conflict.inner_text()
    assert "changed elsewhere" in text and "nora-nurse" in text
    assert second.locator(f"{pf} .conflict-value").inner_text() == "4"
    assert second.locator(f"{pf} .conflict-mine").inner_text() == "2"
    assert "Not saved" in second.locator("#save-status").inner_text()
    assert Label.objects.get(question__key="perceived_faithfulness").value == "4"

    # Nothing is lost: the unsaved answer is offered again and can be kept deliberately.
    second.locator(f"{pf} .use-mine-button").click()
    second.wait_for_selector(f'{pf}:not(.has-conflict) input[value="2"]:checked')
    label = Label.objects.get(question__key="perceived_faithfulness")
    assert (label.value, label.version) == ("2", 2)
    assert list(LabelHistory.objects.filter(label=label).values_list("new_value", flat=True)) == ["4", "2"]

    # The first tab is now the stale one, and is told so in turn.
    first.locator(f'{pf} label:has(input[value="5"])').click()
    first.locator(f"{pf} .conflict").wait_for()
    assert first.locator(f"{pf} .conflict-value").inner_text() == "2"
    assert Label.objects.get(question__key="perceived_faithfulness").value == "2"


def test_html_in_an_answer_is_shown_as_text(live_server, login, settings):
    settings.ASSIGNMENT_SUBMITTED_HANDLERS = []
    annotator = factories.make_user("hugo-html")
    study = factories.make_study(slug="xss-e2e")
    question = factories.make_question(study, "pf")
    hostile = 'Take <script>window.__pwned = 1</script> 5 mg. Then <img src=x onerror="window.__pwned = 2"> rest.'
    item = factories.make_item(study, answer=hostile, question="<b>Bold?</b>")
    factories.make_chunk(item, 1, '<img src=x onerror="window.__pwned = 3">')
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    page.wait_for_selector(".unit")
    answer_text = page.locator(".answer").inner_text()
    assert "<script>window.__pwned = 1</script>" in answer_text
    assert '<img src=x onerror="window.__pwned = 2">' in answer_text
    assert "<b>Bold?</b>" in page.locator(".question-text").inner_text()
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert not dialogs
