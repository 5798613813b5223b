"""Multi-factor sign-in (annotation/mfa): the requirement by setting and role, the step after the password,
TOTP codes used once, recovery codes used once, the throttle over both steps, enrolment before any other page,
and API tokens (not covered, but created only in a verified session)."""

from __future__ import annotations

import time
from base64 import b32decode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.mfa import signin
from annotation.mfa.models import TokenOrigin
from annotation.models import Role
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_device_backoff(settings):
    # django-otp's own per-device backoff (seconds after a wrong code) is tested on its own below; elsewhere a
    # right code right after a wrong one must be judged on the code alone.
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    settings.OTP_STATIC_THROTTLE_FACTOR = 0
    settings.LOGIN_FAILURE_LIMIT = 5
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600


def _totp(user) -> TOTPDevice:
    return TOTPDevice.objects.create(user=user, name="app", confirmed=True)


def _code(device: TOTPDevice, *, at: float | None = None) -> str:
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time() if at is None else at
    return f"{totp.token():06d}"


def _password(client: Client, username: str, password: str = factories.PASSWORD, **extra):
    return client.post(reverse("login"), {"username": username, "password": password, "next": "/help/"}, **extra)


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


# --- Who must -------------------------------------------------------------------------------------


def test_the_requirement_follows_the_setting_per_role(settings, researcher, study, annotator):
    admin = get_user_model().objects.create_user("ada-admin", password=factories.PASSWORD, is_staff=True)
    settings.CONCORD_MFA_REQUIRED = frozenset()
    assert not any(signin.mfa_required(u) for u in (researcher, annotator, admin))
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    assert [signin.mfa_required(u) for u in (researcher, annotator, admin)] == [True, False, False]
    settings.CONCORD_MFA_REQUIRED = frozenset({"admins"})
    assert [signin.mfa_required(u) for u in (researcher, annotator, admin)] == [False, False, True]
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers", "admins"})
    assert [signin.mfa_required(u) for u in (researcher, annotator, admin)] == [True, False, True]
    settings.CONCORD_MFA_REQUIRED = frozenset({"everyone"})
    assert all(signin.mfa_required(u) for u in (researcher, annotator, admin))


def test_an_adjudicator_or_annotator_role_is_not_a_researcher_role(settings, study, annotator):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    factories.grant(study, annotator, Role.ADJUDICATOR)
    assert not signin.mfa_required(annotator)
    factories.grant(study, annotator, Role.RESEARCHER)
    assert signin.mfa_required(annotator)


def test_an_unknown_requirement_is_refused_at_start(tmp_path):
    from tests.test_settings import _load_settings

    result = _load_settings(CONCORD_VAR_DIR=str(tmp_path), CONCORD_MFA_REQUIRED="researchers,interns")
    assert result.returncode != 0
    assert "CONCORD_MFA_REQUIRED" in result.stderr


# --- Enrolment before any other page ---------------------------------------------------------------


def test_a_required_person_without_a_factor_reaches_only_enrolment_and_logout(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    response = _password(client, "rita-researcher")
    assert response.status_code == 302 and _logged_in(client)  # the password logs in: there is no factor yet
    for path in ("/", "/help/", reverse("account:tokens"), f"/console/studies/{study.slug}/", "/admin/"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response["Location"].startswith(reverse("mfa:setup")), path
    api = client.get("/api/assignments/")
    assert api.status_code == 403 and api.json()["error"] == "mfa_enrolment_required"
    assert client.get(reverse("mfa:setup")).status_code == 200
    assert client.get(reverse("mfa:totp")).status_code == 200
    assert client.post(reverse("logout")).status_code == 302
    assert not _logged_in(client)


def test_enrolling_an_app_opens_the_site_and_shows_recovery_codes_once(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    _password(client, "rita-researcher")
    page = client.get(reverse("mfa:totp"))
    assert b"<svg" in page.content and b'id="totp-secret"' in page.content
    device = TOTPDevice.objects.get(user=researcher, confirmed=False)
    secret = page.context["secret"]
    assert b32decode(secret) == device.bin_key
    wrong = client.post(reverse("mfa:totp"), {"code": "000000" if _code(device) != "000000" else "111111"})
    assert wrong.status_code == 400
    assert client.get("/help/").status_code == 302  # still not enrolled
    done = client.post(reverse("mfa:totp"), {"code": _code(device)})
    assert done.status_code == 200
    codes = done.context["codes"]
    assert len(codes) == settings.MFA_RECOVERY_CODES
    assert sorted(StaticToken.objects.filter(device__user=researcher).values_list("token", flat=True)) == sorted(codes)
    assert client.get("/help/").status_code == 200
    # Shown once: the page lists how many are left, never the codes.
    setup = client.get(reverse("mfa:setup"))
    assert all(code.encode() not in setup.content for code in codes)


def test_a_person_not_required_is_never_sent_to_enrolment(settings, client, annotator):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers", "admins"})
    _password(client, "anna-annotator")
    assert client.get("/help/").status_code == 200


# --- The step after the password -----------------------------------------------------------------


def test_a_person_with_a_factor_is_not_logged_in_by_the_password_alone(client, annotator):
    device = _totp(annotator)
    response = _password(client, "anna-annotator")
    assert response.status_code == 302 and response["Location"] == reverse("mfa:verify")
    assert not _logged_in(client)
    assert client.get("/help/").status_code == 302  # to the login page: nobody is logged in
    assert client.get(reverse("mfa:verify")).status_code == 200
    done = client.post(reverse("mfa:verify"), {"code": _code(device)})
    assert done.status_code == 302 and done["Location"] == "/help/"
    assert _logged_in(client)
    assert client.get("/help/").status_code == 200


def test_a_wrong_code_is_refused(client, annotator):
    device = _totp(annotator)
    _password(client, "anna-annotator")
    right = _code(device)
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"
    for bad in (wrong, "", "abc", "1" * 40):
        assert client.post(reverse("mfa:verify"), {"code": bad}).status_code == 400
    assert not _logged_in(client)


def test_a_totp_code_is_refused_the_second_time_within_its_window(client, annotator):
    device = _totp(annotator)
    now = time.time()
    code = _code(device, at=now)
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": code}).status_code == 302
    client.logout()
    other = Client()
    _password(other, "anna-annotator")
    replay = other.post(reverse("mfa:verify"), {"code": code})
    assert replay.status_code == 400
    assert not _logged_in(other)
    # An older code (the previous step, within the tolerance) is refused as well once a newer one was used.
    assert other.post(reverse("mfa:verify"), {"code": _code(device, at=now - 30)}).status_code == 400


def test_a_recovery_code_works_once(client, annotator):
    _totp(annotator)
    codes = signin.recovery_codes_regenerate(annotator)
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": codes[0].upper()}).status_code == 302
    assert _logged_in(client)
    assert signin.recovery_codes_left(annotator) == len(codes) - 1
    client.logout()
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": codes[0]}).status_code == 400
    assert not _logged_in(client)
    assert client.post(reverse("mfa:verify"), {"code": codes[1]}).status_code == 302


def test_regenerating_recovery_codes_needs_a_verified_session_and_voids_the_old_ones(client, annotator):
    device = _totp(annotator)
    old = signin.recovery_codes_regenerate(annotator)
    _password(client, "anna-annotator")
    client.post(reverse("mfa:verify"), {"code": _code(device)})
    response = client.post(reverse("mfa:recovery-codes"))
    new = response.context["codes"]
    assert set(new).isdisjoint(old)
    assert not StaticToken.objects.filter(token__in=old).exists()
    unverified = Client()
    unverified.force_login(annotator)  # a session that never passed the second factor: logged out on sight
    assert unverified.post(reverse("mfa:recovery-codes")).status_code == 302
    assert not _logged_in(unverified)


def test_the_second_step_expires(settings, client, annotator, monkeypatch):
    device = _totp(annotator)
    _password(client, "anna-annotator")
    later = time.time() + settings.MFA_PENDING_SECONDS + 1
    monkeypatch.setattr(signin.time, "time", lambda: later)
    response = client.post(reverse("mfa:verify"), {"code": _code(device)})
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert not _logged_in(client)


def test_a_password_change_ends_a_pending_second_step(client, annotator):
    device = _totp(annotator)
    _password(client, "anna-annotator")
    annotator.set_password("another-long-passphrase")
    annotator.save()
    assert client.post(reverse("mfa:verify"), {"code": _code(device)})["Location"] == reverse("login")
    assert not _logged_in(client)


def test_the_next_page_is_kept_but_never_an_outside_one(client, annotator):
    device = _totp(annotator)
    client.post(reverse("login"), {"username": "anna-annotator", "password": factories.PASSWORD,
                                   "next": "https://evil.example/"})  # fmt: skip
    assert client.post(reverse("mfa:verify"), {"code": _code(device)})["Location"] == reverse("annotation:home")


def test_a_session_of_a_person_with_a_factor_that_skipped_it_is_logged_out(client, annotator):
    _totp(annotator)
    client.force_login(annotator)
    response = client.get("/help/")
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert not _logged_in(client)


# --- The throttle --------------------------------------------------------------------------------


def test_wrong_codes_count_with_wrong_passwords_and_lock_both_steps(settings, client, annotator):
    settings.LOGIN_FAILURE_LIMIT = 3
    device = _totp(annotator)
    right = _code(device)
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"
    assert _password(client, "anna-annotator", "wrong-password").status_code == 200
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": wrong}).status_code == 400
    assert client.post(reverse("mfa:verify"), {"code": wrong}).status_code == 400
    locked = client.post(reverse("mfa:verify"), {"code": right})
    assert locked.status_code == 429
    assert not _logged_in(client)
    assert _password(Client(), "anna-annotator").status_code == 429  # the password step is locked too
    # From another address the pair is another one: the right code signs in and clears that pair's count.
    other = Client(REMOTE_ADDR="10.9.8.7")
    _password(other, "anna-annotator", REMOTE_ADDR="10.9.8.7")
    assert other.post(reverse("mfa:verify"), {"code": right}, REMOTE_ADDR="10.9.8.7").status_code == 302


def test_a_correct_password_does_not_clear_the_count_before_the_second_step(settings, client, annotator):
    settings.LOGIN_FAILURE_LIMIT = 3
    device = _totp(annotator)
    wrong = f"{(int(_code(device)) + 1) % 1_000_000:06d}"
    for _ in range(3):  # password right, code wrong, again and again: guessing codes is still counted
        assert _password(client, "anna-annotator").status_code in (302, 429)
        client.post(reverse("mfa:verify"), {"code": wrong})
    assert _password(client, "anna-annotator").status_code == 429


def test_django_otps_device_backoff_refuses_even_the_right_code_right_after_a_wrong_one(settings, client, annotator):
    settings.OTP_TOTP_THROTTLE_FACTOR = 3600  # an hour's backoff: the refusal does not depend on timing
    device = _totp(annotator)
    right = _code(device)
    _password(client, "anna-annotator")
    client.post(reverse("mfa:verify"), {"code": f"{(int(right) + 1) % 1_000_000:06d}"})
    assert client.post(reverse("mfa:verify"), {"code": right}).status_code == 400


def test_a_mistyped_app_code_does_not_back_off_the_recovery_codes(settings, client, annotator):
    # Only input shaped like a recovery code (eight characters of a-z and 2-7, what django-otp issues) is tried
    # as one: a wrong six-digit code would otherwise count as a wrong recovery code, and django-otp's backoff
    # (an hour here) would refuse the right recovery code typed next.
    settings.OTP_STATIC_THROTTLE_FACTOR = 3600
    device = _totp(annotator)
    codes = signin.recovery_codes_regenerate(annotator)
    assert all(signin.RECOVERY_CODE_SHAPE.fullmatch(code) for code in codes)
    _password(client, "anna-annotator")
    wrong = f"{(int(_code(device)) + 1) % 1_000_000:06d}"
    assert client.post(reverse("mfa:verify"), {"code": wrong}).status_code == 400
    assert client.post(reverse("mfa:verify"), {"code": codes[0]}).status_code == 302
    assert _logged_in(client)


def test_a_wrong_recovery_code_still_backs_the_recovery_codes_off(settings, client, annotator):
    settings.OTP_STATIC_THROTTLE_FACTOR = 3600
    _totp(annotator)
    codes = signin.recovery_codes_regenerate(annotator)
    wrong = "aaaaaaaa" if "aaaaaaaa" not in codes else "bbbbbbbb"
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": wrong}).status_code == 400
    assert client.post(reverse("mfa:verify"), {"code": codes[0]}).status_code == 400


# --- API tokens ----------------------------------------------------------------------------------


def test_api_tokens_are_not_affected_by_the_requirement(settings, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    token = Token.objects.create(user=researcher)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.get("/api/assignments/")
    assert response.status_code == 200, response.content


def test_a_person_using_mfa_gets_no_token_for_a_password(settings, researcher, study, annotator):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    api = APIClient()
    refused = api.post("/api/token/", {"username": "rita-researcher", "password": factories.PASSWORD}, format="json")
    assert refused.status_code == 403 and "second factor" in refused.json()["detail"]
    _totp(annotator)  # enrolled though not required: the same
    refused = api.post("/api/token/", {"username": "anna-annotator", "password": factories.PASSWORD}, format="json")
    assert refused.status_code == 403
    assert not Token.objects.exists()


def test_a_token_from_the_password_records_where_it_was_created(client, annotator):
    api = APIClient(REMOTE_ADDR="192.0.2.7", HTTP_USER_AGENT="curl/8")
    issued = api.post("/api/token/", {"username": "anna-annotator", "password": factories.PASSWORD}, format="json")
    assert issued.status_code == 200
    origin = TokenOrigin.objects.get(token__key=issued.json()["token"])
    assert (origin.ip, origin.user_agent, origin.via, origin.mfa_verified) == ("192.0.2.7", "curl/8", "password", False)
    client.force_login(annotator)
    page = client.get(reverse("account:tokens"))
    assert b"not covered by multi-factor sign-in" in page.content
    assert b"192.0.2.7" in page.content and b"username and password" in page.content


def test_creating_a_token_when_mfa_is_required_needs_a_verified_session(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    device = _totp(researcher)
    half = Client()
    half.force_login(researcher)  # never passed the second factor: logged out before the view is reached
    assert half.post(reverse("account:tokens"), {"action": "create"}).status_code == 302
    assert not Token.objects.exists()
    _password(client, "rita-researcher", REMOTE_ADDR="198.51.100.4")
    client.post(reverse("mfa:verify"), {"code": _code(device)}, REMOTE_ADDR="198.51.100.4")
    created = client.post(reverse("account:tokens"), {"action": "create"}, REMOTE_ADDR="198.51.100.4")
    assert created.status_code == 200
    token = Token.objects.get(user=researcher)
    assert created.context["new_token"] == token.key
    assert (token.origin.via, token.origin.ip, token.origin.mfa_verified) == ("session", "198.51.100.4", True)
    assert b"in a session verified by a second factor" in client.get(reverse("account:tokens")).content


def test_the_token_view_refuses_an_unverified_session_itself(settings, rf, researcher, study):
    """The middleware stops such a session first; the view does not rely on it."""
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.contrib.sessions.backends.db import SessionStore

    from annotation.accounts.views import TokensView

    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    request = rf.post(reverse("account:tokens"), {"action": "create"})
    request.user = researcher
    request.user.is_verified = lambda: False
    request.session = SessionStore()
    request._messages = FallbackStorage(request)
    assert TokensView.as_view()(request).status_code == 403
    assert not Token.objects.exists()


# --- Factors -------------------------------------------------------------------------------------


def test_removing_the_last_factor_is_refused_when_one_is_required(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    device = _totp(researcher)
    _password(client, "rita-researcher")
    client.post(reverse("mfa:verify"), {"code": _code(device)})
    assert client.post(reverse("mfa:remove"), {"device": f"totp:{device.pk}"}).status_code == 400
    assert client.post(reverse("mfa:remove"), {"device": "totp:x"}).status_code == 400
    assert client.post(reverse("mfa:remove"), {"device": "totp:999999"}).status_code == 404
    assert TOTPDevice.objects.filter(pk=device.pk).exists()


def test_another_persons_factor_cannot_be_removed(client, annotator, researcher):
    theirs = _totp(researcher)
    client.force_login(annotator)
    assert client.post(reverse("mfa:remove"), {"device": f"totp:{theirs.pk}"}).status_code == 404
    assert TOTPDevice.objects.filter(pk=theirs.pk).exists()


def test_adding_a_factor_needs_a_verified_session_once_one_exists(client, annotator):
    device = _totp(annotator)
    _password(client, "anna-annotator")
    client.post(reverse("mfa:verify"), {"code": _code(device)})
    assert client.get(reverse("mfa:totp")).status_code == 200  # verified: may add another
    begin = client.post(reverse("mfa:passkey-registration-begin"))
    assert begin.status_code == 200 and "challenge" in begin.json()


def test_the_passkey_endpoints_answer_4xx_without_a_pending_sign_in_or_with_garbage(client, annotator):
    for name in ("mfa:passkey-authentication-begin", "mfa:passkey-authentication-complete"):
        response = client.post(reverse(name), "{}", content_type="application/json")
        assert response.status_code == 400 and response.json()["code"] == "not_pending"
    _totp(annotator)
    _password(client, "anna-annotator")
    begin = client.post(reverse("mfa:passkey-authentication-begin"))
    assert begin.status_code == 200
    for body in ("{}", "[]", '{"id": 5, "rawId": "!!", "response": {}}', "not json"):
        client.post(reverse("mfa:passkey-authentication-begin"))
        response = client.post(reverse("mfa:passkey-authentication-complete"), body, content_type="application/json")
        assert 400 <= response.status_code < 500, (body, response.status_code, response.content)
    assert not _logged_in(client)


# --- The admin's login form, and the audit trail ----------------------------------------------------


def test_the_admins_own_login_form_does_not_skip_the_second_factor(client):
    root = get_user_model().objects.create_superuser("root-admin", password=factories.PASSWORD)
    _totp(root)
    client.post("/admin/login/", {"username": "root-admin", "password": factories.PASSWORD, "next": "/admin/"})
    response = client.get("/admin/")
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert not _logged_in(client)


def test_a_sign_in_with_a_code_is_in_the_audit_trail_without_the_secret(client, annotator):
    from annotation.models import AuditEvent

    device = _totp(annotator)
    _password(client, "anna-annotator")
    wrong = f"{(int(_code(device)) + 1) % 1_000_000:06d}"
    client.post(reverse("mfa:verify"), {"code": wrong})
    client.post(reverse("mfa:verify"), {"code": _code(device)})
    events = list(AuditEvent.objects.filter(table_name="otp_totp_totpdevice", row_pk=str(device.pk)).order_by("id"))
    assert [e.operation for e in events] == ["INSERT", "UPDATE", "UPDATE"]
    assert all(e.actor_id == annotator.pk for e in events)
    assert all("key" not in (e.new_row or {}) for e in events)
    failed, passed = events[1].new_row, events[2].new_row
    assert failed["throttling_failure_count"] == 1
    assert passed["throttling_failure_count"] == 0 and passed["last_used_at"] and passed["last_t"] > 0


def test_unicode_digits_are_not_a_code(client, annotator):
    device = _totp(annotator)
    arabic = _code(device).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))  # int() would read these
    _password(client, "anna-annotator")
    assert client.post(reverse("mfa:verify"), {"code": arabic}).status_code == 400
    assert client.post(reverse("mfa:remove"), {"device": "totp:²"}).status_code == 302  # not signed in: to login


class IdentityProviderBackend:
    """Stands for a single sign-on backend (OIDC, SAML): it checks no Concord password."""

    def authenticate(self, request, **credentials):
        return None

    def get_user(self, user_id):
        return get_user_model().objects.filter(pk=user_id).first()


def test_a_session_signed_in_by_an_identity_provider_is_not_asked_for_a_local_factor(settings, client, researcher,
                                                                                      study):  # fmt: skip
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    backend = f"{__name__}.IdentityProviderBackend"
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, backend]
    client.force_login(researcher, backend=backend)
    assert client.get("/help/").status_code == 200
    _totp(researcher)  # even with a local factor: the provider did the second factor
    other = Client()
    other.force_login(researcher, backend=backend)
    assert other.get("/help/").status_code == 200
    local = Client()
    local.force_login(researcher)  # the password backend: the local factor applies
    assert local.get("/help/").status_code == 302


def test_a_session_marked_as_signed_in_by_a_provider_is_not_asked_for_a_local_factor(settings, client, researcher,
                                                                                      study):  # fmt: skip
    """A single sign-on that logs people in through the password backend's session marks the session instead."""
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    client.force_login(researcher)
    assert client.get("/help/").status_code == 302  # to enrolment
    session = client.session
    session[signin.SIGNED_IN_BY_PROVIDER] = "oidc:test"
    session.save()
    assert client.get("/help/").status_code == 200
