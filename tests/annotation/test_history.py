"""My submitted items, reopening them where the pool allows it, and undoing my last change.

Nothing is lost: an undo and every change after a reopening are new versions with their own history
rows; a reopening is recorded; an item whose other labels the annotator saw can never be reopened,
and the validation checks count reopened items."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from adjudication.validation.checks import check_reopened_items
from annotation.labels import label_save, label_undo
from annotation.models import (
    Assignment,
    AssignmentReopening,
    AssignmentStatus,
    AuditEvent,
    Exposure,
    Label,
    LabelHistory,
    Visibility,
)
from annotation.selectors import REOPEN_AFTER_SEEING_OTHERS, annotator_history
from annotation.services import (
    assignment_reopen,
    assignment_skip,
    assignment_submit,
    pool_assign_items,
    reopen_refusal,
)
from concord.errors import Forbidden, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def work(study, annotator, no_submit_receivers):
    """An item with a sentence question and a dependent one (asked only when the first is yes)."""
    bearing = factories.make_question(study, "bearing", scope="sentence", order=1)
    grounded = factories.make_question(
        study, "grounded", scope="sentence", order=2, condition={"question": "bearing", "in": ["yes"]},
        options=[{"value": "supported", "label": "Supported", "key": "3"}, {"value": "unsupported", "key": "4"}],
    )
    item = factories.make_item(study, "ext-id-h-001", answer="Take 0.5 mg daily.", question="HISTORY-QUESTION?")
    pool = factories.make_pool(study, "clinicians", questions=[bearing, grounded], reopen_allowed=True)
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"pool": pool, "assignment": assignment, "bearing": bearing, "grounded": grounded, "item": item}


def _save(work, annotator, key, value):
    question = work[key]
    label = Label.objects.filter(assignment=work["assignment"], question=question, unit_key="s:0").first()
    return label_save(
        assignment=work["assignment"], question=question, unit_key="s:0", value=value,
        base_version=label.version if label else 0, actor=annotator,
    )


def _value(work, key):
    return Label.objects.get(assignment=work["assignment"], question=work[key], unit_key="s:0").value


def test_undo_restores_the_previous_value_as_a_new_version_and_keeps_the_history(work, annotator):
    _save(work, annotator, "bearing", "no")
    _save(work, annotator, "bearing", "yes")
    undone = label_undo(assignment=work["assignment"], actor=annotator)
    assert [(q.key, u, v) for q, u, v in undone.restored] == [("bearing", "s:0", "no")]
    label = Label.objects.get(question=work["bearing"])
    assert (label.value, label.version) == ("no", 3)
    history = list(LabelHistory.objects.filter(label=label).order_by("new_version"))
    assert [(h.old_value, h.new_value) for h in history] == [(None, "no"), ("no", "yes"), ("yes", "no")]
    assert [h.undoes_id for h in history] == [None, None, history[1].pk]


def test_undo_again_goes_back_one_more_change_and_then_there_is_nothing_left(work, annotator):
    _save(work, annotator, "bearing", "no")
    _save(work, annotator, "bearing", "yes")
    label_undo(assignment=work["assignment"], actor=annotator)
    label_undo(assignment=work["assignment"], actor=annotator)
    assert _value(work, "bearing") is None  # back to no answer
    with pytest.raises(ValidationFailed, match="Nothing to undo"):
        label_undo(assignment=work["assignment"], actor=annotator)
    assert LabelHistory.objects.count() == 4


def test_undoing_a_change_that_cleared_a_dependent_answer_restores_both(work, annotator):
    _save(work, annotator, "bearing", "yes")
    _save(work, annotator, "grounded", "supported")
    _save(work, annotator, "bearing", "no")  # clears "grounded", which is no longer asked
    assert _value(work, "grounded") is None
    label_undo(assignment=work["assignment"], actor=annotator)
    assert (_value(work, "bearing"), _value(work, "grounded")) == ("yes", "supported")


def test_undoing_a_cleared_dependent_is_one_step_and_the_steps_before_it_follow_in_order(work, annotator):
    """The change that cleared a dependent answer is undone as one step (both labels, the answer first), and
    every history row the undo wrote is marked as undoing that change; the next undo goes back to the change
    before it, never to the cleared dependent."""
    _save(work, annotator, "bearing", "yes")
    _save(work, annotator, "grounded", "supported")
    _save(work, annotator, "bearing", "no")  # clears "grounded"
    cleared = list(LabelHistory.objects.order_by("id"))[-2:]
    now = timezone.now()
    undone = label_undo(assignment=work["assignment"], actor=annotator, now=now)
    restored = [(q.key, u, v) for q, u, v in undone.restored]
    assert restored == [("bearing", "s:0", "yes"), ("grounded", "s:0", "supported")]
    written = list(LabelHistory.objects.filter(at=now).order_by("id"))
    assert [(h.label.question.key, h.new_value, h.undoes_id) for h in written] == [
        ("bearing", "yes", cleared[0].pk),
        ("grounded", "supported", cleared[0].pk),
    ]
    undone = label_undo(assignment=work["assignment"], actor=annotator)  # the answer to "grounded"
    assert [(q.key, v) for q, _, v in undone.restored] == [("grounded", None)]
    assert (_value(work, "bearing"), _value(work, "grounded")) == ("yes", None)
    undone = label_undo(assignment=work["assignment"], actor=annotator)  # the first answer
    assert [(q.key, v) for q, _, v in undone.restored] == [("bearing", None)]
    with pytest.raises(ValidationFailed) as refused:
        label_undo(assignment=work["assignment"], actor=annotator)
    assert refused.value.message == "Nothing to undo on this item."


def test_only_the_annotator_may_undo_and_only_on_an_open_item(work, annotator, study):
    _save(work, annotator, "bearing", "no")
    colleague = factories.make_user("colleague")
    factories.add_member(work["pool"], colleague)
    with pytest.raises(Forbidden) as refused:
        label_undo(assignment=work["assignment"], actor=colleague)
    assert refused.value.message == "Only the assigned annotator may change this assignment."
    assert _value(work, "bearing") == "no" and LabelHistory.objects.count() == 1
    for status in (AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED, AssignmentStatus.WITHDRAWN):
        Assignment.objects.filter(pk=work["assignment"].pk).update(status=status)
        with pytest.raises(ValidationFailed) as refused:
            label_undo(assignment=work["assignment"], actor=annotator)
        assert refused.value.message == "This item is not open; its answers can no longer change.", status
    assert _value(work, "bearing") == "no" and LabelHistory.objects.count() == 1
    Assignment.objects.filter(pk=work["assignment"].pk).update(status=AssignmentStatus.STARTED)
    label_undo(assignment=work["assignment"], actor=annotator)
    assert _value(work, "bearing") is None


def test_undo_reverts_this_items_last_change_by_this_annotator_only(work, annotator, study):
    """A later change on another of the annotator's items is not this item's to undo, and an answer someone
    else gave in this assignment (what the data manager's old reassign left behind) is never undone by the
    annotator."""
    _save(work, annotator, "bearing", "no")
    other_item = factories.make_item(study, "h-002", answer="Rest.")
    other = factories.make_assignment(work["pool"], other_item, annotator)
    label_save(assignment=other, question=work["bearing"], unit_key="s:0", value="yes", base_version=0, actor=annotator)
    previous = factories.make_user("dr-previous")
    factories.add_member(work["pool"], previous)
    overall = factories.make_question(study, "overall", order=3)
    work["pool"].questions.add(overall)
    theirs = Label.objects.create(
        assignment=work["assignment"], question=overall, unit_key="item", value="yes", version=1,
        updated_by=previous, updated_at=timezone.now(),
    )
    LabelHistory.objects.create(label=theirs, new_value="yes", new_version=1, actor=previous, at=timezone.now())
    undone = label_undo(assignment=work["assignment"], actor=annotator)
    assert [(q.key, v) for q, _, v in undone.restored] == [("bearing", None)]
    assert Label.objects.get(assignment=other).value == "yes"
    theirs.refresh_from_db()
    assert (theirs.value, theirs.version) == ("yes", 1)
    with pytest.raises(ValidationFailed) as refused:
        label_undo(assignment=work["assignment"], actor=annotator)
    assert refused.value.message == "Nothing to undo on this item."


def test_undo_is_refused_on_a_submitted_item(work, annotator):
    _save(work, annotator, "bearing", "no")
    assignment_submit(assignment=work["assignment"], actor=annotator)
    with pytest.raises(ValidationFailed, match="not open"):
        label_undo(assignment=work["assignment"], actor=annotator)


def test_undo_through_the_page_reloads_it_and_says_what_was_undone(client, work, annotator):
    _save(work, annotator, "bearing", "no")
    client.force_login(annotator)
    url = reverse("annotation:undo", args=[work["assignment"].pk])
    response = client.post(url, **HX)
    assert response.status_code == 200 and response.headers["HX-Refresh"] == "true"
    # Reloaded at the undone unit (the first sentence here), which the page's script activates.
    item_url = reverse("annotation:item", args=[work["assignment"].pk])
    assert response.headers["HX-Redirect"] == f"{item_url}#unit-s-0"
    page = client.get(reverse("annotation:item", args=[work["assignment"].pk])).content.decode()
    assert "Undone:" in page and "back to no answer" in page
    refused = client.post(url, **HX)
    assert refused.status_code == 400 and refused.content.decode() == "Nothing to undo on this item."


def test_someone_elses_assignment_cannot_be_undone_or_reopened(client, work, annotator):
    intruder = factories.make_user("intruder")
    factories.add_member(work["pool"], intruder)
    client.force_login(intruder)
    for name in ("annotation:undo", "annotation:reopen"):
        assert client.post(reverse(name, args=[work["assignment"].pk])).status_code == 404


def test_a_submitted_item_is_reopened_where_the_pool_allows_it_and_the_reopening_is_recorded(work, annotator):
    _save(work, annotator, "bearing", "no")
    assignment_submit(assignment=work["assignment"], actor=annotator)
    reopened = assignment_reopen(assignment=work["assignment"], actor=annotator)
    assert reopened.status == AssignmentStatus.STARTED and reopened.reopened_count == 1
    reopening = AssignmentReopening.objects.get()
    assert reopening.actor == annotator and reopening.submitted_at is not None
    event = AuditEvent.objects.get(table_name="annotation_assignmentreopening")  # in the audit trail too
    assert (event.operation, event.actor_id) == ("INSERT", annotator.pk)
    _save(work, annotator, "bearing", "yes")
    assert [h.new_value for h in LabelHistory.objects.order_by("id")] == ["no", "yes"]
    _save(work, annotator, "grounded", "supported")
    assignment_submit(assignment=work["assignment"], actor=annotator)
    assert Assignment.objects.get().status == AssignmentStatus.SUBMITTED


def test_a_reopened_item_is_reserved_again_from_the_moment_it_is_reopened(work, annotator):
    _save(work, annotator, "bearing", "no")
    assignment_submit(assignment=work["assignment"], actor=annotator)
    now = timezone.now()
    reopened = assignment_reopen(assignment=work["assignment"], actor=annotator, now=now)
    until = now + timedelta(minutes=work["pool"].reservation_minutes)
    assert reopened.reserved_until == Assignment.objects.get().reserved_until == until


def test_reopening_is_refused_where_the_pool_does_not_allow_it(work, annotator):
    work["pool"].reopen_allowed = False
    work["pool"].save()
    _save(work, annotator, "bearing", "no")
    assignment_submit(assignment=work["assignment"], actor=annotator)
    with pytest.raises(ValidationFailed, match="does not allow"):
        assignment_reopen(assignment=work["assignment"], actor=annotator)
    assert Assignment.objects.get().status == AssignmentStatus.SUBMITTED and not AssignmentReopening.objects.exists()


def test_an_item_whose_other_labels_were_seen_cannot_be_reopened(client, study, annotator, no_submit_receivers):
    question = factories.make_question(study, "pf")
    factories.make_item(study, "c1")
    pool = factories.make_pool(
        study, "calibration", questions=[question], visibility=Visibility.AFTER_SUBMIT, overlap=2, reopen_allowed=True
    )
    colleague = factories.make_user("colleague")
    factories.add_member(pool, annotator)
    factories.add_member(pool, colleague)
    pool_assign_items(pool=pool)
    theirs, mine = (Assignment.objects.get(annotator=u) for u in (colleague, annotator))
    label_save(assignment=theirs, question=question, unit_key="item", value="yes", base_version=0, actor=colleague)
    label_save(assignment=mine, question=question, unit_key="item", value="no", base_version=0, actor=annotator)
    assignment_submit(assignment=mine, actor=annotator)
    client.force_login(annotator)
    history = client.get(reverse("annotation:history")).content.decode()
    assert 'class="reopen-button"' in history  # not seen yet: may still be reopened
    page = client.get(reverse("annotation:item", args=[mine.pk])).content.decode()  # shows the colleague's label
    assert Exposure.objects.filter(showed_other_labels=True).exists()
    assert "can no longer change" in page and 'id="reopen-button"' not in page
    response = client.post(reverse("annotation:reopen", args=[mine.pk]))
    assert response.status_code == 302
    mine.refresh_from_db()
    assert mine.status == AssignmentStatus.SUBMITTED and not AssignmentReopening.objects.exists()
    assert "can no longer change" in client.get(reverse("annotation:history")).content.decode()


def test_my_history_lists_my_submitted_items_only(client, work, annotator, study):
    other = factories.make_user("other-annotator")
    factories.add_member(work["pool"], other)
    their_item = factories.make_item(study, "h2", answer="One sentence.", question="THEIR-ITEM?")
    theirs = factories.make_assignment(work["pool"], their_item, other)
    for assignment, actor in ((work["assignment"], annotator), (theirs, other)):
        label_save(
            assignment=assignment, question=work["bearing"], unit_key="s:0", value="no", base_version=0, actor=actor
        )
        assignment_submit(assignment=assignment, actor=actor)
    client.force_login(annotator)
    page = client.get(reverse("annotation:history")).content.decode()
    assert "HISTORY-QUESTION?" in page and "THEIR-ITEM?" not in page
    assert work["item"].external_id not in page  # researchers' ids may name the system
    response = client.post(reverse("annotation:reopen", args=[work["assignment"].pk]))
    assert response.status_code == 302 and response.url == reverse("annotation:item", args=[work["assignment"].pk])
    assert "Reopened" in client.get(response.url).content.decode()


def test_the_validation_checks_count_reopened_items_and_fail_a_reopening_after_seeing_others(work, annotator):
    pool, assignment = work["pool"], work["assignment"]
    assert check_reopened_items(target_pool=pool).status == "pass"
    _save(work, annotator, "bearing", "no")
    assignment_submit(assignment=assignment, actor=annotator)
    assignment_reopen(assignment=assignment, actor=annotator)
    check = check_reopened_items(target_pool=pool)
    assert (check.status, check.data["items_reopened"], check.data["reopened_after_seeing_others"]) == ("warn", 1, 0)
    # A reopening after a read that showed other labels (which Concord refuses) fails the check.
    Exposure.objects.create(
        user=annotator, pool=pool, item=work["item"], kind="calibration", showed_other_labels=True
    )
    AssignmentReopening.objects.create(assignment=assignment, actor=annotator, at=timezone.now())
    check = check_reopened_items(target_pool=pool)
    assert check.status == "fail" and check.blocking and check.data["reopened_after_seeing_others"] == 1


def test_the_researcher_allows_reopening_in_the_pool_settings(client, study, researcher, work):
    pool = work["pool"]
    pool.reopen_allowed = False
    pool.save()
    client.force_login(researcher)
    url = reverse("console:pool", args=[study.slug, pool.pk])
    page = client.get(url).content.decode()
    assert "Annotators may reopen an item they submitted" in page
    base = re.search(r'name="base" value="([^"]+)"', page).group(1)
    data = {
        "name": pool.name, "questions": [work["bearing"].pk, work["grounded"].pk], "overlap": 1,
        "visibility": "nothing", "reopen_allowed": "on", "base": base,
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    pool.refresh_from_db()
    assert pool.reopen_allowed


def test_undo_and_reopen_through_the_api(work, annotator):
    api = APIClient()
    api.force_authenticate(annotator)
    pk = work["assignment"].pk
    _save(work, annotator, "bearing", "no")
    _save(work, annotator, "bearing", "yes")
    response = api.post(reverse("api-undo", args=[pk]))
    assert response.status_code == 200
    assert response.json() == [{"question": "bearing", "unit_key": "s:0", "value": "no"}]
    assert api.post(reverse("api-reopen", args=[pk])).status_code == 400  # not submitted
    assignment_submit(assignment=work["assignment"], actor=annotator)
    response = api.post(reverse("api-reopen", args=[pk]))
    assert response.status_code == 200 and response.json()["status"] == "started"
    assert api.get(reverse("api-assignments")).json()  # the list still works


# --- The exposure rule, on data where every id differs (a swapped id in a filter fails) ------------------


@pytest.fixture
def apart(study, no_submit_receivers):
    """A submitted assignment in a calibration pool that allows reopening, with the annotator's, the pool's, the
    item's and the assignment's ids all different; and exposures that showed other labels to someone else on
    that item, to the annotator on another item of the pool and on that item in another pool, and an exposure of
    that very item that showed no other labels. None of them forbids reopening."""
    question = factories.make_question(study, "pf")
    user = factories.make_user("apart-annotator", pk=4_100_003)
    colleague = factories.make_user("apart-colleague", pk=4_100_005)
    pool = factories.make_pool(
        study, "calibration", questions=[question], visibility=Visibility.AFTER_SUBMIT, reopen_allowed=True,
        pk=4_100_011,
    )
    other_pool = factories.make_pool(factories.make_study(), "other", reopen_allowed=True, pk=4_100_013)
    item = factories.make_item(study, "apart-item", pk=4_100_019)
    other_item = factories.make_item(study, "apart-other-item", pk=4_100_023)
    factories.add_member(pool, user)
    factories.add_member(pool, colleague)
    assignment = factories.make_assignment(
        pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now(), pk=4_100_029
    )
    ids = {user.pk, pool.pk, item.pk, assignment.pk}
    assert len(ids) == 4
    seen = {"kind": "calibration", "showed_other_labels": True}
    Exposure.objects.create(user=colleague, pool=pool, item=item, **seen)
    Exposure.objects.create(user=user, pool=pool, item=other_item, **seen)
    Exposure.objects.create(user=user, pool=other_pool, item=item, **seen)
    Exposure.objects.create(user=user, pool=pool, item=item, kind="item_page", showed_other_labels=False)
    return {"user": user, "pool": pool, "item": item, "assignment": assignment}


def _history_refusal(apart):
    (row,) = annotator_history(user=apart["user"])
    assert row.assignment.pk == apart["assignment"].pk
    return row.reopen_refusal


def test_only_the_annotators_own_exposure_on_that_item_in_that_pool_forbids_reopening(apart):
    assignment = Assignment.objects.select_related("pool").get(pk=apart["assignment"].pk)
    assert reopen_refusal(assignment=assignment) is None
    assert _history_refusal(apart) is None
    Exposure.objects.create(
        user=apart["user"], pool=apart["pool"], item=apart["item"], kind="calibration", showed_other_labels=True
    )
    assert reopen_refusal(assignment=assignment) == REOPEN_AFTER_SEEING_OTHERS
    assert _history_refusal(apart) == REOPEN_AFTER_SEEING_OTHERS
    with pytest.raises(ValidationFailed, match="can no longer change"):
        assignment_reopen(assignment=assignment, actor=apart["user"])
    assert not AssignmentReopening.objects.exists()


def test_the_exposure_rule_reopens_where_only_others_exposures_exist(apart):
    reopened = assignment_reopen(assignment=apart["assignment"], actor=apart["user"])
    assert reopened.status == AssignmentStatus.STARTED and AssignmentReopening.objects.count() == 1


def test_a_skipped_item_cannot_be_reopened(client, work, annotator):
    assignment_skip(assignment=work["assignment"], actor=annotator, reason="not my field")
    assignment = Assignment.objects.select_related("pool").get(pk=work["assignment"].pk)
    assert work["pool"].reopen_allowed
    assert reopen_refusal(assignment=assignment) == "Only a submitted item can be reopened."
    with pytest.raises(ValidationFailed, match="Only a submitted item"):
        assignment_reopen(assignment=assignment, actor=annotator)
    client.force_login(annotator)
    response = client.post(reverse("annotation:reopen", args=[assignment.pk]), follow=True)
    assert "Not reopened: Only a submitted item can be reopened." in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SKIPPED and assignment.skip_reason == "not my field"
    assert not AssignmentReopening.objects.exists()
