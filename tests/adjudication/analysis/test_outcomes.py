"""Outcome prediction: cross-validated F1 on synthetic data with a known signal, refusals, subgroups,
feature resolution from the database, the job, the pages and the CLI."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from adjudication.analysis import outcomes
from adjudication.models import ReportJobStatus
from adjudication.report_jobs import job_run
from adjudication.stats import outcome_cv
from annotation.models import AssignmentStatus, Label
from concord.errors import ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

CLASSES = ["none", "slight", "severe"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _synthetic(n_per_class: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The class index plus Gaussian noise (sd 0.35) is the first feature; the second is pure noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n_per_class)
    x = np.column_stack([y + rng.normal(0, 0.35, y.size), rng.normal(size=y.size)])
    return x, y


def test_cross_validated_f1_finds_a_known_signal_and_falls_to_chance_when_features_are_shuffled():
    x, y = _synthetic()
    kw = {"feature_names": ["signal", "noise"], "n_splits": 3, "n_repeats": 2, "seed": 1, "n_boot": 200}
    real = outcome_cv.cross_validate(x, y, CLASSES, **kw)
    shuffled = outcome_cv.cross_validate(x[np.random.default_rng(5).permutation(y.size)], y, CLASSES, **kw)
    for model_real, model_shuffled in zip(real["models"], shuffled["models"], strict=True):
        # With noise sd 0.35 and classes 1 apart, the Bayes-optimal accuracy is about 0.85.
        assert model_real["macro_f1"]["value"] > 0.75
        assert model_real["macro_f1"]["ci95"][0] > 0.6
        # Shuffled rows break the link: F1 shrinks to the chance level (1/3 per class here).
        assert model_shuffled["macro_f1"]["value"] < 0.5
        assert (
            model_shuffled["macro_f1"]["ci95"][0]
            < model_shuffled["chance_macro_f1"]
            < model_real["macro_f1"]["ci95"][0]
        )
        for row in model_shuffled["per_class"]:
            assert row["f1"]["value"] < 0.55 and row["chance_f1"] == pytest.approx(1 / 3)
    assert real["cv"] == {
        "method": "RepeatedStratifiedKFold",
        "n_splits": 3,
        "n_repeats": 2,
        "seed": 1,
        "n_fits_per_model": 6,
    }
    # Each item is predicted once per repeat: the mean confusion matrix sums to the number of items.
    assert sum(map(sum, real["models"][0]["confusion"])) == pytest.approx(y.size)


def test_a_class_smaller_than_the_number_of_folds_is_refused_with_the_reason():
    x, y = _synthetic(n_per_class=10)
    y = y.copy()
    y[y == 2] = 1
    y[:2] = 2  # two "severe" items for five folds
    with pytest.raises(outcome_cv.OutcomeRefused, match="severe has 2"):
        outcome_cv.cross_validate(x, y, CLASSES, feature_names=["a", "b"], n_splits=5, n_repeats=1)


@pytest.mark.parametrize(("n_severe", "n_splits", "refused"), [(3, 3, False), (2, 3, True), (4, 3, False)])
def test_the_smallest_class_caps_the_folds_on_both_sides_of_the_cap(n_severe, n_splits, refused):
    """A class with as many items as folds can be stratified (one per fold); one item fewer cannot."""
    x, y = _synthetic(n_per_class=10)
    y = y.copy()
    y[y == 2] = 1
    y[:n_severe] = 2
    kw = {"feature_names": ["a", "b"], "models": ["logistic"], "n_splits": n_splits, "n_repeats": 1, "n_boot": 0}
    if refused:
        with pytest.raises(outcome_cv.OutcomeRefused, match=f"severe has {n_severe}"):
            outcome_cv.cross_validate(x, y, CLASSES, **kw)
    else:
        out = outcome_cv.cross_validate(x, y, CLASSES, **kw)
        assert out["cv"]["n_splits"] == n_splits


def test_subgroup_figures_state_how_many_items_they_rest_on():
    x, y = _synthetic(n_per_class=20)
    groups = np.where(np.arange(y.size) % 3 == 0, "written-to-harm", "natural")
    out = outcome_cv.cross_validate(
        x,
        y,
        CLASSES,
        feature_names=["s", "n"],
        models=["logistic"],
        n_splits=3,
        n_repeats=1,
        n_boot=0,
        subgroups=list(groups),
    )
    sizes = {g["subgroup"]: g["n_items"] for g in out["models"][0]["subgroups"]}
    assert sizes == {"natural": 40, "written-to-harm": 20}


@pytest.fixture
def harm_study(study, researcher):
    """30 items rated on "harmful" by two clinicians who agree; a score run whose value tracks the harm."""
    harmful = factories.make_question(
        study,
        "harmful",
        kind="ordinal",
        options=[{"value": v, "label": v, "key": str(i)} for i, v in enumerate(CLASSES, 1)],
    )
    pool = factories.make_pool(study, "clinicians", questions=[harmful], overlap=2)
    users = [factories.make_user("c1"), factories.make_user("c2")]
    for user, name in zip(users, ["A", "B"], strict=True):
        factories.add_member(pool, user, pseudonym=name)
    rng = np.random.default_rng(3)
    items, labels, scores = [], [], []
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1.0", backend="lexical", status=RunStatus.DONE, created_by=researcher
    )
    for i in range(30):
        harm = i % 3
        item = factories.make_item(
            study,
            f"h{i:02d}",
            scope_class="in_scope" if i % 2 else "out_of_scope",
            metadata={"origin": "adversarial" if i < 9 else "natural"},
        )
        items.append(item)
        for user in users:
            a = factories.make_assignment(
                pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            labels.append(
                Label(
                    assignment=a,
                    question=harmful,
                    unit_key="item",
                    value=CLASSES[harm],
                    version=1,
                    updated_by=user,
                    updated_at=timezone.now(),
                )
            )
        scores.append(
            Score(run=run, item=item, unit_key="item", value=1.0 - harm / 2 + rng.normal(0, 0.05), state=ScoreState.OK)
        )
    Label.objects.bulk_create(labels)
    Score.objects.bulk_create(scores)
    return {"study": study, "pool": pool, "run": run, "items": items}


def _query(harm_study, **extra):
    return {
        "pool": harm_study["pool"].pk,
        "question": "harmful",
        "features": "cf:lexical,scope_class",
        "n_splits": 3,
        "n_repeats": 1,
        "n_boot": 0,
        "models": "logistic",
        **extra,
    }


def test_features_resolve_to_runs_and_one_hot_attributes_and_missing_scores_are_excluded(harm_study):
    Score.objects.filter(run=harm_study["run"], item=harm_study["items"][0]).update(
        state=ScoreState.UNDETERMINED, value=None
    )
    params = outcomes.outcome_params_parse(
        study=harm_study["study"], query=_query(harm_study, subgroup="metadata.origin")
    )
    report = outcomes.outcome_report(study=harm_study["study"], params=params)
    assert report["feature_columns"] == ["cf:lexical", "scope_class=in_scope", "scope_class=out_of_scope"]
    assert report["features_resolved"]["cf:lexical"]["run"] == harm_study["run"].pk
    assert report["excluded_by_feature"] == {"cf:lexical": 1} and report["n_items"] == 29
    assert report["models"][0]["macro_f1"]["value"] > 0.9
    assert {g["subgroup"]: g["n_items"] for g in report["models"][0]["subgroups"]} == {"adversarial": 8, "natural": 21}


def test_an_unknown_metric_feature_is_a_clear_error(harm_study):
    with pytest.raises(ValidationFailed, match="no finished score run of rubric"):
        outcomes.outcome_params_parse(study=harm_study["study"], query=_query(harm_study, features="rubric"))


def test_outcome_job_runs_with_progress_and_the_page_shows_it(
    client, harm_study, researcher, django_capture_on_commit_callbacks
):
    slug = harm_study["study"].slug
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            reverse("adjudication:analysis-job-start", args=[slug]), {"kind": "outcome", **_query(harm_study)}
        )
    assert response.status_code == 302 and len(callbacks) == 1
    job = harm_study["study"].report_jobs.get()
    job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ReportJobStatus.DONE and job.n_done == job.n_total == 3
    page = client.get(response["Location"])
    assert page.status_code == 200 and b"n = 30 items" in page.content
    csv_body = client.get(
        reverse("adjudication:outcome-download", args=[slug, "csv"]) + "?" + response["Location"].split("?", 1)[1]
    )
    assert csv_body.status_code == 200 and b"macro" in csv_body.content
    api = client.get(reverse("adjudication-api-outcome", args=[slug]), _query(harm_study)).json()
    assert api["result"]["n_items"] == 30


def test_outcome_pages_are_researcher_only(client, harm_study, annotator, stranger):
    slug = harm_study["study"].slug
    factories.add_member(harm_study["pool"], annotator, pseudonym="C")
    for user, code in ((annotator, 403), (stranger, 404)):
        client.force_login(user)
        assert client.get(reverse("adjudication:outcome", args=[slug]), _query(harm_study)).status_code == code
        assert (
            client.post(
                reverse("adjudication-api-analysis-job-start", args=[slug]), {"kind": "outcome", **_query(harm_study)}
            ).status_code
            == code
        )


def test_predict_outcome_cli_prints_json(harm_study):
    out = StringIO()
    call_command(
        "predict_outcome",
        harm_study["study"].slug,
        "--outcome",
        "harmful",
        "--features",
        "cf,scope_class",
        "--folds",
        "3",
        "--repeats",
        "1",
        "--n-boot",
        "0",
        "--models",
        "logistic",
        "--json",
        stdout=out,
    )
    report = json.loads(out.getvalue())
    assert report["n_items"] == 30 and report["models"][0]["model"] == "logistic"


def test_predict_outcome_cli_refuses_too_many_folds(harm_study):
    with pytest.raises(CommandError, match="at least 20 items of every class"):
        call_command(
            "predict_outcome",
            harm_study["study"].slug,
            "--outcome",
            "harmful",
            "--features",
            "cf",
            "--folds",
            "20",
            "--repeats",
            "1",
            "--n-boot",
            "0",
            "--models",
            "logistic",
            stdout=StringIO(),
        )


def test_positive_turns_an_ordinal_outcome_into_at_least_that_option_against_the_rest(harm_study):
    params = outcomes.outcome_params_parse(study=harm_study["study"], query=_query(harm_study, positive="slight"))
    report = outcomes.outcome_report(study=harm_study["study"], params=params)
    assert report["classes_as_fitted"] == ["below slight", "at least slight"]
    assert report["class_counts"] == {"below slight": 10, "at least slight": 20}


def test_htmx_start_returns_the_polling_fragment_and_a_second_start_finds_the_same_job(
    client, harm_study, researcher, django_capture_on_commit_callbacks
):
    slug = harm_study["study"].slug
    client.force_login(researcher)
    url = reverse("adjudication:analysis-job-start", args=[slug])
    with django_capture_on_commit_callbacks(execute=False):
        first = client.post(url, {"kind": "outcome", **_query(harm_study)}, HTTP_HX_REQUEST="true")
        second = client.post(url, {"kind": "outcome", **_query(harm_study)}, HTTP_HX_REQUEST="true")
    assert first.status_code == second.status_code == 200
    assert b'id="analysis-job"' in first.content and b"every 2s" in first.content
    job = harm_study["study"].report_jobs.get()
    poll = client.get(reverse("adjudication:analysis-job", args=[slug, job.pk]), HTTP_HX_REQUEST="true")
    assert poll.status_code == 200 and "HX-Request" in poll["Vary"]
