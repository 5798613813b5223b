"""Guidelines and help pages: CommonMark rendered in process by markdown-it-py, then sanitised with nh3.

Python-Markdown, used before, backtracks (2,000 ``[`` took about a second, 6,000 about nine), so it ran in
a child process under a time budget. markdown-it-py follows the CommonMark reference parser, whose work
grows linearly with the text on CommonMark's pathological inputs (runs of ``[``, ``*``, backticks, ``<``,
nested block quotes and lists, long chains of link references): 20,000 ``[`` render in about 0.3 s on one
core. ``tests/test_security_markdown.py`` holds the linearity without a clock, by counting the tokens the
parser makes as the input doubles. So a text is rendered inside the request, with no child process and no
time budget. The parser's options:

* the CommonMark preset with GFM tables (as Python-Markdown's ``tables`` extension gave the help pages);
* ``html`` off: raw HTML in the text is shown as text, never passed on (``<script>`` reads as
  ``&lt;script&gt;``); ``<https://…>`` autolinks still work;
* no linkify (bare URLs stay text, as before; linkify would add a regex-based dependency for nothing the
  guides need) and no typographer;
* markdown-it's own link check (no ``javascript:``, ``vbscript:``, ``file:`` or ``data:`` link);
* nesting capped at ``MAX_NESTING`` (20, the CommonMark preset's own) levels: the parser's recursion stays
  far inside Python's limit, and its work on runs of ``[`` (proportional to the text times this cap) stays
  small. markdown-it skips, silently, block content nested deeper (a tenth level of lists, a twentieth of
  quotes); ``_Blocks`` notes when it does, and guidelines that would lose text so are refused (400) when
  previewed or saved, naming the reason. Inline nesting beyond the cap is kept as text.

Guidelines are also capped at ``GUIDELINES_MAX_CHARS`` characters (default 20,000; 413 above) for the
preview and for saving (``guidelines_check``), to keep what a study stores small. The item page keeps the
rendered HTML per process (``render_guidelines`` is memoised on the text).

The HTML is then sanitised with ``nh3`` to a small allow-list (no raw HTML, no script, no style, no
attribute but a link's ``href`` and ``title``, only http, https and mailto links).
"""

from __future__ import annotations

import functools
from typing import Any

import nh3
from django.conf import settings
from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock

from concord.errors import PayloadTooLarge, ValidationFailed

ALLOWED_TAGS = {
    "p", "br", "strong", "em", "ul", "ol", "li", "code", "pre", "blockquote",
    "h1", "h2", "h3", "h4", "a", "table", "thead", "tbody", "tr", "th", "td", "hr",
}  # fmt: skip

MAX_NESTING = 20
CUT = "concord_nesting_cut"


class _Blocks(ParserBlock):
    """markdown-it's block parser, noting in the parse's ``env`` when it skips lines nested deeper than
    ``maxNesting`` (its loop skips the rest of a container once the level is reached, and the level does
    not change inside that loop, so the test at entry sees every skip)."""

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        if state.level >= state.md.options.maxNesting:
            line = state.skipEmptyLines(startLine)
            if line < endLine and state.sCount[line] >= state.blkIndent:
                state.env[CUT] = True
        super().tokenize(state, startLine, endLine)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "maxNesting": MAX_NESTING})
    md.enable("table")
    blocks = _Blocks()
    blocks.ruler = md.block.ruler  # the preset's rules, table enabled
    md.block = blocks
    return md


# One parser for the process: markdown-it keeps no state between calls (each parse has its own state).
PARSER = _parser()


@functools.lru_cache(maxsize=64)
def _render(text: str) -> tuple[str, bool]:
    """Sanitised HTML of ``text``, and whether markdown-it left out content nested too deeply."""
    if not text.strip():
        return "", False
    env: dict[str, Any] = {}
    html = PARSER.renderer.render(PARSER.parse(text, env), PARSER.options, env)
    clean = nh3.clean(
        html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, url_schemes={"http", "https", "mailto"}
    )
    return clean, bool(env.get(CUT))


def guidelines_check(text: str) -> None:
    """Refuse guidelines longer than the cap (413), or that nest so deeply that some text would not be
    shown (400)."""
    limit = settings.GUIDELINES_MAX_CHARS
    if len(text) > limit:
        raise PayloadTooLarge(f"guidelines are limited to {limit:,} characters (these have {len(text):,})")
    if _render(text)[1]:
        raise ValidationFailed(
            f"these guidelines nest lists or block quotes more than {MAX_NESTING} levels deep (a list counts two: "
            "the list and its item), and the text inside would not be shown; flatten them"
        )


def render_guidelines(text: str) -> str:
    """Sanitised HTML of the Markdown ``text`` (memoised per process)."""
    return _render(text)[0]
