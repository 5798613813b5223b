"""The trained-judge registry: page and API, training job with progress, retire, share, and the
cross-study refusal (another study's judge is 404 on the page and in the API, and unusable in a run)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotation.models import Role
from scoring.judges import services as judge_services
from scoring.models import JudgeTrainJob, TrainedJudge
from tests import factories
from tests.scoring.judge_support import study_with_gold
from tests.scoring.runs_support import eager_celery

pytestmark = pytest.mark.django_db
LEXICAL = {"feature_sets": ["lexical"], "folds": 3}


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def judged(study):
    study_with_gold(study)
    return judge_services.judge_train_from_study(study=study, question_key="grounded", task="supports",
                                                 name="ward-judge", actor=study.owner, options=LEXICAL)


@pytest.fixture
def rival(db):
    """Another study with its own researcher and its own judge."""
    owner = factories.make_user("olga-other")
    other = factories.make_study(owner=owner, slug="rival")
    study_with_gold(other)
    judge = judge_services.judge_train_from_study(study=other, question_key="grounded", task="supports",
                                                  name="rival-judge", actor=owner, options=LEXICAL)
    return other, judge


def test_the_page_lists_the_studys_judges_with_their_figures_and_not_other_studies(client, researcher, study,
                                                                                   judged, rival):
    client.force_login(researcher)
    page = client.get(f"/scoring/studies/{study.slug}/judges/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "ward-judge" in html and "study demo-study, question grounded" in html and "rival-judge" not in html
    detail = client.get(f"/scoring/studies/{study.slug}/judges/{judged.pk}/")
    assert detail.status_code == 200 and "Reliability diagram" in detail.content.decode()
    # Another study's judge, through this study or through the other study: 404 either way.
    _, rival_judge = rival
    assert client.get(f"/scoring/studies/{study.slug}/judges/{rival_judge.pk}/").status_code == 404
    assert client.get(f"/scoring/studies/rival/judges/{rival_judge.pk}/").status_code == 404
    assert client.get("/scoring/studies/rival/judges/").status_code == 404


def test_the_page_is_for_researchers_only(client, study, judged, annotator):
    factories.grant(study, annotator, Role.ANNOTATOR)
    client.force_login(annotator)
    assert client.get(f"/scoring/studies/{study.slug}/judges/").status_code == 403
    assert client.get(f"/api/scoring/studies/{study.slug}/judges/").status_code == 403


def test_the_api_lists_judges_with_task_source_balance_cv_trainer_and_identity(api, researcher, study, judged, rival):
    api.force_authenticate(researcher)
    rows = api.get(f"/api/scoring/studies/{study.slug}/judges/").json()
    assert [r["name"] for r in rows] == ["ward-judge"]
    row = rows[0]
    assert (row["task"], row["n"], row["n_positive"], row["class_balance"]) == ("supports", 28, 14, 0.5)
    assert row["source"] == "study demo-study, question grounded" and row["trained_by"] == "rita-researcher"
    assert {"auc", "auc_ci", "accuracy_ci", "confusion", "reliability"} <= set(row["cv"])
    assert row["model_type"] == "logistic" and row["feature_set"] == "lexical" and row["data_hash"]
    _, rival_judge = rival
    assert api.get(f"/api/scoring/studies/{study.slug}/judges/{rival_judge.pk}/").status_code == 404
    assert api.post(f"/api/scoring/studies/{study.slug}/judges/{rival_judge.pk}/retire/").status_code == 404
    assert api.get("/api/scoring/studies/rival/judges/").status_code == 404


def test_a_run_through_the_api_cannot_use_another_studys_judge(api, researcher, study, judged, rival):
    api.force_authenticate(researcher)
    body = {"metric": "cf", "backend": "learned", "parameters": {"information_bearing": "rules"}}
    refused = api.post(f"/api/scoring/studies/{study.slug}/runs/",
                       {**body, "backend_options": {"model": "rival-judge"}}, format="json")
    assert refused.status_code == 400 and "no trained judge named 'rival-judge'" in refused.json()["detail"]
    other, _ = rival
    refused = api.post(f"/api/scoring/studies/{study.slug}/runs/",
                       {**body, "backend_options": {"model": "rival-judge", "study": other.pk}}, format="json")
    assert refused.status_code == 400 and "'study' is not allowed" in refused.json()["detail"]
    accepted = api.post(f"/api/scoring/studies/{study.slug}/runs/",
                        {**body, "backend_options": {"model": "ward-judge"}}, format="json")
    assert accepted.status_code == 201


def test_the_console_form_starts_a_training_job_whose_progress_page_links_the_judge(
    client, researcher, study, django_capture_on_commit_callbacks
):
    study_with_gold(study)
    client.force_login(researcher)
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/scoring/studies/{study.slug}/judges/train", {
            "name": "console-judge", "question": "grounded", "task": "supports", "feature_sets": ["lexical"],
            "folds": "3",
        })
    job = JudgeTrainJob.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/judges/jobs/{job.pk}/")
    assert job.status == "done" and job.judge.name == "console-judge" and job.n_done == job.n_total > 0
    page = client.get(response["Location"], HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and f"/judges/{job.judge.pk}/" in page.content.decode()


def test_the_api_starts_a_training_job_and_a_bad_request_changes_nothing(
    api, researcher, study, django_capture_on_commit_callbacks
):
    study_with_gold(study, n=18)  # 9 of each class
    api.force_authenticate(researcher)
    url = f"/api/scoring/studies/{study.slug}/judges/"
    refused = api.post(url, {"name": "j", "question": "grounded", "task": "supports"}, format="json")
    assert refused.status_code == 400 and "at least 10 examples of each class" in refused.json()["detail"]
    assert not JudgeTrainJob.objects.exists() and not TrainedJudge.objects.exists()
    study_with_gold(factories.make_study(slug="x"))
    refused = api.post(url, {"name": "j", "question": "nope", "task": "supports"}, format="json")
    assert refused.status_code == 400 and "has no question 'nope'" in refused.json()["detail"]
    assert not JudgeTrainJob.objects.exists()


def test_the_api_trains_through_a_job_and_reports_its_progress(api, researcher, study,
                                                               django_capture_on_commit_callbacks):
    study_with_gold(study)
    api.force_authenticate(researcher)
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        started = api.post(f"/api/scoring/studies/{study.slug}/judges/",
                           {"name": "api-judge", "question": "grounded", "task": "supports",
                            "options": {"feature_sets": ["lexical"], "folds": 3}}, format="json")
    assert started.status_code == 202
    job = api.get(f"/api/scoring/studies/{study.slug}/judges/jobs/{started.json()['id']}/").json()
    assert (job["status"], job["progress"], job["judge"]) == ("done", 1.0, "api-judge")


def test_retire_and_share_by_the_owner(api, researcher, study, judged):
    api.force_authenticate(researcher)
    factories.make_study(owner=researcher, slug="partner")
    shared = api.post(f"/api/scoring/studies/{study.slug}/judges/{judged.pk}/share/", {"study": "partner"},
                      format="json")
    assert shared.status_code == 200
    assert [r["name"] for r in api.get("/api/scoring/studies/partner/judges/").json()] == ["ward-judge"]
    # The partner study sees the judge but cannot retire or re-share it.
    assert api.post(f"/api/scoring/studies/partner/judges/{judged.pk}/retire/").status_code == 400
    retired = api.post(f"/api/scoring/studies/{study.slug}/judges/{judged.pk}/retire/")
    assert retired.status_code == 200 and retired.json()["retired"] is True
    again = api.post(f"/api/scoring/studies/{study.slug}/judges/{judged.pk}/retire/")
    assert again.status_code == 409


def test_sharing_with_a_study_the_researcher_is_not_in_is_404(api, researcher, study, judged, rival):
    api.force_authenticate(researcher)
    response = api.post(f"/api/scoring/studies/{study.slug}/judges/{judged.pk}/share/", {"study": "rival"},
                        format="json")
    assert response.status_code == 404
    assert not judged.shared_with.exists()


def test_the_retire_and_share_pages_post_and_redirect(client, researcher, study, judged):
    client.force_login(researcher)
    factories.make_study(owner=researcher, slug="partner")
    assert client.post(f"/scoring/studies/{study.slug}/judges/{judged.pk}/share", {"study": "partner"}).status_code \
        == 302
    assert client.post(f"/scoring/studies/{study.slug}/judges/{judged.pk}/retire").status_code == 302
    judged.refresh_from_db()
    assert judged.is_retired and list(judged.shared_with.values_list("slug", flat=True)) == ["partner"]


def test_the_run_form_cannot_use_another_studys_judge(client, researcher, study, judged, rival):
    client.force_login(researcher)
    other, _ = rival
    for options in ('{"model": "rival-judge"}', f'{{"model": "rival-judge", "study": {other.pk}}}'):
        page = client.post(f"/scoring/studies/{study.slug}/runs/start", {
            "metric": "cf", "backend": "learned", "backend_options": options, "param_information_bearing": "rules",
        })
        assert page.status_code == 400
        assert "rival-judge" in page.content.decode() or "not allowed" in page.content.decode()
    assert not study.score_runs.exists()
