"""The console form and the REST API start a run through one service (``scoring.services.score_run_start``),
which alone refuses an unavailable backend and a knowledge base that is not the study's: both answer the same
request with the same status and the same message, and neither queues anything.

(Before, the page refused an unavailable backend itself while the API queued the same run, which then
failed on a worker.)
"""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from scoring import services
from scoring.models import ScoreRun
from tests import factories
from tests.scoring.runs_support import llm_available

pytestmark = pytest.mark.django_db


def _unconfigured(settings, tmp_path) -> None:
    settings.LLM_BASE_URL = ""
    settings.NLI_MODEL_DIR = ""
    settings.EMBEDDING_MODEL = str(tmp_path / "no-model-here")


def _page_answer(client, study, *, metric: str, backend: str, options: str = "", knowledge_base: str = ""):
    response = client.post(
        reverse("scoring:run-start", args=[study.slug]),
        {"metric": metric, f"{metric}__backend": backend, "backend_options": options,
         "knowledge_base": knowledge_base},
    )
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', response.content.decode(), re.S)
    return response.status_code, html.unescape(found.group(1)) if found else None


def _api_answer(api, study, *, metric: str, backend: str, options: dict | None = None,
                knowledge_base: int | None = None):
    response = api.post(
        f"/api/scoring/studies/{study.slug}/runs/",
        {"metric": metric, "backend": backend, "backend_options": options or {}, "knowledge_base": knowledge_base},
        format="json",
    )
    return response.status_code, response.json().get("detail")


@pytest.mark.parametrize(
    ("backend", "options", "reason"),
    [
        ("llm", {}, "no LLM endpoint configured: set LLM_BASE_URL and LLM_MODEL"),
        ("nli", {}, "no NLI model configured: set NLI_MODEL_DIR"),
        ("embedding", {}, "no sentence-transformers model in"),
        ("learned", {}, "no trained judge available to this study yet"),
        ("learned", {"model": "nobodys-judge"}, "no trained judge named 'nobodys-judge' is available to this study"),
    ],
)
def test_an_unavailable_backend_is_refused_alike_by_the_page_and_the_api(
    client, researcher, study, settings, tmp_path, backend, options, reason
):
    _unconfigured(settings, tmp_path)
    factories.make_item(study, "x1")
    client.force_login(researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    page = _page_answer(client, study, metric="cf", backend=backend, options=json.dumps(options))
    rest = _api_answer(api, study, metric="cf", backend=backend, options=options)
    assert page == rest, (page, rest)
    status, message = rest
    assert status == 400
    assert message.startswith(f"The {backend} backend is not available here: ") and reason in message
    assert not ScoreRun.objects.exists()


def test_a_knowledge_base_that_is_not_the_studys_is_refused_alike_by_the_page_and_the_api(
    client, researcher, study
):
    other = factories.make_study(owner=researcher, slug="other-study")
    foreign = services.knowledge_base_create(study=other, name="Theirs", actor=researcher)
    missing = foreign.pk + 1000
    client.force_login(researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    for kb_id in (foreign.pk, missing):
        page = _page_answer(client, study, metric="cf", backend="lexical", knowledge_base=str(kb_id))
        rest = _api_answer(api, study, metric="cf", backend="lexical", knowledge_base=kb_id)
        # Another study's knowledge base reads exactly like one that does not exist.
        assert page == rest == (400, "No such knowledge base in this study."), (kb_id, page, rest)
    assert not ScoreRun.objects.exists()


def test_the_same_checks_pass_alike_once_the_backend_is_configured(client, researcher, study, settings):
    """The refusal above is the backend's state, not the route: configured, both start the run."""
    llm_available(settings)
    kb = services.knowledge_base_create(study=study, name="Ours", actor=researcher)
    client.force_login(researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    page = client.post(reverse("scoring:run-start", args=[study.slug]),
                       {"metric": "cf", "cf__backend": "llm", "knowledge_base": str(kb.pk)})
    rest = api.post(f"/api/scoring/studies/{study.slug}/runs/",
                    {"metric": "cf", "backend": "llm", "knowledge_base": kb.pk}, format="json")
    assert page.status_code == 302 and rest.status_code == 201, rest.content
    assert list(ScoreRun.objects.values_list("backend", "knowledge_base_id")) == [("llm", kb.pk)] * 2
