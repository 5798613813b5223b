"""The annotator workspace in a real browser."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Aspect, Assignment, AssignmentStatus, Label, LabelHistory, PoolMembership
from annotation.protocols import study_protocol_apply
from annotation.services import pool_assign_items
from tests import factories
from tests.e2e.conftest import ARTIFACTS, Keys, record_keystrokes, screenshot

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
def astrid(no_submit_receivers):
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


def test_an_astrid_item_labelled_by_keyboard_only_survives_a_reload_and_submits(
    live_server, login, astrid, debug_mode
):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector("#unit-s-0.active")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "item_page.png"), full_page=True)
    first_url = page.url
    keys = Keys(page)

    # The cursor starts on sentence 1; each answer is saved and the cursor moves on by itself.
    for units in (SENTENCES, CHUNKS, {"item": ITEM}):
        for unit_key, answers in units.items():
            assert page.locator(".unit.active").get_attribute("data-unit") == unit_key
            for question, value in answers:
                keys.press(key_of(astrid["questions"], question, value))
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

    keys.press("n")
    page.wait_for_url(lambda url: url != first_url and "/assignments/" in url)
    submitted = Assignment.objects.get(pool=astrid["pool"], status=AssignmentStatus.SUBMITTED)
    assert first_url.endswith(reverse("annotation:item", args=[submitted.pk]))
    assert submitted.labels.exclude(value__isnull=True).count() == 3 + 2 + len(ITEM)
    # One key per answer and one to submit: 12 answers (2 sentences, 2 passages, 7 overall) + n.
    assert keys.count == 3 + 2 + len(ITEM) + 1
    record_keystrokes("astrid item (2 sentences, 2 passages)", keys.count)


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
    assert "changed elsewhere" in text and "set by you" in text and "nora-nurse" not in text
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


def test_html_in_an_answer_is_shown_as_text(live_server, login, no_submit_receivers):
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


# --- Errors in place, whatever DEBUG says --------------------------------------------------------


def test_errors_are_shown_in_place_with_debug_on_and_off(live_server, login, astrid, debug_mode):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector("#unit-s-0.active")

    # A refused submit lists what is missing inside the styled page; the page is not replaced.
    page.keyboard.press("n")
    page.wait_for_selector("#workspace .submit-errors")
    assert page.locator("header.topbar").is_visible() and page.locator("#unit-s-0").is_visible()
    assert page.evaluate("getComputedStyle(document.querySelector('header.topbar')).display") != "inline"
    assert "Not submitted" in page.locator("#save-status").inner_text()
    screenshot(page, f"errors_in_place_submit_{'debug_on' if debug_mode else 'debug_off'}")

    # A 404 (the annotator was taken off the pool meanwhile) leaves the page as it is and says why on top.
    PoolMembership.objects.filter(pool=astrid["pool"]).update(active=False)
    page.keyboard.press(key_of(astrid["questions"], "information_bearing", "yes"))
    page.wait_for_selector("#htmx-error:not([hidden])")
    assert page.locator("#htmx-error").inner_text() == "Not found: No such assignment."
    assert page.locator("#unit-s-0").is_visible() and page.locator("#workspace .submit-errors").is_visible()
    assert "Not saved" in page.locator("#save-status").inner_text()
    screenshot(page, f"errors_in_place_404_{'debug_on' if debug_mode else 'debug_off'}")


# --- Every question kind by keys ---------------------------------------------------------------


@pytest.fixture
def icat(no_submit_receivers):
    annotator = factories.make_user("ivan-icat")
    study = factories.make_study(slug="icat-e2e")
    questions = {q.key: q for q in study_protocol_apply(study=study, presets="icat")}
    item = factories.make_item(
        study, "icat-1", question="How should I take X?",
        answer="Take 0.5 mg of X once daily. Take it with food. See your doctor if it gets worse.",
    )
    must = Aspect.objects.create(item=item, text="States the dose", importance="must_have", status="accepted")
    nice = Aspect.objects.create(
        item=item, text="Mentions kidney function", importance="nice_to_have", status="accepted"
    )
    pool = factories.make_pool(study, "clinicians", questions=list(questions.values()))
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"annotator": annotator, "questions": questions, "pool": pool, "aspects": (must, nice)}


def test_the_evidence_step_shows_its_keys_and_j_says_what_it_leaves_unanswered(live_server, login, icat):
    """A first K-QA item once took 72 keys and a refused submit: the evidence boxes showed no keys and
    `j` moved past the required evidence without a word."""
    must, _nice = icat["aspects"]
    page = login(icat["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[icat["pool"].pk]))
    first = f"#unit-a-{must.pk}"
    page.wait_for_selector(f"{first}.active")
    page.keyboard.press(key_of(icat["questions"], "aspect_covered", "yes"))
    evidence = page.locator(f'{first} .q[data-question="aspect_evidence"]')
    evidence.wait_for()
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    assert evidence.locator("label.opt kbd").all_inner_texts()[:2] == ["1", "2"]
    assert "the sentence numbers tick or untick a sentence" in evidence.locator(".key-hint").inner_text()
    page.keyboard.press("j")
    status = page.locator("#save-status")
    assert status.inner_text() == (
        "Still to answer on the unit you left: Which answer sentences cover this aspect? "
        "(tick its sentences by their numbers). The item cannot be submitted without it."
    )
    assert page.locator(".unit.active").get_attribute("data-unit") != f"a:{must.pk}"


def test_an_icat_item_is_answered_by_keyboard_only_sentence_numbers_tick_the_evidence(
    live_server, login, icat, debug_mode
):
    must, nice = icat["aspects"]
    page = login(icat["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[icat["pool"].pk]))
    first = f"#unit-a-{must.pk}"
    page.wait_for_selector(f"{first}.active")
    first_url = page.url
    keys = Keys(page)

    keys.press(key_of(icat["questions"], "aspect_covered", "yes"))
    page.wait_for_selector(f'{first} .q[data-question="aspect_evidence"]')  # asked once the aspect is covered
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    assert page.locator(".unit.active").get_attribute("data-unit") == f"a:{must.pk}"  # evidence still needed
    keys.press("1")  # sentence 1
    answered(page, f"a:{must.pk}", "aspect_evidence")
    keys.press("2")  # sentence 2
    page.wait_for_selector(f'{first} .q[data-question="aspect_evidence"] input[data-align-index="1"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    keys.press("2")  # and off again
    page.wait_for_selector(f'{first} .q[data-question="aspect_evidence"] input[data-align-index="1"]:not(:checked)')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    keys.press("3")
    page.wait_for_selector(f'{first} .q[data-question="aspect_evidence"] input[data-align-index="2"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    screenshot(page, "icat_evidence_by_keys")
    keys.press("Enter")  # done ticking: on to the next aspect
    page.wait_for_selector(f"#unit-a-{nice.pk}.active")

    keys.press(key_of(icat["questions"], "aspect_covered", "no"))
    answered(page, f"a:{nice.pk}", "aspect_covered")
    page.wait_for_selector("#unit-item.active")  # moved on by itself: the last unit's field is optional

    keys.press("Enter")  # into the optional free-text field
    keys.type("Renal dosing")
    keys.press("Escape")  # leaving the field saves it
    answered(page, "item", "missing_aspects")
    keys.press("n")
    page.wait_for_url(lambda url: url != first_url)
    assignment = Assignment.objects.get(pool=icat["pool"])
    assert assignment.status == AssignmentStatus.SUBMITTED
    values = {(lb.question.key, lb.unit_key): lb.value for lb in assignment.labels.select_related("question")}
    assert values == {
        ("aspect_covered", f"a:{must.pk}"): "yes",
        ("aspect_evidence", f"a:{must.pk}"): [0, 2],
        ("aspect_covered", f"a:{nice.pk}"): "no",
        ("missing_aspects", "item"): "Renal dosing",
    }
    record_keystrokes("icat item (2 aspects, evidence sentences 1 and 3 after a mistake, 12-letter note)", keys.count)
    # covered + 4 sentence toggles + Enter + not covered + Enter + 12 letters + Esc + n
    assert keys.count == 1 + 4 + 1 + 1 + 1 + 12 + 1 + 1


def test_pressing_the_key_of_the_answer_already_given_moves_on_and_leaves_no_flag(live_server, login, astrid):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector("#unit-s-0.active")
    no = key_of(astrid["questions"], "information_bearing", "no")
    page.keyboard.press(no)
    answered(page, "s:0", "information_bearing")
    page.wait_for_selector("#unit-s-1.active")
    page.keyboard.press("k")
    page.keyboard.press(no)  # already the answer: the cursor moves on, nothing is saved
    page.wait_for_selector("#unit-s-1.active")
    # A later save by mouse in another unit keeps the cursor there (no stale "move on" flag).
    page.locator('#unit-c-2 .q[data-question="context_relevant"] label:has(input[value="no"])').click()
    answered(page, "c:2", "context_relevant")
    assert page.locator(".unit.active").get_attribute("data-unit") == "c:2"
    assert LabelHistory.objects.filter(label__unit_key="s:0").count() == 1


def test_the_key_list_says_the_cursor_moves_on_by_itself(live_server, login, astrid):
    page = login(astrid["annotator"]).new_page()
    page.goto(live_server.url + reverse("annotation:pool-continue", args=[astrid["pool"].pk]))
    page.wait_for_selector(".unit.active")
    page.keyboard.press("?")
    text = page.locator("#keys-overlay").inner_text()
    assert "moves on by itself" in text and "sentence numbers" in text
    screenshot(page, "key_list")


# --- Metadata blinding, as a browser shows it ----------------------------------------------------


def test_a_blind_study_shows_annotators_only_the_visible_metadata_and_the_preview_matches(
    live_server, login, no_submit_receivers
):
    annotator = factories.make_user("bea-blind")
    researcher = factories.make_user("rhea-research")
    study = factories.make_study(slug="blind-e2e", blind_system=True, visible_metadata_fields=["topic"])
    factories.grant(study, researcher, "researcher")
    question = factories.make_question(study, "relevant", scope="chunk")
    item = factories.make_item(
        study, "gpt4o-017", system="gpt-4o-rag", answer="Take it daily.",
        metadata={"topic": "Dosing", "model_version": "gpt-4o-2024-08-06"},
    )
    factories.make_chunk(item, 1, "A passage about X.", document_id="gpt4o-kb/doc-17")
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    page.wait_for_selector(".unit.active")
    shown = page.locator("main").inner_text()
    assert "Dosing" in shown
    for secret in ("gpt-4o", "gpt4o", "model_version", "doc-17"):
        assert secret not in shown
    screenshot(page, "blinding_annotator_item_page")
    annotator_text = page.locator(".item-question").inner_text() + page.locator("#unit-c-1").inner_text()
    page.context.clear_cookies()

    page = login(researcher).new_page()
    preview_url = reverse("console:preview", args=[study.slug]) + f"?item={item.external_id}&pool={pool.pk}"
    page.goto(live_server.url + preview_url)
    page.wait_for_selector(".preview-banner")
    preview_text = page.locator(".item-question").inner_text() + page.locator("#unit-c-1").inner_text()
    assert preview_text == annotator_text
    screenshot(page, "blinding_researcher_preview")


# --- My history: undo, submit, reopen ----------------------------------------------------------


def test_undo_then_submit_then_reopen_from_my_history(live_server, login, no_submit_receivers, debug_mode):
    annotator = factories.make_user("hana-history")
    study = factories.make_study(slug=f"history-e2e-{int(debug_mode)}")
    question = factories.make_question(study, "pf", prompt="Is the answer faithful?")
    item = factories.make_item(study, "hist-1", answer="Take it daily.", question="HISTORY-E2E?")
    pool = factories.make_pool(study, "clinicians", questions=[question], reopen_allowed=True)
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    page.wait_for_selector("#unit-item.active")

    page.keyboard.press("1")  # yes
    answered(page, "item", "pf")
    page.keyboard.press("2")  # changed my mind: no
    page.wait_for_selector('#unit-item input[value="no"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    page.keyboard.press("Control+z")  # undo: back to yes
    page.wait_for_selector("ul.messages")
    assert "Undone" in page.locator("ul.messages").inner_text()
    page.wait_for_selector('#unit-item input[value="yes"]:checked')
    screenshot(page, f"history_undo_{'debug_on' if debug_mode else 'debug_off'}")
    label = Label.objects.get()
    assert (label.value, label.version) == ("yes", 3)
    history = list(LabelHistory.objects.order_by("id").values_list("new_value", "undoes_id"))
    assert [v for v, _ in history] == ["yes", "no", "yes"] and history[2][1] is not None

    page.keyboard.press("n")
    page.wait_for_url(lambda url: "/assignments/" not in url)
    page.goto(live_server.url + reverse("annotation:history"))
    assert "HISTORY-E2E?" in page.locator("table.history-list").inner_text()
    screenshot(page, f"history_list_{'debug_on' if debug_mode else 'debug_off'}")
    page.locator(f"#history-{assignment.pk} .reopen-button").click()
    page.wait_for_selector("#unit-item.active")
    assert "Reopened" in page.locator("ul.messages").inner_text()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.STARTED and assignment.reopened_count == 1
    page.keyboard.press("2")
    page.wait_for_selector('#unit-item input[value="no"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    assert Label.objects.get().version == 4  # the change after reopening is a new version, kept in history
    assert LabelHistory.objects.count() == 4


def test_sentence_numbers_above_nine_are_ended_by_enter(live_server, login, no_submit_receivers):
    annotator = factories.make_user("lena-long")
    study = factories.make_study(slug="long-e2e")
    questions = {q.key: q for q in study_protocol_apply(study=study, presets="icat")}
    answer = " ".join(f"Sentence number {n} says something." for n in range(1, 13))
    item = factories.make_item(study, "long-1", answer=answer, question="A long answer?")
    aspect = Aspect.objects.create(item=item, text="States the dose", importance="must_have", status="accepted")
    pool = factories.make_pool(study, "clinicians", questions=list(questions.values()))
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    page = login(annotator).new_page()
    page.goto(live_server.url + reverse("annotation:item", args=[assignment.pk]))
    unit = f"#unit-a-{aspect.pk}"
    page.wait_for_selector(f"{unit}.active")
    page.keyboard.press(key_of(questions, "aspect_covered", "yes"))
    page.wait_for_selector(f'{unit} .q[data-question="aspect_evidence"]')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    page.keyboard.press("1")
    page.keyboard.press("2")  # 12: no longer number starts with 12, so it is ticked at once
    page.wait_for_selector(f'{unit} input[data-align-index="11"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    page.keyboard.press("1")  # could be 1, 10, 11 or 12: Enter ends it
    assert "Enter ticks it" in page.locator("#save-status").inner_text()
    page.keyboard.press("Enter")
    page.wait_for_selector(f'{unit} input[data-align-index="0"]:checked')
    page.wait_for_selector('#workspace[data-idle="1"]', state="attached")
    label = Label.objects.get(question__key="aspect_evidence")
    assert label.value == [0, 11]
