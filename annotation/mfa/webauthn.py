"""Passkeys (django-otp-webauthn) as a second factor after the password, never as a password-less sign-in.

The package's JSON endpoints are used with three changes:

* the relying party is ``MFA_WEBAUTHN_RP_ID`` or the request's host name, and the origins accepted are
  ``MFA_WEBAUTHN_ORIGINS`` or the request's own origin (whose host Django checked against ALLOWED_HOSTS);
* signing in with a passkey is possible only for the person who has just passed the password in this session
  (``signin.pending_user``): the ceremony is begun for that person's credentials only, a credential of anyone
  else is refused, and success goes through ``signin.complete_sign_in`` (the same login as a TOTP code);
* a request the package cannot parse answers 400, never 500.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django_otp_webauthn import exceptions
from django_otp_webauthn import views as webauthn_views
from django_otp_webauthn.helpers import WebAuthnHelper

from annotation.mfa import signin
from concord.auth import login_failure_record, login_lock_remaining


def rp_id(request: HttpRequest) -> str:
    return settings.MFA_WEBAUTHN_RP_ID or request.get_host().rsplit(":", 1)[0].strip("[]")


class Helper(WebAuthnHelper):
    def get_allowed_origins(self) -> list[str]:
        if settings.MFA_WEBAUTHN_ORIGINS:
            return list(settings.MFA_WEBAUTHN_ORIGINS)
        origin = urlsplit(self.request.build_absolute_uri("/"))
        return [f"{origin.scheme}://{origin.netloc}"]


class _Errors:
    """The package's own errors as it answers them; anything it could not parse in the request as a 400.

    The package checks who may begin a ceremony before the method; here a method other than POST is answered
    405 first, whoever asks."""

    http_method_names = ["post"]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if request.method is None or request.method.lower() not in self.http_method_names:
            return self.http_method_not_allowed(request, *args, **kwargs)  # type: ignore[attr-defined]
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]

    def handle_exception(self, exc: Exception) -> JsonResponse:
        if isinstance(exc, exceptions.OTPWebAuthnApiError):
            return JsonResponse({"detail": str(exc), "code": exc.code}, status=exc.status_code)
        if isinstance(exc, (ValueError, KeyError, TypeError, AttributeError)):
            return JsonResponse({"detail": "Malformed WebAuthn request.", "code": "malformed_request"}, status=400)
        raise exc


class NotPending(exceptions.OTPWebAuthnApiError):
    """No sign-in waits for its second step in this session: nothing to begin or complete (not a refusal)."""

    status_code = 400
    default_detail = "Sign in with your username and password first."
    default_code = "not_pending"


class LockedOut(exceptions.OTPWebAuthnApiError):
    status_code = 429
    default_detail = "Too many failed sign-in attempts. Try again later."
    default_code = "locked_out"


class RegistrationBeginView(_Errors, webauthn_views.BeginCredentialRegistrationView):
    access_policy = "authenticated"


class RegistrationCompleteView(_Errors, webauthn_views.CompleteCredentialRegistrationView):
    access_policy = "authenticated"


class _Pending:
    request: HttpRequest

    def get_user(self) -> Any:
        user = signin.pending_user(self.request)
        if user is None:
            raise NotPending()
        if login_lock_remaining(self.request, user.get_username()):
            raise LockedOut()
        return user


class AuthenticationBeginView(_Errors, _Pending, webauthn_views.BeginCredentialAuthenticationView):
    """Options naming the pending person's passkeys only."""

    access_policy = "public"

    def post(self, *args: Any, **kwargs: Any) -> JsonResponse:
        user = self.get_user()
        data, state = self.get_helper().authenticate_begin(user=user, require_user_verification=False)
        self.request.session["otp_webauthn_authentication_state"] = state
        return JsonResponse(data)


class AuthenticationCompleteView(_Errors, _Pending, webauthn_views.CompleteCredentialAuthenticationView):
    access_policy = "public"

    def post(self, *args: Any, **kwargs: Any) -> JsonResponse:
        user = self.get_user()
        state = self.get_state()  # popped from the session first: never used twice
        try:
            with webauthn_views.rewrite_exceptions(logger=webauthn_views._get_pywebauthn_logger()):
                device = self.get_helper().authenticate_complete(user=user, state=state, data=self.request.data)
            self.check_device_usable(device)
        except exceptions.OTPWebAuthnApiError:
            login_failure_record(self.request, user.get_username())
            raise
        next_url = signin.complete_sign_in(self.request, user, device)
        return JsonResponse({"id": device.pk, "redirect_url": next_url})
