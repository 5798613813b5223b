"""Sends a person who must use a second factor and has none to enrolment before anything else, and logs out a
session that has not passed the second factor of a person who has one (annotation/mfa/signin.py).

The pattern is the forced password change's (annotation/accounts/middleware.py): pages redirect, the API answers
403 in JSON. Token requests are not affected: DRF authenticates a token inside the view, after every middleware,
so this sees them as anonymous. A session whose person needs no second factor is marked at login
(``signin.EXEMPT``), so pages and the API pay no query for the check; a verified session pays django-otp's one
(loading its device). A role or a requirement given during a session applies from the person's next sign-in.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from annotation.mfa import signin

# Reachable while a second factor must be set up: enrolment itself (and the passkey ceremony's endpoints and
# scripts), the forced password change, and logging out.
_ENROLMENT_PREFIX = "/accounts/mfa/"


class MfaRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or request.session.get(signin.EXEMPT) == user.pk:
            return self.get_response(request)
        if signin.session_verified(request):
            return self.get_response(request)
        if not signin.password_session(request):  # single sign-on: the identity provider's second factor
            request.session[signin.EXEMPT] = user.pk
            return self.get_response(request)
        if signin.has_factor(user):
            # Signed in before the person enrolled (elsewhere), or the factor used was removed: sign in again.
            if request.path.startswith("/api/"):
                return JsonResponse(
                    {"error": "mfa_verification_required", "detail": "sign in again with your second factor"},
                    status=403,
                )
            logout(request)
            messages.info(request, "Sign in again: your account now uses a second factor.")
            return redirect(f"{reverse('login')}?{urlencode({'next': request.path})}")
        if not signin.mfa_required(user):
            request.session[signin.EXEMPT] = user.pk
            return self.get_response(request)
        allowed = (reverse("account:password_change"), reverse("logout"))
        if request.path in allowed or request.path.startswith((_ENROLMENT_PREFIX, "/static/")):
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse(
                {
                    "error": "mfa_enrolment_required",
                    "detail": "set up a second factor at /accounts/mfa/ first (API tokens are not affected)",
                },
                status=403,
            )
        return redirect(f"{reverse('mfa:setup')}?{urlencode({'next': request.path})}")
