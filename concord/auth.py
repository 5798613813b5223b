"""Login throttling.

Failed log-ins are counted per (username, client address) in the shared cache. After
``LOGIN_FAILURE_LIMIT`` failures within ``LOGIN_FAILURE_WINDOW_SECONDS`` that pair is locked out until
the window ends: the login page answers 429 without checking the password, and the authentication
backend refuses the pair on every other path that authenticates with a password (the admin's login
form, anything calling ``authenticate()``). A successful log-in clears the count.

With ``CONCORD_LOCAL_PASSWORDS=false`` (single sign-on only, annotation/sso) the backend refuses every
password, and the login page refuses a posted one (403) without checking it; ``CONCORD_PASSWORD_BREAK_GLASS``
lets superusers, and only them, still sign in with a password.

The count is keyed on the pair, not the username alone, so that someone guessing from one address
cannot lock a clinician out everywhere; the username is case-folded and the key hashed, so the
cache holds no usernames. The address is ``REMOTE_ADDR``: behind a reverse proxy, the proxy (or the
WSGI server) must set it to the client's address; X-Forwarded-For is not trusted here because
any client can send it.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse


def _client_ip(request: HttpRequest | None) -> str:
    return (request.META.get("REMOTE_ADDR") or "") if request is not None else ""


def _key(username: str, ip: str) -> str:
    digest = hashlib.sha256(f"{username.casefold()}\x00{ip}".encode()).hexdigest()
    return f"login-failures:{digest}"


def login_lock_remaining(request: HttpRequest | None, username: str) -> int:
    """Seconds until this (username, address) pair may try again; 0 when it is not locked."""
    record = cache.get(_key(username, _client_ip(request)))
    if not record or record["n"] < settings.LOGIN_FAILURE_LIMIT:
        return 0
    return max(0, math.ceil(record["until"] - time.time()))


def login_failure_record(request: HttpRequest | None, username: str) -> None:
    key = _key(username, _client_ip(request))
    now = time.time()
    record = cache.get(key)
    if not record or record["until"] <= now:
        record = {"n": 0, "until": now + settings.LOGIN_FAILURE_WINDOW_SECONDS}
    record["n"] += 1
    # The window is fixed at the first failure: further attempts while locked do not extend it.
    cache.set(key, record, timeout=max(1, math.ceil(record["until"] - now)))


def login_failures_clear(request: HttpRequest | None, username: str) -> None:
    cache.delete(_key(username, _client_ip(request)))


class ThrottledModelBackend(ModelBackend):
    """Django's username/password backend, refusing a locked-out (username, address) pair."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        if username and login_lock_remaining(request, username):
            # PermissionDenied stops authenticate() from trying further backends.
            raise PermissionDenied("too many failed log-in attempts")
        if not settings.LOCAL_PASSWORDS and not settings.PASSWORD_BREAK_GLASS:
            raise PermissionDenied("local passwords are switched off (CONCORD_LOCAL_PASSWORDS)")
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and not settings.LOCAL_PASSWORDS and not user.is_superuser:
            # Break-glass (CONCORD_PASSWORD_BREAK_GLASS): only superusers may still use a password.
            raise PermissionDenied("local passwords are switched off except for superusers")
        return user


@receiver(user_login_failed, dispatch_uid="concord_login_failed")
def _on_login_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    username = credentials.get("username")
    if username:
        login_failure_record(request, str(username))


@receiver(user_logged_in, dispatch_uid="concord_logged_in")
def _on_logged_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    login_failures_clear(request, user.get_username())


# Steps after a correct password (annotation/mfa registers the second factor): each is called with the request
# and the authenticated user before the login; the first one answering a response takes over (the person is
# not logged in by the password view then). This layer names none of them: apps register from their ready().
SecondStep = Callable[[HttpRequest, Any], HttpResponse | None]
_second_steps: list[SecondStep] = []


def second_step_register(step: SecondStep) -> None:
    if step not in _second_steps:
        _second_steps.append(step)


class ThrottledLoginView(LoginView):
    """Django's login view (which cycles the session key on success), answering 429 while locked out.

    After a correct password, a registered second step (``second_step_register``) may take over instead of
    logging the person in; the failures counted for the pair are then cleared only when that step logs in."""

    def form_valid(self, form: Any) -> HttpResponse:
        for step in _second_steps:
            response = step(self.request, form.get_user())
            if response is not None:
                return response
        return super().form_valid(form)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # Single sign-on buttons (annotation/sso), and whether the password form is offered at all.
        context["sso_oidc_providers"] = list(settings.SSO_OIDC_PROVIDERS.values())
        context["sso_saml_idps"] = list(settings.SSO_SAML_IDPS.values())
        context["local_passwords"] = settings.LOCAL_PASSWORDS
        context["password_break_glass"] = settings.PASSWORD_BREAK_GLASS
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.LOCAL_PASSWORDS and not settings.PASSWORD_BREAK_GLASS:
            # No form is offered; a posted password is refused without being checked.
            messages.error(request, "Password sign-in is switched off here: sign in with your organisation's account.")
            context = self.get_context_data(form=self.get_form_class()(request))
            return self.render_to_response(context, status=403)
        remaining = login_lock_remaining(request, request.POST.get("username", ""))
        if not remaining:
            return super().post(request, *args, **kwargs)
        minutes = math.ceil(remaining / 60)
        messages.error(
            request,
            f"Too many failed log-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
        )
        # An unbound form: validating the posted one would authenticate, and count, once more.
        context = self.get_context_data(form=self.get_form_class()(request))
        return self.render_to_response(context, status=429)
