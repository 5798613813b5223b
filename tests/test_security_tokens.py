"""API tokens: refused while a one-time password is held, revoked by a password change, visible and
revocable by their owner, expiring after ``API_TOKEN_TTL_SECONDS``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.labels import statements
from annotation.models import Label, LabelHistory, PasswordChangeRequired
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _issue(user) -> str:
    response = APIClient().post(
        reverse("api-token"), {"username": user.username, "password": factories.PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()["token"]


def test_a_token_obtained_before_a_one_time_password_was_set_is_refused_until_it_is_changed(annotator):
    key = _issue(annotator)
    assert _token_client(key).get(reverse("api-assignments")).status_code == 200
    PasswordChangeRequired.objects.create(user=annotator)
    refused = _token_client(key).get(reverse("api-assignments"))
    assert refused.status_code in (401, 403)
    assert "password" in refused.json()["detail"]


def test_no_token_is_issued_while_a_one_time_password_is_held(annotator):
    PasswordChangeRequired.objects.create(user=annotator)
    response = APIClient().post(
        reverse("api-token"), {"username": annotator.username, "password": factories.PASSWORD}, format="json"
    )
    assert response.status_code == 403
    assert not Token.objects.filter(user=annotator).exists()


def test_changing_the_password_on_the_account_page_revokes_every_token(client, annotator):
    key = _issue(annotator)
    client.force_login(annotator)
    response = client.post(
        reverse("account:password_change"),
        {
            "old_password": factories.PASSWORD,
            "new_password1": "a-new-Passphrase-42",
            "new_password2": "a-new-Passphrase-42",
        },
    )
    assert response.status_code == 302
    assert not Token.objects.filter(user=annotator).exists()
    assert _token_client(key).get(reverse("api-assignments")).status_code in (401, 403)


def test_any_password_change_revokes_tokens_the_admin_command_included(annotator, monkeypatch):
    key = _issue(annotator)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "a-new-Passphrase-42")
    call_command("changepassword", annotator.username, stdout=None)
    assert not Token.objects.filter(key=key).exists()


def test_saving_a_user_without_changing_the_password_keeps_the_token(annotator):
    key = _issue(annotator)
    annotator.first_name = "Ada"
    annotator.save()
    assert Token.objects.filter(key=key).exists()


def test_a_token_expires_after_the_configured_time(annotator, settings):
    settings.API_TOKEN_TTL_SECONDS = 3600
    key = _issue(annotator)
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(seconds=3601))
    refused = _token_client(key).get(reverse("api-assignments"))
    assert refused.status_code in (401, 403)
    assert "expired" in refused.json()["detail"]
    assert not Token.objects.filter(key=key).exists()
    assert _issue(annotator) != key  # a fresh one is issued


def test_a_token_within_its_lifetime_is_reissued_unchanged(annotator, settings):
    settings.API_TOKEN_TTL_SECONDS = 3600
    key = _issue(annotator)
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(seconds=3500))
    assert _token_client(key).get(reverse("api-assignments")).status_code == 200
    assert _issue(annotator) == key


def test_a_person_sees_and_revokes_their_token_on_the_account_page(client, annotator, researcher):
    key = _issue(annotator)
    other = _issue(researcher)
    client.force_login(annotator)
    page = client.get(reverse("account:tokens"))
    assert page.status_code == 200
    body = page.content.decode()
    assert key[:6] in body and key not in body and other[:6] not in body
    assert client.post(reverse("account:tokens")).status_code == 302
    assert not Token.objects.filter(key=key).exists()
    assert Token.objects.filter(key=other).exists()  # only one's own
    assert _token_client(key).get(reverse("api-assignments")).status_code in (401, 403)


def test_a_label_save_with_the_token_of_someone_who_must_change_their_password_is_refused(
    annotator, study, monkeypatch
):
    """The label save reads the token, its person, the one-time password flag and the assignment in one statement
    (annotation/labels/statements.py); on PostgreSQL the save after it is one statement too. The flag must refuse
    the save there as it refuses every other request, on either database, and nothing is written."""
    assignment, pf = factories.one_nominal_assignment(study, annotator)
    at_once = []
    save_label_at_once = statements.save_label_at_once
    monkeypatch.setattr(statements, "save_label_at_once", lambda **kw: at_once.append(kw) or save_label_at_once(**kw))
    client = _token_client(_issue(annotator))
    url = reverse("api-labels", args=[assignment.pk])
    first = client.put(url, {"question": "pf", "unit_key": "item", "value": "1", "base_version": 0}, format="json")
    assert first.status_code == 200, first.content  # the token works, by the save's own path
    assert len(at_once) == (connection.vendor == "postgresql")  # the one-statement save on PostgreSQL
    PasswordChangeRequired.objects.create(user=annotator)
    refused = client.put(url, {"question": "pf", "unit_key": "item", "value": "2", "base_version": 1}, format="json")
    assert refused.status_code in (401, 403)
    assert "password" in refused.json()["detail"]
    label = Label.objects.get(assignment=assignment, question=pf)
    assert (label.value, label.version) == ("1", 1) and LabelHistory.objects.filter(label=label).count() == 1
    assert len(at_once) == (connection.vendor == "postgresql")  # refused before any save was tried
    assert client.get(url).status_code in (401, 403)  # reading the labels by the same statement: refused too
    elsewhere = reverse("api-labels", args=[assignment.pk + 1000])  # not theirs: still the token's refusal, no 404
    assert client.put(elsewhere, {"question": "pf", "unit_key": "item", "value": "2", "base_version": 1},
                      format="json").status_code in (401, 403)
