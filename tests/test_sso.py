"""Single sign-on against real identity providers, each started by these tests in a process of its own.

The OpenID Connect provider is django-oauth-toolkit (tests/sso/oidc_provider) and the SAML IdP is pysaml2's own
(tests/sso/saml_idp): Concord talks to them over HTTP exactly as to Entra ID or Okta (token endpoint, JWKS,
metadata). Concord is driven through Django's test client, the providers through httpx, so each refusal is
produced at the protocol level by the provider itself: an id_token that expired, names another audience or
issuer, is signed by a key that is not the provider's, carries another nonce; a SAML assertion changed after
signing, expired, addressed to another service, unsigned, replayed. Each refusal: a clear page (never a 5xx), no
session, no account and no identity created.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlencode, urlparse, urlunparse

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import AuditEvent
from annotation.sso.models import SsoIdentity
from concord import sso_settings
from tests.sso import providers
from tests.waiting import SLOW_TEST_TIMEOUT

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


@pytest.fixture
def sso(settings, oidc_op, saml_idp):
    settings.SSO_OIDC_PROVIDERS = sso_settings.oidc_providers(json.dumps(oidc_op.concord_settings()), production=False)
    settings.SSO_SAML_IDPS = sso_settings.saml_idps(json.dumps(saml_idp.concord_settings()), production=False)
    settings.SSO_SAML_SP_ENTITY_ID = "http://testserver/sso/saml/metadata/"
    return settings


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _nothing_created(before: tuple[int, int], client: Client) -> None:
    assert (get_user_model().objects.count(), SsoIdentity.objects.count()) == before
    assert not _signed_in(client)


def _counts() -> tuple[int, int]:
    return get_user_model().objects.count(), SsoIdentity.objects.count()


def _refused(response, status: int, words: str) -> None:
    assert response.status_code == status, (response.status_code, response.content[:400])
    text = response.content.decode()
    assert "Sign-in refused" in text and words in text, text[:1500]


# --- OpenID Connect ---------------------------------------------------------------------------------------------


def _oidc_callback(client: Client, op: providers.OidcProviderInfo, provider: str) -> str:
    """Start a sign-in at Concord, sign in at the provider; the URL the provider sends the browser back to."""
    start = client.get(f"/sso/oidc/{provider}/login/")
    assert start.status_code == 302, start.content[:300]
    with httpx.Client(base_url=op.running.base) as browser:
        to_login = browser.get(start["Location"])
        assert to_login.status_code == 302, to_login.text[:300]
        login_url = to_login.headers["location"]
        browser.get(login_url).raise_for_status()
        next_url = parse_qs(urlparse(login_url).query)["next"][0]
        signed_in = browser.post(
            login_url,
            data={
                "username": providers.OIDC_USER["username"],
                "password": providers.OIDC_USER["password"],
                "next": next_url,
                "csrfmiddlewaretoken": browser.cookies["provider_csrftoken"],
            },
        )
        assert signed_in.status_code == 302, signed_in.text[:500]
        back = browser.get(signed_in.headers["location"])
        assert back.status_code == 302, back.text[:500]
    callback = back.headers["location"]
    assert callback.startswith(f"http://testserver/sso/oidc/{provider}/callback/?"), callback
    return callback


def test_oidc_sign_in_creates_a_plain_account_matched_by_issuer_and_subject(sso, oidc_op):
    client = Client()
    response = client.get(_oidc_callback(client, oidc_op, "good"))
    assert response.status_code == 302 and response["Location"] == "/", response.content[:300]
    assert _signed_in(client)
    identity = SsoIdentity.objects.get()
    assert (identity.protocol, identity.issuer, identity.provider) == ("oidc", oidc_op.issuer, "good")
    user = identity.user
    assert int(client.session["_auth_user_id"]) == user.pk
    assert (user.username, user.email, user.first_name) == ("ada.oidc", providers.OIDC_USER["email"], "Ada")
    assert not user.has_usable_password() and not user.is_staff and not user.is_superuser
    assert not user.study_roles.exists()
    home = client.get("/")
    assert home.status_code == 200 and b"ada.oidc" in home.content

    # A second sign-in finds the same account through (iss, sub).
    again = Client()
    assert again.get(_oidc_callback(again, oidc_op, "good")).status_code == 302
    assert int(again.session["_auth_user_id"]) == user.pk
    assert SsoIdentity.objects.count() == 1 and get_user_model().objects.count() == 1
    # The audit trail holds the identity's creation and one update (last_login_at) per sign-in.
    events = AuditEvent.objects.filter(table_name="sso_identity", row_pk=str(identity.pk))
    assert sorted(events.values_list("operation", flat=True)) == ["INSERT", "UPDATE", "UPDATE"]


def test_a_deactivated_account_is_refused_whatever_the_provider_says(sso, oidc_op):
    client = Client()
    assert client.get(_oidc_callback(client, oidc_op, "good")).status_code == 302
    get_user_model().objects.filter(username="ada.oidc").update(is_active=False)
    again = Client()
    _refused(again.get(_oidc_callback(again, oidc_op, "good")), 403, "deactivated")
    assert not _signed_in(again)


def test_oidc_never_matches_an_existing_account_by_email(sso, oidc_op):
    local = get_user_model().objects.create_user("ada", email=providers.OIDC_USER["email"], password="x" * 12)
    client = Client()
    assert client.get(_oidc_callback(client, oidc_op, "good")).status_code == 302
    assert int(client.session["_auth_user_id"]) != local.pk
    assert SsoIdentity.objects.get().user.username == "ada.oidc"


@pytest.mark.parametrize(
    ("provider", "words"),
    [
        ("expired", "has expired"),
        ("wrongaud", "issued for another application"),
        ("wrongiss", "names another issuer"),
        ("badsig", "signature is not valid"),
        ("badnonce", "did not match this sign-in"),
    ],
)
def test_oidc_refuses_a_faulty_id_token(sso, oidc_op, provider, words):
    client = Client()
    callback = _oidc_callback(client, oidc_op, provider)
    before = _counts()
    _refused(client.get(callback), 403, words)
    _nothing_created(before, client)


def test_oidc_refuses_a_replayed_callback(sso, oidc_op):
    client = Client()
    callback = _oidc_callback(client, oidc_op, "good")
    assert client.get(callback).status_code == 302
    signed_in_as = client.session["_auth_user_id"]
    before = _counts()
    # The same browser, same session: its state was used up by the first callback (Concord refuses before the
    # provider is asked; the provider would refuse the used code too, with another answer).
    _refused(client.get(callback), 400, "already used")
    assert client.session["_auth_user_id"] == signed_in_as
    client.post("/accounts/logout/")
    assert not _signed_in(client)
    _refused(client.get(callback), 400, "already used")
    # Another browser (an attacker holding the URL): no state of its own.
    stranger = Client()
    _refused(stranger.get(callback), 400, "not started in this browser")
    _nothing_created(before, client)
    assert not _signed_in(stranger)


def test_oidc_refuses_a_mismatched_state(sso, oidc_op):
    client = Client()
    callback = urlparse(_oidc_callback(client, oidc_op, "good"))
    query = parse_qs(callback.query)
    query["state"] = ["x" + query["state"][0][1:]]
    before = _counts()
    tampered = urlunparse(callback._replace(query=urlencode({k: v[0] for k, v in query.items()})))
    _refused(client.get(tampered), 400, "not started in this browser")
    _nothing_created(before, client)


def test_oidc_refuses_a_state_started_for_another_provider(sso, oidc_op):
    client = Client()
    callback = _oidc_callback(client, oidc_op, "good").replace("/sso/oidc/good/", "/sso/oidc/expired/")
    before = _counts()
    _refused(client.get(callback), 400, "started for another provider")
    _nothing_created(before, client)


def test_oidc_provider_error_is_a_clear_page(sso):
    client = Client()
    client.get("/sso/oidc/good/login/")
    state = next(iter(client.session["oidc_states"]))
    _refused(client.get(f"/sso/oidc/good/callback/?error=access_denied&state={state}"), 400, "did not sign you in")
    assert not _signed_in(client)


def test_unknown_provider_is_404(sso):
    client = Client()
    for path in ("/sso/oidc/nobody/login/", "/sso/oidc/nobody/callback/", "/sso/saml/nobody/login/"):
        assert client.get(path).status_code == 404
    assert client.post("/sso/saml/nobody/acs/", {"SAMLResponse": "x"}).status_code == 404


# --- SAML 2.0 ---------------------------------------------------------------------------------------------------

_FIELD = re.compile(r'<input[^>]*name="(?P<name>[^"]+)"[^>]*value="(?P<value>[^"]*)"', re.I)


def _fields(page: str) -> dict[str, str]:
    return {m["name"]: html.unescape(m["value"]) for m in _FIELD.finditer(page)}


def _saml_post(client: Client, idp: providers.SamlIdpInfo, mode: str = "good") -> tuple[str, dict[str, str]]:
    """Start a sign-in at Concord, sign in at the IdP (``mode``: the IdP's fault); the ACS path and the form."""
    start = client.get("/sso/saml/hospital-saml/login/")
    assert start.status_code == 302, start.content[:300]
    with httpx.Client(base_url=idp.running.base) as browser:
        page = browser.get(start["Location"])
        assert page.status_code == 200, page.text[:500]
        form = _fields(page.text)
        form.update(mode=mode, username="bob.saml", password=providers.SAML_USERS["bob.saml"]["password"])
        answer = browser.post("/sso/login", data=form)
        assert answer.status_code == 200, answer.text[:500]
    action = html.unescape(re.search(r'<form[^>]*action="([^"]+)"', answer.text)[1])
    assert action == "http://testserver/sso/saml/hospital-saml/acs/", action
    fields = _fields(answer.text)
    assert "SAMLResponse" in fields
    return urlparse(action).path, fields


def test_saml_sign_in_creates_a_plain_account_matched_by_persistent_nameid(sso, saml_idp):
    client = Client()
    acs, form = _saml_post(client, saml_idp)
    response = client.post(acs, form)
    assert response.status_code == 302 and response["Location"] == "/", response.content[:500]
    identity = SsoIdentity.objects.get()
    assert (identity.protocol, identity.issuer, identity.subject) == ("saml", saml_idp.entity_id, "bob-persistent-7f3a")
    user = identity.user
    assert int(client.session["_auth_user_id"]) == user.pk
    assert (user.username, user.email, user.last_name) == ("bob.saml", "bob@hospital.example", "Saml")
    assert not user.has_usable_password() and not user.is_staff and not user.study_roles.exists()
    again = Client()
    acs, form = _saml_post(again, saml_idp)
    assert again.post(acs, form).status_code == 302
    assert int(again.session["_auth_user_id"]) == user.pk and SsoIdentity.objects.count() == 1


def test_saml_metadata_url_is_read_too(sso, saml_idp):
    sso.SSO_SAML_IDPS = sso_settings.saml_idps(json.dumps(saml_idp.concord_settings(use_url=True)), production=False)
    client = Client()
    acs, form = _saml_post(client, saml_idp)
    assert client.post(acs, form).status_code == 302 and _signed_in(client)


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("tamper", "not correctly signed"),
        ("tamper-nameid", "not correctly signed"),
        ("unsigned", "not correctly signed"),
        ("expired", "has expired"),
        ("wrongaud", "issued for another service"),
        ("transient", "no persistent NameID"),
    ],
)
def test_saml_refuses_a_faulty_assertion(sso, saml_idp, mode, words):
    client = Client()
    acs, form = _saml_post(client, saml_idp, mode)
    before = _counts()
    _refused(client.post(acs, form), 403, words)
    _nothing_created(before, client)


def test_saml_refuses_a_replayed_assertion(sso, saml_idp):
    client = Client()
    acs, form = _saml_post(client, saml_idp)
    cookie = client.cookies["concord_saml_request"].value
    assert client.post(acs, form).status_code == 302
    client.post("/accounts/logout/")
    before = _counts()
    # The same browser again: the request cookie went with the first answer.
    _refused(client.post(acs, form), 400, "not started in this browser")
    # Someone who captured both the response and the cookie: the request it answers is used up.
    thief = Client()
    thief.cookies["concord_saml_request"] = cookie
    _refused(thief.post(acs, form), 403, "already completed")
    # A new sign-in started in this browser: the old response answers another request.
    _saml_post(client, saml_idp)  # leaves a fresh outstanding request and cookie
    _refused(client.post(acs, form), 403, "does not answer this sign-in")
    _nothing_created(before, client)
    assert not _signed_in(thief)


def test_saml_acs_without_a_response_or_with_garbage_is_a_clear_page(sso, saml_idp):
    client = Client()
    _refused(client.post("/sso/saml/hospital-saml/acs/", {}), 400, "No SAML response")
    client.get("/sso/saml/hospital-saml/login/")
    _refused(client.post("/sso/saml/hospital-saml/acs/", {"SAMLResponse": "bm90IHhtbA=="}), 403, "could not")
    assert not _signed_in(client)


def test_saml_sp_metadata_names_the_entity_id_and_each_acs(sso):
    response = Client().get("/sso/saml/metadata/")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'entityID="http://testserver/sso/saml/metadata/"' in text
    assert "http://testserver/sso/saml/hospital-saml/acs/" in text


# --- Hostile input: every single sign-on route, every method, junk parameters -----------------------------------

JUNK = [
    {},
    {"code": "x", "state": "y"},
    {"code": "", "state": ""},
    {"error": "<script>alert(1)</script>", "state": "y"},
    {"SAMLResponse": "not base64 !!", "RelayState": "z"},
    {"SAMLResponse": "PD94bWwgdmVyc2lvbj0iMS4wIj8+PCFET0NUWVBFIGE+", "RelayState": "<b>"},  # a DOCTYPE: refused
    {"SAMLResponse": "A" * 100_000},
    {"next": "https://evil.example/"},
]


def test_no_single_sign_on_route_answers_a_server_error(sso):
    from django.urls import get_resolver

    from tests import access_world

    routes = [route for route, _ in access_world.routes(get_resolver().url_patterns) if route.startswith("sso/")]
    assert len(routes) == 5, routes
    sent = 0
    for anonymous in (True, False):
        client = Client()
        if not anonymous:
            client.force_login(get_user_model().objects.create_user(f"someone-{sent}"))
        for route in routes:
            for name in ("good", "hospital-saml", "no-such-thing"):
                path = "/" + route.replace("<slug:provider>", name)
                for data in JUNK:
                    for method in ("get", "post", "put", "patch", "delete"):
                        response = getattr(client, method)(path, data)
                        sent += 1
                        assert response.status_code < 500, (method, path, data, response.status_code)
                        if response.status_code == 302:
                            assert not response["Location"].startswith("https://evil.example"), (path, data)
    assert sent > 1000
