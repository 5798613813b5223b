"""Every route declares an access policy.

The test walks the whole URL configuration; a view without a declared policy fails it, so a new
route cannot be added without saying who may use it.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.urls import URLPattern, URLResolver, get_resolver

from concord.access import POLICIES

# The Django admin is its own, staff-only application with its own permission checks.
ADMIN_PREFIX = "admin/"


def _walk(patterns: list, prefix: str = "") -> Iterator[tuple[str, object]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def _policy_of(callback: object) -> str | None:
    for holder in (callback, getattr(callback, "view_class", None), getattr(callback, "cls", None)):
        policy = getattr(holder, "access_policy", None) if holder is not None else None
        if policy:
            return policy
    return None


def test_every_route_declares_a_known_access_policy():
    missing, unknown = [], []
    for route, callback in _walk(get_resolver().url_patterns):
        if route.startswith(ADMIN_PREFIX):
            continue
        policy = _policy_of(callback)
        if policy is None:
            missing.append(route)
        elif policy not in POLICIES:
            unknown.append((route, policy))
    assert not missing, f"routes without an access policy: {missing}"
    assert not unknown, f"routes with an unknown policy: {unknown}"


def test_the_walk_sees_the_routes_of_every_app():
    routes = [route for route, _ in _walk(get_resolver().url_patterns)]
    assert "accounts/login/" in routes
    assert len(routes) > 5


def test_the_invitation_routes_declare_their_policies():
    policies = {route: _policy_of(callback) for route, callback in _walk(get_resolver().url_patterns)}
    # The invited person's pages: any logged-in user, shown only their own invitation (404 otherwise).
    for route in (
        "invitations/<int:invitation_id>/",
        "invitations/<int:invitation_id>/accept/",
        "invitations/<int:invitation_id>/decline/",
    ):
        assert policies[route] == "authenticated", route
    # Withdrawing one: the study's researchers.
    assert policies["console/<slug:slug>/invitations/<int:invitation_id>/withdraw/"] == "researcher"
    assert policies["api/console/studies/<slug:slug>/invitations/<int:invitation_id>/"] == "researcher"
