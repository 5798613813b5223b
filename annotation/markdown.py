"""Guidelines Markdown: rendered in a child process under a time budget, then sanitised.

Python-Markdown's inline patterns backtrack: its time grows faster than linearly on some inputs (runs of
``[``: 2,000 characters take about a second, 6,000 about nine), so a text could hold a web worker for
minutes. Three limits keep it bounded:

* a length cap, ``GUIDELINES_MAX_CHARS`` (default 20,000 characters), for the preview and for saving;
* the rendering runs in a separate Python process (``python -I``, Markdown only) that is killed once
  ``MARKDOWN_RENDER_TIMEOUT_SECONDS`` (default 5 s) have passed; the text is then refused with a clear
  message (never rendered partly or as raw text);
* a study's guidelines are checked the same way when they are saved (``guidelines_check``), so what an
  item page renders has already rendered in time; the item page keeps the result per process
  (``render_guidelines`` is memoised on the text) and so renders each version once.

The HTML is then sanitised with ``nh3`` to a small allow-list (no raw HTML, no script, no style).
"""

from __future__ import annotations

import functools
import subprocess
import sys

import nh3
from django.conf import settings

from concord.errors import PayloadTooLarge, ValidationFailed

ALLOWED_TAGS = {
    "p", "br", "strong", "em", "ul", "ol", "li", "code", "pre", "blockquote",
    "h1", "h2", "h3", "h4", "a", "table", "thead", "tbody", "tr", "th", "td", "hr",
}  # fmt: skip

# The child reads the text on stdin and writes the HTML on stdout; -I: no user site, no current directory.
_RENDERER = (
    "import sys, markdown;"
    "sys.stdout.write(markdown.markdown(sys.stdin.read(), extensions=['tables'], output_format='html'))"
)


class MarkdownTooSlow(ValidationFailed):
    pass


def _render_unsanitised(text: str) -> str:
    budget = settings.MARKDOWN_RENDER_TIMEOUT_SECONDS
    try:
        done = subprocess.run(  # noqa: S603 (our interpreter and a fixed program; the text goes to stdin)
            [sys.executable, "-I", "-c", _RENDERER],
            input=text.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=budget,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise MarkdownTooSlow(
            f"these guidelines take more than {budget:g} s to render; simplify the Markdown "
            "(long runs of brackets, emphasis or nesting are the usual cause)"
        ) from None
    if done.returncode != 0:
        raise ValidationFailed("these guidelines could not be rendered as Markdown")
    return done.stdout.decode("utf-8", "replace")


def guidelines_check(text: str) -> None:
    """Refuse guidelines longer than the cap (413) or that do not render within the budget (400)."""
    limit = settings.GUIDELINES_MAX_CHARS
    if len(text) > limit:
        raise PayloadTooLarge(f"guidelines are limited to {limit:,} characters (these have {len(text):,})")
    render_guidelines(text)


@functools.lru_cache(maxsize=64)
def render_guidelines(text: str) -> str:
    """Sanitised HTML of ``text``; raises ``ValidationFailed`` when it cannot be rendered in time."""
    if not text.strip():
        return ""
    html = _render_unsanitised(text)
    return nh3.clean(
        html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, url_schemes={"http", "https", "mailto"}
    )
