"""The console's REST API: the same actions as the pages, through the same services."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import get_resolver
from rest_framework.test import APIClient

from annotation.console import api as console_api
from annotation.console import services as svc
from annotation.models import (
    Assignment,
    AssignmentStatus,
    Item,
    PasswordChangeRequired,
    Pool,
    PoolMembership,
    StudyInvitation,
    StudyRole,
)
from tests import factories
from tests.annotation.console_helpers import ITEMS, allow_study_creation, eager_celery, fast_password_hashing, jsonl

pytestmark = pytest.mark.django_db
__all__ = ["eager_celery", "fast_password_hashing"]


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def astrid(researcher):
    return svc.study_create(owner=researcher, name="ASTRID pilot", presets=["astrid"])


def test_every_console_api_class_declares_the_researcher_policy_except_the_study_list():
    classes = [
        c
        for c in vars(console_api).values()
        if isinstance(c, type) and issubclass(c, console_api.ConsoleApi) and c is not console_api.ConsoleApi
    ]
    assert len(classes) >= 15
    for cls in classes:
        expected = "authenticated" if cls is console_api.StudyListCreateApi else "researcher"
        assert cls.access_policy == expected, cls


def test_every_console_api_route_answers_strangers_404_and_annotators_403(astrid, annotator, stranger):
    pool = factories.make_pool(astrid, questions=list(astrid.questions.all()))
    membership = factories.add_member(pool, annotator)
    invitation = svc.pool_member_add_or_invite(pool=pool, username="someone", actor=astrid.owner)
    values = {
        "slug": astrid.slug, "key": "helpful", "pool_id": pool.pk, "membership_id": membership.pk, "job_id": 1,
        "invitation_id": invitation.pk,
    }
    from annotation.models import ImportJob

    ImportJob.objects.create(pk=1, study=astrid, filename="f", stored_name="f")
    routes = [
        p for p in get_resolver().url_patterns if getattr(p, "pattern", None) and str(p.pattern) == "api/console/"
    ]
    patterns = [sub for r in routes for sub in r.url_patterns]
    checked = 0
    for pattern in patterns:
        keys = pattern.pattern.converters.keys()
        if "slug" not in keys:
            continue
        path = "/api/console/" + str(pattern.pattern)
        for k in keys:
            path = path.replace(
                f"<{pattern.pattern.converters[k].__class__.__name__.replace('Converter', '').lower()}:{k}>",
                str(values[k]),
            )
        for user, expected in ((stranger, 404), (annotator, 403)):
            client = APIClient()
            client.force_authenticate(user)
            for method in ("get", "post", "patch", "delete"):
                status = getattr(client, method)(path, {}, format="json").status_code
                assert status in (expected, 405), (path, method, user.username, status)
                checked += status != 405
    assert checked >= 40


def test_a_researcher_sets_up_a_study_through_the_api(
    api, researcher, annotator, eager_celery, django_capture_on_commit_callbacks
):
    allow_study_creation(researcher)
    created = api.post(
        "/api/console/studies/",
        {"name": "API pilot", "presets": ["astrid"], "hidden_metadata_fields": ["model"]},
        format="json",
    )
    assert created.status_code == 201, created.data
    slug = created.data["slug"]
    base = f"/api/console/studies/{slug}"

    q = api.post(f"{base}/questions/", {
        "key": "hedged", "prompt": "Hedged?", "scope": "sentence", "kind": "binary",
        "options": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}],
        "condition": {"question": "information_bearing", "values": ["yes"]},
    }, format="json")
    assert q.status_code == 201, q.data
    assert q.data["condition"] == {"question": "information_bearing", "in": ["yes"]}
    keys = [x["key"] for x in api.get(f"{base}/questions/").data]
    assert api.post(f"{base}/questions/reorder/", {"keys": list(reversed(keys))}, format="json").status_code == 200
    assert (
        api.patch(f"{base}/questions/helpful/", {"help_text": "How helpful for the patient"}, format="json").status_code
        == 200
    )
    assert api.delete(f"{base}/questions/inappropriate/").status_code == 204

    with django_capture_on_commit_callbacks(execute=True):
        job = api.post(
            f"{base}/imports/", {"file": SimpleUploadedFile("items.jsonl", jsonl(*ITEMS))}, format="multipart"
        )
    assert job.status_code == 202
    checked = api.get(f"{base}/imports/{job.data['id']}/").data
    assert checked["status"] == "checked" and checked["summary"]["items"] == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post(f"{base}/imports/{job.data['id']}/confirm/").status_code == 202
    assert api.get(f"{base}/imports/{job.data['id']}/").data["status"] == "done"

    pool = api.post(
        f"{base}/pools/", {"name": "PF", "questions": ["perceived_faithfulness"], "overlap": 1}, format="json"
    )
    assert pool.status_code == 201, pool.data
    account = api.post(f"{base}/accounts/", {"username": "dr.kim", "pool": pool.data["id"]}, format="json")
    assert account.status_code == 201 and account.data["one_time_password"]
    assert account["Cache-Control"] == "no-store"
    assert Assignment.objects.filter(annotator__username="dr.kim").count() == 2

    # The annotator is not in this study yet: they are invited, and join when they accept.
    member = api.post(f"{base}/pools/{pool.data['id']}/members/", {"username": annotator.username}, format="json")
    assert member.status_code == 202
    assert not PoolMembership.objects.filter(user=annotator).exists()
    svc.invitation_accept(invitation=StudyInvitation.objects.get(pk=member.data["invitation"]["id"]), user=annotator)
    assert PoolMembership.objects.filter(pool_id=pool.data["id"], user=annotator, active=True).exists()
    assert api.patch(f"{base}/pools/{pool.data['id']}/", {"overlap": 2}, format="json").status_code == 200
    assert Assignment.objects.filter(pool_id=pool.data["id"]).count() == 4

    items = api.get(f"{base}/items/", {"q": "warfarin"}).data
    assert items["count"] == 1 and items["results"][0]["pools"]["PF"]["assigned"] == 2
    progress = api.get(f"{base}/progress/").data
    assert progress["pools"][0]["assigned"] == 4 and progress["pools"][0]["done"] == 0
    people = {p["username"]: p for p in api.get(f"{base}/roles/").data}
    assert people["dr.kim"]["must_change_password"] is True
    assert api.patch(base + "/", {"blind_system": False}, format="json").data["blind_system"] is False


def test_refusals_come_back_with_the_domain_status_and_reason(api, astrid):
    factories.make_item(astrid)
    pool = api.post(
        f"/api/console/studies/{astrid.slug}/pools/", {"name": "CF", "questions": ["grounded"]}, format="json"
    )
    assert pool.status_code == 400 and "add 'information_bearing' to the pool" in pool.data["detail"]
    dup = api.post(
        f"/api/console/studies/{astrid.slug}/questions/",
        {"key": "grounded", "prompt": "x", "scope": "item", "kind": "text"},
        format="json",
    )
    assert dup.status_code == 409 and dup.data["error"] == "conflict"
    gone = api.delete(f"/api/console/studies/{astrid.slug}/questions/information_bearing/")
    assert gone.status_code == 409 and "refers to it" in gone.data["detail"]


def test_nobody_changes_their_own_role_or_pool_through_the_api(api, astrid, researcher):
    pool = factories.make_pool(astrid, questions=list(astrid.questions.filter(key="helpful")))
    me = api.post(
        f"/api/console/studies/{astrid.slug}/pools/{pool.pk}/members/", {"username": researcher.username}, format="json"
    )
    assert me.status_code == 403
    role = api.post(
        f"/api/console/studies/{astrid.slug}/roles/revoke/",
        {"username": researcher.username, "role": "researcher"},
        format="json",
    )
    assert role.status_code == 403
    assert not PoolMembership.objects.filter(user=researcher).exists()
    assert StudyRole.objects.filter(study=astrid, user=researcher, role="researcher").exists()


def test_moving_and_removing_members_through_the_api(api, astrid):
    qs = list(astrid.questions.filter(key="helpful"))
    cf, pf = factories.make_pool(astrid, "CF", questions=qs), factories.make_pool(astrid, "PF", questions=qs)
    factories.make_item(astrid)
    person = factories.make_user("pat")
    m = svc.pool_membership_add(pool=cf, user=person, actor=astrid.owner)
    moved = api.post(f"/api/console/studies/{astrid.slug}/members/{m.pk}/move/", {"to_pool": pf.pk}, format="json")
    assert moved.status_code == 200 and moved.data["pool"] == pf.pk
    Assignment.objects.filter(annotator=person).update(status=AssignmentStatus.SUBMITTED)
    back = api.post(
        f"/api/console/studies/{astrid.slug}/members/{moved.data['id']}/move/", {"to_pool": cf.pk}, format="json"
    )
    assert back.status_code == 409 and "independent" in back.data["detail"]
    assert api.delete(f"/api/console/studies/{astrid.slug}/members/{moved.data['id']}/").status_code == 204
    assert PoolMembership.objects.get(pk=moved.data["id"]).active is False


def test_a_pool_of_another_study_is_not_found_as_a_move_target(api, astrid, researcher):
    other = svc.study_create(owner=researcher, name="Other", presets=["astrid"])
    foreign = Pool.objects.create(study=other, name="X")
    pool = factories.make_pool(astrid, questions=list(astrid.questions.filter(key="helpful")))
    m = factories.add_member(pool, factories.make_user())
    assert (
        api.post(
            f"/api/console/studies/{astrid.slug}/members/{m.pk}/move/", {"to_pool": foreign.pk}, format="json"
        ).status_code
        == 404
    )


def test_creating_a_study_through_the_api_needs_the_permission(api):
    assert api.post("/api/console/studies/", {"name": "X", "presets": ["astrid"]}, format="json").status_code == 403


def test_an_invitation_through_the_api(api, astrid, django_capture_on_commit_callbacks):
    from django.core import mail

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/console/studies/{astrid.slug}/invitations/", {"email": "lee@example.org"}, format="json"
        )
    assert response.status_code == 202 and "username" not in response.data
    assert response.data["invitation"]["invited"] == "lee@example.org"
    assert response.data["invitation"]["status"] == "pending"
    assert len(mail.outbox) == 1
    assert not PasswordChangeRequired.objects.exists()
    assert Item.objects.count() == 0


def test_an_api_update_with_a_stale_fingerprint_is_refused(api, astrid):
    url = f"/api/console/studies/{astrid.slug}/questions/helpful/"
    seen = next(q for q in api.get(f"/api/console/studies/{astrid.slug}/questions/").data if q["key"] == "helpful")[
        "fingerprint"
    ]
    assert api.patch(url, {"help_text": "one", "base": seen}, format="json").status_code == 200
    stale = api.patch(url, {"help_text": "two", "base": seen}, format="json")
    assert stale.status_code == 409 and stale.data["error"] == "conflict"


def test_presets_are_added_through_the_api(api, astrid):
    response = api.post(
        f"/api/console/studies/{astrid.slug}/questions/presets/", {"presets": ["pubhealth"]}, format="json"
    )
    assert response.status_code == 201
    assert "supports_answer" in [q["key"] for q in response.data]
