"""Seeing other annotators' labels and reopening the item are one serialised step (issue Q, finding 3).

A calibration pool shows an annotator the others' labels once they submitted an item, and an item whose
others' labels its annotator saw can never be reopened. The page that shows them and the reopening both
lock the assignment row (``services.assignment_workspace_shown``, ``services.assignment_reopen``), so
whichever takes it first decides: either the reopening wins and the page, which waited, finds the item open
and shows no other labels; or the page wins, its exposure is committed before the labels leave the server,
and the reopening, which waited, is refused. The tests hold one side inside its transaction at the point
where the race used to be (the reopening decided, the others' labels read), start the other, wait on the
database until it is blocked by that lock (``pg_blocking_pids``), then let the first go on: both orders,
through the item page and the API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import labels, services, workspace
from annotation.models import Assignment, AssignmentReopening, AssignmentStatus, Exposure, Visibility
from annotation.selectors import REOPEN_AFTER_SEEING_OTHERS
from concord.errors import ValidationFailed
from tests import factories

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and pg_blocking_pids: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

# A guard against a test that hangs (a thread that never gets its go): never reached when the code is right.
GUARD_SECONDS = 120
THEIRS = "COLLEAGUE-ANSWER-7Q"


@pytest.fixture(autouse=True)
def _annotation_alone(no_submit_receivers):
    """Submitting here runs no adjudication."""


@pytest.fixture
def mine(study, annotator):
    """The annotator's submitted item in a calibration pool that allows reopening; a colleague answered it."""
    question = factories.make_question(study, "pf", kind="text")
    item = factories.make_item(study)
    pool = factories.make_pool(
        study, "calibration", questions=[question], visibility=Visibility.AFTER_SUBMIT, reopen_allowed=True
    )
    colleague = factories.make_user("colleague")
    factories.add_member(pool, annotator, "P-ME")
    factories.add_member(pool, colleague, "P-COLLEAGUE")
    assignment = factories.make_assignment(pool, item, annotator)
    theirs = factories.make_assignment(pool, item, colleague)
    labels.label_save(assignment=theirs, question=question, unit_key="item", value=THEIRS, base_version=0,
                        actor=colleague)
    labels.label_save(assignment=assignment, question=question, unit_key="item", value="MINE", base_version=0,
                        actor=annotator)
    return services.assignment_submit(assignment=assignment, actor=annotator)


class PauseOnce:
    """Wraps a function: its first call runs it and then waits, still inside its caller's transaction, until
    the test lets it go on; later calls just run it."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.reached = threading.Event()
        self.go = threading.Event()
        self._first = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self.func(*args, **kwargs)
        if self._first.acquire(blocking=False):
            self.reached.set()
            self.go.wait(GUARD_SECONDS)
        return result


def _in_thread(work: Callable[[], Any], outcome: dict[str, Any], name: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[name] = work()
        except Exception as exc:  # the test asserts on what was raised
            outcome[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread


def _waited_for_a_lock(thread: threading.Thread) -> bool:
    """Wait (on the database, not a clock) until a session of this test's database is blocked by a lock, or
    ``thread`` ended without ever being blocked; tells which."""
    s = connection.settings_dict
    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], password=s["PASSWORD"],
                         dbname=s["NAME"], autocommit=True) as watcher:
        while thread.is_alive():
            blocked = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND cardinality(pg_blocking_pids(pid)) > 0"
            ).fetchone()[0]
            if blocked:
                return True
            thread.join(0.01)  # a poll interval, not a deadline: the loop ends on progress only
    return False


def _reopen(assignment: Assignment, annotator) -> Callable[[], Any]:
    return lambda: services.assignment_reopen(assignment=assignment, actor=annotator)


def _show(via: str, assignment: Assignment, annotator) -> Callable[[], str]:
    """The item as the page (or the API's item view) shows it to the annotator, as text."""
    if via == "page":
        client = Client()
        client.force_login(annotator)
        url = reverse("annotation:item", args=[assignment.pk])
    else:
        client = APIClient()
        client.force_authenticate(annotator)
        url = reverse("api-assignment", args=[assignment.pk])

    def show() -> str:
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return response.content.decode()

    return show


def _others_seen() -> int:
    return Exposure.objects.filter(showed_other_labels=True).count()


@pytest.mark.parametrize("via", ["page", "api"])
def test_a_reopening_that_decided_first_makes_the_waiting_page_show_no_other_labels(
    monkeypatch, mine, annotator, via
):
    # The reopening has locked the row, found no exposure and is about to reopen when the page is opened.
    pause = PauseOnce(services.reopen_refusal)
    monkeypatch.setattr(services, "reopen_refusal", pause)
    outcome: dict[str, Any] = {}
    reopening = _in_thread(_reopen(mine, annotator), outcome, "reopen")
    try:
        assert pause.reached.wait(GUARD_SECONDS), "the reopening never reached its decision"
        page = _in_thread(_show(via, mine, annotator), outcome, "page")
        waited = _waited_for_a_lock(page)
    finally:
        pause.go.set()
        reopening.join(GUARD_SECONDS)
    page.join(GUARD_SECONDS)
    assert isinstance(outcome["reopen"], Assignment), outcome["reopen"]
    assert Assignment.objects.get(pk=mine.pk).status == AssignmentStatus.STARTED
    assert AssignmentReopening.objects.count() == 1
    # Consistent: the item was reopened, so its page showed no other labels and recorded none.
    assert THEIRS not in outcome["page"] and "P-COLLEAGUE" not in outcome["page"]
    assert _others_seen() == 0
    assert waited, "the page did not wait for the reopening's lock"


@pytest.mark.parametrize("via", ["page", "api"])
def test_a_page_that_showed_other_labels_first_makes_the_waiting_reopening_refused(monkeypatch, mine, annotator, via):
    # The page has read the others' labels, and recorded nothing yet, when the reopening starts.
    pause = PauseOnce(workspace._calibration_labels)
    monkeypatch.setattr(workspace, "_calibration_labels", pause)
    outcome: dict[str, Any] = {}
    page = _in_thread(_show(via, mine, annotator), outcome, "page")
    try:
        assert pause.reached.wait(GUARD_SECONDS), "the page never read the others' labels"
        reopening = _in_thread(_reopen(mine, annotator), outcome, "reopen")
        waited = _waited_for_a_lock(reopening)
    finally:
        pause.go.set()
        page.join(GUARD_SECONDS)
    reopening.join(GUARD_SECONDS)
    assert THEIRS in outcome["page"]
    assert _others_seen() == 1
    # Consistent: the labels were shown, so the reopening was refused and the item stays submitted.
    assert isinstance(outcome["reopen"], ValidationFailed), outcome["reopen"]
    assert outcome["reopen"].message == REOPEN_AFTER_SEEING_OTHERS
    assert Assignment.objects.get(pk=mine.pk).status == AssignmentStatus.SUBMITTED
    assert not AssignmentReopening.objects.exists()
    assert waited, "the reopening did not wait for the page's lock"
