"""Matching a signed-in identity to a Concord account, and refusing sign-ins with a clear page.

An identity is matched by (protocol, issuer, subject) in ``SsoIdentity``, the provider's stable subject id; the
e-mail a provider sends is copied onto a new account for display only and never used to find one, so a person who
changes (or is given) someone else's address at the provider cannot take over that person's Concord account. A
first sign-in creates a plain account: no study role, no staff flag, an unusable password. Roles are granted inside
Concord per study, as for anyone (docs/guide/sso.md).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.contrib.auth import get_user_model, login
from django.contrib.auth.signals import user_login_failed
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from annotation.sso.models import SsoIdentity

logger = logging.getLogger("concord.sso")
# Sessions of single sign-on users are served by the password backend's get_user (an active user by id); it never
# checks a password on that path. Signing in through it keeps one backend for every session.
SESSION_BACKEND = "concord.auth.ThrottledModelBackend"
_USERNAME_CHARS = re.compile(r"[^\w.@+-]")


class SignInRefused(Exception):
    """A sign-in that must not go through; ``reason`` is shown to the person, ``detail`` only logged."""

    def __init__(self, reason: str, detail: str = "", status: int = 403) -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail or reason
        self.status = status


def _free_username(wanted: str) -> str:
    User = get_user_model()
    base = _USERNAME_CHARS.sub("", wanted)[:120] or "user"
    candidate, n = base, 1
    while User.objects.filter(username__iexact=candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def user_for_identity(
    *, protocol: str, provider: str, issuer: str, subject: str, username: str = "", email: str = "",
    first_name: str = "", last_name: str = "",
) -> Any:
    """The account of this (protocol, issuer, subject), created on its first sign-in. Refuses inactive accounts."""
    if not issuer or not subject:
        raise SignInRefused(
            "The identity provider sent no stable subject id.", f"issuer={issuer!r} subject={subject!r}"
        )
    User = get_user_model()
    identities = SsoIdentity.objects.select_related("user")
    identity = identities.filter(protocol=protocol, issuer=issuer, subject=subject).first()
    if identity is None:
        try:
            with transaction.atomic():
                user = User.objects.create_user(
                    _free_username(username or (email.split("@")[0] if email else "") or f"{provider}-user"),
                    email=email[:254], first_name=first_name[:150], last_name=last_name[:150],
                )
                user.set_unusable_password()
                user.save(update_fields=["password"])
                identity = SsoIdentity.objects.create(
                    user=user, protocol=protocol, issuer=issuer, subject=subject, provider=provider
                )
            logger.info("sso: new account %s for %s %s subject %s", user.username, protocol, provider, subject)
        except IntegrityError:
            # The same identity signed in twice at once: the other request created it.
            identity = SsoIdentity.objects.select_related("user").get(protocol=protocol, issuer=issuer, subject=subject)
    if not identity.user.is_active:
        raise SignInRefused("This account is deactivated in Concord.", f"inactive user {identity.user_id}")
    SsoIdentity.objects.filter(pk=identity.pk).update(last_login_at=timezone.now())
    return identity.user


def sign_in(request: HttpRequest, user: Any, *, protocol: str, provider: str) -> None:
    """Django's login (a new session key, the user_logged_in signal that concord.auth listens to)."""
    login(request, user, backend=SESSION_BACKEND)
    # Multi-factor sign-in (annotation.mfa) asks password sessions only: this one relies on the provider's own
    # second factor, whichever backend Django recorded for the session.
    request.session["concord_signed_in_by_provider"] = f"{protocol}:{provider}"
    logger.info("sso: sign-in of %s through %s %s", user.get_username(), protocol, provider)


def refuse(request: HttpRequest, exc: SignInRefused, *, protocol: str, provider: str) -> HttpResponse:
    """The error page of a refused sign-in; the refusal is logged and sent as user_login_failed."""
    logger.warning("sso: %s sign-in through %s refused: %s", protocol, provider, exc.detail)
    user_login_failed.send(
        sender=__name__, credentials={"sso_provider": f"{protocol}:{provider}"}, request=request
    )
    return render(
        request, "sso/error.html", {"reason": exc.reason, "provider": provider}, status=exc.status
    )
