"""A withdrawn assignment (the data manager took an open item back from its annotator, answers saved): every
reader of an assignment's status handles it deliberately (issue Q). It is closed to its annotator, out of their
queue and progress, never counted as submitted work (top-up overlap, disagreement detection, adjudication,
agreement, completion), never shown to another annotator, and its answers stay its annotator's."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from adjudication.analysis.loading import _label_rows
from adjudication.analysis.planning import _completions
from adjudication.models import AdjudicationCase, CaseStatus, GoldLabel
from adjudication.services import case_resolve, item_disagreements_detect
from annotation import labels, selectors, services
from annotation.console.selectors import item_page, study_progress
from annotation.models import Assignment, AssignmentStatus, Label, Visibility
from concord.errors import NotFound, ValidationFailed
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

pytestmark = pytest.mark.django_db
WITHDRAWN = AssignmentStatus.WITHDRAWN


@pytest.fixture
def three(study):
    """A pool of three members (k = 2) asking pf on one item: two submitted "yes", the third's "no" withdrawn."""
    pf = yes_no(study, "pf")
    pool, (a, b, c) = pool_with_members(study, [pf], n=3, overlap=2)
    item = factories.make_item(study, "w-1")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "yes"})
    withdrawn = submit_labels(pool, item, c, {("pf", "item"): "no"}, status=WITHDRAWN)
    return {"pool": pool, "item": item, "pf": pf, "members": (a, b, c), "withdrawn": withdrawn}


def test_its_annotator_can_neither_answer_submit_skip_nor_undo(three):
    withdrawn, c, pf = three["withdrawn"], three["members"][2], three["pf"]
    label = Label.objects.get(assignment=withdrawn)
    attempts = (
        lambda: labels.label_save(assignment=withdrawn, question=pf, unit_key="item", value="yes",
                                    base_version=1, actor=c),
        lambda: services.assignment_submit(assignment=withdrawn, actor=c),
        lambda: services.assignment_skip(assignment=withdrawn, actor=c, reason="unsure"),
        lambda: labels.label_undo(assignment=withdrawn, actor=c),
    )
    for attempt in attempts:
        with pytest.raises(ValidationFailed):
            attempt()
    # The API's save (on PostgreSQL one statement that checks the status itself) refuses it too.
    api = APIClient()
    api.force_authenticate(c)
    response = api.put(reverse("api-labels", args=[withdrawn.pk]),
                       {"question": "pf", "unit_key": "item", "value": "yes", "base_version": 1}, format="json")
    assert response.status_code == 400 and "took this item out of your queue" in response.json()["detail"]
    withdrawn.refresh_from_db()
    assert withdrawn.status == WITHDRAWN and Label.objects.get(pk=label.pk).value == "no"


def test_a_save_into_an_assignment_deleted_meanwhile_is_a_404_not_a_crash(study, annotator):
    assignment, pf = factories.one_nominal_assignment(study, annotator)
    fetched = selectors.get_assignment_for_annotator(annotator, assignment.pk)
    Assignment.objects.filter(pk=assignment.pk).delete()  # the data manager took the unanswered item back
    with pytest.raises(NotFound):
        labels.label_save(
            assignment=fetched, question=pf, unit_key="item", value="3", base_version=0, actor=annotator
        )


def test_it_leaves_the_queue_and_the_progress_of_annotator_and_researcher(three, study):
    pool, c = three["pool"], three["members"][2]
    assert services.assignment_reserve_next(pool=pool, annotator=c) is None
    progress = selectors.pool_progress(pool=pool, user=c)
    assert (progress.assigned, progress.remaining) == (0, 0)
    [queue] = selectors.annotator_queue(user=c)
    assert [(p.assigned, p.remaining) for p in queue.pools] == [(0, 0)]
    [pool_progress] = study_progress(study)
    assert {m.membership.pseudonym: (m.assigned, m.done) for m in pool_progress.annotators} == {
        "P-A1": (1, 1), "P-A2": (1, 1), "P-A3": (0, 0)
    }
    assert pool_progress.percent_done == 100
    _page, [row] = item_page(study)
    assert row.statuses[0].label == "done 2/2"


def test_the_top_up_gives_a_withdrawn_item_to_another_member_never_back(study):
    pf = yes_no(study, "pf")
    pool, (a, b, c) = pool_with_members(study, [pf], n=3, overlap=1)
    item = factories.make_item(study, "w-2")
    factories.make_assignment(pool, item, a, status=WITHDRAWN)
    other = factories.make_item(study, "w-3")
    factories.make_assignment(pool, other, b)
    assert services.pool_assign_items(pool=pool) == 1
    # the withdrawn item went to the member with the lightest load (c: nothing; a's withdrawn item is no load)
    assert set(Assignment.objects.filter(item=item).values_list("annotator", "status")) == {
        (a.pk, WITHDRAWN), (c.pk, AssignmentStatus.ASSIGNED)
    }


def test_withdrawn_answers_are_never_counted_as_submitted_work(three, study, researcher):
    pool, item, pf = three["pool"], three["item"], three["pf"]
    # Disagreement detection does not wait for it, and its "no" is no dissent: unanimous gold.
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).ready
    assert GoldLabel.objects.get(pool=pool, item=item).value == "yes" and not AdjudicationCase.objects.exists()
    # Agreement reads the two submitted ratings only; the completion of a validation counts the item done.
    rows = _label_rows(pool.pk, pf.pk)
    assert sorted(rows.raters.tolist()) == sorted(u.pk for u in three["members"][:2])
    assert _completions(pool).item_order == [item.pk]


def test_a_case_can_be_decided_while_an_assignment_of_its_item_is_withdrawn(study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    pf = yes_no(study, "pf")
    pool, (a, b, c) = pool_with_members(study, [pf], n=3, overlap=2)
    item = factories.make_item(study, "w-4")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    submit_labels(pool, item, c, {("pf", "item"): "yes"}, status=WITHDRAWN)
    case = AdjudicationCase.objects.get()
    case_resolve(case_id=case.pk, actor=adjudicator, value="yes", rationale="", expected_version=0)
    assert AdjudicationCase.objects.get().status == CaseStatus.RESOLVED


def test_a_calibration_pool_never_shows_withdrawn_answers(client, study, no_submit_receivers):
    """The receiver of a reassigned item, after submitting, sees the other members' answers (calibration),
    never the previous annotator's withdrawn ones."""
    pf = factories.make_question(study, "pf", kind="text")
    pool = factories.make_pool(study, "calibration", questions=[pf], visibility=Visibility.AFTER_SUBMIT, overlap=2)
    item = factories.make_item(study, "w-5")
    giver, receiver, colleague = (factories.make_user(n) for n in ("giver", "receiver", "colleague"))
    for user, pseudonym in ((giver, "P-GIVER"), (receiver, "P-RECEIVER"), (colleague, "P-COLLEAGUE")):
        factories.add_member(pool, user, pseudonym)
    given = factories.make_assignment(pool, item, giver)
    labels.label_save(assignment=given, question=pf, unit_key="item", value="GIVER-ANSWER", base_version=0,
                        actor=giver)
    Assignment.objects.filter(pk=given.pk).update(status=WITHDRAWN)
    theirs = factories.make_assignment(pool, item, colleague)
    labels.label_save(assignment=theirs, question=pf, unit_key="item", value="COLLEAGUE-ANSWER", base_version=0,
                        actor=colleague)
    mine = factories.make_assignment(pool, item, receiver)
    labels.label_save(assignment=mine, question=pf, unit_key="item", value="MINE", base_version=0, actor=receiver)
    services.assignment_submit(assignment=mine, actor=receiver)
    client.force_login(receiver)
    body = client.get(reverse("annotation:item", args=[mine.pk])).content.decode()
    assert "COLLEAGUE-ANSWER" in body  # calibration works
    assert "GIVER-ANSWER" not in body and "P-GIVER" not in body
