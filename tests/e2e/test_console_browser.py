"""One researcher sets up a study from an empty database to a first annotator's queue, in a real
browser, through the console alone (no Django admin, no shell beyond creating the researcher's
account, which is the administrator's job).

Screenshots: tests/e2e/artifacts/console_*.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from tests.annotation.console_helpers import ITEMS, jsonl

ARTIFACTS = Path(__file__).parent / "artifacts"
RESEARCHER_PASSWORD = "rita-has-a-long-password-1"

pytestmark = pytest.mark.e2e


@pytest.fixture
def console_page(browser_context):
    """A page of the shared browser context (tests/e2e/conftest.py: Debian chromium, screenshot on
    failure), collecting JavaScript errors such as Content-Security-Policy refusals."""
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, errors


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"console_{name}.png"), full_page=True)


def _log_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def test_a_study_is_set_up_from_an_empty_database_to_a_first_annotators_queue(
    live_server, console_page, eager_tasks, tmp_path, settings
):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    page, js_errors = console_page
    base = live_server.url
    # The only step outside the console: an administrator creates the researcher's account.
    rita = get_user_model().objects.create_user("rita", password=RESEARCHER_PASSWORD)
    rita.user_permissions.add(Permission.objects.get(codename="add_study", content_type__app_label="annotation"))

    _log_in(page, base, "rita", RESEARCHER_PASSWORD)
    page.click("text=Researcher console")
    page.click("text=New study")
    page.fill("#id_name", "Browser pilot")
    page.check("input[name=presets][value=astrid]")
    page.fill("#id_guidelines", "Label **every** sentence.")
    page.locator("#guidelines-preview strong").wait_for()
    page.fill("#id_hidden_metadata_fields", "model")
    page.click("text=Create study")

    # Protocol: the live preview shows the questions; remove one question and the preview follows.
    page.wait_for_url(re.compile(r"/console/browser-pilot/protocol/$"))
    page.locator("#live-preview").get_by_text("Does this sentence carry clinical information?").wait_for()
    page.once("dialog", lambda d: d.accept())
    page.click("button[aria-label='Remove inappropriate']")
    page.locator("#q-inappropriate").wait_for(state="detached")
    page.locator("#live-preview").get_by_text("How inappropriate is this answer").wait_for(state="detached")
    _shot(page, "protocol")

    # Items: upload, dry run summary, then the real import.
    upload = tmp_path / "items.jsonl"
    upload.write_bytes(jsonl(*ITEMS))
    page.click("nav.console-tabs >> text=Items")
    page.set_input_files("#id_file", str(upload))
    page.click("button:has-text('Upload and check')")
    page.get_by_text("Dry run: nothing has been written yet").wait_for()
    _shot(page, "upload_checked")
    page.click("text=Import 2 items")
    page.get_by_text("Imported 2 items").wait_for()
    page.locator("#item-table").get_by_text("q1").wait_for()
    _shot(page, "items")

    # Pool: perceived faithfulness and helpfulness, k = 1.
    page.click("nav.console-tabs >> text=Pools")
    page.fill("#id_name", "PF")
    page.check("label:has-text('perceived_faithfulness') input")
    page.check("label:has-text('helpful (item)') input")
    page.click("text=Create pool")
    page.get_by_role("heading", name="Pool PF").wait_for()

    # A new annotator account with a one-time password, straight into the pool.
    page.fill("#account-create-form input[name=username]", "dr.kim")
    page.click("text=Create account in this pool")
    one_time = page.locator("#new-password").inner_text()
    _shot(page, "account_created")
    page.click("nav.console-tabs >> text=Progress")
    page.get_by_role("heading", name="PF", exact=True).wait_for()
    assert "0 of 2 assignments submitted" in page.content()
    _shot(page, "progress")
    page.click("text=Log out")

    # The annotator must choose a password first, then sees their queue.
    _log_in(page, base, "dr.kim", one_time)
    page.get_by_text("Choose your own before you continue").wait_for()
    page.fill("#id_old_password", one_time)
    page.fill("#id_new_password1", "kim-chooses-a-good-one-7")
    page.fill("#id_new_password2", "kim-chooses-a-good-one-7")
    page.click("text=Save password")
    page.get_by_text("Browser pilot").first.wait_for()
    page.get_by_role("row", name=re.compile("PF")).wait_for()
    assert page.locator("[data-continue]").count() == 1
    _shot(page, "annotator_queue")
    assert not [e for e in js_errors if "Content Security Policy" in e], js_errors
