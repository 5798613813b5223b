"""The researcher's data manager: items filtered by text, status per pool, disagreement, gold, score
range and metadata; bulk reassign / remove from a pool / re-queue with a confirmation and an audit row;
the count follows the filters over htmx. A reassigned or removed item's answers stay with the annotator
who gave them (withdrawn), and the receiver starts empty (issue Q)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from adjudication import data_manager as dm
from adjudication.exports.records import iter_records
from adjudication.models import AdjudicationCase, BulkAction, CaseStatus, GoldLabel, GoldSource
from annotation import labels, services
from annotation.console.services import pool_top_up
from annotation.models import Assignment, AssignmentStatus, AuditEvent, Label, PoolItemExclusion, PoolMembership, Role
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
