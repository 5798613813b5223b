"""The URLconf's order decides which view answers a path that two patterns match: every named route, with
sample arguments, must resolve to the route it was reversed from (no pattern shadows another)."""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

SAMPLES = {"int": "7", "slug": "a-study", "str": "name", "path": "a/b", "uuid": "12345678-1234-5678-1234-567812345678"}


def _named(patterns, namespace=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from _named(p.url_patterns, ns)
        elif isinstance(p, URLPattern) and p.name:
            yield f"{namespace}{p.name}", p


def test_every_named_route_resolves_to_itself():
    checked = 0
    seen: set[str] = set()
    for name, pattern in _named(get_resolver().url_patterns):
        if name in seen or name.startswith("admin:"):
            continue
        seen.add(name)
        converters = re.findall(r"<(?:(\w+):)?(\w+)>", str(pattern.pattern))
        if isinstance(pattern.pattern.regex, re.Pattern) and not converters and "(?P<" in pattern.pattern.regex.pattern:
            continue  # a regex route (none of ours): no sample arguments
        kwargs = {arg: SAMPLES.get(kind or "str", "name") for kind, arg in converters}
        url = reverse(name, kwargs=kwargs)
        match = resolve(url)
        assert match.view_name == name, (url, match.view_name, name)
        checked += 1
    assert checked > 100
