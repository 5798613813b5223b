"""Single sign-on and multi-factor sign-in together: a session signed in through an identity provider relies on the
provider's second factor, so Concord's own (annotation.mfa, for password sessions) is not asked of it, even for a
person whom CONCORD_MFA_REQUIRED covers; the same person signing in with a password is sent to enrolment."""

from __future__ import annotations

from django.contrib.sessions.middleware import SessionMiddleware
from django.test import RequestFactory
from django.urls import reverse

from annotation.sso.identity import sign_in
from tests import factories


def _sso_session(client, user) -> None:
    request = RequestFactory().get("/")
    SessionMiddleware(lambda r: None).process_request(request)
    sign_in(request, user, protocol="oidc", provider="hospital")
    request.session.save()
    client.cookies["sessionid"] = request.session.session_key


def test_an_sso_session_of_a_required_researcher_is_not_sent_to_local_enrolment(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    _sso_session(client, researcher)
    page = client.get("/help/")
    assert page.status_code == 200, page.get("Location")


def test_the_same_researcher_signing_in_with_a_password_is_sent_to_enrolment(settings, client, researcher, study):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    client.post(reverse("login"), {"username": researcher.username, "password": factories.PASSWORD})
    page = client.get("/help/")
    assert page.status_code == 302 and "/accounts/mfa/" in page["Location"]
