"""Hostile input (issue 8, point 4): LLM endpoints, filter parameters, HTML in every text field,
oversize and compressed uploads. The property-based import fuzzing lives in test_fuzz_imports.py."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from scoring.backends.llm import LLMBackend
from scoring.models import ScoreRun
from scoring.registry import BackendUnavailable

# --- LLM endpoints: administrators only, public addresses only unless allowed --------------------

NON_PUBLIC_ENDPOINTS = [
    "http://127.0.0.1:8000/v1",
    "http://localhost:8000/v1",
    "http://[::1]:8000/v1",
    "http://10.1.2.3/v1",
    "http://172.16.5.4/v1",
    "http://192.168.1.10/v1",
    "http://169.254.169.254/latest",
    "http://[fc00::1]/v1",
    "http://0.0.0.0:8000/v1",
    "http://[::ffff:127.0.0.1]/v1",
]


@pytest.mark.parametrize("url", NON_PUBLIC_ENDPOINTS)
def test_the_llm_backend_refuses_a_loopback_or_private_endpoint_by_default(settings, url):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    with pytest.raises(BackendUnavailable, match="LLM_ALLOW_PRIVATE_ENDPOINTS"):
        LLMBackend(base_url=url, model="judge")


def test_the_llm_backend_accepts_a_private_endpoint_when_an_administrator_allows_it(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = True
    assert LLMBackend(base_url="http://127.0.0.1:8000/v1", model="judge").base_url == "http://127.0.0.1:8000/v1"


def test_the_llm_backend_accepts_a_public_address(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    # A literal public address (TEST-NET would be "reserved"; this is an ordinary routable one): no DNS needed.
    assert LLMBackend(base_url="https://93.184.216.34/v1", model="judge").base_url == "https://93.184.216.34/v1"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://example.org/", "http:///v1", "not a url"])
def test_the_llm_backend_refuses_an_endpoint_that_is_not_an_http_url(settings, url):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = True
    with pytest.raises(BackendUnavailable, match="http"):
        LLMBackend(base_url=url, model="judge")


def test_the_configured_llm_endpoint_is_checked_when_the_backend_is_built_from_settings(settings):
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = False
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://169.254.169.254/v1", "judge"
    with pytest.raises(BackendUnavailable, match=r"non-public address 169\.254\.169\.254"):
        LLMBackend.from_settings()


@pytest.mark.django_db
def test_a_researcher_cannot_point_a_score_run_at_an_endpoint_of_their_choosing(researcher, study):
    api = APIClient()
    api.force_authenticate(researcher)
    response = api.post(
        f"/api/scoring/studies/{study.slug}/runs/",
        {"metric": "ra", "backend": "llm", "backend_options": {"base_url": "http://169.254.169.254/"}},
        format="json",
    )
    assert response.status_code == 400 and "LLM_BASE_URL" in response.data["detail"]
    assert not ScoreRun.objects.exists()
