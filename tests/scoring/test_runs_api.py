"""REST API for score runs: start, status, cancel, scores; the same services and access rules as the pages."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Role
from scoring.models import RunStatus, ScoreRun
from tests import factories
from tests.scoring.runs_support import eager_celery

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def _start(api, study, **body):
    payload = {"metric": "probe", "backend": "lexical", "parameters": {"threshold": 0.4}, "batch_size": 1}
    payload.update(body)
    return api.post(f"/api/scoring/studies/{study.slug}/runs/", payload, format="json")


def test_a_researcher_starts_a_run_follows_it_and_lists_its_scores(
    api, researcher, study, django_capture_on_commit_callbacks
):
    item = factories.make_item(study, "a1", answer="Metformin is first-line.")
    factories.make_chunk(item, 1, "Metformin is first-line for type 2 diabetes.")
    api.force_authenticate(researcher)
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        response = _start(api, study)
    assert response.status_code == 201, response.data
    run_id = response.data["id"]
    assert response.data["parameters"] == {"threshold": 0.4} and response.data["metric_version"] == "1"

    status = api.get(f"/api/scoring/runs/{run_id}/")
    assert status.status_code == 200
    assert (status.data["status"], status.data["n_done"], status.data["progress"]["percent"]) == ("done", 1, 100)

    scores = api.get(f"/api/scoring/runs/{run_id}/scores/")
    assert scores.status_code == 200 and scores.data["count"] == 2
    by_unit = {row["unit_key"]: row for row in scores.data["results"]}
    assert by_unit["item"] == {**by_unit["item"], "item": "a1", "value": 1.0, "state": "ok"}
    assert api.get(f"/api/scoring/runs/{run_id}/scores/?state=failed").data["count"] == 0
    assert api.get(f"/api/scoring/runs/{run_id}/scores/?state=nan").status_code == 400


def test_a_bad_request_is_refused_with_the_reason_and_creates_nothing(api, researcher, study):
    api.force_authenticate(researcher)
    response = _start(api, study, parameters={"threshold": "high"})
    assert response.status_code == 400 and "is not a float" in response.data["detail"]
    response = api.post(f"/api/scoring/studies/{study.slug}/runs/", {"backend": "lexical"}, format="json")
    assert response.status_code == 400 and "metric" in response.data["details"]
    assert not ScoreRun.objects.exists()


def test_cancel_through_the_api_then_a_second_cancel_conflicts(api, researcher, study):
    factories.make_item(study, "a1")
    api.force_authenticate(researcher)
    run_id = _start(api, study).data["id"]
    response = api.post(f"/api/scoring/runs/{run_id}/cancel/")
    assert response.status_code == 200 and response.data["status"] == RunStatus.CANCELLED
    assert api.post(f"/api/scoring/runs/{run_id}/cancel/").status_code == 409


def test_annotators_get_403_and_strangers_404_on_every_scoring_endpoint(api, researcher, annotator, stranger, study):
    factories.make_item(study, "a1")
    api.force_authenticate(researcher)
    run_id = _start(api, study).data["id"]
    factories.grant(study, annotator, Role.ANNOTATOR)
    calls = [
        ("post", f"/api/scoring/studies/{study.slug}/runs/"),
        ("get", f"/api/scoring/runs/{run_id}/"),
        ("post", f"/api/scoring/runs/{run_id}/cancel/"),
        ("get", f"/api/scoring/runs/{run_id}/scores/"),
        ("post", f"/api/scoring/studies/{study.slug}/knowledge-bases/"),
    ]
    for user, expected in ((annotator, 403), (stranger, 404)):
        api.force_authenticate(user)
        for method, url in calls:
            response = getattr(api, method)(url, {"metric": "probe", "backend": "lexical", "name": "x"}, format="json")
            # A run named by its own id is not found (404) for anyone who may not see it.
            named_by_id = url.startswith("/api/scoring/runs/")
            assert response.status_code == (404 if named_by_id else expected), (user, url)
    assert ScoreRun.objects.get().status == RunStatus.QUEUED
    api.force_authenticate(None)
    assert api.get(f"/api/scoring/runs/{run_id}/").status_code in (401, 403)
