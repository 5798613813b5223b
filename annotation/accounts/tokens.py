"""API tokens: issued to people who chose their own password, expiring, revoked by a password change.

DRF's ``TokenAuthentication`` runs inside the view, after every middleware, so the forced password
change (``PasswordChangeRequiredMiddleware``) sees an anonymous user on a token request. The rules
for tokens therefore live here, in the authentication class the API uses
(``settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]``):

* a token is refused while its owner still holds a one-time password (and none is issued then);
* a token is refused, and deleted, once it is older than ``API_TOKEN_TTL_SECONDS``;
* changing a password (any path that saves a new hash: the account page, the admin, ``changepassword``,
  an invitation link) deletes the person's tokens, so whoever saw an old or one-time password keeps no
  API access;
* a person sees their token on the account page (``/accounts/tokens/``) and can revoke it there;
* tokens are not covered by multi-factor sign-in (annotation/mfa): a request with a token is never asked for a
  second factor. So a person who signs in with one (required of them, or enrolled) is refused a token by
  ``/api/token/`` (a password alone) and creates it on the token page in a session verified by their second
  factor; each token records when, how and from which address it was created (``mfa.TokenOrigin``), shown there.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import pre_save
from django.dispatch import receiver
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from annotation.labels import statements
from annotation.mfa.models import TokenOrigin
from annotation.models import PasswordChangeRequired
from concord.errors import Forbidden

PASSWORD_CHANGE_FIRST = "choose your own password at /accounts/password/ first; API tokens are refused until then"  # noqa: S105 (a message, not a password)


def token_expires_at(token: Token) -> datetime:
    return token.created + timedelta(seconds=settings.API_TOKEN_TTL_SECONDS)


def token_expired(token: Token, *, now: datetime | None = None) -> bool:
    return (now or timezone.now()) >= token_expires_at(token)


def must_change_password(user: Any) -> bool:
    return PasswordChangeRequired.objects.filter(user=user).exists()


MFA_FIRST = (
    "your account signs in with a second factor: create your API token on the token page (/accounts/tokens/) "
    "after signing in with it"
)


def token_issue(*, user: Any, request: Any = None, via: str = "", mfa_verified: bool = False) -> Token:
    """The person's current token, or a new one when they have none or theirs has expired.

    Refused (403) while the person still holds a one-time password. A new token records where it was created
    (``request``'s address and browser, ``via`` one of ``TokenOrigin.VIA_*``) when ``via`` is given.
    """
    if must_change_password(user):
        raise Forbidden(PASSWORD_CHANGE_FIRST)
    token = Token.objects.filter(user=user).first()
    if token is not None and token_expired(token):
        token.delete()
        token = None
    if token is None:
        token = Token.objects.create(user=user)
        if via:
            meta = request.META if request is not None else {}
            TokenOrigin.objects.create(
                token=token,
                ip=meta.get("REMOTE_ADDR") or None,
                user_agent=str(meta.get("HTTP_USER_AGENT", ""))[:200],
                via=via,
                mfa_verified=mfa_verified,
            )
    return token


def tokens_revoke(*, user: Any) -> int:
    """Delete every API token of ``user``; returns how many there were."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refusing expired tokens and people with a one-time password.

    The token, its person and whether that person must still change a one-time password are read in
    one statement (every API request authenticates), with DRF's own refusals for an unknown token or an
    inactive person. A view whose URL names an assignment (``assignment_from_token = True``) gets that
    assignment read in the same statement, if it is the person's own: :func:`token_assignment`."""

    def authenticate(self, request: Any) -> tuple[Any, Token] | None:
        self._request = request
        return super().authenticate(request)

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        request = getattr(self, "_request", None)
        view = (request.parser_context or {}).get("view") if request is not None else None
        pk = (request.parser_context or {}).get("kwargs", {}).get("pk") if request is not None else None
        with_assignment = bool(getattr(view, "assignment_from_token", False)) and pk is not None
        found = statements.token_lookup(key, assignment_pk=pk if with_assignment else None)
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, token, password_change_required, assignment = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(token):
            token.delete()
            raise exceptions.AuthenticationFailed("Token expired: ask for a new one at /api/token/.")
        if password_change_required:
            raise exceptions.AuthenticationFailed(PASSWORD_CHANGE_FIRST)
        if with_assignment:
            request._request.concord_token_assignment = (user.pk, pk, assignment)
        return user, token


NOT_LOOKED_UP = object()


def token_assignment(request: Any, pk: int) -> Any:
    """The assignment ``pk`` as token authentication read it for this request and person: the assignment,
    None when it is not theirs, or ``NOT_LOOKED_UP`` (a session, or a view that did not ask)."""
    found = getattr(request._request, "concord_token_assignment", None)
    if found is None or found[0] != getattr(request.user, "pk", None) or found[1] != pk:
        return NOT_LOOKED_UP
    return found[2]


@receiver(pre_save, sender=get_user_model(), dispatch_uid="concord_password_change_revokes_tokens")
def _revoke_tokens_on_password_change(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    if raw or instance.pk is None:
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password:
        tokens_revoke(user=instance)
