"""What adjudication's pages and API share on top of ``concord.http`` and ``concord.access``.

* :func:`report_errors`: ``concord.http.domain_errors`` for report pages, whose generic title says
  "Cannot compute this report" (404 and 403 still say as little as possible).
* :func:`check_format`, :func:`csv_download`, :func:`json_download`: the downloads of every report
  (``.csv`` or ``.json``, always as an attachment).
* :class:`ResearcherApi` and :func:`flat`: the base of the researcher-only API classes and the
  reading of form or JSON bodies alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from rest_framework.views import APIView

from concord.errors import DomainError, NotFound, ValidationFailed
from concord.http import attachment, error_response

REPORT_ERROR_TITLE = "Cannot compute this report"
DOWNLOAD_FORMATS = ("csv", "json")

V = TypeVar("V", bound=Callable[..., HttpResponse])


def report_errors(view: V) -> V:
    """Decorate a report view: a ``DomainError`` raised inside becomes the error page or fragment."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except DomainError as exc:
            return error_response(request, exc, title=REPORT_ERROR_TITLE)

    return wrapper  # type: ignore[return-value]


def check_format(fmt: str) -> None:
    """Refuse (404) a download format other than csv or json."""
    if fmt not in DOWNLOAD_FORMATS:
        raise NotFound("downloads are .csv or .json")


def csv_download(body: str, name: str) -> HttpResponse:
    return attachment(body, content_type="text/csv; charset=utf-8", filename=f"{name}.csv")


def json_download(report: Any, name: str) -> HttpResponse:
    return attachment(
        json.dumps(report, ensure_ascii=False, indent=1), content_type="application/json", filename=f"{name}.json"
    )


def report_download(fmt: str, report: Any, name: str, to_csv: Callable[[Any], str]) -> HttpResponse:
    """A report as ``name.csv`` (through ``to_csv``) or ``name.json``; ``fmt`` was checked by check_format."""
    return csv_download(to_csv(report), name) if fmt == "csv" else json_download(report, name)


class ResearcherApi(APIView):
    """Base of the API classes that only a researcher of the study may call."""

    access_policy = "researcher"


def flat(data: Any) -> dict[str, Any]:
    """Form or JSON bodies alike as a mapping of single values, as the parameter parsers read them from a
    query string: text, or from a JSON array a list of texts. A JSON number or boolean becomes its text and
    a null is left out; an object as a value, or a body that is not an object, is refused (400). (A parser
    calling ``.strip()`` on a JSON number answered 500.)"""
    if hasattr(data, "dict"):
        return data.dict()
    if not isinstance(data, dict):
        raise ValidationFailed("the body must be a JSON object or a form")
    return {str(key): text for key, value in data.items() if (text := _as_text(str(key), value)) is not None}


def _as_text(key: str, value: Any) -> str | list[str] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return [str(v) for v in value]
    raise ValidationFailed(f"{key} must be text, a number or a list of them")
