"""Every route declares an access policy, and every function view stacks its decorators in one order.

The test walks the whole URL configuration; a view without a declared policy fails it, so a new
route cannot be added without saying who may use it. Another parses the source of every module of the
apps and fails on a function whose decorators are out of the order ``concord/access.py`` writes down.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

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


# --- One decorator order for function views (concord/access.py's docstring) ---------------------------------

ROOT = Path(__file__).resolve().parent.parent
APPS = ("concord", "annotation", "scoring", "adjudication")
# Outermost first: the access policy, then the HTTP method, then the error handler.
DECORATOR_RANK = {
    "access_policy": 0,
    "require_GET": 1,
    "require_POST": 1,
    "require_safe": 1,
    "require_http_methods": 1,
    "domain_errors": 2,
    "report_errors": 2,
}


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _views_out_of_order(source: str, filename: str = "<source>") -> tuple[int, list[str]]:
    """(how many functions carry an ordered decorator, 'file:line name: order' for each out of order).

    Out of order: the ordered decorators do not come in ``DECORATOR_RANK`` order, or ``@access_policy``
    is not the outermost decorator.
    """
    seen, wrong = 0, []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        names = [_decorator_name(d) for d in node.decorator_list]
        ranks = [DECORATOR_RANK[n] for n in names if n in DECORATOR_RANK]
        if not ranks:
            continue
        seen += 1
        if ranks != sorted(ranks) or ("access_policy" in names and names[0] != "access_policy"):
            wrong.append(f"{filename}:{node.lineno} {node.name}: @{', @'.join(names)}")
    return seen, wrong


def test_function_views_stack_their_decorators_in_one_order():
    seen: dict[str, int] = {}
    wrong: list[str] = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            n, bad = _views_out_of_order(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
            seen[app] = seen.get(app, 0) + n
            wrong += bad
    # Each app with pages has function views: a walk that finds none in one is looking in the wrong place.
    assert all(seen[app] for app in ("annotation", "scoring", "adjudication")), seen
    assert not wrong, "views whose decorators are out of order (access_policy, method, errors):\n" + "\n".join(wrong)


def test_the_decorator_order_check_finds_a_swapped_order():
    swapped = (
        "@access_policy('researcher')\n@domain_errors\n@require_POST\ndef a(request): ...\n\n"
        "@require_GET\n@access_policy('researcher')\ndef b(request): ...\n\n"
        "@report_errors\n@access_policy('researcher')\n@require_GET\ndef c(request): ...\n"
    )
    seen, wrong = _views_out_of_order(swapped)
    assert seen == 3
    assert [line.split(" ")[1].rstrip(":") for line in wrong] == ["a", "b", "c"]
    good = "@access_policy('researcher')\n@require_http_methods(['GET', 'POST'])\n@report_errors\ndef d(request): ...\n"
    assert _views_out_of_order(good) == (1, [])
