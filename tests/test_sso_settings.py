"""Single sign-on settings (concord/sso_settings.py) and the switch that turns local passwords off.

The providers come from CONCORD_OIDC_PROVIDERS / CONCORD_SAML_IDPS (JSON) and refuse bad values loudly, as every
setting does. With CONCORD_LOCAL_PASSWORDS=false the login page offers only the providers, and a password is
refused wherever it is posted (login page 403, the admin's login, authenticate()); the password and invitation
pages are gone. CONCORD_PASSWORD_BREAK_GLASS keeps superusers' (and only their) password sign-in.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from concord import sso_settings
from tests import factories
from tests.test_settings import _load_settings

OIDC = {
    "entra": {
        "label": "Microsoft",
        "issuer": "https://login.microsoftonline.com/tenant/v2.0",
        "client_id": "cid",
        "client_secret": "secret",
        "authorization_endpoint": "https://login.microsoftonline.com/tenant/oauth2/v2.0/authorize",
        "token_endpoint": "https://login.microsoftonline.com/tenant/oauth2/v2.0/token",
        "jwks_uri": "https://login.microsoftonline.com/tenant/discovery/v2.0/keys",
    },
    "okta": {
        "label": "Okta",
        "issuer": "https://example.okta.com",
        "client_id": "cid2",
        "client_secret": "secret2",
        "authorization_endpoint": "https://example.okta.com/oauth2/v1/authorize",
        "token_endpoint": "https://example.okta.com/oauth2/v1/token",
        "jwks_uri": "https://example.okta.com/oauth2/v1/keys",
        "extra_params": {"prompt": "login"},
    },
}


def _oidc(**changes) -> str:
    entry = {**OIDC["entra"], **changes}
    return json.dumps({"entra": {k: v for k, v in entry.items() if v is not None}})


def test_several_providers_are_read():
    providers = sso_settings.oidc_providers(json.dumps(OIDC), production=True)
    assert list(providers) == ["entra", "okta"]
    assert providers["okta"].extra_params == {"prompt": "login"} and providers["entra"].pkce


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "must be a JSON object"),
        (json.dumps({"Bad Name": OIDC["entra"]}), "provider name 'Bad Name'"),
        (_oidc(colour="blue"), "unknown key(s) ['colour']"),
        (_oidc(jwks_uri=None), "missing ['jwks_uri']"),
        (_oidc(pkce="yes"), "pkce must be true or false"),
        (_oidc(leeway_seconds=-1), "leeway_seconds must be a non-negative integer"),
        (_oidc(algorithm="none"), "algorithm must be one of"),
        (_oidc(algorithm="HS256"), "algorithm must be one of"),
        (_oidc(scopes="email"), "scopes must include openid"),
        (_oidc(token_endpoint="http://login.example/token"), "token_endpoint must use https:// in production"),
        (_oidc(issuer="login.example"), "issuer must be an http(s) URL"),
    ],
)
def test_bad_oidc_settings_stop_the_process(raw, words):
    with pytest.raises(ImproperlyConfigured) as caught:
        sso_settings.oidc_providers(raw, production=True)
    assert "CONCORD_OIDC_PROVIDERS" in str(caught.value) and words in str(caught.value)


def test_bad_saml_settings_stop_the_process(tmp_path):
    base = {"label": "IdP", "entity_id": "https://idp.example/"}
    cases = [
        ({**base}, "exactly one of metadata_file and metadata_url"),
        ({**base, "metadata_file": "/x", "metadata_url": "https://idp.example/md"}, "exactly one of"),
        ({**base, "metadata_file": str(tmp_path / "missing.xml")}, "is not a file"),
        ({**base, "metadata_url": "http://idp.example/md"}, "must use https:// in production"),
        ({**base, "metadata_url": "https://idp.example/md", "subject": ""}, "subject must be"),
    ]
    for entry, words in cases:
        with pytest.raises(ImproperlyConfigured) as caught:
            sso_settings.saml_idps(json.dumps({"idp": entry}), production=True)
        assert words in str(caught.value), (entry, caught.value)
    good = sso_settings.saml_idps(
        json.dumps({"idp": {**base, "metadata_url": "https://idp.example/md"}}), production=True
    )
    assert good["idp"].subject == "nameid"


def test_settings_refuse_what_leaves_no_way_in(tmp_path):
    result = _load_settings(CONCORD_VAR_DIR=str(tmp_path), CONCORD_LOCAL_PASSWORDS="false")
    assert result.returncode != 0 and "leaves no way to sign in" in result.stderr
    saml = json.dumps({"idp": {"label": "IdP", "entity_id": "https://idp.example/", "metadata_url": "https://x/md"}})
    result = _load_settings(CONCORD_VAR_DIR=str(tmp_path), CONCORD_SAML_IDPS=saml)
    assert result.returncode != 0 and "CONCORD_SAML_SP_ENTITY_ID must be set" in result.stderr
    result = _load_settings(
        CONCORD_VAR_DIR=str(tmp_path),
        CONCORD_OIDC_PROVIDERS=json.dumps(OIDC),
        CONCORD_SAML_IDPS=json.dumps({"okta": json.loads(saml)["idp"]}),
        CONCORD_SAML_SP_ENTITY_ID="https://concord.example/sp",
    )
    assert result.returncode != 0 and "each provider name must be unique" in result.stderr
    result = _load_settings(
        CONCORD_VAR_DIR=str(tmp_path), CONCORD_LOCAL_PASSWORDS="false", CONCORD_OIDC_PROVIDERS=json.dumps(OIDC)
    )
    assert result.returncode == 0, result.stderr


# --- The login page and local passwords --------------------------------------------------------------------------


@pytest.fixture
def providers_configured(settings):
    settings.SSO_OIDC_PROVIDERS = sso_settings.oidc_providers(json.dumps(OIDC), production=False)
    return settings


@pytest.mark.django_db
def test_login_page_offers_each_provider_and_the_password_form(providers_configured):
    page = Client().get("/accounts/login/?next=/console/").content.decode()
    assert 'href="/sso/oidc/entra/login/?next=/console/">Sign in with Microsoft</a>' in page
    assert 'href="/sso/oidc/okta/login/?next=/console/">Sign in with Okta</a>' in page
    assert 'id="id_password"' in page


@pytest.mark.django_db
def test_without_providers_the_login_page_is_unchanged():
    page = Client().get("/accounts/login/").content.decode()
    assert "Sign in with" not in page and 'id="id_password"' in page


@pytest.mark.django_db
def test_local_passwords_off_refuses_every_password(providers_configured):
    providers_configured.LOCAL_PASSWORDS = False
    user = factories.make_user("clinician")
    client = Client()
    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with Microsoft" in page and 'id="id_password"' not in page
    response = client.post("/accounts/login/", {"username": "clinician", "password": factories.PASSWORD})
    assert response.status_code == 403 and b"Password sign-in is switched off" in response.content
    assert "_auth_user_id" not in client.session
    admin = get_user_model().objects.create_superuser("root", password=factories.PASSWORD)
    client.post("/admin/login/", {"username": "root", "password": factories.PASSWORD})
    assert "_auth_user_id" not in client.session
    assert authenticate(username="clinician", password=factories.PASSWORD) is None
    assert authenticate(username="root", password=factories.PASSWORD) is None
    client.force_login(user)
    assert client.get("/accounts/password/").status_code == 403
    client.force_login(admin)
    assert client.get("/accounts/password/").status_code == 403
    assert Client().get("/accounts/invitation/MQ/set-password/").status_code == 403


@pytest.mark.django_db
def test_break_glass_lets_superusers_only_sign_in_with_a_password(providers_configured):
    providers_configured.LOCAL_PASSWORDS = False
    providers_configured.PASSWORD_BREAK_GLASS = True
    factories.make_user("clinician")
    get_user_model().objects.create_superuser("root", password=factories.PASSWORD)
    client = Client()
    page = client.get("/accounts/login/").content.decode()
    assert 'id="break-glass-note"' in page and 'id="id_password"' in page
    response = client.post("/accounts/login/", {"username": "clinician", "password": factories.PASSWORD})
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    response = client.post("/accounts/login/", {"username": "root", "password": factories.PASSWORD})
    assert response.status_code == 302 and "_auth_user_id" in client.session
    assert client.get("/accounts/password/").status_code == 200
