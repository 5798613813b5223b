"""Guidelines Markdown: the preview is for researchers, text is capped, rendering runs under a time
budget, and saved guidelines are checked the same way (Python-Markdown backtracks on runs of ``[``)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation import markdown
from annotation.console import services as svc
from annotation.models import Study
from concord.errors import PayloadTooLarge, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db

# Python-Markdown needs about a second for 2,000 '[' and grows faster than quadratically: this run
# takes minutes, a hundred times the one-second budget these tests set.
BRACKETS = "[" * 19_000


@pytest.fixture(autouse=True)
def _fresh(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    markdown.render_guidelines.cache_clear()
    yield
    markdown.render_guidelines.cache_clear()


@pytest.fixture
def short_budget(settings):
    """One second: far below what the inputs refused here need (minutes), so no test depends on speed;
    tests that expect a rendering keep the default budget."""
    settings.MARKDOWN_RENDER_TIMEOUT_SECONDS = 1


@pytest.fixture
def never_finishes(monkeypatch, short_budget):
    """A renderer that never returns: only the budget can end it (no dependence on machine speed)."""
    monkeypatch.setattr(markdown, "_RENDERER", "import time; time.sleep(600)")


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
    response = _preview(client, "**bold** <script>alert(1)</script>")
    assert response.status_code == 200
    assert b"<strong>bold</strong>" in response.content and b"<script>" not in response.content


def test_the_preview_refuses_text_above_the_cap(client, researcher, study, settings):
    client.force_login(researcher)
    assert _preview(client, "a" * (settings.GUIDELINES_MAX_CHARS + 1)).status_code == 413


def test_a_renderer_over_its_budget_is_stopped_and_the_text_refused(client, researcher, study, never_finishes):
    client.force_login(researcher)
    response = _preview(client, "**bold**")
    assert response.status_code == 400
    assert "to render" in response.content.decode()


def test_runs_of_brackets_are_refused_by_the_preview_within_the_budget(client, researcher, study, short_budget):
    client.force_login(researcher)
    assert _preview(client, BRACKETS).status_code == 400


def test_saved_guidelines_are_checked_the_same_way(researcher, study, settings, short_budget):
    with pytest.raises(ValidationFailed):
        svc.study_update(study=study, actor=researcher, guidelines=BRACKETS)
    with pytest.raises(PayloadTooLarge):
        svc.study_update(study=study, actor=researcher, guidelines="a" * (settings.GUIDELINES_MAX_CHARS + 1))
    with pytest.raises(ValidationFailed):
        svc.study_create(owner=researcher, name="Slow", presets=["astrid"], guidelines=BRACKETS)
    study.refresh_from_db()
    assert study.guidelines == "" and not Study.objects.filter(name="Slow").exists()
    settings.MARKDOWN_RENDER_TIMEOUT_SECONDS = 5  # the default, for the text that renders
    svc.study_update(study=study, actor=researcher, guidelines="# Rules\n\n*Be kind.*")
    study.refresh_from_db()
    assert study.guidelines.startswith("# Rules")


def test_the_study_settings_page_refuses_slow_guidelines(client, researcher, study, short_budget):
    client.force_login(researcher)
    response = client.post(
        reverse("console:study", args=[study.slug]), {"name": study.name, "guidelines": BRACKETS}
    )
    assert response.status_code == 400
    study.refresh_from_db()
    assert study.guidelines == ""


def test_an_item_page_shows_a_notice_for_guidelines_saved_before_they_were_checked(
    client, study, annotator, never_finishes
):
    Study.objects.filter(pk=study.pk).update(guidelines="# Old rules")
    question = factories.make_question(study, "pf", kind="boolean")
    item = factories.make_item(study, "i1")
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    client.force_login(annotator)
    response = client.get(reverse("annotation:item", args=[assignment.pk]))
    assert response.status_code == 200
    assert "The guidelines cannot be shown" in response.content.decode()
