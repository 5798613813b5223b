"""The single sign-on providers, read from the environment (docs/guide/sso.md).

``CONCORD_OIDC_PROVIDERS`` and ``CONCORD_SAML_IDPS`` each hold a JSON object whose keys are provider names (lower
case letters, digits and '-': they appear in URLs, /sso/oidc/<name>/... and /sso/saml/<name>/...) and whose values
describe one provider. As everywhere in concord.env, a bad value stops the process naming the variable: an unknown
key, a missing one, a wrong type, an http:// endpoint in production. Nothing is fetched at start-up (no discovery
document, no remote metadata): the endpoints are written out, so a process never depends on the network to start.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
OIDC_ALGORITHMS = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}


@dataclass(frozen=True)
class OidcProvider:
    name: str
    label: str
    issuer: str
    client_id: str
    client_secret: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    scopes: str = "openid email profile"
    algorithm: str = "RS256"
    username_claim: str = "preferred_username"
    email_claim: str = "email"
    pkce: bool = True
    leeway_seconds: int = 60
    timeout_seconds: int = 10
    extra_params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SamlIdp:
    name: str
    label: str
    entity_id: str
    metadata_file: str = ""
    metadata_url: str = ""
    # "nameid" (a persistent NameID, the default) or the name of the attribute that holds the stable id.
    subject: str = "nameid"
    username_attribute: str = ""
    email_attribute: str = ""
    first_name_attribute: str = ""
    last_name_attribute: str = ""


_OIDC_REQUIRED = (
    "label", "issuer", "client_id", "client_secret", "authorization_endpoint", "token_endpoint", "jwks_uri"
)
_SAML_REQUIRED = ("label", "entity_id")


def _fail(variable: str, message: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{variable}: {message} (docs/guide/sso.md)")


def _load(variable: str, raw: str | None) -> dict[str, dict[str, Any]]:
    if raw is None or raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _fail(variable, f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(value, dict):
        raise _fail(variable, "must be a JSON object of {provider name: settings}")
    for name, entry in value.items():
        if not NAME.match(name):
            raise _fail(variable, f"provider name {name!r} must be 1-32 lower-case letters, digits or '-'")
        if not isinstance(entry, dict):
            raise _fail(variable, f"provider {name!r} must be a JSON object")
    return value


def _fields(cls: type, variable: str, name: str, entry: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    known = {f for f in cls.__dataclass_fields__ if f != "name"}  # type: ignore[attr-defined]
    unknown = sorted(set(entry) - known)
    if unknown:
        raise _fail(variable, f"provider {name!r}: unknown key(s) {unknown}; known: {sorted(known)}")
    missing = [key for key in required if not entry.get(key)]
    if missing:
        raise _fail(variable, f"provider {name!r}: missing {missing}")
    defaults = cls(name=name, **{key: entry.get(key, "x") for key in required})  # type: ignore[call-arg]
    for key, value in entry.items():
        expected = type(getattr(defaults, key))
        if expected is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise _fail(variable, f"provider {name!r}: {key} must be a non-negative integer")
        if expected is bool and not isinstance(value, bool):
            raise _fail(variable, f"provider {name!r}: {key} must be true or false")
        if expected is str and not isinstance(value, str):
            raise _fail(variable, f"provider {name!r}: {key} must be a string")
        if expected is dict and not (
            isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            raise _fail(variable, f"provider {name!r}: {key} must be an object of strings")
    return {"name": name, **entry}


def _check_url(variable: str, name: str, key: str, url: str, *, production: bool) -> None:
    if not re.match(r"^https?://[^\s/]+", url):
        raise _fail(variable, f"provider {name!r}: {key} must be an http(s) URL, got {url!r}")
    if production and not url.startswith("https://"):
        raise _fail(variable, f"provider {name!r}: {key} must use https:// in production")


def oidc_providers(raw: str | None, *, production: bool) -> dict[str, OidcProvider]:
    variable = "CONCORD_OIDC_PROVIDERS"
    providers = {}
    for name, entry in _load(variable, raw).items():
        provider = OidcProvider(**_fields(OidcProvider, variable, name, entry, _OIDC_REQUIRED))
        for key in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"):
            _check_url(variable, name, key, getattr(provider, key), production=production)
        if provider.algorithm not in OIDC_ALGORITHMS:
            raise _fail(variable, f"provider {name!r}: algorithm must be one of {sorted(OIDC_ALGORITHMS)}")
        if "openid" not in provider.scopes.split():
            raise _fail(variable, f"provider {name!r}: scopes must include openid")
        providers[name] = provider
    return providers


def saml_idps(raw: str | None, *, production: bool) -> dict[str, SamlIdp]:
    variable = "CONCORD_SAML_IDPS"
    idps = {}
    for name, entry in _load(variable, raw).items():
        idp = SamlIdp(**_fields(SamlIdp, variable, name, entry, _SAML_REQUIRED))
        if bool(idp.metadata_file) == bool(idp.metadata_url):
            raise _fail(variable, f"provider {name!r}: give exactly one of metadata_file and metadata_url")
        if idp.metadata_file and not Path(idp.metadata_file).is_file():
            raise _fail(variable, f"provider {name!r}: metadata_file {idp.metadata_file!r} is not a file")
        if idp.metadata_url:
            _check_url(variable, name, "metadata_url", idp.metadata_url, production=production)
        if not idp.subject:
            raise _fail(variable, f"provider {name!r}: subject must be 'nameid' or an attribute name")
        idps[name] = idp
    return idps


def check_names(oidc: dict[str, OidcProvider], saml: dict[str, SamlIdp]) -> None:
    shared = sorted(set(oidc) & set(saml))
    if shared:
        raise ImproperlyConfigured(
            f"CONCORD_OIDC_PROVIDERS and CONCORD_SAML_IDPS both name {shared}: each provider name must be unique"
        )
