"""Web plumbing shared by every app's HTML views: one mapping of ``DomainError`` to a page or an htmx
fragment, and one htmx-aware render that sets ``Vary: HX-Request``.

The REST API has its own single mapping (``concord.api_errors.exception_handler``); views never
translate errors themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from concord.errors import DomainError

ERROR_PAGE = "concord/error.html"
ERROR_FRAGMENT = "concord/_error.html"

V = TypeVar("V", bound=Callable[..., HttpResponse])


def is_htmx(request: HttpRequest) -> bool:
    """Whether the request came from htmx (django-htmx sets ``request.htmx``)."""
    return bool(getattr(request, "htmx", False))


def vary_on_htmx(response: HttpResponse) -> HttpResponse:
    """Mark a response that differs for htmx requests, so that no cache serves a fragment as a page."""
    patch_vary_headers(response, ("HX-Request",))
    return response


def htmx_render(
    request: HttpRequest,
    template: str,
    context: Mapping[str, Any] | None = None,
    *,
    fragment: str = "",
    status: int = 200,
) -> HttpResponse:
    """Render ``fragment`` for an htmx request (when given) and ``template`` otherwise, with ``Vary``."""
    name = fragment if fragment and is_htmx(request) else template
    return vary_on_htmx(render(request, name, dict(context or {}), status=status))


def error_response(request: HttpRequest, error: DomainError, *, title: str = "") -> HttpResponse:
    """A ``DomainError`` as a page, or as a fragment for htmx, with the error's status code.

    404 and 403 say as little as possible: the message of the access helpers never tells whether an
    object exists.
    """
    return htmx_render(
        request, ERROR_PAGE, {"error": error, "title": title}, fragment=ERROR_FRAGMENT, status=error.status_code
    )


def domain_errors(view: V) -> V:
    """Decorate an HTML view: a ``DomainError`` raised inside becomes :func:`error_response`."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except DomainError as exc:
            return error_response(request, exc)

    return wrapper  # type: ignore[return-value]


def attachment(body: str | bytes, *, content_type: str, filename: str) -> HttpResponse:
    """A download: ``Content-Disposition: attachment`` so that the browser never renders it."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
