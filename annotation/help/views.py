"""/help/: the user guide per role, read from ``docs/guide/`` (one source: the same files are read on
GitHub). Pages are found by name among the files that exist (no path is ever built from the request
beyond a slug checked against that list), rendered with ``safe_markdown`` (sanitised), and a link to
another guide page (``export.md``) becomes its /help/ address."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from annotation.templatetags.concord_tags import safe_markdown
from concord.access import access_policy
from concord.errors import NotFound
from concord.http import domain_errors

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,60}$")
_MD_LINK = re.compile(r'href="(?:\.\./)?(?:guide/)?([a-z0-9][a-z0-9-]{0,60})\.md(#[\w-]*)?"')


def _docs() -> Path:
    return Path(settings.BASE_DIR) / "docs"


def pages() -> dict[str, Path]:
    """Every guide page by slug: docs/guide/<slug>.md, the import format reference and the metric pages."""
    found = {p.stem: p for p in sorted((_docs() / "guide").glob("*.md")) if _SLUG.match(p.stem)}
    found["import-format"] = _docs() / "import-format.md"
    # The metric pages (docs/metrics/<metric>.md): each score run links to its metric's page.
    found["metrics"] = _docs() / "metrics" / "README.md"
    for path in sorted((_docs() / "metrics").glob("*.md")):
        if path.stem != "README" and _SLUG.match(path.stem):
            found[f"metric-{path.stem}"] = path
    return found


def _title(text: str, slug: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return slug.replace("-", " ").capitalize()


@lru_cache(maxsize=64)
def _render(path: str, mtime: float) -> tuple[str, str]:
    text = Path(path).read_text(encoding="utf-8")
    html = str(safe_markdown(text))
    known = set(pages())

    def link(match: re.Match[str]) -> str:
        slug, anchor = match.group(1), match.group(2) or ""
        if slug not in known:
            return match.group(0)
        return f'href="{reverse("help:page", args=[slug])}{anchor}"'

    return _title(text, Path(path).stem), _MD_LINK.sub(link, html)


def rendered(slug: str) -> tuple[str, SafeString]:
    path = pages().get(slug) if _SLUG.match(slug or "") else None
    if path is None or not path.is_file():
        raise NotFound(f"there is no help page {slug!r}")
    title, html = _render(str(path), path.stat().st_mtime)
    # safe_markdown's output, sanitised, with only guide links rewritten to their /help/ address.
    return title, mark_safe(html)


@access_policy("authenticated")
@require_GET
@domain_errors
def index(request: HttpRequest) -> HttpResponse:
    return page(request, "index")


@access_policy("authenticated")
@require_GET
@domain_errors
def page(request: HttpRequest, slug: str) -> HttpResponse:
    title, html = rendered(slug)
    return render(request, "help/page.html", {"title": title, "html": html, "slug": slug})
