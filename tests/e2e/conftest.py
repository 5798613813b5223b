"""Browser tests: Python Playwright driving Debian's chromium against pytest-django's live server.

Playwright cannot download its own browser here, so the system chromium is launched
(``make browser`` installs it). Django refuses ORM calls from a thread with a running event loop
unless told otherwise; Playwright's sync API runs one, so the flag is set for these tests only.
On failure a full-page screenshot lands in tests/e2e/artifacts/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waiting import STALL_SECONDS

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# Playwright waits for each element, navigation or response on its own; its limit is the tests' stall
# period (tests/waiting.py), not a few seconds that a loaded machine can miss.
BROWSER_TIMEOUT_MS = int(STALL_SECONDS * 1000)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_context(browser, request) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    context.set_default_navigation_timeout(BROWSER_TIMEOUT_MS)
    yield context
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        for n, page in enumerate(context.pages):
            page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-{n}.png"), full_page=True)
    context.close()


@pytest.fixture
def eager_tasks():
    """Celery tasks run in the request that sends them (no worker in these tests); pages still poll them."""
    from concord.celery import app as celery_app

    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = before


@pytest.fixture
def login(live_server, browser_context):
    """Log a user in by giving the browser a real session cookie (faster than typing the form)."""
    from django.conf import settings
    from django.test import Client

    def _login(user):
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        browser_context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
        )
        return browser_context

    return _login


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug_mode(request, settings) -> bool:
    """Run a browser test with DEBUG off (as in production) and on (as under ``make run``): pages must
    behave the same, errors included (django-htmx's DEBUG script once replaced the page on an error)."""
    settings.DEBUG = request.param
    return request.param


def screenshot(page, name: str) -> str:
    """A full-page screenshot kept in tests/e2e/artifacts/ (git-ignored); returns its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return str(path)


class Keys:
    """Presses keys on a page and counts them, to report the keystrokes an item takes."""

    def __init__(self, page) -> None:
        self.page = page
        self.count = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count += len(text)


def record_keystrokes(what: str, count: int) -> None:
    """Append a measured keystroke count to tests/e2e/artifacts/keystrokes.txt (for the report)."""
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "keystrokes.txt", "a", encoding="utf-8") as out:
        out.write(f"{what}: {count} keystrokes\n")
