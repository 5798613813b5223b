"""SAML 2.0 sign-in through pysaml2, one identity provider per name in CONCORD_SAML_IDPS.

Each IdP has its own assertion consumer service (/sso/saml/<name>/acs/) and its own pysaml2 client, loaded with
that IdP's metadata only: an assertion is checked against the signing certificates of the IdP it claims to come
from, and an assertion signed by another configured IdP is refused at this one's ACS.

pysaml2 checks the signature (the assertion's or the response's: at least one must be signed, and what is signed
must verify), the audience (this service provider's entity id), the validity window (NotBefore, NotOnOrAfter,
with CONCORD_SSO_CLOCK_SKEW_SECONDS of slack), the destination and InResponseTo. No unsolicited (IdP-initiated)
response is accepted. Replays are refused twice over: the request id an assertion answers is kept in the cache
while the sign-in is under way and removed (atomically) by the first response that uses it, and every consumed
assertion id is kept until its own NotOnOrAfter.

The browser that started the sign-in is the one that must finish it: the request id is also written, signed, in a
short-lived cookie of its own (SameSite=None over https, because the IdP's form POST back is a cross-site request
that the Lax session cookie does not follow), and the ACS reads the outstanding request from that cookie.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core import signing
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.metadata import entity_descriptor
from saml2.saml import NAMEID_FORMAT_PERSISTENT

from annotation.sso.identity import SignInRefused, refuse, sign_in, user_for_identity
from concord.sso_settings import SamlIdp

logger = logging.getLogger("concord.sso")
PROTOCOL = "saml"
COOKIE = "concord_saml_request"
_SALT = "concord.sso.saml.request"
# Remote metadata is fetched again after this long (an IdP's certificate rotation is picked up without a restart);
# a metadata file is read again when it changes on disk.
METADATA_URL_REFRESH_SECONDS = 3600
_clients: dict[tuple[Any, ...], Saml2Client] = {}


def idp_named(name: str) -> SamlIdp:
    idp = settings.SSO_SAML_IDPS.get(name)
    if idp is None:
        raise Http404("no such sign-in provider")
    return idp


def acs_url(request: HttpRequest, idp: SamlIdp) -> str:
    return request.build_absolute_uri(reverse("sso:saml-acs", kwargs={"provider": idp.name}))


def sp_config(request: HttpRequest, idp: SamlIdp | None) -> SPConfig:
    idps = [idp] if idp is not None else list(settings.SSO_SAML_IDPS.values())
    metadata: dict[str, Any] = {}
    local = [i.metadata_file for i in idps if i.metadata_file]
    remote = [{"url": i.metadata_url} for i in idps if i.metadata_url]
    if local:
        metadata["local"] = local
    if remote:
        metadata["remote"] = remote
    nameid = [NAMEID_FORMAT_PERSISTENT] if idp is not None and idp.subject == "nameid" else []
    sp: dict[str, Any] = {
        "endpoints": {
            "assertion_consumer_service": [(acs_url(request, i), BINDING_HTTP_POST) for i in idps],
        },
        "allow_unsolicited": False,
        "authn_requests_signed": bool(settings.SSO_SAML_SP_KEY_FILE),
        "want_assertions_or_response_signed": True,
        "want_assertions_signed": False,
        "want_response_signed": False,
        "name_id_format": nameid,
        "name_id_format_allow_create": True,
    }
    config: dict[str, Any] = {
        "entityid": settings.SSO_SAML_SP_ENTITY_ID,
        "xmlsec_binary": settings.SSO_SAML_XMLSEC_BINARY,
        "service": {"sp": sp},
        "metadata": metadata,
        "accepted_time_diff": settings.SSO_CLOCK_SKEW_SECONDS,
        "allow_unknown_attributes": True,
    }
    if settings.SSO_SAML_SP_KEY_FILE:
        config["key_file"] = settings.SSO_SAML_SP_KEY_FILE
        config["cert_file"] = settings.SSO_SAML_SP_CERT_FILE
        config["encryption_keypairs"] = [
            {"key_file": settings.SSO_SAML_SP_KEY_FILE, "cert_file": settings.SSO_SAML_SP_CERT_FILE}
        ]
    loaded = SPConfig()
    loaded.load(config)
    return loaded


def client_for(request: HttpRequest, idp: SamlIdp) -> Saml2Client:
    version: Any = (
        os.stat(idp.metadata_file).st_mtime_ns
        if idp.metadata_file
        else int(time.time() // METADATA_URL_REFRESH_SECONDS)
    )
    key = (idp, acs_url(request, idp), settings.SSO_SAML_SP_ENTITY_ID, settings.SSO_CLOCK_SKEW_SECONDS, version)
    client = _clients.get(key)
    if client is None:
        client = Saml2Client(sp_config(request, idp))
        if len(_clients) > 64:
            _clients.clear()
        _clients[key] = client
    return client


def _request_key(request_id: str) -> str:
    return "sso-saml-request:" + hashlib.sha256(request_id.encode()).hexdigest()


def _assertion_key(idp: SamlIdp, assertion_id: str) -> str:
    return "sso-saml-assertion:" + hashlib.sha256(f"{idp.entity_id}\x00{assertion_id}".encode()).hexdigest()


@method_decorator(login_not_required, name="dispatch")
class SamlLoginView(View):
    """Sends the browser to the IdP with an AuthnRequest (HTTP-Redirect binding)."""

    access_policy = "public"
    http_method_names = ["get"]

    def get(self, request: HttpRequest, provider: str) -> HttpResponse:
        idp = idp_named(provider)
        next_url = request.GET.get("next", "")
        if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
            next_url = ""
        try:
            client = client_for(request, idp)
            request_id, info = client.prepare_for_authenticate(
                entityid=idp.entity_id, relay_state="", binding=BINDING_HTTP_REDIRECT
            )
        except Exception as exc:  # metadata unreachable or unreadable, IdP not in its own metadata
            return refuse(
                request,
                SignInRefused("Sign-in through this provider is unavailable.", f"AuthnRequest: {exc!r}", status=502),
                protocol=PROTOCOL, provider=idp.name,
            )
        location = dict(info["headers"])["Location"]
        cache.set(_request_key(request_id), {"provider": idp.name, "next": next_url}, settings.SSO_REQUEST_TTL_SECONDS)
        response = HttpResponseRedirect(location)
        secure = request.is_secure()
        response.set_cookie(
            COOKIE,
            signing.dumps({"id": request_id, "provider": idp.name}, salt=_SALT),
            max_age=settings.SSO_REQUEST_TTL_SECONDS,
            path=reverse("sso:saml-acs", kwargs={"provider": idp.name}),
            secure=secure,
            httponly=True,
            samesite="None" if secure else "Lax",
        )
        return response


def _reason(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}"
    lowered = text.lower()
    if "signature" in lowered or "signed" in lowered:
        return "The identity provider's response is not correctly signed."
    if "audience" in lowered:
        return "The identity provider's response was issued for another service."
    if "lifetime" in lowered or "toearly" in lowered or "too early" in lowered or "expired" in lowered:
        return "The identity provider's response has expired or is not yet valid."
    if "unsolicited" in lowered or "inresponseto" in lowered.replace(" ", ""):
        return "The identity provider's response does not answer this sign-in."
    if "status" in lowered:
        return "The identity provider did not sign you in."
    return "The identity provider's response could not be accepted."


@method_decorator(csrf_exempt, name="dispatch")  # the IdP's form POST carries no CSRF token; the signature stands in
@method_decorator(login_not_required, name="dispatch")
class SamlAcsView(View):
    """The assertion consumer service of one IdP (HTTP-POST binding)."""

    access_policy = "public"
    http_method_names = ["post"]

    def post(self, request: HttpRequest, provider: str) -> HttpResponse:
        idp = idp_named(provider)
        try:
            user, next_url = self._user(request, idp)
        except SignInRefused as exc:
            response = refuse(request, exc, protocol=PROTOCOL, provider=idp.name)
        else:
            sign_in(request, user, protocol=PROTOCOL, provider=idp.name)
            response = HttpResponseRedirect(next_url or resolve_url(settings.LOGIN_REDIRECT_URL))
        response.delete_cookie(COOKIE, path=reverse("sso:saml-acs", kwargs={"provider": idp.name}))
        return response

    def _user(self, request: HttpRequest, idp: SamlIdp) -> tuple[Any, str]:
        saml_response = request.POST.get("SAMLResponse", "")
        if not saml_response:
            raise SignInRefused("No SAML response was posted.", "no SAMLResponse", status=400)
        try:
            started = signing.loads(
                request.COOKIES.get(COOKIE, ""), salt=_SALT, max_age=settings.SSO_REQUEST_TTL_SECONDS
            )
        except signing.BadSignature:
            raise SignInRefused(
                "This sign-in was not started in this browser, or took too long. Start again from the login page.",
                "no valid request cookie", status=400,
            ) from None
        request_id = started.get("id", "")
        if started.get("provider") != idp.name:
            raise SignInRefused(
                "This sign-in was started for another provider.", "cookie of another provider", status=400
            )
        outstanding = cache.get(_request_key(request_id))
        if outstanding is None:
            raise SignInRefused(
                "This sign-in was already completed or has expired. Start again from the login page.",
                f"request {request_id} not outstanding",
            )
        try:
            response = client_for(request, idp).parse_authn_request_response(
                saml_response, BINDING_HTTP_POST, outstanding={request_id: outstanding["next"]}
            )
        except Exception as exc:  # pysaml2 raises plain Exceptions too (a wrong audience is one)
            raise SignInRefused(_reason(exc), f"{type(exc).__name__}: {exc}") from None
        if response is None:
            raise SignInRefused("The identity provider's response could not be read.", "unparsable response")
        if response.issuer() != idp.entity_id:
            raise SignInRefused("The response comes from another identity provider.", f"issuer {response.issuer()!r}")
        assertion_id = response.assertion.id if response.assertion is not None else ""
        # Used up: a second response answering the same request, or the same assertion again, is a replay.
        if not cache.delete(_request_key(request_id)):
            raise SignInRefused("This sign-in was already completed.", f"request {request_id} consumed concurrently")
        not_on_or_after = int(getattr(response, "not_on_or_after", 0) or 0)
        keep = max(60, not_on_or_after - int(time.time()) + settings.SSO_CLOCK_SKEW_SECONDS)
        if not assertion_id or not cache.add(_assertion_key(idp, assertion_id), 1, timeout=keep):
            raise SignInRefused("This assertion was already used.", f"assertion {assertion_id!r} replayed")
        return self._identity(response, idp), outstanding["next"]

    @staticmethod
    def _identity(response: Any, idp: SamlIdp) -> Any:
        attributes = response.get_identity() or {}
        name_id = response.name_id

        def first(attribute: str) -> str:
            values = attributes.get(attribute) if attribute else None
            return str(values[0]) if values else ""

        if idp.subject == "nameid":
            if name_id is None or name_id.format != NAMEID_FORMAT_PERSISTENT:
                raise SignInRefused(
                    "The identity provider sent no persistent NameID, the stable id Concord matches people by.",
                    f"NameID format {getattr(name_id, 'format', None)!r}",
                )
            subject = str(name_id.text or "")
        else:
            subject = first(idp.subject)
        return user_for_identity(
            protocol=PROTOCOL, provider=idp.name, issuer=idp.entity_id, subject=subject,
            username=first(idp.username_attribute), email=first(idp.email_attribute),
            first_name=first(idp.first_name_attribute), last_name=first(idp.last_name_attribute),
        )


@method_decorator(login_not_required, name="dispatch")
class SamlMetadataView(View):
    """This service provider's metadata (entity id, one ACS per IdP, the signing certificate when configured),
    for the IdPs' administrators to import."""

    access_policy = "public"
    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> HttpResponse:
        if not settings.SSO_SAML_IDPS:
            raise Http404("SAML is not configured")
        descriptor = entity_descriptor(sp_config(request, None))
        return HttpResponse(str(descriptor).encode(), content_type="application/samlmetadata+xml")


