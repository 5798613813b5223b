"""Single sign-on in a real browser: the login page's "Sign in with ..." buttons, the provider's own sign-in page,
and back on a Concord page as the provider's user. The providers are real, each in its own process (tests/sso):
django-oauth-toolkit's OpenID Connect provider and pysaml2's SAML IdP (its metadata read from its URL here).

The browser goes to Concord at 127.0.0.1 (not localhost): the OIDC provider accepts a loopback redirect URI on
any port (RFC 8252), and the IdP's form POST back to Concord is then a same-site request."""

from __future__ import annotations

import json
import re

import pytest

from annotation.sso.models import SsoIdentity
from concord import sso_settings
from tests.sso import providers
from tests.waiting import SLOW_TEST_TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(SLOW_TEST_TIMEOUT)]


@pytest.fixture
def concord(live_server, settings, oidc_op, saml_idp) -> str:
    base = live_server.url.replace("localhost", "127.0.0.1")
    settings.SSO_OIDC_PROVIDERS = sso_settings.oidc_providers(
        json.dumps(oidc_op.concord_settings(("good",))), production=False
    )
    settings.SSO_SAML_IDPS = sso_settings.saml_idps(
        json.dumps(saml_idp.concord_settings(use_url=True)), production=False
    )
    settings.SSO_SAML_SP_ENTITY_ID = f"{base}/sso/saml/metadata/"
    return base


def test_sign_in_with_openid_connect_in_a_browser(concord, browser_context):
    page = browser_context.new_page()
    page.goto(f"{concord}/accounts/login/")
    page.get_by_role("link", name="Sign in with Hospital (OIDC)").click()
    page.locator("#provider-submit").wait_for()
    page.fill("#id_username", providers.OIDC_USER["username"])
    page.fill("#id_password", providers.OIDC_USER["password"])
    page.click("#provider-submit")
    page.wait_for_url(re.compile(re.escape(concord) + r"/$"))
    assert page.locator(".who").inner_text() == "ada.oidc"
    identity = SsoIdentity.objects.get()
    assert (identity.protocol, identity.user.username) == ("oidc", "ada.oidc")
    assert not identity.user.study_roles.exists()


def test_sign_in_with_saml_in_a_browser(concord, browser_context):
    page = browser_context.new_page()
    page.goto(f"{concord}/accounts/login/")
    page.get_by_role("link", name="Sign in with Hospital (SAML)").click()
    page.locator("#idp-submit").wait_for()
    page.fill("#username", "bob.saml")
    page.fill("#password", providers.SAML_USERS["bob.saml"]["password"])
    page.click("#idp-submit")  # the IdP answers with its self-submitting form to Concord's ACS
    page.wait_for_url(re.compile(re.escape(concord) + r"/$"))
    assert page.locator(".who").inner_text() == "bob.saml"
    identity = SsoIdentity.objects.get()
    assert (identity.protocol, identity.subject) == ("saml", "bob-persistent-7f3a")


def test_a_refused_sign_in_shows_its_page_in_the_browser(concord, browser_context, settings, oidc_op):
    settings.SSO_OIDC_PROVIDERS = sso_settings.oidc_providers(
        json.dumps(oidc_op.concord_settings(("expired",))), production=False
    )
    page = browser_context.new_page()
    page.goto(f"{concord}/accounts/login/")
    page.get_by_role("link", name="Sign in with Test expired").click()
    page.fill("#id_username", providers.OIDC_USER["username"])
    page.fill("#id_password", providers.OIDC_USER["password"])
    page.click("#provider-submit")
    page.locator("#sso-error").wait_for()
    assert "has expired" in page.locator("#sso-error").inner_text()
    assert page.locator(".who").count() == 0
    assert not SsoIdentity.objects.exists()


def test_the_single_sign_on_pages_pass_axe(concord, browser_context, settings):
    """The login page with providers only (passwords off), the refusal page and the passwords-off page: WCAG 2.1
    A/AA as every other page (tests/e2e/test_accessibility_browser.py)."""
    from axe_playwright_python.sync_playwright import Axe

    from tests.e2e.test_accessibility_browser import WCAG_21_AA

    settings.LOCAL_PASSWORDS = False
    page = browser_context.new_page()
    violations = []
    for path, marker in (
        ("/accounts/login/", "a.button"),
        ("/sso/oidc/good/callback/?state=nothing&code=x", "#sso-error"),
        ("/accounts/invitation/MQ/x-y/", "#passwords-off"),
    ):
        page.goto(concord + path)
        page.locator(marker).first.wait_for()
        for violation in Axe().run(page, options=WCAG_21_AA).response["violations"]:
            violations.append(f"{path}: {violation['id']} ({violation['impact']})")
    assert page.locator("input[type=password]").count() == 0
    page.goto(concord + "/accounts/login/")
    assert page.locator("input[type=password]").count() == 0
    assert page.get_by_role("link", name="Sign in with Hospital (SAML)").count() == 1
    assert violations == []
