"""Adding people by name (issue Q, finding 15).

Someone already in the study (a role, or a membership of one of its pools) is added at once. Anyone else is
only invited: the invitation is theirs to accept or decline on their home page, it expires, the researcher
may withdraw it, and nothing about the person exists in the study before they accept. Whatever is typed, the
researcher's answer (status, body, redirect, the page it leads to, the statements the request runs) is the
same whether the name is an account outside the study, an inactive account, or no account at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.core import mail
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.console import services as svc
from annotation.models import (
    Assignment,
    AuditEvent,
    InvitationState,
    PoolMembership,
    Role,
    StudyInvitation,
    StudyRole,
)
from concord.errors import Conflict, NotFound
from tests import factories

pytestmark = pytest.mark.django_db

NAME = "dr.outsider"
ADDRESS = "dr.outsider@example.org"


@pytest.fixture
def clock():
    """One fixed "now" for everything a request does (pages show times to the minute); tests move it."""

    class Clock:
        now = timezone.now()

    with mock.patch("django.utils.timezone.now", side_effect=lambda: Clock.now):
        yield Clock


@pytest.fixture
def pool(study):
    question = factories.make_question(study)
    factories.make_item(study)
    return factories.make_pool(study, "PF", questions=[question])


@pytest.fixture
def rita(researcher):
    client = Client()
    client.force_login(researcher)
    return client


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def _as(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- The researcher's answer tells nothing about accounts ------------------------------------

# What the typed name may be, apart from someone of the study: each must be answered exactly alike.
ACCOUNTS: dict[str, Callable[[], Any]] = {
    "no account of that name": lambda: None,
    "an account outside the study": lambda: factories.make_study(owner=factories.make_user(NAME)),
    "the same account, named in other letter case": lambda: factories.make_user(NAME.upper()),
    "an inactive account": lambda: factories.make_user(NAME, is_active=False),
}
ADDRESSES: dict[str, Callable[[], Any]] = {
    "no account with that address": lambda: None,
    "an account outside the study": lambda: factories.make_user("someone", email=ADDRESS),
    "an inactive account": lambda: factories.make_user("someone", email=ADDRESS, is_active=False),
}


def _scrub(text: str) -> str:
    """What legitimately differs between two renderings: the CSRF token's mask and the invitation's row id."""
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken" value="-"', text)
    text = re.sub(r"invitation-\d+", "invitation-ID", text)
    return re.sub(r"/invitations/\d+/", "/invitations/ID/", text)


def _shapes(queries: CaptureQueriesContext) -> list[str]:
    """Each statement with its values blanked: the same list means the same work, in the same order."""
    shapes = []
    for query in queries.captured_queries:
        sql = re.sub(r"'(?:[^']|'')*'", "?", query["sql"])
        shapes.append(re.sub(r"\b(?:\d+(?:\.\d+)?|NULL|None)\b", "?", sql))
    return shapes


def _page_answer(client: Client, url: str, data: dict[str, str]) -> dict[str, Any]:
    with CaptureQueriesContext(connection) as queries:
        response = client.post(url, data)
    follow = client.get(response["Location"]) if response.status_code == 302 else None
    return {
        "status": response.status_code, "location": response.get("Location"), "body": _scrub(response.content.decode()),
        "page": _scrub(follow.content.decode()) if follow is not None else None, "statements": _shapes(queries),
    }


def _api_answer(client: APIClient, url: str, data: dict[str, Any], listing: str) -> dict[str, Any]:
    with CaptureQueriesContext(connection) as queries:
        response = client.post(url, data, format="json")
    body = dict(response.data)
    if "invitation" in body:
        body["invitation"] = {**body["invitation"], "id": "ID"}
    listing_response = client.get(listing)
    listed = [{**row, "id": "ID"} for row in listing_response.data] if listing_response.status_code == 200 else None
    return {"status": response.status_code, "body": body, "listed": listed, "statements": _shapes(queries)}


def _each_alike(cases: dict[str, Callable[[], Any]], answer: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``answer()`` after each arrangement of accounts, each undone before the next; all must be equal."""
    answers = {}
    for name, arrange in cases.items():
        with transaction.atomic():
            arrange()
            answers[name] = answer()
            transaction.set_rollback(True)
    first, *others = answers.values()
    for name, other in answers.items():
        for key in first:
            assert other[key] == first[key], f"{key} differs for {name!r}"
    assert len(others) == len(cases) - 1
    return first


@pytest.mark.parametrize("what", ["pool member", "role"])
def test_a_username_outside_the_study_is_answered_alike_whether_or_not_it_has_an_account(
    what, rita, study, pool, clock
):
    if what == "pool member":
        url, data = reverse("console:member_add", args=[study.slug, pool.pk]), {"username": NAME}
    else:
        url, data = reverse("console:role_grant", args=[study.slug]), {"username": NAME, "role": "adjudicator"}
    answer = _each_alike(ACCOUNTS, lambda: _page_answer(rita, url, data))
    assert answer["status"] == 302
    assert "If an account &#x27;dr.outsider&#x27; exists and is not yet in this study" in answer["page"]
    assert f'<td>{NAME}</td>' in answer["page"] and "pending, open until" in answer["page"]
    # Before the fix the page answered 404 "there is no account named …" for a missing name only.
    assert "no account" not in answer["page"]


@pytest.mark.parametrize("what", ["pool member", "role"])
def test_the_api_answers_a_username_outside_the_study_alike_whether_or_not_it_has_an_account(
    what, api, study, pool, clock
):
    base = f"/api/console/studies/{study.slug}"
    if what == "pool member":
        url, data = f"{base}/pools/{pool.pk}/members/", {"username": NAME}
    else:
        url, data = f"{base}/roles/", {"username": NAME, "role": "adjudicator"}
    answer = _each_alike(ACCOUNTS, lambda: _api_answer(api, url, data, f"{base}/invitations/"))
    assert answer["status"] == 202
    assert answer["body"]["invitation"]["invited"] == NAME and answer["body"]["invitation"]["status"] == "pending"
    assert answer["listed"] == [answer["body"]["invitation"]]
    assert "user" not in answer["body"]["invitation"]


@pytest.mark.parametrize("channel", ["page", "api"])
def test_an_address_outside_the_study_is_answered_alike_whether_or_not_it_has_an_account(
    channel, rita, api, study, pool, clock, django_capture_on_commit_callbacks
):
    def answer() -> dict[str, Any]:
        data = {"email": ADDRESS, "role": "annotator", "pool": str(pool.pk)}
        with django_capture_on_commit_callbacks(execute=True):
            if channel == "page":
                got = _page_answer(rita, reverse("console:invite", args=[study.slug]), data)
            else:
                url = f"/api/console/studies/{study.slug}/invitations/"
                got = _api_answer(api, url, {**data, "pool": pool.pk}, url)
        # An address without an account gets a new one (an INSERT more); what the researcher reads is the same.
        del got["statements"]
        return got

    got = _each_alike(ADDRESSES, answer)
    assert got["status"] == (302 if channel == "page" else 202)
    said = got["page"] if channel == "page" else got["body"]["detail"]
    assert "an invitation was mailed to it (with a new account when the address had none)" in said
    # The mail goes to the address only, whoever holds it.
    assert {tuple(m.to) for m in mail.outbox} == {(ADDRESS,)} and len(mail.outbox) == len(ADDRESSES)
    assert not StudyRole.objects.filter(study=study).exclude(user=study.owner).exists()


def test_revoking_a_role_of_a_name_outside_the_study_is_answered_alike(rita, api, study, clock):
    def answer() -> dict[str, Any]:
        page = rita.post(reverse("console:role_revoke", args=[study.slug]), {"username": NAME, "role": "annotator"})
        call = api.post(
            f"/api/console/studies/{study.slug}/roles/revoke/", {"username": NAME, "role": "annotator"}, format="json"
        )
        return {"page": (page.status_code, _scrub(page.content.decode())), "api": (call.status_code, call.data)}

    got = _each_alike(ACCOUNTS, answer)
    assert got["page"][0] == 404 and got["api"][0] == 404
    assert got["api"][1]["detail"] == "'dr.outsider' is not annotator of this study"


# --- Someone of the study is added at once ----------------------------------------------------


def test_a_person_of_the_study_is_added_to_a_pool_at_once(rita, study, pool):
    adjudicator = factories.make_user("adam")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    response = rita.post(reverse("console:member_add", args=[study.slug, pool.pk]), {"username": "ADAM"}, follow=True)
    assert "adam joined PF as A1." in response.content.decode()
    assert PoolMembership.objects.filter(pool=pool, user=adjudicator, active=True).exists()
    assert Assignment.objects.filter(pool=pool, annotator=adjudicator).exists()
    assert not StudyInvitation.objects.exists()


def test_a_past_member_with_no_role_left_counts_as_in_the_study(study, pool, researcher):
    person = factories.make_user("olga")
    membership = factories.add_member(pool, person)
    factories.make_assignment(pool, factories.make_item(study), person, status="submitted")
    svc.study_role_revoke(study=study, user=person, role=Role.ANNOTATOR, actor=researcher)
    membership.refresh_from_db()
    assert not membership.active and not StudyRole.objects.filter(study=study, user=person).exists()
    back = svc.pool_member_add_or_invite(pool=pool, username="olga", actor=researcher)
    assert isinstance(back, PoolMembership) and back.active and back.pseudonym == membership.pseudonym


def test_nobody_adds_themselves_through_the_invitation_path(study, pool, researcher):
    with pytest.raises(Exception, match="nobody changes their own pool"):
        svc.pool_member_add_or_invite(pool=pool, username=researcher.username, actor=researcher)
    assert not StudyInvitation.objects.exists()


# --- The invited person decides ---------------------------------------------------------------


def test_nothing_exists_in_the_study_until_the_invitation_is_accepted(rita, study, pool, clock):
    person = factories.make_user(NAME)
    rita.post(reverse("console:member_add", args=[study.slug, pool.pk]), {"username": NAME})
    invitation = StudyInvitation.objects.get()
    assert invitation.user == person and invitation.invited_by == study.owner
    assert invitation.state == InvitationState.PENDING
    assert not StudyRole.objects.filter(study=study, user=person).exists()
    assert not PoolMembership.objects.filter(user=person).exists()
    assert not Assignment.objects.filter(annotator=person).exists()

    clinician = _as(person)
    home = clinician.get(reverse("annotation:home")).content.decode()
    assert f'id="invitation-{invitation.pk}"' in home and "to annotate in pool <strong>PF</strong>" in home
    page = clinician.get(reverse("annotation:invitation", args=[invitation.pk]))
    assert page.status_code == 200 and b"invitation-accept-form" in page.content
    accepted = clinician.post(reverse("annotation:invitation-accept", args=[invitation.pk]))
    assert accepted.status_code == 302 and accepted["Location"] == reverse("annotation:home")

    invitation.refresh_from_db()
    assert invitation.state == InvitationState.ACCEPTED and invitation.updated_by == person
    assert invitation.decided_at == clock.now
    assert StudyRole.objects.filter(study=study, user=person, role=Role.ANNOTATOR).exists()
    assert PoolMembership.objects.filter(pool=pool, user=person, active=True).exists()
    assert Assignment.objects.filter(pool=pool, annotator=person).count() == 1
    assert "Continue" in clinician.get(reverse("annotation:home")).content.decode()
    pool_page = rita.get(reverse("console:pool", args=[study.slug, pool.pk])).content.decode()
    assert "accepted" in pool_page and f"<td>{NAME}</td>" in pool_page


def test_a_role_invitation_gives_the_role_on_acceptance(api, study, clock):
    person = factories.make_user(NAME)
    sent = api.post(f"/api/console/studies/{study.slug}/roles/", {"username": NAME, "role": "adjudicator"})
    assert sent.status_code == 202
    assert not StudyRole.objects.filter(study=study, user=person).exists()
    svc.invitation_accept(invitation=StudyInvitation.objects.get(pk=sent.data["invitation"]["id"]), user=person)
    assert list(StudyRole.objects.filter(study=study, user=person).values_list("role", flat=True)) == ["adjudicator"]
    assert not PoolMembership.objects.filter(user=person).exists()


def test_a_declined_invitation_gives_nothing_and_cannot_be_accepted_afterwards(rita, study, pool, clock):
    person = factories.make_user(NAME)
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    clinician = _as(person)
    assert clinician.post(reverse("annotation:invitation-decline", args=[invitation.pk])).status_code == 302
    invitation.refresh_from_db()
    assert invitation.state == InvitationState.DECLINED and invitation.updated_by == person
    again = clinician.post(reverse("annotation:invitation-accept", args=[invitation.pk]))
    assert again.status_code == 409 and b"this invitation was already declined" in again.content
    assert not StudyRole.objects.filter(study=study, user=person).exists()
    assert not PoolMembership.objects.filter(user=person).exists()
    assert f'id="invitation-{invitation.pk}"' not in clinician.get(reverse("annotation:home")).content.decode()
    # The researcher sees the person's own answer, and no withdraw button any more.
    people = rita.get(reverse("console:people", args=[study.slug])).content.decode()
    assert "declined" in people
    assert reverse("console:invitation_withdraw", args=[study.slug, invitation.pk]) not in people


def test_a_withdrawn_invitation_cannot_be_accepted(rita, api, study, pool, clock):
    person = factories.make_user(NAME)
    on_page = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    by_api = svc.study_role_grant_or_invite(study=study, username=NAME, role=Role.ADJUDICATOR, actor=study.owner)

    url = reverse("console:invitation_withdraw", args=[study.slug, on_page.pk])
    response = rita.post(url, {"back": "pool"})
    assert response.status_code == 302 and response["Location"] == reverse("console:pool", args=[study.slug, pool.pk])
    again = rita.post(url, {"back": "pool"})
    assert again.status_code == 409 and b"this invitation was already withdrawn" in again.content
    gone = api.delete(f"/api/console/studies/{study.slug}/invitations/{by_api.pk}/")
    assert gone.status_code == 200 and gone.data["status"] == "withdrawn"
    assert api.delete(f"/api/console/studies/{study.slug}/invitations/{by_api.pk}/").status_code == 409

    clinician = _as(person)
    for invitation in (on_page, by_api):
        invitation.refresh_from_db()
        assert invitation.state == InvitationState.WITHDRAWN and invitation.updated_by == study.owner
        refused = clinician.post(reverse("annotation:invitation-accept", args=[invitation.pk]))
        assert refused.status_code == 409
    assert not StudyRole.objects.filter(study=study, user=person).exists()
    assert "Invitations" not in clinician.get(reverse("annotation:home")).content.decode()


def test_an_invitation_withdrawn_after_its_page_was_opened_is_not_accepted(study, pool, clock):
    person = factories.make_user(NAME)
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    seen = StudyInvitation.objects.get(pk=invitation.pk)  # what the person's open page was built from
    svc.invitation_withdraw(invitation=invitation, actor=study.owner)
    with pytest.raises(Conflict, match="already withdrawn"):
        svc.invitation_accept(invitation=seen, user=person)
    assert not StudyRole.objects.filter(study=study, user=person).exists()


def test_an_invitation_expires_after_the_configured_time(rita, study, pool, clock, settings):
    settings.INVITATION_TTL_SECONDS = 3600
    quick, slow = factories.make_user(NAME), factories.make_user("dr.slow")
    sent_at = clock.now
    early = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    late = svc.study_role_grant_or_invite(study=study, username="dr.slow", role=Role.ADJUDICATOR, actor=study.owner)
    assert early.expires_at == late.expires_at == sent_at + timedelta(seconds=3600)

    clock.now = sent_at + timedelta(seconds=3599)
    assert _as(quick).post(reverse("annotation:invitation-accept", args=[early.pk])).status_code == 302

    clock.now = sent_at + timedelta(seconds=3600)
    clinician = _as(slow)
    assert "Invitations" not in clinician.get(reverse("annotation:home")).content.decode()
    refused = clinician.post(reverse("annotation:invitation-accept", args=[late.pk]))
    assert refused.status_code == 409 and b"this invitation expired" in refused.content
    assert clinician.post(reverse("annotation:invitation-decline", args=[late.pk])).status_code == 409
    assert not StudyRole.objects.filter(study=study, user=slow).exists()
    with pytest.raises(Conflict, match="expired"):
        svc.invitation_withdraw(invitation=late, actor=study.owner)
    people = rita.get(reverse("console:people", args=[study.slug])).content.decode()
    assert "expired" in people and reverse("console:invitation_withdraw", args=[study.slug, late.pk]) not in people
    # A new invitation may be sent once the old one has expired.
    again = svc.study_role_grant_or_invite(study=study, username="dr.slow", role=Role.ADJUDICATOR, actor=study.owner)
    assert again.pk != late.pk and again.expires_at == clock.now + timedelta(seconds=3600)


def test_only_the_invited_person_may_see_or_answer_their_invitation(study, pool, researcher, clock):
    person, other_invitee, stranger = (factories.make_user(n) for n in (NAME, "dr.other", "sam"))
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=researcher)
    svc.pool_member_add_or_invite(pool=pool, username="dr.other", actor=researcher)
    missing = invitation.pk + 1000
    for who in (other_invitee, researcher, stranger):
        client = _as(who)
        for route, method in (
            ("annotation:invitation", client.get),
            ("annotation:invitation-accept", client.post),
            ("annotation:invitation-decline", client.post),
        ):
            theirs = method(reverse(route, args=[invitation.pk]))
            nothing = method(reverse(route, args=[missing]))
            assert theirs.status_code == nothing.status_code == 404, (who.username, route)
            assert _scrub(theirs.content.decode()) == _scrub(nothing.content.decode())
        assert f"invitation-{invitation.pk}" not in client.get(reverse("annotation:home")).content.decode()
    with pytest.raises(NotFound):
        svc.invitation_accept(invitation=invitation, user=other_invitee)
    invitation.refresh_from_db()
    assert invitation.state == InvitationState.PENDING
    assert not PoolMembership.objects.exists()
    assert _as(person).get(reverse("annotation:invitation", args=[invitation.pk])).status_code == 200


def test_an_invitation_to_a_name_without_an_account_is_never_claimed_by_a_later_account(study, pool, clock):
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    assert invitation.user is None
    latecomer = factories.make_user(NAME)
    client = _as(latecomer)
    assert "Invitations" not in client.get(reverse("annotation:home")).content.decode()
    assert client.post(reverse("annotation:invitation-accept", args=[invitation.pk])).status_code == 404
    assert not PoolMembership.objects.exists()


def test_an_invitation_from_someone_no_longer_a_researcher_cannot_be_accepted(study, pool, clock):
    second = factories.make_user("rob")
    factories.grant(study, second, Role.RESEARCHER)
    person = factories.make_user(NAME)
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=second)
    svc.study_role_revoke(study=study, user=second, role=Role.RESEARCHER, actor=study.owner)
    with pytest.raises(Conflict, match="no longer valid"):
        svc.invitation_accept(invitation=invitation, user=person)
    assert not PoolMembership.objects.filter(user=person).exists()


def test_accepting_while_in_another_independent_pool_is_refused_and_the_invitation_stays_open(study, pool, clock):
    other_pool = factories.make_pool(study, "CF", questions=list(pool.questions.all()))
    person = factories.make_user(NAME)
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    factories.add_member(other_pool, person)
    refused = _as(person).post(reverse("annotation:invitation-accept", args=[invitation.pk]))
    assert refused.status_code == 409 and b"you already belong to pool &#x27;CF&#x27;" in refused.content
    invitation.refresh_from_db()
    assert invitation.state == InvitationState.PENDING
    assert not PoolMembership.objects.filter(pool=pool, user=person).exists()


def test_a_repeated_invitation_keeps_the_one_still_open(study, pool, clock):
    factories.make_user(NAME)
    first = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    assert svc.pool_member_add_or_invite(pool=pool, username=NAME.upper(), actor=study.owner) == first
    nobody = svc.pool_member_add_or_invite(pool=pool, username="nobody.here", actor=study.owner)
    assert svc.pool_member_add_or_invite(pool=pool, username="Nobody.Here", actor=study.owner) == nobody
    assert StudyInvitation.objects.count() == 2


def test_a_malformed_username_is_refused_whether_or_not_it_could_exist(rita, study, pool):
    response = rita.post(reverse("console:member_add", args=[study.slug, pool.pk]), {"username": "a b"})
    assert response.status_code == 400 and not StudyInvitation.objects.exists()


def test_each_change_of_an_invitation_is_audited_with_who_made_it(study, pool, clock):
    person = factories.make_user(NAME)
    invitation = svc.pool_member_add_or_invite(pool=pool, username=NAME, actor=study.owner)
    svc.invitation_accept(invitation=invitation, user=person)
    events = AuditEvent.objects.filter(table_name="annotation_studyinvitation", row_pk=str(invitation.pk))
    assert [(e.operation, e.actor_id) for e in events.order_by("id")] == [
        ("INSERT", study.owner.pk), ("UPDATE", person.pk),
    ]
