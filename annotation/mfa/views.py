"""Pages of multi-factor sign-in: the second step after the password, enrolment, recovery codes.

The rules are in annotation/mfa/signin.py; docs/guide/mfa.md explains them to people."""

from __future__ import annotations

import math
from base64 import b32encode
from typing import Any

import segno
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.middleware import csrf
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.views import View
from django.views.decorators.cache import never_cache
from django_otp import login as otp_login
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp_webauthn.models import WebAuthnCredential

from annotation.mfa import signin
from concord.auth import login_failure_record, login_lock_remaining
from concord.params import parse_id


def passkey_config(request: HttpRequest, next_url: str = "") -> dict[str, Any]:
    """What django-otp-webauthn's scripts read from the ``otp_webauthn_config`` element."""
    return {
        "autocompleteLoginFieldSelector": None,
        "nextFieldSelector": "input[name='next']",
        "csrfToken": csrf.get_token(request),
        "beginAuthenticationUrl": reverse("mfa:passkey-authentication-begin"),
        "completeAuthenticationUrl": reverse("mfa:passkey-authentication-complete"),
        "beginRegistrationUrl": reverse("mfa:passkey-registration-begin"),
        "completeRegistrationUrl": reverse("mfa:passkey-registration-complete"),
    }


@method_decorator([login_not_required, never_cache], name="dispatch")
class VerifyView(View):
    """The second step: a code from the authenticator app, a recovery code, or a passkey."""

    access_policy = "public"
    http_method_names = ["get", "post"]
    template_name = "mfa/verify.html"

    def _render(self, request: HttpRequest, user: Any, *, error: str = "", status: int = 200) -> HttpResponse:
        context = {
            "pending": user,
            "has_totp": TOTPDevice.objects.filter(user=user, confirmed=True).exists(),
            "has_passkey": signin.has_passkey(user),
            "has_recovery": signin.recovery_codes_left(user) > 0,
            "error": error,
            "passkey_config": passkey_config(request),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        user = signin.pending_user(request)
        if user is None:
            messages.info(request, "Sign in with your username and password first.")
            return redirect("login")
        return self._render(request, user)

    def post(self, request: HttpRequest) -> HttpResponse:
        user = signin.pending_user(request)
        if user is None:
            messages.info(request, "Sign in with your username and password first.")
            return redirect("login")
        remaining = login_lock_remaining(request, user.get_username())
        if remaining:
            minutes = math.ceil(remaining / 60)
            return self._render(
                request,
                user,
                error=f"Too many failed sign-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                status=429,
            )
        device = signin.verify_code(user, str(request.POST.get("code", "")))
        if device is None:
            login_failure_record(request, user.get_username())
            return self._render(
                request,
                user,
                error="That code is wrong, was already used, or came too soon after a wrong one.",
                status=400,
            )
        next_url = signin.complete_sign_in(request, user, device)
        if isinstance(device, StaticDevice):
            left = signin.recovery_codes_left(user)
            messages.warning(
                request,
                f"You signed in with a recovery code; {left} left. Generate new ones on the sign-in security page.",
            )
        return redirect(next_url)


def _local_next(request: HttpRequest) -> str:
    candidate = str(request.GET.get("next", ""))
    ok = url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return candidate if candidate and ok else ""


def _verified_or_first(request: HttpRequest) -> bool:
    """Changing factors needs a session verified by one, unless the person has none yet (first enrolment)."""
    return signin.session_verified(request) or not signin.has_factor(request.user)


@method_decorator(never_cache, name="dispatch")
class SetupView(View):
    """The person's factors, recovery codes and the links to add or remove them."""

    access_policy = "authenticated"
    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> HttpResponse:
        user = request.user
        context = {
            "required": signin.mfa_required(user),
            "verified": signin.session_verified(request),
            "totp_devices": TOTPDevice.objects.filter(user=user, confirmed=True).order_by("pk"),
            "passkeys": WebAuthnCredential.objects.filter(user=user, confirmed=True).order_by("pk"),
            "recovery_left": signin.recovery_codes_left(user),
            "can_change": _verified_or_first(request),
            "passkey_config": passkey_config(request),
            "next": _local_next(request),
        }
        return render(request, "mfa/setup.html", context)


@method_decorator(never_cache, name="dispatch")
class TotpEnrolView(View):
    """A new authenticator app: its secret as a QR code (inline SVG) and as text, confirmed by one code."""

    access_policy = "authenticated"
    http_method_names = ["get", "post"]

    def _device(self, request: HttpRequest) -> TOTPDevice:
        device = TOTPDevice.objects.filter(user=request.user, confirmed=False).order_by("-pk").first()
        if device is None:
            device = TOTPDevice.objects.create(user=request.user, name="Authenticator app", confirmed=False)
        return device

    def _render(self, request: HttpRequest, device: TOTPDevice, *, error: str = "", status: int = 200) -> HttpResponse:
        url = device.config_url
        # segno writes the SVG itself (no user input reaches it but the username, inside the otpauth URL it encodes).
        svg = segno.make(url, error="m").svg_inline(scale=4, title="QR code of your authenticator secret")
        context = {
            "qr_svg": mark_safe(svg),
            "secret": b32encode(device.bin_key).decode(),
            "otpauth_url": url,
            "error": error,
        }
        return render(request, "mfa/totp.html", context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not _verified_or_first(request):
            return _refuse_unverified(request)
        return self._render(request, self._device(request))

    def post(self, request: HttpRequest) -> HttpResponse:
        if not _verified_or_first(request):
            return _refuse_unverified(request)
        device = TOTPDevice.objects.filter(user=request.user, confirmed=False).order_by("-pk").first()
        if device is None:
            return redirect("mfa:totp")
        username = request.user.get_username()
        if login_lock_remaining(request, username):
            return self._render(request, device, error="Too many wrong codes. Try again later.", status=429)
        if not signin.totp_confirm(device, str(request.POST.get("code", ""))):
            login_failure_record(request, username)
            return self._render(
                request, device, error="That code is wrong. Enter the current code from the app.", status=400
            )
        TOTPDevice.objects.filter(user=request.user, confirmed=False).delete()
        first_codes = (
            None if signin.recovery_codes_left(request.user) else signin.recovery_codes_regenerate(request.user)
        )
        if not signin.session_verified(request):
            otp_login(request, device)
        request.session.pop(signin.EXEMPT, None)
        messages.success(request, "Your authenticator app is set up: you will be asked for a code at every sign-in.")
        if first_codes:
            return render(request, "mfa/recovery_codes.html", {"codes": first_codes, "first": True})
        return redirect("mfa:setup")


def _refuse_unverified(request: HttpRequest) -> HttpResponse:
    messages.error(request, "Sign in again with your second factor before changing your factors.")
    return render(request, "mfa/refused.html", status=403)


@method_decorator(never_cache, name="dispatch")
class RecoveryCodesView(View):
    """New recovery codes (the old ones stop working), shown this once."""

    access_policy = "authenticated"
    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        if not signin.has_factor(request.user):
            messages.error(request, "Set up an authenticator app or a passkey first.")
            return redirect("mfa:setup")
        if not signin.session_verified(request):
            return _refuse_unverified(request)
        codes = signin.recovery_codes_regenerate(request.user)
        return render(request, "mfa/recovery_codes.html", {"codes": codes, "first": False})


@method_decorator(never_cache, name="dispatch")
class DeviceRemoveView(View):
    """Remove one factor (``device``: ``totp:<id>`` or ``passkey:<id>``, the person's own)."""

    access_policy = "authenticated"
    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        kind, _, raw_id = str(request.POST.get("device", "")).partition(":")
        models = {"totp": TOTPDevice, "passkey": WebAuthnCredential}
        pk = parse_id(raw_id)
        if kind not in models or pk is None:
            return render(request, "mfa/refused.html", {"reason": "Name a factor to remove."}, status=400)
        device = models[kind].objects.filter(user=request.user, confirmed=True, pk=pk).first()
        if device is None:
            return render(request, "mfa/refused.html", {"reason": "No such factor."}, status=404)
        if not signin.session_verified(request):
            return _refuse_unverified(request)
        if signin.mfa_required(request.user) and len(signin.factors(request.user)) == 1:
            return render(
                request,
                "mfa/refused.html",
                {"reason": "A second factor is required of you: add another before removing your last one."},
                status=400,
            )
        device.delete()
        if not signin.has_factor(request.user):
            StaticDevice.objects.filter(user=request.user).delete()
        messages.success(request, "The factor has been removed.")
        return redirect("mfa:setup")
