"""Multi-factor sign-in in a real browser (annotation/mfa, docs/guide/mfa.md).

* A researcher who must use a second factor signs in with the password, is sent to enrolment, sets up an
  authenticator app from the secret the page shows (the test computes the codes from it, as the app would),
  sees the recovery codes once, and signs in again with a code.
* A person registers a passkey with Chromium's virtual authenticator (CDP ``WebAuthn``: CTAP2, internal,
  resident keys, user verification) and signs in with it after the password.

Every wait is on the page (an element, a URL), never on a clock.
"""

from __future__ import annotations

import re
import time
from base64 import b32decode

import pytest
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from annotation.mfa import signin
from tests import factories

pytestmark = pytest.mark.e2e


def _code(secret: str, *, step: int | None = None) -> str:
    """The app's code now, or for time step ``step`` (30-second steps since the epoch)."""
    totp = TOTP(b32decode(secret), 30, 0, 6, 0)
    totp.time = time.time() if step is None else step * 30 + 1
    return f"{totp.token():06d}"


@pytest.fixture
def mfa_page(browser_context):
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors


def _password_step(page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", factories.PASSWORD)
    page.click("button[type=submit].primary")


def _log_out(page) -> None:
    page.click("header form button:has-text('Log out')")
    page.wait_for_selector("#id_username")


def test_a_required_researcher_enrols_an_authenticator_app_and_signs_in_with_it(
    live_server, mfa_page, settings, researcher, study
):
    settings.CONCORD_MFA_REQUIRED = frozenset({"researchers"})
    # django-otp's per-device backoff would refuse even the right code for a second after the replayed one
    # (tests/test_mfa.py tests it); here the right code must be judged on the code alone. The replayed code is
    # not tried as a recovery code (not shaped like one), so the recovery codes keep django-otp's backoff.
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    page, errors = mfa_page
    base = live_server.url

    _password_step(page, base, "rita-researcher")
    page.wait_for_selector("#mfa-required-notice")  # sent to enrolment, not to the site
    page.goto(f"{base}/help/")
    page.wait_for_selector("#mfa-required-notice")  # every other page sends them back
    assert "/accounts/mfa/" in page.url

    page.click("#totp-add")
    page.wait_for_selector("#totp-qr svg")
    secret = page.inner_text("#totp-secret").strip()
    assert re.fullmatch(r"[A-Z2-7]+=*", secret)
    page.fill("#id_code", _code(secret))
    page.click("#totp-confirm-form button")
    page.wait_for_selector("#recovery-codes li")
    codes = [c.strip() for c in page.locator("#recovery-codes code").all_inner_texts()]
    assert len(codes) == settings.MFA_RECOVERY_CODES
    page.click("#recovery-done")
    page.wait_for_selector("#totp-devices li")
    assert TOTPDevice.objects.filter(user=researcher, confirmed=True).count() == 1

    page.goto(f"{base}/help/")
    page.wait_for_selector("header .who")  # the site is open now
    assert "/help/" in page.url

    _log_out(page)
    _password_step(page, base, "rita-researcher")
    page.wait_for_selector("#mfa-code-form")
    # The enrolment used the code of one time step (the device's last_t): it (and any older one) is refused, the
    # next step's is accepted. The codes are those of these steps, not of the clock: the device's tolerance is
    # widened to the steps a slow machine has crossed since the enrolment (and a few more for the pages still to
    # load), so the next step's code is inside it however long that took.
    device = TOTPDevice.objects.get(user=researcher, confirmed=True)
    crossed = int(time.time() // 30) - device.last_t
    TOTPDevice.objects.filter(pk=device.pk).update(tolerance=max(1, crossed + 10))
    page.fill("#id_code", _code(secret, step=device.last_t))
    page.click("#mfa-code-form button")
    page.wait_for_selector("#mfa-error")
    page.fill("#id_code", _code(secret, step=device.last_t + 1))
    page.click("#mfa-code-form button")
    page.wait_for_selector("header .who")
    assert page.inner_text("header .who") == "rita-researcher"

    # A recovery code signs in once.
    _log_out(page)
    _password_step(page, base, "rita-researcher")
    page.wait_for_selector("#mfa-code-form")
    page.fill("#id_code", codes[0])
    page.click("#mfa-code-form button")
    page.wait_for_selector("header .who")
    assert signin.recovery_codes_left(researcher) == len(codes) - 1
    assert not [e for e in errors if "Content Security Policy" in e or "Refused" in e], errors


def test_a_passkey_is_registered_and_signs_in_with_chromiums_virtual_authenticator(
    live_server, mfa_page, browser_context, annotator
):
    page, errors = mfa_page
    base = live_server.url
    assert base.startswith("http://localhost:"), "WebAuthn needs a domain (localhost), not an IP address"
    cdp = browser_context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
            }
        },
    )

    _password_step(page, base, "anna-annotator")  # no factor yet: the password signs in
    page.wait_for_selector("header .who")
    page.goto(f"{base}/accounts/mfa/")
    page.click("#passkey-register-button")
    page.wait_for_selector("#passkeys li")  # the page reloads listing the new passkey
    credential = WebAuthnCredential.objects.get(user=annotator)
    assert credential.confirmed
    page.click("#recovery-form button")  # a verified session (the registration verified it) may make codes
    page.wait_for_selector("#recovery-codes li")

    _log_out(page)
    _password_step(page, base, "anna-annotator")
    page.wait_for_selector("#passkey-verification-button")
    assert "/accounts/mfa/verify/" in page.url
    page.click("#passkey-verification-button")
    page.wait_for_selector("header .who")
    assert page.inner_text("header .who") == "anna-annotator"
    credential.refresh_from_db()
    assert credential.last_used_at is not None
    assert not errors, errors
