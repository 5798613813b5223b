"""The researcher's data manager: items filtered by text, status per pool, disagreement, gold, score
range and metadata; bulk reassign / remove from a pool / re-queue with a confirmation and an audit row;
the count follows the filters over htmx."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import AdjudicationCase, BulkAction, CaseStatus, GoldLabel, GoldSource
from annotation.console.services import pool_top_up
from annotation.models import Assignment, AssignmentStatus, AuditEvent, PoolItemExclusion, Role
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


def _bulk(client, study, **fields):
    return client.post(reverse("adjudication:data-bulk", args=[study.slug]), fields)


def test_reassign_asks_for_confirmation_then_moves_open_assignments_and_writes_an_audit_row(rita, data):
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
    assert Assignment.objects.get(item=b).annotator == lee
    assert Assignment.objects.get(item=data["items"]["a"]).annotator == kim  # submitted work stays
    action = BulkAction.objects.get()
    assert (action.action, action.n_items, action.n_assignments, action.item_ids) == ("reassign", 2, 1, ["a-1", "b-2"])
    assert action.details["from"] == "kim" and action.details["to"] == "lee"
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
