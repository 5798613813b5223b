"""Guidelines Markdown: the preview is for researchers, text is capped, raw HTML never passes, and the
renderer's work grows linearly with the text on CommonMark's pathological inputs, so any text up to the
cap renders inside the request (Python-Markdown, used before, backtracked on runs of ``[``).

Linearity is held without a clock: the work of a rendering is the number of lines of markdown-it-py
that run (a trace counts them; the same on any machine), and doubling a pathological input must at most
double it. 20,000-character inputs are rendered too, with no time limit but the suite's."""

from __future__ import annotations

import sys
from pathlib import Path

import markdown_it
import pytest
from django.urls import reverse

from annotation import markdown
from annotation.console import services as svc
from annotation.models import Study
from concord.errors import PayloadTooLarge, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db

# CommonMark's own pathological cases (commonmark/cmark test/pathological_tests.py), and a few more, as a
# function of the length wanted.
PATHOLOGICAL = {
    "runs of [": lambda n: "[" * n,
    "runs of ]": lambda n: "]" * n,
    "unclosed links [a](": lambda n: "[a](" * (n // 4),
    "unclosed links [a](<b": lambda n: "[a](<b" * (n // 6),
    "link openers and images [![": lambda n: "[![" * (n // 3),
    "runs of *": lambda n: "*" * n,
    "emphasis openers *a": lambda n: "*a" * (n // 2),
    "mismatched openers and closers *a_": lambda n: "*a_" * (n // 3),
    "openers and closers multiple of 3": lambda n: "a**b c* " * (n // 8),
    "nested strong and emphasis": lambda n: "*a **a " * (n // 14) + "b" + " a** a*" * (n // 14),
    "runs of backticks": lambda n: "`" * n,
    "backtick runs of growing length": lambda n: "".join("`" * i + "x" for i in range(1, 400))[:n],
    "e` pairs": lambda n: "e`" * (n // 2),
    "runs of <": lambda n: "<" * n,
    "unclosed tags <a": lambda n: "<a" * (n // 2),
    "unclosed comments <!--": lambda n: "<!--" * (n // 4),
    "unclosed autolinks <http://": lambda n: "<http://" * (n // 8),
    "nested block quotes": lambda n: ">" * n + " a",
    "nested lists on one line": lambda n: "- " * (n // 2) + "a",
    "nested block quotes and lists": lambda n: "> - " * (n // 4) + "a",
    "indented nested lists": lambda n: "".join("  " * (i % 60) + "- a\n" for i in range(n // 64)),
    "link reference chain": lambda n: "".join(f"[l{i}]: /u{i}\n" for i in range(n // 24))
    + "".join(f"[l{i}]" for i in range(n // 24)),
    "table rows": lambda n: "a|b\n-|-\n" + "a|b\n" * (n // 4),
    "table cells": lambda n: "|" * (n // 2) + "\n" + "|-" * (n // 4) + "\n",
    "entities": lambda n: "&#" * (n // 2),
    "backslashes": lambda n: "\\" * n,
}

MARKDOWN_IT = str(Path(markdown_it.__file__).parent)


def _work(text: str) -> tuple[int, int]:
    """Lines of markdown-it-py run to render ``text`` (its parse and its HTML), and the HTML's length."""
    lines = 0

    def count(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
        return count

    def calls(frame, event, arg):
        return count if frame.f_code.co_filename.startswith(MARKDOWN_IT) else None

    sys.settrace(calls)
    try:
        html = markdown.PARSER.render(text)
    finally:
        sys.settrace(None)
    return lines, len(html)


@pytest.fixture(autouse=True)
def _fresh(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    markdown._render.cache_clear()
    yield
    markdown._render.cache_clear()


def _preview(client, text: str):
    return client.post(reverse("console:guidelines_preview"), {"guidelines": text})


@pytest.mark.parametrize("role", [None, "annotator", "adjudicator"])
def test_only_researchers_may_use_the_guidelines_preview(client, study, role):
    user = factories.make_user()
    if role:
        factories.grant(study, user, role)
    client.force_login(user)
    assert _preview(client, "**bold**").status_code == 403


def test_a_researcher_previews_sanitised_markdown(client, researcher, study):
    client.force_login(researcher)
    response = _preview(client, "**bold** <script>alert(1)</script> [x](javascript:alert(1)) <b onclick=x>b</b>")
    assert response.status_code == 200
    body = response.content.decode()
    assert "<strong>bold</strong>" in body and "<script>alert" not in body and 'href="javascript:' not in body
    # Raw HTML is not passed on: it reads as text; the javascript: link stays text too.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<b " not in body
    assert "[x](javascript:alert(1))" in body


def test_the_preview_refuses_text_above_the_cap(client, researcher, study, settings):
    client.force_login(researcher)
    assert _preview(client, "a" * (settings.GUIDELINES_MAX_CHARS + 1)).status_code == 413


def test_twenty_thousand_brackets_render_in_the_preview(client, researcher, study, settings):
    """Python-Markdown needed minutes for this (it was refused after its 5 s budget); CommonMark renders it."""
    client.force_login(researcher)
    response = _preview(client, "[" * settings.GUIDELINES_MAX_CHARS)
    assert response.status_code == 200
    assert "[" * settings.GUIDELINES_MAX_CHARS in response.content.decode()


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_the_renderers_work_at_most_doubles_when_a_pathological_input_doubles(name):
    make = PATHOLOGICAL[name]
    small_work, small_html = _work(make(1500))
    large_work, large_html = _work(make(3000))
    # Linear work doubles (a little less, the fixed part counting once); quadratic work would quadruple.
    assert large_work <= 2.3 * small_work, (name, small_work, large_work)
    assert large_html <= 2.3 * small_html + 100, (name, small_html, large_html)


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_pathological_inputs_at_the_cap_render(name, settings):
    text = PATHOLOGICAL[name](settings.GUIDELINES_MAX_CHARS)[: settings.GUIDELINES_MAX_CHARS]
    assert len(text) > settings.GUIDELINES_MAX_CHARS * 0.7
    html = markdown.render_guidelines(text)
    assert "<script" not in html and " on" not in html.replace(" one", "")


def _lists(levels: int) -> str:
    return "".join("  " * i + f"- level{i}\n" for i in range(levels)) + "\nAfter the list.\n"


def test_text_nested_within_the_limit_renders_whole():
    text = _lists(9) + "\n" + ">" * 19 + " deep quote"
    markdown.guidelines_check(text)
    html = markdown.render_guidelines(text)
    assert "level8" in html and "After the list." in html and "deep quote" in html


@pytest.mark.parametrize("text", [_lists(10), ">" * 20 + " deep quote", "> - " * 10 + "deep"])
def test_guidelines_nested_beyond_the_limit_are_refused_not_cut(client, researcher, study, text):
    """markdown-it skips block content nested deeper than its limit without a word; guidelines that would
    lose text so are refused, naming the reason."""
    assert "level9" not in markdown.render_guidelines(text) and "deep" not in markdown.render_guidelines(text)
    with pytest.raises(ValidationFailed, match="levels deep"):
        markdown.guidelines_check(text)
    client.force_login(researcher)
    response = _preview(client, text)
    assert response.status_code == 400 and "levels deep" in response.content.decode()
    with pytest.raises(ValidationFailed):
        svc.study_update(study=study, actor=researcher, guidelines=text)


def test_guidelines_keep_tables_fenced_code_and_headings():
    html = markdown.render_guidelines("# Rules\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\nx < y\n```\n")
    assert "<h1>Rules</h1>" in html and "<table>" in html and "<td>1</td>" in html
    assert "<pre><code>x &lt; y\n</code></pre>" in html


def test_saved_guidelines_are_capped(researcher, study, settings):
    with pytest.raises(PayloadTooLarge):
        svc.study_update(study=study, actor=researcher, guidelines="a" * (settings.GUIDELINES_MAX_CHARS + 1))
    with pytest.raises(PayloadTooLarge):
        svc.study_create(owner=researcher, name="Long", presets=["astrid"], guidelines="a" * 20_001)
    study.refresh_from_db()
    assert study.guidelines == "" and not Study.objects.filter(name="Long").exists()
    svc.study_update(study=study, actor=researcher, guidelines="[" * settings.GUIDELINES_MAX_CHARS)
    svc.study_update(study=study, actor=researcher, guidelines="# Rules\n\n*Be kind.*")
    study.refresh_from_db()
    assert study.guidelines.startswith("# Rules")


def test_the_study_settings_page_saves_guidelines_python_markdown_could_not_render(client, researcher, study):
    client.force_login(researcher)
    response = client.post(
        reverse("console:study", args=[study.slug]), {"name": study.name, "guidelines": "[" * 19_000}
    )
    assert response.status_code in (200, 302)
    study.refresh_from_db()
    assert study.guidelines == "[" * 19_000


def test_an_item_page_renders_long_guidelines_saved_before_the_cap(client, study, annotator):
    """Guidelines stored before the cap existed may be longer; they render, as any text does, in linear time."""
    Study.objects.filter(pk=study.pk).update(guidelines="# Old rules\n\n" + "[" * 40_000)
    question = factories.make_question(study, "pf", kind="boolean")
    item = factories.make_item(study, "i1")
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    response = client.get(reverse("annotation:item", args=[assignment.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "<h1>Old rules</h1>" in body and "[" * 40_000 in body
