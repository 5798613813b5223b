"""Sends people who still hold a one-time password to the password page before anything else."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse

from annotation.models import PasswordChangeRequired

_CHECKED = "concord_password_checked_for"


class PasswordChangeRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and self._must_change(request, user):
            allowed = (reverse("account:password_change"), reverse("logout"))
            if request.path not in allowed and not request.path.startswith("/static/"):
                if request.path.startswith("/api/"):
                    return JsonResponse(
                        {
                            "error": "password_change_required",
                            "detail": "choose your own password at /accounts/password/ first",
                        },
                        status=403,
                    )
                return redirect(f"{allowed[0]}?next={request.path}")
        return self.get_response(request)

    @staticmethod
    def _must_change(request: HttpRequest, user: AbstractBaseUser) -> bool:
        # The flag is created with the account, before its first login, and only ever removed; once a
        # session has seen it absent it stays absent, so the session remembers that (one query per login).
        if request.session.get(_CHECKED) == user.pk:
            return False
        if PasswordChangeRequired.objects.filter(user=user).exists():
            return True
        request.session[_CHECKED] = user.pk
        return False
