"""Explicit access policies.

Every view and API class declares one policy name with ``@access_policy(...)`` (function views)
or an ``access_policy`` class attribute (class-based views, DRF). A test walks the URL
configuration and fails for any route without one. The policy names what the route checks;
the object-level check itself is done by the resource's access helper (``get_*_for_user``),
which answers 404 for objects the user may not know exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

POLICIES = {
    "public": "anyone, logged in or not (login page, static health check)",
    "authenticated": "any logged-in user; the view shows only the user's own objects",
    "annotator": "a member of the pool that owns the object; others get 404",
    "researcher": "a researcher of the study that owns the object; annotators 403, strangers 404",
    "adjudicator": "an adjudicator (or researcher) of the study; annotators 403, strangers 404",
    "staff": "site administrators only",
}

F = TypeVar("F", bound=Callable)


def access_policy(name: str) -> Callable[[F], F]:
    if name not in POLICIES:
        raise ValueError(f"unknown access policy {name!r}")

    def decorate(view: F) -> F:
        view.access_policy = name  # type: ignore[attr-defined]
        return view

    return decorate
