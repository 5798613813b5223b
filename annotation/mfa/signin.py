"""Multi-factor sign-in: who must use a second factor, the step after the password, checking codes.

The rules (docs/guide/mfa.md):

* A second factor is a confirmed TOTP device (an authenticator app) or a passkey (WebAuthn credential).
  Recovery codes (django-otp static tokens, each usable once) stand in for a lost factor but are not one.
* ``CONCORD_MFA_REQUIRED`` names who must have one: researchers (a researcher role in any study),
  admins (is_staff or is_superuser), or everyone. Whoever has a factor uses it at every sign-in, required or not.
* The password alone does not log a person with a factor in: ``second_step`` (registered with
  ``concord.auth.ThrottledLoginView``) keeps who passed the password in the session for
  ``MFA_PENDING_SECONDS`` and sends them to the second step; only a correct code or passkey logs them in
  (Django's ``login``, then ``django_otp.login``, which marks the session verified).
* Wrong codes count against the same (username, address) pair as wrong passwords (concord/auth.py): at
  ``LOGIN_FAILURE_LIMIT`` the pair is locked out of both steps until the window ends; the count is cleared
  only by a complete sign-in. django-otp adds its own backoff per device.
* A TOTP code is accepted once: the device records the last time step used and refuses it and every older
  one (django-otp's ``last_t``); the device row is locked while a code is checked, so two requests with one
  code cannot both pass.
* A person who must use a second factor and has none is sent to enrolment before any other page
  (``annotation.mfa.middleware``); a session without a verified factor of a person who has one is logged out.
* API tokens (``Authorization: Token``) are not covered; a person who uses MFA gets one only from the token
  page in a verified session, never from ``/api/token/`` with a password.
"""

from __future__ import annotations

import re
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.contrib.auth import login as auth_login
from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from django.utils.crypto import constant_time_compare
from django.utils.http import url_has_allowed_host_and_scheme
from django_otp import login as otp_login
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from annotation.models import Role, StudyRole

PENDING = "concord_mfa_pending"
# The session's user needs no second factor (none required, none enrolled): set at login, so that pages and the
# API pay no query for it (annotation.mfa.middleware).
EXEMPT = "concord_mfa_exempt_for"
RECOVERY_DEVICE_NAME = "Recovery codes"


def mfa_required(user: Any) -> bool:
    """Whether ``CONCORD_MFA_REQUIRED`` requires a second factor of ``user``."""
    required = settings.CONCORD_MFA_REQUIRED
    if not required or not getattr(user, "is_authenticated", False):
        return False
    if "everyone" in required:
        return True
    if "admins" in required and (user.is_staff or user.is_superuser):
        return True
    return "researchers" in required and StudyRole.objects.filter(user=user, role=Role.RESEARCHER).exists()


def factors(user: Any) -> list[Device]:
    """The person's confirmed second factors: TOTP devices and passkeys (not recovery codes)."""
    return [
        *TOTPDevice.objects.filter(user=user, confirmed=True).order_by("pk"),
        *WebAuthnCredential.objects.filter(user=user, confirmed=True).order_by("pk"),
    ]


def has_factor(user: Any) -> bool:
    return (
        TOTPDevice.objects.filter(user=user, confirmed=True).exists()
        or WebAuthnCredential.objects.filter(user=user, confirmed=True).exists()
    )


def has_passkey(user: Any) -> bool:
    return WebAuthnCredential.objects.filter(user=user, confirmed=True).exists()


def mfa_applies(user: Any) -> bool:
    """Whether ``user`` signs in with a second factor: it is required of them, or they have one."""
    return mfa_required(user) or has_factor(user)


def session_verified(request: HttpRequest) -> bool:
    user = request.user
    return bool(getattr(user, "is_verified", None) and user.is_verified())


# Set by a single sign-on after its login() (e.g. "oidc:entra"): the session was signed in by an identity provider.
SIGNED_IN_BY_PROVIDER = "concord_signed_in_by_provider"


def password_session(request: HttpRequest) -> bool:
    """Whether the session was signed in with a Concord password: by a backend of ``MFA_PASSWORD_BACKENDS`` and
    not marked ``SIGNED_IN_BY_PROVIDER``. Sessions signed in through an organisation's identity provider (single
    sign-on) get their second factor from it, not here."""
    return request.session.get(BACKEND_SESSION_KEY, "") in settings.MFA_PASSWORD_BACKENDS and not request.session.get(
        SIGNED_IN_BY_PROVIDER
    )


@receiver(user_logged_in, dispatch_uid="concord_mfa_exempt_at_login")
def _note_exemption(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is None or not hasattr(request, "session"):
        return
    if password_session(request) and mfa_applies(user):
        request.session.pop(EXEMPT, None)
    else:
        request.session[EXEMPT] = user.pk


# --- The step after the password ------------------------------------------------------------------


def _safe_next(request: HttpRequest, candidate: str) -> str:
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return resolve_url(settings.LOGIN_REDIRECT_URL)


def second_step(request: HttpRequest, user: Any) -> HttpResponse | None:
    """After a correct password: a person with a factor is sent to the second step instead of being logged in."""
    if not has_factor(user):
        return None  # logged in; if a factor is required of them the middleware sends them to enrolment
    # A new session key: whoever knew the old one (fixation) does not get to finish this sign-in.
    request.session.cycle_key()
    request.session[PENDING] = {
        "user": user.pk,
        "backend": getattr(user, "backend", settings.AUTHENTICATION_BACKENDS[0]),
        "at": time.time(),
        "next": _safe_next(request, request.POST.get("next", "")),
        "hash": user.get_session_auth_hash(),
    }
    return redirect("mfa:verify")


def pending_user(request: HttpRequest) -> Any | None:
    """The person who passed the password in this session and has yet to pass the second factor, if any."""
    pending = request.session.get(PENDING)
    if not isinstance(pending, dict):
        return None
    if time.time() - float(pending.get("at", 0)) > settings.MFA_PENDING_SECONDS:
        request.session.pop(PENDING, None)
        return None
    user = get_user_model()._default_manager.filter(pk=pending.get("user"), is_active=True).first()
    # A password changed since then ends the pending sign-in.
    if user is None or not constant_time_compare(user.get_session_auth_hash(), str(pending.get("hash", ""))):
        request.session.pop(PENDING, None)
        return None
    return user


def complete_sign_in(request: HttpRequest, user: Any, device: Device) -> str:
    """Log ``user`` in with ``device`` as the verified factor; returns where to go next."""
    pending = request.session.get(PENDING) or {}
    next_url = _safe_next(request, str(pending.get("next", "")))
    request.session.pop(PENDING, None)
    # Django's login cycles the session key again and fires user_logged_in (which clears the failure count).
    auth_login(request, user, backend=pending.get("backend") or settings.AUTHENTICATION_BACKENDS[0])
    otp_login(request, device)
    return next_url


# --- Codes ----------------------------------------------------------------------------------------


# What ``StaticToken.random_token`` issues (django-otp: the base32 of five random bytes, lower case): eight
# characters of a–z and 2–7. Every recovery code Concord hands out has this shape.
RECOVERY_CODE_SHAPE = re.compile(r"[a-z2-7]{8}")


def _normalise(code: str) -> str:
    """The code without spaces or dashes, lower case; empty for anything but ASCII (no Unicode digits)."""
    code = "".join(code.split()).replace("-", "").lower()
    return code if code.isascii() else ""


def verify_code(user: Any, code: str) -> Device | None:
    """The TOTP device or recovery-code device that accepts ``code`` (a recovery code is used up), else None.

    Each device row is locked while it checks the code: a code accepted by one request is refused to any
    other (the TOTP device's last time step, the recovery code's deletion, are committed first)."""
    code = _normalise(code)
    if not code or len(code) > 16:
        return None
    with transaction.atomic():
        if code.isascii() and code.isdigit() and len(code) <= 10:
            for device in TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True).order_by("pk"):
                if device.verify_token(code):
                    return device
        # Only input shaped like a recovery code is tried as one: a mistyped authenticator code must not count
        # as a wrong recovery code (django-otp would back the recovery codes off and refuse the right one next).
        if RECOVERY_CODE_SHAPE.fullmatch(code):
            for static in StaticDevice.objects.select_for_update().filter(user=user, confirmed=True).order_by("pk"):
                if static.verify_token(code):
                    return static
    return None


def totp_confirm(device: TOTPDevice, code: str) -> bool:
    """Confirm a new (unconfirmed) TOTP device with a code from it; the code is then used up like any other."""
    code = _normalise(code)
    if not (code.isascii() and code.isdigit() and len(code) <= 10):
        return False
    with transaction.atomic():
        locked = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        if not locked.verify_token(code):
            return False
        locked.confirmed = True
        locked.save(update_fields=["confirmed"])
    device.refresh_from_db()
    return True


def recovery_codes_regenerate(user: Any) -> list[str]:
    """Replace the person's recovery codes with ``MFA_RECOVERY_CODES`` new ones; returns them (shown once)."""
    with transaction.atomic():
        device, _ = StaticDevice.objects.get_or_create(
            user=user, name=RECOVERY_DEVICE_NAME, defaults={"confirmed": True}
        )
        device.token_set.all().delete()
        codes = [StaticToken.random_token() for _ in range(settings.MFA_RECOVERY_CODES)]
        StaticToken.objects.bulk_create([StaticToken(device=device, token=code) for code in codes])
    return codes


def recovery_codes_left(user: Any) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()
