"""Help inside the app: the user guide per role rendered at /help/ with the same sanitised Markdown,
linked from every page's header; the API docs linked from the console; a favicon."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.help import views as help_views
from annotation.models import Role
from tests import factories

pytestmark = pytest.mark.django_db

GUIDES = ("annotate", "adjudicate", "set-up-a-study", "run-scores", "read-reports", "validate-a-metric", "export")


def test_every_role_guide_exists_and_renders(client, annotator):
    client.force_login(annotator)
    index = client.get(reverse("help:index"))
    assert index.status_code == 200
    body = index.content.decode()
    for slug in GUIDES:
        assert f'href="/help/{slug}/"' in body, slug
        page = client.get(reverse("help:page", args=[slug]))
        assert page.status_code == 200, slug
        assert "<h1>" in page.content.decode()
    assert 'href="/help/import-format/"' in body
    assert client.get(reverse("help:page", args=["import-format"])).status_code == 200
    # The trained-judge page (written alongside) is linked from the index.
    assert "trained-judge" in body


def test_every_guide_page_is_linked_from_the_index(client, annotator):
    """A page nobody links is a page nobody reads (the planning guide once was one)."""
    client.force_login(annotator)
    body = client.get(reverse("help:index")).content.decode()
    guide = Path(settings.BASE_DIR) / "docs" / "guide"
    pages = sorted(p.stem for p in guide.glob("*.md") if p.stem != "index")
    assert "planning-a-validation" in pages and "data-manager" in pages
    assert [slug for slug in pages if f'href="/help/{slug}/"' not in body] == []


def test_help_pages_are_sanitised_markdown(client, annotator, tmp_path, settings):
    guide = tmp_path / "docs" / "guide"
    guide.mkdir(parents=True)
    (tmp_path / "docs" / "import-format.md").write_text("# Format\n")
    (guide / "index.md").write_text("# Hi\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](export.md)\n")
    (guide / "export.md").write_text("# Export\n")
    settings.BASE_DIR = tmp_path
    help_views._render.cache_clear()
    client.force_login(annotator)
    body = client.get(reverse("help:index")).content.decode()
    assert "<script>alert(1)</script>" not in body and 'href="javascript:' not in body
    # Raw HTML reads as text (markdown-it with html off); the javascript: link is not made.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "[x](javascript:alert(1))" in body
    assert 'href="/help/export/"' in body
    help_views._render.cache_clear()


def test_help_pages_keep_tables_fenced_code_and_nested_lists(client, annotator):
    """The guide pages render as before (same headings, tables and lists; CommonMark adds what Python-Markdown
    without extensions did not do: fenced code as a block, lists nested by two spaces)."""
    help_views._render.cache_clear()
    client.force_login(annotator)
    body = client.get(reverse("help:page", args=["trained-judge"])).content.decode()
    assert "<table>" in body and "<th>" in body and "<h2>" in body
    assert "<pre><code>python manage.py train_judge --study SLUG" in body
    assert body.count("<ul>") >= 4  # the feature sets are a list inside a list item
    planning = client.get(reverse("help:page", args=["planning-a-validation"])).content.decode()
    assert "<pre><code>python manage.py plan_validation --auc 0.8" in planning


def test_unknown_or_path_like_help_pages_are_404(client, annotator):
    client.force_login(annotator)
    for slug in ("nope", "..", "secret"):
        assert client.get(f"/help/{slug}/").status_code == 404
    assert client.get("/help/..%2F..%2Fconcord%2Fsettings/").status_code == 404


def test_help_needs_a_login(client):
    response = client.get(reverse("help:index"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.ADJUDICATOR, Role.RESEARCHER])
def test_every_page_header_links_help_and_the_favicon(client, study, annotator, role):
    factories.grant(study, annotator, role)
    client.force_login(annotator)
    for url in (reverse("annotation:home"), reverse("help:index")):
        body = client.get(url).content.decode()
        assert f'<a href="{reverse("help:index")}">Help</a>' in body
        assert 'rel="icon"' in body and "favicon.svg" in body
    assert (Path(settings.BASE_DIR) / "static" / "concord" / "favicon.svg").is_file()


def test_the_console_links_the_api_docs(client, researcher, study):
    client.force_login(researcher)
    body = client.get(reverse("console:study", args=[study.slug])).content.decode()
    assert f'href="{reverse("api-docs")}"' in body
    assert client.get(reverse("api-docs")).status_code == 200


def test_every_metric_has_a_help_page_and_a_run_links_to_it(client, researcher, study):
    from scoring.metrics import METRICS
    from scoring.models import ScoreRun

    client.force_login(researcher)
    shipped = [name for name, cls in METRICS.items() if cls.__module__.startswith("scoring.metrics.")]
    assert {"cf", "rf", "ra", "cr", "icat", "plainqafact", "retrieval", "rubric"} <= set(shipped)
    for name in shipped:
        response = client.get(f"/help/metric-{name}/")
        assert response.status_code == 200, name
    run = ScoreRun.objects.create(study=study, metric="cf", backend="lexical", parameters={}, batch_size=10)
    body = client.get(f"/scoring/runs/{run.pk}/").content.decode()
    assert 'href="/help/metric-cf/"' in body
