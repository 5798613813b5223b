"""Researcher pages for runs, item scores and knowledge bases; annotators 403, strangers 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Role
from scoring import services
from scoring.models import KnowledgeBase, RunStatus, ScoreRun
from tests import factories
from tests.scoring.runs_support import BOOM, eager_celery

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(study, researcher, django_capture_on_commit_callbacks):
    """A finished probe run over two items, one of which fails."""
    ok = factories.make_item(study, "ok-1", answer="Metformin is first-line. <script>alert(1)</script>")
    factories.make_chunk(ok, 1, "Metformin is first-line for type 2 diabetes.")
    factories.make_item(study, "bad-1", answer=f"{BOOM} here.")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(study=study, metric="probe", backend="lexical", parameters={}, actor=researcher)
    run.refresh_from_db()
    return run


@pytest.fixture
def kb(study, researcher):
    return KnowledgeBase.objects.create(study=study, name="Leaflets", created_by=researcher)


def _pages(study, run, kb) -> list[str]:
    return [
        reverse("scoring:runs", args=[study.slug]),
        reverse("scoring:run", args=[run.pk]),
        reverse("scoring:item-scores", args=[study.slug, "ok-1"]),
        reverse("scoring:knowledge-bases", args=[study.slug]),
        reverse("scoring:knowledge-base", args=[kb.pk]),
    ]


def test_a_researcher_reads_every_scoring_page(client, researcher, study, scored, kb):
    client.force_login(researcher)
    for url in _pages(study, scored, kb):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("role", [Role.ANNOTATOR, Role.ADJUDICATOR])
def test_annotators_and_adjudicators_of_the_study_get_403_on_every_scoring_page(
    client, annotator, study, scored, kb, role
):
    factories.grant(study, annotator, role)
    client.force_login(annotator)
    for url in _pages(study, scored, kb):
        response = client.get(url)
        # A study page says the role is not enough (403); a run or knowledge base named by its own id
        # is not found (404), so that nobody learns which ids exist in their study.
        assert response.status_code == (403 if url.startswith(f"/scoring/studies/{study.slug}/") else 404), url
        assert b"0.5" not in response.content
    assert client.post(reverse("scoring:run-cancel", args=[scored.pk])).status_code == 404
    assert client.post(reverse("scoring:run-start", args=[study.slug]), {"metric": "probe"}).status_code == 403


def test_strangers_get_404_on_every_scoring_page(client, stranger, study, scored, kb):
    client.force_login(stranger)
    for url in _pages(study, scored, kb):
        assert client.get(url).status_code == 404, url
    assert client.get(reverse("scoring:run", args=[99999])).status_code == 404


def test_anonymous_visitors_are_sent_to_the_login_page(client, study, scored, kb):
    for url in _pages(study, scored, kb):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


def test_the_start_form_is_generated_from_the_registry_with_each_metric_definition(client, researcher, study):
    client.force_login(researcher)
    body = client.get(reverse("scoring:runs", args=[study.slug])).content.decode()
    assert "Fraction of answer sentences the backend finds supported" in body
    assert 'name="probe__threshold"' in body and 'value="0.5"' in body
    assert 'name="probe__backend"' in body and '<option value="lexical">lexical</option>' in body
    assert "scoring/run_form.js" in body and "<script>" not in body


def test_a_researcher_starts_a_run_from_the_form(client, researcher, study, django_capture_on_commit_callbacks):
    factories.make_item(study, "x1")
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("scoring:run-start", args=[study.slug]),
            {"metric": "probe", "probe__backend": "lexical", "probe__threshold": "0.3", "retrieval_alpha": "0.5"},
        )
    run = ScoreRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("scoring:run", args=[run.pk])
    assert (run.metric, run.backend, run.parameters, run.created_by) == (
        "probe",
        "lexical",
        {"threshold": 0.3},
        researcher,
    )
    assert len(callbacks) == 1  # the fan-out, enqueued on commit


def test_a_bad_form_shows_the_error_and_starts_nothing(client, researcher, study):
    client.force_login(researcher)
    response = client.post(
        reverse("scoring:run-start", args=[study.slug]), {"metric": "probe", "probe__backend": "llm"}
    )
    assert response.status_code == 400
    assert "cannot use the &#x27;llm&#x27; backend" in response.content.decode()
    assert not ScoreRun.objects.exists()


def test_the_run_page_shows_progress_failed_items_with_their_error_and_scores(client, researcher, scored):
    client.force_login(researcher)
    body = client.get(reverse("scoring:run", args=[scored.pk])).content.decode()
    assert "1 done" in body and "1 failed" in body and "of 2 items" in body
    assert "RuntimeError: cannot score bad-1" in body
    assert "ok-1" in body and "0.5000" in body
    assert 'hx-trigger="every 2s"' not in body  # a finished run is not polled


def test_htmx_polling_gets_only_the_progress_fragment_while_the_run_is_active(client, researcher, study):
    factories.make_item(study, "x1")
    run = services.score_run_start(study=study, metric="probe", backend="lexical", parameters={}, actor=researcher)
    client.force_login(researcher)
    response = client.get(reverse("scoring:run", args=[run.pk]), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert body.lstrip().startswith("{#") or body.lstrip().startswith("<section")
    assert "<html" not in body and 'hx-trigger="every 2s"' in body and "Cancel run" in body


def test_cancel_from_the_run_page_returns_the_updated_fragment(client, researcher, study):
    factories.make_item(study, "x1")
    run = services.score_run_start(study=study, metric="probe", backend="lexical", parameters={}, actor=researcher)
    client.force_login(researcher)
    response = client.post(reverse("scoring:run-cancel", args=[run.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 200 and "Cancelled" in response.content.decode()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    again = client.post(reverse("scoring:run-cancel", args=[run.pk]))
    assert again.status_code == 409


def test_the_item_score_panel_lists_each_runs_scores_and_escapes_item_text(client, researcher, study, scored):
    client.force_login(researcher)
    body = client.get(reverse("scoring:item-scores", args=[study.slug, "ok-1"])).content.decode()
    assert f"Run #{scored.pk}" in body and "s:0" in body and "0.5000" in body
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body
    assert client.get(reverse("scoring:item-scores", args=[study.slug, "nope"])).status_code == 404


def test_a_researcher_creates_a_knowledge_base_and_pastes_a_document(client, researcher, study):
    client.force_login(researcher)
    response = client.post(
        reverse("scoring:knowledge-bases", args=[study.slug]),
        {"name": "Leaflets", "chunk_size": "5", "chunk_overlap": "1"},
    )
    kb = KnowledgeBase.objects.get()
    assert response.status_code == 302 and (kb.chunk_size, kb.chunk_overlap) == (5, 1)
    response = client.post(
        reverse("scoring:knowledge-base", args=[kb.pk]),
        {"document_id": "leaflet-1", "text": "one two three four five six seven eight nine"},
    )
    assert response.status_code == 200 and "Added 2 passages" in response.content.decode()
    again = client.post(reverse("scoring:knowledge-base", args=[kb.pk]), {"document_id": "leaflet-1", "text": "more"})
    assert again.status_code == 409 and "Already in this knowledge base: leaflet-1" in again.content.decode()
    assert kb.passages.count() == 2


def test_a_knowledge_base_with_an_overlap_as_large_as_its_passages_is_refused(client, researcher, study):
    client.force_login(researcher)
    response = client.post(
        reverse("scoring:knowledge-bases", args=[study.slug]), {"name": "x", "chunk_size": "5", "chunk_overlap": "5"}
    )
    assert response.status_code == 400 and "smaller than the passage size" in response.content.decode()
    assert not KnowledgeBase.objects.exists()


def test_backend_options_from_the_form_must_be_a_json_object(
    client, researcher, study, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    url = reverse("scoring:run-start", args=[study.slug])
    bad = client.post(url, {"metric": "probe", "probe__backend": "lexical", "backend_options": "[1, 2]"})
    assert bad.status_code == 400 and "must be a JSON object" in bad.content.decode()
    ok = client.post(url, {"metric": "probe", "probe__backend": "lexical", "backend_options": '{"measure": "rouge_l"}'})
    assert ok.status_code == 302
    assert ScoreRun.objects.get().backend_options == {"measure": "rouge_l"}


def test_the_run_page_names_the_non_llm_plainqafact_honestly(client, researcher, study,
                                                             django_capture_on_commit_callbacks):
    factories.make_item(study, "pf-1", answer="Paracetamol lowers fever.",
                        source="Paracetamol lowers fever in children.")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        run = services.score_run_start(study=study, metric="plainqafact", backend="lexical",
                                       parameters={"knowledge": "none"}, actor=researcher)
    client.force_login(researcher)
    body = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    assert '<dd id="run-computed-as">kind-aware entailment (PlainQAFact-style, no LLM)</dd>' in body
