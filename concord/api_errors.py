"""The REST API's one error shape, given once here (DRF's exception handler) for every endpoint.

Every error body is ``{"error": code, "detail": sentence, "details"?: structure}``: the domain errors
(``concord.errors.DomainError.as_dict``) and DRF's own alike. ``error`` is a short machine code, ``detail`` one
human sentence, and ``details``, only where there is more to say, a JSON structure (for a validation error
the fields and their messages, ``{"field": ["message", ...]}``, nested as the input was). DRF's exceptions keep
their status codes and headers (``WWW-Authenticate`` on a 401, ``Retry-After`` on a 429); only the body is
rewritten. Their codes, where a domain error means the same, are the domain error's:

=====================================  =======  ==========================
DRF exception                          status   ``error``
=====================================  =======  ==========================
ValidationError                        400      ``invalid``
ParseError                             400      ``parse_error``
AuthenticationFailed                   401/403  ``authentication_failed``
NotAuthenticated                       401/403  ``not_authenticated``
PermissionDenied (Django's too)        403      ``forbidden``
NotFound (and Django's Http404)        404      ``not_found``
MethodNotAllowed                       405      ``method_not_allowed``
NotAcceptable                          406      ``not_acceptable``
UnsupportedMediaType                   415      ``unsupported_media_type``
Throttled                              429      ``too_many_requests``
=====================================  =======  ==========================

401/403: DRF answers 401 only when the first authenticator names a scheme for ``WWW-Authenticate``; this
project's first is the session (``settings.REST_FRAMEWORK``), so these two answer 403 here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from concord.errors import DomainError

# DRF's exceptions whose meaning a domain error already has a code for; the others keep DRF's code.
_SHARED_CODES: tuple[tuple[type[exceptions.APIException], str], ...] = (
    (exceptions.ValidationError, "invalid"),
    (exceptions.PermissionDenied, "forbidden"),
    (exceptions.NotFound, "not_found"),
    (exceptions.Throttled, "too_many_requests"),
)


class ErrorSerializer(serializers.Serializer):
    """The error body, for the OpenAPI schema of the endpoints that declare their errors."""

    error = serializers.CharField(help_text="A short machine code: invalid, not_found, forbidden, conflict, ...")
    detail = serializers.CharField(help_text="One sentence for a person.")
    details = serializers.JSONField(
        required=False, help_text="More, where there is more: for invalid input, each field's messages."
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(exc.as_dict(), status=exc.status_code)
    # DRF turns these two Django exceptions into its own before answering; done here first so that the
    # body below is built from the exception that answers.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        response.data = error_body(exc)
    return response


def error_body(exc: exceptions.APIException) -> dict[str, Any]:
    """The body of a DRF exception in the API's one error shape."""
    code = next((code for kind, code in _SHARED_CODES if isinstance(exc, kind)), exc.default_code)
    if not isinstance(exc, exceptions.ValidationError):
        return {"error": code, "detail": str(exc.detail)}
    messages = list(_messages(exc.detail, ()))
    sentence = "; ".join(_phrase(path, message) for path, message in messages) or "Invalid input"
    if len(messages) == 1 and not messages[0][0]:
        return {"error": code, "detail": sentence}  # one message about no field: nothing more to say
    return {"error": code, "detail": sentence, "details": _plain(exc.detail)}


def _messages(detail: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """Each message of a validation error's ``detail`` with the dotted path of the field it is about
    (``units.2.value``; empty for the input as a whole), in the order the input had them."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            key = str(key)
            yield from _messages(value, path if key == api_settings.NON_FIELD_ERRORS_KEY else (*path, key))
    elif isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            for item in detail:
                yield ".".join(path), str(item)
        else:  # a list of nested inputs: each item's errors under its index ({} for an item without any)
            for index, item in enumerate(detail):
                yield from _messages(item, (*path, str(index)))
    else:
        yield ".".join(path), str(detail)


def _phrase(path: str, message: str) -> str:
    message = message.rstrip(".")
    # Concord's own field messages name their field already ("limit must be a whole number ...").
    return message if not path or message.startswith(path) else f"{path}: {message}"


def _plain(detail: Any) -> Any:
    """``detail`` as plain JSON values: strings instead of DRF's ErrorDetail, string keys."""
    if isinstance(detail, dict):
        return {str(key): _plain(value) for key, value in detail.items()}
    if isinstance(detail, list):
        return [_plain(item) for item in detail]
    return str(detail)


# --- Outside any endpoint -------------------------------------------------------------------------------
# A path under /api/ that names no endpoint, and an unhandled exception in one, never reach the handler above:
# Django answers them. These two answer the API's paths in the one shape too (concord/urls.py names them
# handler404 and handler500); every other path keeps Django's pages.

API_PREFIX = "/api/"


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        return JsonResponse({"error": "not_found", "detail": str(exceptions.NotFound.default_detail)}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        return JsonResponse({"error": "server_error", "detail": "A server error occurred."}, status=500)
    return defaults.server_error(request)
