"""OpenID Connect sign-in through mozilla-django-oidc, one provider per name in CONCORD_OIDC_PROVIDERS.

mozilla-django-oidc reads one provider from Django's settings. Here its backend is built per provider
(``OidcBackend(provider)``: every setting it asks for comes from that provider's entry) and its two views are
replaced by two small ones keyed by the provider's name in the URL, which keep its state, nonce and PKCE handling
(``add_state_and_verifier_and_nonce_to_session``: the state is removed from the session when it is used, so a
replayed callback is refused).

What the library leaves out is checked here: the id_token's audience (the library decodes with verify_aud off),
its issuer, and that exp and iat are present; its signature, algorithm and expiry are checked by PyJWT with the
provider's key (from its JWKS, matched by kid and alg). Every failure is a SignInRefused: a 403 page, never a 500.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils.crypto import get_random_string
from django.utils.decorators import method_decorator
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import add_state_and_verifier_and_nonce_to_session, generate_code_challenge
from mozilla_django_oidc.views import get_next_url

from annotation.sso.identity import SignInRefused, refuse, sign_in, user_for_identity
from concord.sso_settings import OidcProvider

PROTOCOL = "oidc"


def provider_named(name: str) -> OidcProvider:
    provider = settings.SSO_OIDC_PROVIDERS.get(name)
    if provider is None:
        raise Http404("no such sign-in provider")
    return provider


def callback_url(request: HttpRequest, provider: OidcProvider) -> str:
    return request.build_absolute_uri(reverse("sso:oidc-callback", kwargs={"provider": provider.name}))


class OidcBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend for one provider. Used directly by the callback view, not through
    AUTHENTICATION_BACKENDS: sessions it opens are served by concord.auth's backend (identity.SESSION_BACKEND)."""

    def __init__(self, provider: OidcProvider) -> None:
        self.provider = provider
        super().__init__()

    def get_settings(self, attr: str, *args: Any) -> Any:  # type: ignore[override]
        p = self.provider
        values = {
            "OIDC_OP_TOKEN_ENDPOINT": p.token_endpoint,
            "OIDC_OP_USER_ENDPOINT": "",
            "OIDC_OP_JWKS_ENDPOINT": p.jwks_uri,
            "OIDC_RP_CLIENT_ID": p.client_id,
            "OIDC_RP_CLIENT_SECRET": p.client_secret,
            "OIDC_RP_SIGN_ALGO": p.algorithm,
            "OIDC_RP_IDP_SIGN_KEY": None,
            "OIDC_RP_SCOPES": p.scopes,
            "OIDC_USE_NONCE": True,
            "OIDC_VERIFY_KID": True,
            "OIDC_VERIFY_SSL": True,
            "OIDC_TIMEOUT": p.timeout_seconds,
            "OIDC_PROXY": None,
            "OIDC_ALLOW_UNSECURED_JWT": False,
            "OIDC_TOKEN_USE_BASIC_AUTH": False,
            "OIDC_STORE_ACCESS_TOKEN": False,
            "OIDC_STORE_ID_TOKEN": False,
        }
        if attr in values:
            return values[attr]
        if args:
            return args[0]
        raise SuspiciousOperation(f"OIDC setting {attr} is not provided per provider")

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != self.provider.algorithm:
            raise SignInRefused(
                "The identity provider's token was signed with an unexpected algorithm.",
                f"alg {header.get('alg')!r}, expected {self.provider.algorithm}",
            )
        try:
            return jwt.decode(
                payload,
                key,
                algorithms=[self.provider.algorithm],
                audience=self.provider.client_id,
                issuer=self.provider.issuer,
                leeway=settings.SSO_CLOCK_SKEW_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise SignInRefused("The identity provider's token has expired.", "id_token expired") from None
        except jwt.InvalidAudienceError:
            raise SignInRefused(
                "The identity provider's token was issued for another application.", "id_token audience"
            ) from None
        except jwt.InvalidIssuerError:
            raise SignInRefused("The identity provider's token names another issuer.", "id_token issuer") from None
        except jwt.InvalidSignatureError:
            raise SignInRefused("The identity provider's token signature is not valid.", "id_token signature") from None
        except jwt.InvalidTokenError as exc:
            raise SignInRefused("The identity provider's token is not valid.", f"id_token: {exc}") from None

    def sign_in_user(self, request: HttpRequest, *, code: str, nonce: str, code_verifier: str | None) -> Any:
        self.request = request
        payload: dict[str, Any] = {
            "client_id": self.provider.client_id,
            "client_secret": self.provider.client_secret,
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": callback_url(request, self.provider),
        }
        if code_verifier is not None:
            payload["code_verifier"] = code_verifier
        try:
            token_info = self.get_token(payload)
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "?"
            raise SignInRefused(
                "The identity provider refused to complete the sign-in (the code may have been used already).",
                f"token endpoint answered {status}",
            ) from None
        except (requests.RequestException, ValueError) as exc:
            raise SignInRefused(
                "The identity provider could not be reached.", f"token endpoint: {exc}", status=502
            ) from None
        id_token = token_info.get("id_token") if isinstance(token_info, dict) else None
        if not isinstance(id_token, str):
            raise SignInRefused("The identity provider sent no id_token.", "no id_token")
        try:
            claims = self.verify_token(id_token, nonce=nonce)
        except SuspiciousOperation as exc:
            # mozilla-django-oidc's own refusals: nonce mismatch, no matching JWK, undecodable token.
            raise SignInRefused("The identity provider's token did not match this sign-in.", str(exc)) from None
        except requests.RequestException as exc:
            raise SignInRefused(
                "The identity provider's keys could not be fetched.", f"jwks: {exc}", status=502
            ) from None
        except jwt.PyJWTError as exc:
            raise SignInRefused("The identity provider's token is not valid.", f"id_token: {exc}") from None
        p = self.provider
        return user_for_identity(
            protocol=PROTOCOL, provider=p.name, issuer=str(claims["iss"]), subject=str(claims["sub"]),
            username=str(claims.get(p.username_claim) or ""), email=str(claims.get(p.email_claim) or ""),
            first_name=str(claims.get("given_name") or ""), last_name=str(claims.get("family_name") or ""),
        )


@method_decorator(login_not_required, name="dispatch")
class OidcLoginView(View):
    """Starts a sign-in: a state, a nonce and (by default) a PKCE verifier kept in the session, then the provider."""

    access_policy = "public"
    http_method_names = ["get"]

    def get(self, request: HttpRequest, provider: str) -> HttpResponse:
        p = provider_named(provider)
        state = get_random_string(32)
        params = {
            "response_type": "code",
            "scope": p.scopes,
            "client_id": p.client_id,
            "redirect_uri": callback_url(request, p),
            "state": state,
            "nonce": get_random_string(32),
            **p.extra_params,
        }
        code_verifier = None
        if p.pkce:
            code_verifier = get_random_string(64)
            params["code_challenge"] = generate_code_challenge(code_verifier, "S256")
            params["code_challenge_method"] = "S256"
        add_state_and_verifier_and_nonce_to_session(request, state, params, code_verifier)
        request.session["oidc_states"][state]["provider"] = p.name
        request.session["oidc_login_next"] = get_next_url(request, "next")
        return HttpResponseRedirect(f"{p.authorization_endpoint}?{urlencode(params)}")


@method_decorator(login_not_required, name="dispatch")
class OidcCallbackView(View):
    """The provider's redirect back: the state must be one this session started for this provider (it is used
    up here), then the code is exchanged and the id_token checked (OidcBackend)."""

    access_policy = "public"
    http_method_names = ["get"]

    def get(self, request: HttpRequest, provider: str) -> HttpResponse:
        p = provider_named(provider)
        try:
            user = self._user(request, p)
        except SignInRefused as exc:
            return refuse(request, exc, protocol=PROTOCOL, provider=p.name)
        next_url = request.session.get("oidc_login_next")
        sign_in(request, user, protocol=PROTOCOL, provider=p.name)
        return HttpResponseRedirect(next_url or resolve_url(settings.LOGIN_REDIRECT_URL))

    @staticmethod
    def _user(request: HttpRequest, p: OidcProvider) -> Any:
        state = request.GET.get("state", "")
        states = request.session.get("oidc_states")
        entry = states.pop(state, None) if isinstance(states, dict) and state else None
        if entry is not None:
            request.session.modified = True
            request.session.save()  # used up before the (slow) token exchange: a replay finds nothing
        if request.GET.get("error"):
            raise SignInRefused(
                "The identity provider did not sign you in.", f"error={request.GET.get('error')!r}", status=400
            )
        if entry is None:
            raise SignInRefused(
                "This sign-in was not started in this browser, or was already used. Start again from the login page.",
                "unknown or used state", status=400,
            )
        if entry.get("provider") != p.name:
            raise SignInRefused(
                "This sign-in was started for another provider.", "state of another provider", status=400
            )
        code = request.GET.get("code", "")
        if not code:
            raise SignInRefused("The identity provider sent no code.", "no code", status=400)
        return OidcBackend(p).sign_in_user(
            request, code=code, nonce=entry["nonce"], code_verifier=entry.get("code_verifier")
        )
