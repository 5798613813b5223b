"""The researcher's data manager: items filtered by text, status per pool, disagreement, gold, score
range and metadata; bulk reassign / remove from a pool / re-queue with a confirmation and an audit row;
the count follows the filters over htmx. A reassigned or removed item's answers stay with the annotator
who gave them (withdrawn), and the receiver starts empty (issue Q)."""

from __future__ import annotations

import datetime
import threading

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from adjudication import data_manager as dm
from adjudication.exports.records import iter_records
from adjudication.models import AdjudicationCase, BulkAction, CaseStatus, GoldLabel, GoldSource
from annotation import labels, services
from annotation.console.services import pool_top_up
from annotation.models import (
    Assignment,
    AssignmentStatus,
    AuditEvent,
    Item,
    Label,
    PoolItemExclusion,
    PoolMembership,
    Role,
)
from concord.errors import Conflict, NotFound, ValidationFailed
from scoring.models import Score, ScoreRun
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(study, researcher):
    q = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "PF", questions=[q], overlap=1)
    kim, lee = factories.make_user("kim"), factories.make_user("lee")
    factories.add_member(pool, kim, "P-A1")
    factories.add_member(pool, lee, "P-A2")
    items = {
        "a": factories.make_item(study, "a-1", question="Ibuprofen with warfarin?", metadata={"topic": "drugs"}),
        "b": factories.make_item(study, "b-2", question="Dog bite care?", metadata={"topic": "wounds"}),
        "c": factories.make_item(study, "c-3", question="Burn care?", metadata={"topic": "wounds"}),
        "d": factories.make_item(study, "d-4", question="Shingles vaccine?"),
    }
    factories.make_assignment(pool, items["a"], kim, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, items["b"], kim, status=AssignmentStatus.ASSIGNED)
    factories.make_assignment(pool, items["c"], lee, status=AssignmentStatus.SKIPPED, skip_reason="unsure")
    AdjudicationCase.objects.create(pool=pool, item=items["a"], question=q, unit_key="item", status=CaseStatus.OPEN)
    GoldLabel.objects.create(
        pool=pool,
        item=items["c"],
        question=q,
        unit_key="item",
        value="yes",
        source=GoldSource.ADJUDICATED,
        version=1,
        is_current=True,
    )
    run = ScoreRun.objects.create(study=study, metric="cf", metric_version="2", backend="lexical")
    for key, value in (("a", 0.2), ("b", 0.6), ("c", 0.9)):
        Score.objects.create(run=run, item=items[key], unit_key="item", value=value, state="ok")
    return {"pool": pool, "items": items, "run": run, "kim": kim, "lee": lee, "study": study}


def _ids(client, study, **params):
    response = client.get(reverse("adjudication:data-manager", args=[study.slug]), params, HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content
    body = response.content.decode()
    return body, sorted(e for e in ("a-1", "b-2", "c-3", "d-4") if f">{e}</a>" in body)


@pytest.fixture
def rita(client, researcher):
    client.force_login(researcher)
    return client


def test_each_filter_narrows_the_items(rita, data):
    study, pool, run = data["study"], data["pool"], data["run"]
    assert _ids(rita, study)[1] == ["a-1", "b-2", "c-3", "d-4"]
    assert _ids(rita, study, q="care")[1] == ["b-2", "c-3"]
    assert _ids(rita, study, q="WARFARIN")[1] == ["a-1"]
    assert _ids(rita, study, pool=pool.pk, pool_state="done")[1] == ["a-1"]
    assert _ids(rita, study, pool=pool.pk, pool_state="open")[1] == ["b-2"]
    assert _ids(rita, study, pool=pool.pk, pool_state="skipped")[1] == ["c-3"]
    assert _ids(rita, study, pool=pool.pk, pool_state="not_assigned")[1] == ["d-4"]
    assert _ids(rita, study, disagreement="open")[1] == ["a-1"]
    assert _ids(rita, study, disagreement="none")[1] == ["b-2", "c-3", "d-4"]
    assert _ids(rita, study, gold="yes")[1] == ["c-3"]
    assert _ids(rita, study, gold="no")[1] == ["a-1", "b-2", "d-4"]
    assert _ids(rita, study, run=run.pk, score_min="0.5")[1] == ["b-2", "c-3"]
    assert _ids(rita, study, run=run.pk, score_min="0.5", score_max="0.7")[1] == ["b-2"]
    assert _ids(rita, study, meta_key="topic", meta_value="wounds")[1] == ["b-2", "c-3"]
    body, ids = _ids(rita, study, q="care", gold="no")
    assert ids == ["b-2"] and "<strong>1</strong> item matches" in body


def test_a_bad_filter_is_said_in_place(rita, data):
    response = rita.get(
        reverse("adjudication:data-manager", args=[data["study"].slug]),
        {"score_min": "x", "run": str(data["run"].pk)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400 and "must be a number" in response.content.decode()
    response = rita.get(reverse("adjudication:data-manager", args=[data["study"].slug]), {"meta_key": "a b"})
    assert response.status_code == 400
    for bound in ("nan", "inf", "-Infinity"):
        url = reverse("adjudication:data-manager", args=[data["study"].slug])
        response = rita.get(url, {"score_min": bound, "run": str(data["run"].pk)})
        assert response.status_code == 400 and "finite number" in response.content.decode()


def _bulk(client, study, **fields):
    return client.post(reverse("adjudication:data-bulk", args=[study.slug]), fields)


def test_reassign_asks_for_confirmation_then_gives_the_receiver_new_assignments_and_writes_an_audit_row(rita, data):
    study, pool, kim, lee, b = data["study"], data["pool"], data["kim"], data["lee"], data["items"]["b"]
    fields = {
        "action": "reassign",
        "target_pool": pool.pk,
        "from_user": kim.pk,
        "to_user": lee.pk,
        "item": [data["items"]["a"].pk, b.pk],
    }
    review = _bulk(rita, study, **fields)
    assert review.status_code == 200
    assert 'id="dm-confirm-assignments">1<' in review.content.decode()
    assert Assignment.objects.get(item=b).annotator == kim and not BulkAction.objects.exists()
    done = _bulk(rita, study, **fields, confirmed="1")
    assert done.status_code == 302
    # kim's unanswered assignment is gone, lee has one of their own; submitted work stays kim's
    assert list(Assignment.objects.filter(item=b).values_list("annotator__username", "status")) == [("lee", "assigned")]
    assert Assignment.objects.get(item=data["items"]["a"]).annotator == kim
    action = BulkAction.objects.get()
    assert (action.action, action.n_items, action.n_assignments, action.item_ids) == ("reassign", 2, 1, ["a-1", "b-2"])
    assert action.details["from"] == "kim" and action.details["to"] == "lee"
    assert (action.details["withdrawn"], action.details["deleted"], action.details["unchanged"]) == (0, 1, 0)
    assert AuditEvent.objects.filter(table_name="adjudication_bulkaction", row_pk=str(action.pk)).exists()


def test_remove_from_a_pool_deletes_open_assignments_and_the_top_up_never_brings_them_back(rita, data):
    study, pool, b = data["study"], data["pool"], data["items"]["b"]
    _bulk(rita, study, action="remove", target_pool=pool.pk, item=[b.pk], confirmed="1")
    assert not Assignment.objects.filter(item=b).exists()
    assert PoolItemExclusion.objects.filter(pool=pool, item=b).exists()
    pool_top_up(pool)
    assert not Assignment.objects.filter(item=b).exists()
    assert Assignment.objects.filter(item=data["items"]["d"]).exists()  # others are still topped up


def test_requeue_every_matching_item_puts_skipped_work_back_in_the_queue(rita, data):
    study, pool, c = data["study"], data["pool"], data["items"]["c"]
    _bulk(
        rita,
        study,
        action="requeue",
        target_pool=pool.pk,
        all_matching="1",
        pool=pool.pk,
        pool_state="skipped",
        confirmed="1",
    )
    assignment = Assignment.objects.get(item=c)
    assert assignment.status == AssignmentStatus.ASSIGNED and assignment.skip_reason == ""
    action = BulkAction.objects.get()
    assert action.item_ids == ["c-3"] and action.details["filters"]["pool_state"] == "skipped"


def test_a_bulk_action_without_items_or_with_a_foreign_member_changes_nothing(rita, data, researcher):
    study, pool = data["study"], data["pool"]
    assert _bulk(rita, study, action="remove", target_pool=pool.pk, confirmed="1").status_code == 400
    stranger = factories.make_user("zed")
    response = _bulk(
        rita,
        study,
        action="reassign",
        target_pool=pool.pk,
        from_user=data["kim"].pk,
        to_user=stranger.pk,
        item=[data["items"]["b"].pk],
        confirmed="1",
    )
    assert response.status_code == 400
    assert Assignment.objects.get(item=data["items"]["b"]).annotator == data["kim"]
    assert not BulkAction.objects.exists()


def test_the_data_manager_is_for_researchers_only(client, data, annotator, stranger):
    study = data["study"]
    factories.grant(study, annotator, Role.ANNOTATOR)
    for user, status in ((annotator, 403), (stranger, 404)):
        client.force_login(user)
        assert client.get(reverse("adjudication:data-manager", args=[study.slug])).status_code == status
        assert (
            _bulk(
                client, study, action="remove", target_pool=data["pool"].pk, all_matching="1", confirmed="1"
            ).status_code
            == status
        )
    assert Assignment.objects.count() == 3


def test_item_text_is_escaped(rita, data):
    factories.make_item(data["study"], "x-9", question="<script>alert(1)</script>")
    body = rita.get(reverse("adjudication:data-manager", args=[data["study"].slug])).content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body


# --- Reassign never moves anyone's answers (issue Q, finding 1) ---------------------------------------


def _answer(assignment, user, value="yes"):
    return labels.label_save(
        assignment=assignment, question=assignment.pool.questions.get(), unit_key="item", value=value,
        base_version=0, actor=user,
    )


def _reassign(client, data, items, **extra):
    fields = {
        "action": "reassign", "target_pool": data["pool"].pk, "from_user": data["kim"].pk, "to_user": data["lee"].pk,
        "item": [i.pk for i in items], **extra,
    }
    return _bulk(client, data["study"], **fields)


def test_a_reassigned_item_starts_empty_for_the_receiver_and_the_answers_stay_with_who_gave_them(rita, data):
    study, kim, lee, b = data["study"], data["kim"], data["lee"], data["items"]["b"]
    kims = Assignment.objects.get(item=b, annotator=kim)
    label = _answer(services.assignment_open(assignment=kims, actor=kim), kim)
    review = _reassign(rita, data, [b]).content.decode()
    assert 'id="dm-confirm-kept"><strong>1</strong>' in review and "closed as <em>withdrawn</em>" in review
    assert _reassign(rita, data, [b], confirmed="1").status_code == 302

    kims.refresh_from_db()
    assert (kims.annotator, kims.status) == (kim, AssignmentStatus.WITHDRAWN)  # the annotator column never changes
    label.refresh_from_db()
    assert (label.assignment_id, label.value, label.updated_by) == (kims.pk, "yes", kim)
    lees = Assignment.objects.get(item=b, annotator=lee)
    assert lees.status == AssignmentStatus.ASSIGNED and not lees.labels.exists()
    # What lee sees of the item: no answer (page and API), and kim's assignment is not theirs to open.
    lee_client, kim_client = Client(), Client()
    lee_client.force_login(lee)
    kim_client.force_login(kim)
    answered = 'value="yes" data-key="1" checked'
    page = lee_client.get(reverse("annotation:item", args=[lees.pk])).content.decode()
    assert answered not in page and "kim" not in page
    assert lee_client.get(reverse("api-labels", args=[lees.pk])).json() == []
    assert lee_client.get(reverse("annotation:item", args=[kims.pk])).status_code == 404
    # kim still reads their own answer, read-only
    page = kim_client.get(reverse("annotation:item", args=[kims.pk])).content.decode()
    assert answered in page and "A researcher took this item out of your queue" in page
    # The export credits the answer to kim's pseudonym, beside kim's withdrawn assignment; lee has none.
    record = next(r for r in iter_records(study) if r["id"] == "b-2")
    assert [(lab["annotator"], lab["value"]) for lab in record["labels"]] == [("P-A1", "yes")]
    assert [(a["annotator"], a["status"]) for a in record["assignments"]] == [
        ("P-A1", "withdrawn"), ("P-A2", "started")  # lee opened it above
    ]
    action = BulkAction.objects.get()
    assert (action.n_assignments, action.details["withdrawn"], action.details["deleted"]) == (1, 1, 0)


def test_a_reassignment_leaves_alone_the_items_the_receiver_already_has(rita, data):
    """One assignment per member and item: the receiver who already has an item (open, submitted or
    withdrawn) does not get it again, and the giver keeps it; the confirmation says how many."""
    pool, kim, lee, b = data["pool"], data["kim"], data["lee"], data["items"]["b"]
    e = factories.make_item(data["study"], "e-5")
    f = factories.make_item(data["study"], "f-6")
    for item in (e, f):
        factories.make_assignment(pool, item, kim, status=AssignmentStatus.STARTED)
    factories.make_assignment(pool, b, lee, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, f, lee, status=AssignmentStatus.WITHDRAWN)
    review = _reassign(rita, data, [b, e, f]).content.decode()
    assert 'id="dm-confirm-assignments">1<' in review and 'id="dm-confirm-receiver-has"><strong>2</strong>' in review
    assert _reassign(rita, data, [b, e, f], confirmed="1").status_code == 302

    def held(user):
        rows = Assignment.objects.filter(annotator=user, item__in=[b, e, f])
        return dict(rows.values_list("item__external_id", "status"))

    assert held(kim) == {"b-2": "assigned", "f-6": "started"}  # e-5 (empty) was handed over, the others stay
    assert held(lee) == {"b-2": "submitted", "e-5": "assigned", "f-6": "withdrawn"}


def test_work_submitted_between_confirming_and_applying_is_left_as_it_is(data, researcher):
    study, pool, kim, lee, b = data["study"], data["pool"], data["kim"], data["lee"], data["items"]["b"]
    e = factories.make_item(study, "e-5")
    factories.make_assignment(pool, e, kim)
    filters = dm.Filters.parse(study, {})
    request = {"action": "reassign", "target_pool": str(pool.pk), "from_user": str(kim.pk), "to_user": str(lee.pk)}
    plan = dm.bulk_plan(study=study, data=request, chosen=[str(b.pk), str(e.pk)], all_matching=False, filters=filters)
    assert len(plan.assignments) == 2
    kims_b = Assignment.objects.get(item=b, annotator=kim)
    _answer(kims_b, kim)
    services.assignment_submit(assignment=kims_b, actor=kim)  # meanwhile, kim submits b
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    kims_b.refresh_from_db()
    assert (kims_b.annotator, kims_b.status) == (kim, AssignmentStatus.SUBMITTED)
    assert not Assignment.objects.filter(item=b, annotator=lee).exists()
    assert Assignment.objects.get(item=e).annotator == lee
    assert (action.n_assignments, action.details["unchanged"]) == (1, 1)
    assert "1 changed meanwhile" in dm.outcome_message(action)


def test_an_item_the_receiver_got_between_confirming_and_applying_stays_with_the_giver(data, researcher):
    study, pool, kim, lee, b = data["study"], data["pool"], data["kim"], data["lee"], data["items"]["b"]
    filters = dm.Filters.parse(study, {})
    request = {"action": "reassign", "target_pool": str(pool.pk), "from_user": str(kim.pk), "to_user": str(lee.pk)}
    plan = dm.bulk_plan(study=study, data=request, chosen=[str(b.pk)], all_matching=False, filters=filters)
    factories.make_assignment(pool, b, lee)  # meanwhile (a top-up, another researcher's reassignment)
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    assert (action.n_assignments, action.details["unchanged"]) == (0, 1)
    assert Assignment.objects.get(item=b, annotator=kim).status == AssignmentStatus.ASSIGNED
    # and a receiver who left the pool meanwhile gets nothing: the whole action is refused
    PoolMembership.objects.filter(pool=pool, user=lee).update(active=False)
    with pytest.raises(Conflict):
        dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    assert BulkAction.objects.count() == 1


def test_an_item_answered_between_confirming_and_removing_is_withdrawn_not_deleted(data, researcher):
    study, pool, kim, b = data["study"], data["pool"], data["kim"], data["items"]["b"]
    filters = dm.Filters.parse(study, {})
    plan = dm.bulk_plan(
        study=study, data={"action": "remove", "target_pool": str(pool.pk)}, chosen=[str(b.pk)], all_matching=False,
        filters=filters,
    )
    assert (len(plan.assignments), plan.kept, plan.emptied) == (1, 0, 1)  # nothing answered yet: to be deleted
    label = _answer(Assignment.objects.get(item=b), kim)
    dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    assert Assignment.objects.get(item=b).status == AssignmentStatus.WITHDRAWN
    assert Label.objects.get(pk=label.pk).value == "yes"


# --- Remove with answers (finding 10) -------------------------------------------------------------------


def test_removing_items_with_saved_answers_says_so_first_and_keeps_the_answers_as_withdrawn_work(rita, data):
    study, pool, kim, lee, b = data["study"], data["pool"], data["kim"], data["lee"], data["items"]["b"]
    e = factories.make_item(study, "e-5")
    factories.make_assignment(pool, e, lee)
    label = _answer(Assignment.objects.get(item=b), kim)
    fields = {"action": "remove", "target_pool": pool.pk, "item": [b.pk, e.pk]}
    review = _bulk(rita, study, **fields).content.decode()
    assert 'id="dm-confirm-kept"><strong>1</strong> open assignment holds saved answers' in review
    assert 'id="dm-confirm-emptied"><strong>1</strong> open assignment with no answers yet is deleted' in review
    assert _bulk(rita, study, **fields, confirmed="1").status_code == 302
    kept = Assignment.objects.get(item=b)
    assert (kept.annotator, kept.status) == (kim, AssignmentStatus.WITHDRAWN)
    assert Label.objects.get(pk=label.pk).assignment_id == kept.pk
    assert not Assignment.objects.filter(item=e).exists()
    excluded = PoolItemExclusion.objects.filter(pool=pool).values_list("item__external_id", flat=True)
    assert set(excluded) == {"b-2", "e-5"}
    pool_top_up(pool)
    assert not Assignment.objects.filter(item=e).exists()  # removed for good
    action = BulkAction.objects.get()
    assert (action.n_assignments, action.details["withdrawn"], action.details["deleted"]) == (2, 1, 1)
    body = rita.get(reverse("adjudication:data-manager", args=[study.slug])).content.decode()
    assert "1 withdrawn" in body  # the item's status in the pool


# --- Items, pools and members of another study; malformed ids ------------------------------------------


def test_an_item_of_another_study_is_refused_and_nothing_changes(rita, data, researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    foreign_pool = factories.make_pool(other, "X", questions=[factories.make_question(other, "pf")])
    foreign = factories.make_item(other, "x-1")
    zed = factories.make_user("zed")
    factories.add_member(foreign_pool, zed, "Z")
    factories.make_assignment(foreign_pool, foreign, zed)
    study, pool, b = data["study"], data["pool"], data["items"]["b"]
    for action in ("remove", "requeue"):
        response = _bulk(rita, study, action=action, target_pool=pool.pk, item=[b.pk, foreign.pk], confirmed="1")
        assert response.status_code == 400 and "not an item of this study" in response.content.decode()
    response = _reassign(rita, data, [b, foreign], confirmed="1")
    assert response.status_code == 400
    # another study's pool, or a member of it, is no pool and no member here
    response = _bulk(rita, study, action="remove", target_pool=foreign_pool.pk, item=[b.pk], confirmed="1")
    assert response.status_code == 400
    assert _reassign(rita, data, [b], to_user=zed.pk, confirmed="1").status_code == 400
    assert not PoolItemExclusion.objects.exists() and not BulkAction.objects.exists()
    assert Assignment.objects.get(item=foreign).status == AssignmentStatus.ASSIGNED
    assert Assignment.objects.get(item=b).annotator == data["kim"]


@pytest.mark.parametrize("bad", ["²", "٣", "1" * 40, "-1", "1.0", " "])
def test_malformed_ids_are_refused_never_a_500(rita, data, bad):
    study, pool, b = data["study"], data["pool"], data["items"]["b"]
    url = reverse("adjudication:data-manager", args=[study.slug])
    assert rita.get(url, {"pool": bad}).status_code in (200, 404)
    assert rita.get(url, {"run": bad}).status_code in (200, 404)
    assert _bulk(rita, study, action="remove", target_pool=bad, item=[b.pk]).status_code == 400
    assert _bulk(rita, study, action="remove", target_pool=pool.pk, item=[b.pk, bad]).status_code == 400
    assert _reassign(rita, data, [b], from_user=bad).status_code == 400
    assert _reassign(rita, data, [b], to_user=bad, confirmed="1").status_code == 400
    assert not BulkAction.objects.exists() and Assignment.objects.get(item=b).annotator == data["kim"]


# --- The metadata key is a key, never a lookup (finding 9) ----------------------------------------------


def _page(client, study, **params):
    response = client.get(reverse("adjudication:data-manager", args=[study.slug]), params, HTTP_HX_REQUEST="true")
    return response.status_code, response.content.decode()


def test_the_metadata_key_is_one_literal_key_never_an_orm_lookup(rita, data):
    study = data["study"]
    factories.make_item(study, "g-7", metadata={"isnull": "x", "topic__regex": ".*", "year": 2020})
    # "isnull" answered 500 when it became the lookup metadata__isnull; it is a key like any other
    status, body = _page(rita, study, meta_key="isnull", meta_value="x")
    assert status == 200 and ">g-7</a>" in body and "<strong>1</strong> item matches" in body
    # "topic__regex" with ".*" matched every item with a topic when it was spread into the lookup
    status, body = _page(rita, study, meta_key="topic__regex", meta_value=".*")
    assert status == 200 and ">g-7</a>" in body and "<strong>1</strong> item matches" in body
    for key in ("topic__regex", "topic__isnull", "topic__in", "topic__contains", "topic__icontains"):
        status, body = _page(rita, study, meta_key=key, meta_value="wounds")
        assert status == 200 and "<strong>0</strong> items match" in body, key
    # a number is compared as text on every database; a key that JSON paths read as a list index is refused
    status, body = _page(rita, study, meta_key="year", meta_value="2020")
    assert status == 200 and ">g-7</a>" in body and "<strong>1</strong> item matches" in body
    for key in ("0", "-1", "1_000", "a b", "x" * 81):
        assert _page(rita, study, meta_key=key)[0] == 400, key


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
            "AND query LIKE %s AND pid <> pg_backend_pid()",
            ["%annotation_assignment%"],
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("answered", [True, False], ids=["answered", "unanswered"])
def test_a_save_waiting_on_the_data_managers_lock_finds_the_item_gone_and_writes_nothing(
    data, researcher, monkeypatch, answered
):
    """Real threads with their own connections (PostgreSQL: SQLite serialises whole transactions). The data
    manager has closed kim's assignment but not committed; kim's save waits on the assignment's row lock,
    then finds it withdrawn (400) or deleted (404), and writes nothing."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's; SQLite's IMMEDIATE transactions never interleave")
    study, pool, kim, lee, b = data["study"], data["pool"], data["kim"], data["lee"], data["items"]["b"]
    kims = Assignment.objects.get(item=b, annotator=kim)
    if answered:
        _answer(kims, kim)
    filters = dm.Filters.parse(study, {})
    request = {"action": "reassign", "target_pool": str(pool.pk), "from_user": str(kim.pk), "to_user": str(lee.pk)}
    plan = dm.bulk_plan(study=study, data=request, chosen=[str(b.pk)], all_matching=False, filters=filters)
    closed, release = threading.Event(), threading.Event()
    original = dm._close

    def close_then_hold(assignments):
        out = original(assignments)
        closed.set()
        assert release.wait(120)
        return out

    monkeypatch.setattr(dm, "_close", close_then_hold)
    outcome: dict[str, object] = {}

    def apply() -> None:
        try:
            dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
        finally:
            connection.close()

    def save() -> None:
        try:
            labels.label_save(assignment=kims, question=pool.questions.get(), unit_key="item", value="no",
                                base_version=1 if answered else 0, actor=kim)
            outcome["result"] = "saved"
        except (ValidationFailed, NotFound) as exc:
            outcome["result"] = type(exc).__name__
        finally:
            connection.close()

    applier = threading.Thread(target=apply)
    applier.start()
    assert closed.wait(120)
    saver = threading.Thread(target=save)
    saver.start()
    polls = 2400  # each a statement and a short wait: a guard against a save that never blocks, not a deadline
    while not _waiting_on_a_lock():
        polls -= 1
        assert polls > 0 and saver.is_alive(), "the save never waited on the data manager's lock"
        threading.Event().wait(0.05)
    release.set()
    applier.join()
    saver.join()
    assert outcome["result"] == ("ValidationFailed" if answered else "NotFound")
    assert list(Label.objects.filter(assignment__item=b).values_list("assignment__annotator__username", "value")) == (
        [("kim", "yes")] if answered else []
    )
    assert Assignment.objects.get(item=b, annotator=lee).status == AssignmentStatus.ASSIGNED


# --- Filters: each refusal says what is wrong, and the filters survive a confirmation -------------------


def _other_study_pool_and_run(researcher):
    other = factories.make_study(owner=researcher, slug="other-study")
    pool = factories.make_pool(other, "X", questions=[factories.make_question(other, "pf")])
    run = ScoreRun.objects.create(study=other, metric="cf", metric_version="2", backend="lexical")
    return pool, run


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"pool": "999999"}, NotFound, "pool not found"),
        ({"pool": "{foreign_pool}"}, NotFound, "pool not found"),
        (
            {"pool": "{pool}", "pool_state": "gone"},
            ValidationFailed,
            "status in a pool is one of not_assigned, open, done, skipped, withdrawn",
        ),
        ({"pool_state": "open"}, ValidationFailed, "choose the pool whose status to filter on"),
        ({"disagreement": "some"}, ValidationFailed, "disagreement is open, any or none"),
        ({"gold": "maybe"}, ValidationFailed, "gold is yes or no"),
        ({"run": "999999"}, NotFound, "score run not found"),
        ({"run": "{foreign_run}"}, NotFound, "score run not found"),
        ({"run": "{run}", "score_min": "x"}, ValidationFailed, "the lowest score must be a number"),
        ({"run": "{run}", "score_max": "x"}, ValidationFailed, "the highest score must be a number"),
        ({"run": "{run}", "score_min": "nan"}, ValidationFailed, "the lowest score must be a finite number"),
        ({"run": "{run}", "score_max": "inf"}, ValidationFailed, "the highest score must be a finite number"),
        ({"run": "{run}", "score_max": "-inf"}, ValidationFailed, "the highest score must be a finite number"),
        ({"score_min": "0.5"}, ValidationFailed, "choose the score run whose values to filter on"),
        ({"score_max": "0.5"}, ValidationFailed, "choose the score run whose values to filter on"),
        (
            {"meta_key": "a b"},
            ValidationFailed,
            "a metadata key has letters, digits, '_', '-' or '.' only (at most 80), and is not a number",
        ),
    ],
)
def test_each_bad_filter_is_refused_with_what_is_wrong(data, researcher, params, error, message):
    foreign_pool, foreign_run = _other_study_pool_and_run(researcher)
    ids = {
        "pool": data["pool"].pk,
        "run": data["run"].pk,
        "foreign_pool": foreign_pool.pk,
        "foreign_run": foreign_run.pk,
    }
    with pytest.raises(error) as refused:
        dm.Filters.parse(data["study"], {k: v.format(**ids) for k, v in params.items()})
    assert refused.value.message == message


def test_filters_are_read_trimmed_and_carried_through_a_confirmation_unchanged(data):
    study, pool, run = data["study"], data["pool"], data["run"]
    raw = {
        "q": "  care  ",
        "pool": f" {pool.pk} ",
        "pool_state": " open ",
        "disagreement": " any ",
        "gold": " no ",
        "run": f" {run.pk} ",
        "score_min": " 0.25 ",
        "score_max": " 1 ",
        "meta_key": " topic ",
        "meta_value": " wounds ",
    }
    f = dm.Filters.parse(study, raw)
    assert (f.q, f.pool, f.pool_state, f.disagreement, f.gold, f.run) == ("care", pool, "open", "any", "no", run)
    assert (f.score_min, f.score_max, f.meta_key, f.meta_value) == (0.25, 1.0, "topic", "wounds")
    query = f.as_query()
    assert query == {
        "q": "care",
        "pool": str(pool.pk),
        "pool_state": "open",
        "disagreement": "any",
        "gold": "no",
        "run": str(run.pk),
        "score_min": "0.25",
        "score_max": "1.0",
        "meta_key": "topic",
        "meta_value": "wounds",
    }
    assert dm.Filters.parse(study, query) == f
    # no filter at all: nothing to carry, every item matches
    empty = dm.Filters.parse(study, {})
    assert empty == dm.Filters() and empty.as_query() == {}
    assert dm.Filters.parse(study, {"score_min": "0", "run": str(run.pk)}).as_query()["score_min"] == "0.0"
    # a search or a metadata value is bounded: its first 300 characters are searched
    long = dm.Filters.parse(study, {"q": "x" * 301, "meta_value": "y" * 301})
    assert (long.q, long.meta_value) == ("x" * 300, "y" * 300)


def _second_pool(data, name="PG", **extra):
    """Another pool of the study, asking the same question; the study's pools are not independent, so one
    person may be a member of both."""
    study = data["study"]
    study.independent_pools = False
    study.save()
    return factories.make_pool(study, name, questions=[data["pool"].questions.get()], **extra)


def _matching(study, **params):
    return [i.external_id for i in dm.filtered_items(study, dm.Filters.parse(study, params))]


def test_filters_count_only_the_chosen_pool_current_gold_and_item_scores(data, researcher):
    study, pool, run, items, kim = data["study"], data["pool"], data["run"], data["items"], data["kim"]
    other = _second_pool(data)
    q = pool.questions.get()
    # d has work only in the other pool; b's open case and d's gold are the other pool's
    factories.make_assignment(other, items["d"], kim, status=AssignmentStatus.STARTED)
    AdjudicationCase.objects.create(pool=other, item=items["b"], question=q, unit_key="item")
    GoldLabel.objects.create(
        pool=other, item=items["d"], question=q, unit_key="item", value="no", source=GoldSource.ADJUDICATED
    )
    # a resolved case on c; an earlier, superseded gold on b
    AdjudicationCase.objects.create(pool=pool, item=items["c"], question=q, unit_key="item", status=CaseStatus.RESOLVED)
    GoldLabel.objects.create(
        pool=pool,
        item=items["b"],
        question=q,
        unit_key="item",
        value="no",
        source=GoldSource.ADJUDICATED,
        is_current=False,
    )
    # d's only score in the run is a sentence's, and an undetermined item score is no score
    Score.objects.create(run=run, item=items["d"], unit_key="s1", value=0.5, state="ok")
    e = factories.make_item(study, "e-5")
    Score.objects.create(run=run, item=e, unit_key="item", value=None, state="undetermined")
    # another run's scores are not this run's
    later = ScoreRun.objects.create(study=study, metric="cf", metric_version="3", backend="lexical")
    Score.objects.create(run=later, item=items["d"], unit_key="item", value=0.5, state="ok")

    p = str(pool.pk)
    assert _matching(study, pool=p, pool_state="open") == ["b-2"]
    assert _matching(study, pool=str(other.pk), pool_state="open") == ["d-4"]
    assert _matching(study, pool=p, pool_state="not_assigned") == ["d-4", "e-5"]
    assert _matching(study, disagreement="open") == ["a-1", "b-2"]
    assert _matching(study, pool=p, disagreement="open") == ["a-1"]
    assert _matching(study, pool=p, disagreement="any") == ["a-1", "c-3"]
    assert _matching(study, disagreement="any") == ["a-1", "b-2", "c-3"]
    assert _matching(study, pool=p, disagreement="none") == ["b-2", "d-4", "e-5"]
    assert _matching(study, gold="yes") == ["c-3", "d-4"]
    assert _matching(study, pool=p, gold="yes") == ["c-3"]
    assert _matching(study, pool=p, gold="no") == ["a-1", "b-2", "d-4", "e-5"]
    r = str(run.pk)
    assert _matching(study, run=r, score_min="-10") == ["a-1", "b-2", "c-3"]
    assert _matching(study, run=r, score_max="10") == ["a-1", "b-2", "c-3"]
    # both bounds are inclusive
    assert _matching(study, run=r, score_min="0.6", score_max="0.6") == ["b-2"]
    assert _matching(study, run=r, score_min="0.2", score_max="0.2") == ["a-1"]
    # a run chosen without bounds filters nothing (it only adds the score column)
    assert _matching(study, run=r) == ["a-1", "b-2", "c-3", "d-4", "e-5"]
    # the text is searched in the id, the question and the answer
    factories.make_item(study, "f-6", answer="Rinse with saline.")
    assert _matching(study, q="c-3") == ["c-3"]
    assert _matching(study, q="SALINE") == ["f-6"]
    assert _matching(study, q="shingles") == ["d-4"]


def test_done_means_every_assignment_of_the_item_submitted_and_withdrawn_work_counts_apart(data):
    study, pool, items, kim, lee = data["study"], data["pool"], data["items"], data["kim"], data["lee"]
    mo = factories.make_user("mo")
    factories.add_member(pool, mo, "P-A3")
    factories.make_assignment(pool, items["a"], lee, status=AssignmentStatus.STARTED)  # a: 1 of 2 submitted
    factories.make_assignment(pool, items["c"], kim, status=AssignmentStatus.SUBMITTED)  # c: submitted + skipped
    e, f = factories.make_item(study, "e-5"), factories.make_item(study, "f-6")
    factories.make_assignment(pool, e, kim, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, e, lee, status=AssignmentStatus.WITHDRAWN)  # e: submitted + withdrawn
    factories.make_assignment(pool, items["d"], mo, status=AssignmentStatus.WITHDRAWN)  # d: withdrawn only
    factories.make_assignment(pool, f, mo, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, f, lee, status=AssignmentStatus.SUBMITTED)  # f: 2 of 2 submitted
    p = str(pool.pk)
    assert _matching(study, pool=p, pool_state="done") == ["e-5", "f-6"]
    assert _matching(study, pool=p, pool_state="withdrawn") == ["d-4", "e-5"]
    assert _matching(study, pool=p, pool_state="not_assigned") == ["d-4"]  # withdrawn work leaves it unassigned
    assert _matching(study, pool=p, pool_state="skipped") == ["c-3"]
    assert _matching(study, pool=p, pool_state="open") == ["a-1", "b-2"]


def test_a_page_shows_each_pools_status_open_cases_gold_and_score(data):
    study, pool, run, items, kim, lee = (
        data["study"],
        data["pool"],
        data["run"],
        data["items"],
        data["kim"],
        data["lee"],
    )
    q = pool.questions.get()
    big = _second_pool(data, "AB", overlap=3)  # sorts before PF
    mo, ned = factories.make_user("mo"), factories.make_user("ned")
    for member in (kim, lee, mo, ned):
        factories.add_member(big, member)
    for who, status in ((kim, "submitted"), (lee, "started"), (mo, "assigned"), (ned, "skipped")):
        factories.make_assignment(big, items["a"], who, status=status)
    factories.make_assignment(big, items["a"], factories.make_user("ola"), status=AssignmentStatus.WITHDRAWN)
    for who in (kim, lee):
        factories.make_assignment(big, items["b"], who, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, items["b"], lee, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, items["a"], lee, status=AssignmentStatus.SUBMITTED)  # more done than k
    factories.make_assignment(pool, items["d"], lee, status=AssignmentStatus.WITHDRAWN)
    q2 = factories.make_question(study, "second")
    AdjudicationCase.objects.create(pool=big, item=items["a"], question=q2, unit_key="item")
    AdjudicationCase.objects.create(pool=pool, item=items["b"], question=q, unit_key="item", status=CaseStatus.RESOLVED)
    GoldLabel.objects.create(
        pool=pool,
        item=items["d"],
        question=q,
        unit_key="item",
        value="no",
        source=GoldSource.ADJUDICATED,
        is_current=False,
    )
    Score.objects.create(run=run, item=items["d"], unit_key="s1", value=0.5, state="ok")
    later = ScoreRun.objects.create(study=study, metric="cf", metric_version="3", backend="lexical")
    Score.objects.create(run=later, item=items["d"], unit_key="item", value=0.7, state="ok")  # not the chosen run

    page, rows = dm.page_rows(study, dm.Filters.parse(study, {"run": str(run.pk)}), 1)
    assert page.paginator.count == 4
    table = {
        r.item.external_id: ([(p.name, label) for p, label in r.statuses], r.open_cases, r.gold, r.score) for r in rows
    }
    assert table == {
        "a-1": ([("AB", "1/3 done, 2 open, 1 skipped, 1 withdrawn"), ("PF", "2/2 done")], 2, False, 0.2),
        "b-2": ([("AB", "2/3 done"), ("PF", "1/1 done, 1 open")], 0, False, 0.6),
        "c-3": ([("AB", "not assigned"), ("PF", "0/1 done, 1 skipped")], 0, True, 0.9),
        "d-4": ([("AB", "not assigned"), ("PF", "not assigned, 1 withdrawn")], 0, False, None),
    }
    assert [r.item.external_id for r in rows] == ["a-1", "b-2", "c-3", "d-4"]
    # without a run, no score
    assert [r.score for r in dm.page_rows(study, dm.Filters.parse(study, {}), 1)[1]] == [None] * 4


def test_a_page_costs_the_same_queries_however_many_items_it_shows(rita, data):
    """A count and one slice of items (with what the table shows of them), never a query per row."""
    study = data["study"]

    def queries():
        with CaptureQueriesContext(connection) as run:
            _ids(rita, study)
        return len(run.captured_queries)

    queries()  # the first request of a session also reads what later ones find cached
    few = queries()
    for n in range(6):
        factories.make_item(study, f"m-{n}", question=f"Question {n}?", system=f"system {n}")
    assert queries() == few


def test_results_come_fifty_to_a_page(data):
    study = data["study"]
    Item.objects.bulk_create(Item(study=study, external_id=f"z-{n:03}", question="?", answer="!") for n in range(47))
    page, rows = dm.page_rows(study, dm.Filters.parse(study, {}), 2)
    assert (page.paginator.num_pages, [r.item.external_id for r in rows]) == (2, ["z-046"])
    assert len(dm.page_rows(study, dm.Filters.parse(study, {}), 1)[1]) == 50


# --- Bulk plans: which assignments an action touches, and each refusal ------------------------------------


def _plan(data, chosen=None, all_matching=False, filters=None, **request):
    study = data["study"]
    request = {"target_pool": str(data["pool"].pk), **request}
    return dm.bulk_plan(
        study=study,
        data=request,
        chosen=[str(i.pk) for i in chosen or []],
        all_matching=all_matching,
        filters=dm.Filters.parse(study, filters or {}),
    )


def _refusal(data, **kwargs):
    with pytest.raises(ValidationFailed) as refused:
        _plan(data, **kwargs)
    return refused.value.message


def test_each_bad_bulk_request_is_refused_with_what_is_wrong(data):
    pool, kim, lee, b = data["pool"], data["kim"], data["lee"], data["items"]["b"]
    other = factories.make_pool(data["study"], "PG", questions=[pool.questions.get()])
    outsider = factories.make_user("mo")
    factories.add_member(other, outsider, "G-1")  # a member of another pool of the same study
    who = {"action": "reassign", "from_user": str(kim.pk), "to_user": str(lee.pk)}
    assert _refusal(data, chosen=[b], action="") == "choose an action: reassign, remove from the pool or re-queue"
    assert _refusal(data, chosen=[b], action="delete") == "choose an action: reassign, remove from the pool or re-queue"
    assert _refusal(data, chosen=[b], action="remove", target_pool="") == "choose the pool the action applies to"
    assert _refusal(data, chosen=[], action="remove") == "no item is selected"
    assert _refusal(data, all_matching=True, filters={"q": "nothing like it"}, action="remove") == "no item is selected"
    assert _refusal(data, chosen=[b], **{**who, "from_user": str(outsider.pk)}) == (
        "choose whose assignments to move among the pool's members"
    )
    assert (
        _refusal(data, chosen=[b], **{**who, "to_user": str(outsider.pk)})
        == "choose who receives them among the pool's members"
    )
    assert _refusal(data, chosen=[b], **{**who, "to_user": str(kim.pk)}) == "choose two different members"
    PoolMembership.objects.filter(pool=pool, user=lee).update(active=False)
    assert _refusal(data, chosen=[b], **who) == "P-A2 has left the pool"
    message = "an item you ticked is not an item of this study (reload the page and choose again); nothing was changed"
    with pytest.raises(ValidationFailed) as refused:
        dm.bulk_plan(
            study=data["study"],
            data={"action": "remove", "target_pool": str(pool.pk)},
            chosen=[str(b.pk), "x"],
            all_matching=False,
            filters=dm.Filters(),
        )
    assert refused.value.message == message


def test_a_bulk_action_takes_at_most_max_bulk_items(data, monkeypatch):
    monkeypatch.setattr(dm, "MAX_BULK", 3)
    with pytest.raises(ValidationFailed) as refused:
        _plan(data, all_matching=True, action="remove")  # four items match
    assert refused.value.message == "at most 3 items at once; narrow the filters"
    with pytest.raises(ValidationFailed):
        _plan(data, chosen=list(data["items"].values()), action="remove")
    plan = _plan(data, all_matching=True, filters={"q": "care"}, action="remove")
    assert plan.item_ids == [data["items"]["b"].pk, data["items"]["c"].pk]
    items = data["items"]
    assert _plan(data, chosen=[items["c"], items["a"], items["b"]], action="remove").item_ids == sorted(
        i.pk for i in (items["a"], items["b"], items["c"])
    )


def test_a_plan_touches_only_the_givers_open_assignments_of_the_chosen_items_in_the_chosen_pool(data, researcher):
    study, pool, items, kim, lee = data["study"], data["pool"], data["items"], data["kim"], data["lee"]
    mo = factories.make_user("mo")
    factories.add_member(pool, mo, "P-A3")
    other = _second_pool(data)
    factories.add_member(other, kim, "G-1")
    factories.add_member(other, lee, "G-2")
    e = factories.make_item(study, "e-5")
    kims_b = Assignment.objects.get(pool=pool, item=items["b"], annotator=kim)
    kims_e = factories.make_assignment(pool, e, kim, status=AssignmentStatus.STARTED)
    kims_d = factories.make_assignment(pool, items["d"], kim, status=AssignmentStatus.SKIPPED)
    mos_b = factories.make_assignment(pool, items["b"], mo)  # another member's, same item
    kims_b_elsewhere = factories.make_assignment(other, items["b"], kim)  # the same member's, another pool
    kims_c = factories.make_assignment(pool, items["c"], kim, status=AssignmentStatus.STARTED)  # not chosen
    who = {"from_user": str(kim.pk), "to_user": str(lee.pk)}

    plan = _plan(data, chosen=[items["a"], items["b"], items["d"], e], action="reassign", **who)
    assert plan.assignments == [kims_b.pk, kims_e.pk]  # not a (submitted), d (skipped), c (not chosen)
    assert (plan.from_user, plan.to_user, plan.receiver_has, plan.kept, plan.emptied) == (kim, lee, 0, 0, 2)
    assert plan.label == "Reassign open assignments to another member"
    remove = _plan(data, chosen=[items["b"], items["d"]], action="remove")
    assert remove.assignments == [kims_b.pk, mos_b.pk]  # open ones, of this pool only
    assert (remove.from_user, remove.to_user, remove.label) == (None, None, "Remove from the pool")
    requeue = _plan(data, chosen=[items["b"], items["c"], items["d"]], action="requeue")
    lees_c = Assignment.objects.get(pool=pool, item=items["c"], annotator=lee)
    assert requeue.assignments == [lees_c.pk, kims_d.pk]
    assert requeue.kept == 0 and requeue.label == "Re-queue skipped assignments"

    assert Assignment.objects.filter(annotator=lee).count() == 1  # planning changed nothing
    dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=dm.Filters())
    untouched = [
        (mos_b, mo, "assigned"),
        (kims_b_elsewhere, kim, "assigned"),
        (kims_c, kim, "started"),
        (kims_d, kim, "skipped"),
    ]
    for assignment, annotator, status in untouched:
        assignment.refresh_from_db()
        assert (assignment.annotator, assignment.status) == (annotator, status)
    assert not Assignment.objects.filter(pk__in=[kims_b.pk, kims_e.pk]).exists()
    assert sorted(Assignment.objects.filter(pool=pool, annotator=lee).values_list("item__external_id", flat=True)) == [
        "b-2",
        "c-3",
        "e-5",
    ]


def test_a_plan_reads_its_members_in_one_query_each(data, django_assert_num_queries):
    """The confirmation names both members (user name and pseudonym) without a query per name."""
    kim, lee, b = data["kim"], data["lee"], data["items"]["b"]
    plan = _plan(data, chosen=[b], action="reassign", from_user=str(kim.pk), to_user=str(lee.pk))
    with django_assert_num_queries(0):
        assert (plan.from_user.get_username(), plan.to_user.get_username()) == ("kim", "lee")
        assert (plan.from_member.pseudonym, plan.to_member.pseudonym) == ("P-A1", "P-A2")


def test_closing_keeps_an_assignment_that_holds_work_and_deletes_an_empty_one(data, researcher):
    """Work is saved answers or an earlier submission (a reopened item, even with its answers cleared
    away): kept, withdrawn, its reservation released; an assignment with neither is deleted."""
    study, pool, kim, items = data["study"], data["pool"], data["kim"], data["items"]
    reserved = {
        "reserved_until": timezone.make_aware(datetime.datetime(2030, 1, 1)),
        "status": AssignmentStatus.STARTED,
    }
    reopened = factories.make_assignment(pool, items["c"], kim, reopened_count=1, **reserved)
    empty = factories.make_assignment(pool, items["d"], kim, **reserved)
    answered = Assignment.objects.get(pool=pool, item=items["b"])
    _answer(answered, kim)
    Assignment.objects.filter(pk=answered.pk).update(**reserved)
    plan = _plan(data, chosen=[items["b"], items["c"], items["d"]], action="remove")
    assert (len(plan.assignments), plan.kept, plan.emptied) == (3, 2, 1)
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=dm.Filters())
    rows = Assignment.objects.filter(pk__in=[reopened.pk, answered.pk]).values_list("status", "reserved_until")
    assert list(rows) == [("withdrawn", None), ("withdrawn", None)]
    assert not Assignment.objects.filter(pk=empty.pk).exists()
    assert (action.n_assignments, action.details["withdrawn"], action.details["deleted"]) == (3, 2, 1)


# --- Applying: only what still qualifies, one audit row that says what was done ------------------------------


def test_requeue_resets_what_the_skip_left_and_leaves_an_item_unskipped_meanwhile(data, researcher):
    study, pool, kim, lee, items = data["study"], data["pool"], data["kim"], data["lee"], data["items"]
    when = timezone.make_aware(datetime.datetime(2030, 1, 1))
    lees_c = Assignment.objects.get(item=items["c"], annotator=lee)
    Assignment.objects.filter(pk=lees_c.pk).update(reserved_until=when, started_at=when)
    kims_d = factories.make_assignment(pool, items["d"], kim, status=AssignmentStatus.SKIPPED, skip_reason="later")
    plan = _plan(data, chosen=[items["c"], items["d"]], action="requeue")
    assert plan.assignments == [lees_c.pk, kims_d.pk]
    Assignment.objects.filter(pk=kims_d.pk).update(status=AssignmentStatus.SUBMITTED)  # meanwhile
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=dm.Filters())
    lees_c.refresh_from_db()
    assert (lees_c.status, lees_c.skip_reason, lees_c.reserved_until, lees_c.started_at) == ("assigned", "", None, None)
    kims_d.refresh_from_db()
    assert (kims_d.status, kims_d.skip_reason) == ("submitted", "later")
    assert (action.action, action.pool, action.actor, action.study) == ("requeue", pool, researcher, study)
    assert (action.n_items, action.n_assignments, action.item_ids) == (2, 1, ["c-3", "d-4"])
    assert action.details == {"filters": {}, "unchanged": 1}
    assert dm.outcome_message(action) == (
        "Re-queued 1 skipped assignment of pool PF. 1 changed meanwhile (submitted, skipped or given to the "
        "receiver) and was left as it is."
    )


def test_remove_closes_what_a_top_up_assigned_meanwhile_and_excludes_every_chosen_item(data, researcher):
    study, pool, lee, items = data["study"], data["pool"], data["lee"], data["items"]
    other = _second_pool(data)
    factories.add_member(other, lee, "G-2")
    elsewhere = factories.make_assignment(other, items["d"], lee)
    filters = dm.Filters.parse(study, {"q": "care"})
    plan = _plan(data, chosen=[items["b"], items["d"]], action="remove", filters={"q": "care"})
    assert plan.assignments == [Assignment.objects.get(pool=pool, item=items["b"]).pk]
    late = factories.make_assignment(pool, items["d"], lee)  # meanwhile, a top-up
    not_chosen = factories.make_assignment(pool, items["c"], data["kim"], status=AssignmentStatus.STARTED)
    submitted_meanwhile = factories.make_assignment(pool, items["b"], lee, status=AssignmentStatus.SUBMITTED)
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=filters)
    assert not Assignment.objects.filter(pk=late.pk).exists()
    assert list(
        Assignment.objects.filter(pool=pool, item__in=[items["b"], items["d"]]).values_list("pk", flat=True)
    ) == [submitted_meanwhile.pk]
    assert Assignment.objects.filter(pk=elsewhere.pk, status=AssignmentStatus.ASSIGNED).exists()
    assert Assignment.objects.filter(pk=not_chosen.pk, status=AssignmentStatus.STARTED).exists()
    exclusions = PoolItemExclusion.objects.order_by("item_id")
    assert [(e.pool, e.item.external_id, e.created_by) for e in exclusions] == [
        (pool, "b-2", researcher),
        (pool, "d-4", researcher),
    ]
    assert (action.n_items, action.n_assignments) == (2, 2)
    assert action.details == {"filters": {"q": "care"}, "withdrawn": 0, "deleted": 2, "unchanged": 0}
    assert dm.outcome_message(action) == "Removed 2 items from pool PF; 2 open assignments closed."
    # Removing again: refused at the plan when every chosen item is out already; with a new item among
    # them, the kept exclusion is not doubled.
    with pytest.raises(ValidationFailed, match="nothing to remove: this item was already removed from pool PF"):
        _plan(data, chosen=[items["d"]], action="remove")
    again = dm.bulk_apply(
        study=study, plan=_plan(data, chosen=[items["d"], items["a"]], action="remove"), actor=researcher,
        filters=dm.Filters(),
    )
    assert PoolItemExclusion.objects.count() == 3
    assert dm.outcome_message(again) == "Removed 2 items from pool PF; 0 open assignments closed."


def test_a_reassignment_is_audited_with_both_members_and_gives_the_receiver_their_own_queue_position(data, researcher):
    study, pool, kim, lee, items = data["study"], data["pool"], data["kim"], data["lee"], data["items"]
    pool.seed = 7
    pool.save()
    e = factories.make_item(study, "e-5")
    factories.make_assignment(pool, e, kim, status=AssignmentStatus.STARTED)
    kims_b = Assignment.objects.get(item=items["b"], annotator=kim)
    _answer(kims_b, kim)
    other = _second_pool(data)
    factories.add_member(other, lee, "G-2")
    factories.make_assignment(other, e, lee)  # lee has e in another pool: no reason to keep it from them here
    plan = _plan(data, chosen=[items["b"], e], action="reassign", from_user=str(kim.pk), to_user=str(lee.pk))
    action = dm.bulk_apply(study=study, plan=plan, actor=researcher, filters=dm.Filters())
    new = {a.item.external_id: a for a in Assignment.objects.filter(pool=pool, annotator=lee, item__in=[items["b"], e])}
    assert sorted(new) == ["b-2", "e-5"]
    for item in (items["b"], e):
        mine = new[item.external_id]
        assert (mine.status, mine.order_key) == (
            "assigned",
            services.order_key_for(seed=7, pool_id=pool.pk, annotator_id=lee.pk, item_id=item.pk),
        )
    assert action.details == {
        "filters": {},
        "from": "kim",
        "to": "lee",
        "from_pseudonym": "P-A1",
        "to_pseudonym": "P-A2",
        "withdrawn": 1,
        "deleted": 1,
        "unchanged": 0,
    }
    assert dm.outcome_message(action) == (
        "Reassigned 2 items of pool PF from kim (P-A1) to lee (P-A2), each as a new, empty assignment. 1 held saved "
        "answers: withdrawn, the answers kept as their annotator's, never counted as submitted work."
    )


def test_a_receiver_who_left_meanwhile_is_named_in_the_refusal(data, researcher):
    pool, kim, lee, b = data["pool"], data["kim"], data["lee"], data["items"]["b"]
    plan = _plan(data, chosen=[b], action="reassign", from_user=str(kim.pk), to_user=str(lee.pk))
    PoolMembership.objects.filter(pool=pool, user=lee).update(active=False)
    with pytest.raises(Conflict) as refused:
        dm.bulk_apply(study=data["study"], plan=plan, actor=researcher, filters=dm.Filters())
    assert refused.value.message == "P-A2 left the pool meanwhile; nothing was changed"
    assert Assignment.objects.get(item=b).annotator == kim and not BulkAction.objects.exists()


@pytest.mark.parametrize(
    "action, n, n_items, details, expected",
    [
        (
            "reassign",
            1,
            1,
            {"from": "kim", "from_pseudonym": "P-A1", "to": "lee", "to_pseudonym": "P-A2"},
            "Reassigned 1 item of pool PF from kim (P-A1) to lee (P-A2), each as a new, empty assignment.",
        ),
        ("remove", 1, 1, {"withdrawn": 0, "unchanged": 0}, "Removed 1 item from pool PF; 1 open assignment closed."),
        (
            "remove",
            0,
            3,
            {"withdrawn": 0, "unchanged": 2},
            "Removed 3 items from pool PF; 0 open assignments closed. 2 changed meanwhile (submitted, skipped or given "
            "to the receiver) and were left as they are.",
        ),
        ("requeue", 2, 2, {}, "Re-queued 2 skipped assignments of pool PF."),
    ],
)
def test_the_outcome_says_what_was_done_in_a_sentence(data, action, n, n_items, details, expected):
    row = BulkAction(
        study=data["study"], action=action, pool=data["pool"], details=details, n_items=n_items, n_assignments=n
    )
    assert dm.outcome_message(row) == expected
    row.pool = None  # the pool was deleted since
    assert dm.outcome_message(row) == expected.replace("pool PF", "pool ?")
