"""Models as raters: hand-computed κ of a score run against humans, mappings, thresholds, pages and API."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from adjudication.analysis import raters
from adjudication.report_jobs import ANALYSIS, job_request, job_run
from adjudication.stats import rater_stats
from annotation.models import AssignmentStatus, Label
from concord.errors import ValidationFailed
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

# Six items, two clinicians (A, B) on "pf" (yes/no), and a model whose score is 1/0.
HUMAN_A = ["yes", "yes", "no", "no", "yes", "no"]
HUMAN_B = ["yes", "yes", "no", "yes", "yes", "no"]
MODEL = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def rated(study, researcher):
    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "clinicians", questions=[pf], overlap=2)
    users = [factories.make_user("clin-a"), factories.make_user("clin-b")]
    for user, name in zip(users, ["A", "B"], strict=True):
        factories.add_member(pool, user, pseudonym=name)
    items = [factories.make_item(study, f"q{i}") for i in range(6)]
    labels = []
    for i, item in enumerate(items):
        for user, values in zip(users, [HUMAN_A, HUMAN_B], strict=True):
            a = factories.make_assignment(
                pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            labels.append(
                Label(
                    assignment=a,
                    question=pf,
                    unit_key="item",
                    value=values[i],
                    version=1,
                    updated_by=user,
                    updated_at=timezone.now(),
                )
            )
    Label.objects.bulk_create(labels)
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1.0", backend="lexical", status=RunStatus.DONE, created_by=researcher
    )
    Score.objects.bulk_create(
        [
            Score(
                run=run,
                item=item,
                unit_key="item",
                value=MODEL[i],
                state=ScoreState.OK,
                details={"behaviour": "answer" if MODEL[i] else "refuse", "cost": {"seconds": 0.01}},
            )
            for i, item in enumerate(items)
        ]
    )
    return {"study": study, "pool": pool, "run": run, "items": items}


def _params(rated, **extra):
    query = {"run": rated["run"].pk, "pool": rated["pool"].pk, "question": "pf", **extra}
    return raters.rater_params_parse(study=rated["study"], query=query)


def test_model_kappa_against_each_human_matches_the_hand_computed_table(rated):
    # Model vs A: both yes 2 (items 0, 4), A yes/model no 1 (item 1), A no/model yes 1 (item 5), both no 2.
    # p_o = 4/6, p_e = 0.5·0.5 + 0.5·0.5 = 0.5, κ = (2/3 − 1/2) / (1/2) = 1/3.
    # Model vs B: B says yes on 4 items (0, 1, 3, 4); agreement on items 0, 2, 4 → p_o = 3/6;
    # p_e = (4/6)(3/6) + (2/6)(3/6) = 1/2, so κ = 0.
    report = raters.rater_report(study=rated["study"], params=_params(rated, mapping="1=yes,0=no"))
    by_rater = {d["rater"]: d["value"] for d in report["model_vs_humans"]}
    assert by_rater["A"] == pytest.approx(1 / 3)
    assert by_rater["B"] == pytest.approx(0.0, abs=1e-12)
    # Human-human beside it: A vs B agree on 5 of 6; p_e = (3/6)(4/6) + (3/6)(2/6) = 1/2 → κ = 2/3.
    assert report["mean_human_pair_kappa"] == pytest.approx(2 / 3)
    assert report["mapping"] == {"0": "no", "1": "yes"} and report["mapping_source"] == "given"
    # Krippendorff's nominal α, model and A: 12 pairable values, 6 yes and 6 no; 2 disagreeing units give
    # D_o = 4/12, D_e = 2·6·6/(12·11) = 72/132, α = 1 − D_o/D_e = 7/18.
    assert {d["rater"]: d["alpha"]["value"] for d in report["model_vs_humans"]}["A"] == pytest.approx(7 / 18)


def test_default_mapping_sends_the_positive_category_to_the_first_option_and_says_so(rated):
    report = raters.rater_report(study=rated["study"], params=_params(rated))
    assert report["mapping"] == {"1": "yes", "0": "no"}
    assert report["mapping_source"].startswith("default")


def test_a_details_verdict_can_be_the_rater_with_its_own_mapping(rated):
    report = raters.rater_report(
        study=rated["study"], params=_params(rated, field="details.behaviour", mapping="answer=yes,refuse=no")
    )
    assert report["model_categories"] == ["answer", "refuse"]
    assert {d["rater"]: d["value"] for d in report["model_vs_humans"]}["A"] == pytest.approx(1 / 3)


def test_unmapped_categories_are_counted_not_guessed(rated):
    report = raters.rater_report(study=rated["study"], params=_params(rated, mapping="1=yes"))
    assert report["model_unmapped"] == {"0": 3} and report["n_model_units_rated"] == 3


def test_non_whole_scores_need_a_threshold_which_is_stated(rated):
    Score.objects.filter(run=rated["run"], item=rated["items"][0]).update(value=0.7)
    report = raters.rater_report(study=rated["study"], params=_params(rated))
    assert report["model_excluded"] == {"not a whole number (give a threshold)": 1}
    report = raters.rater_report(study=rated["study"], params=_params(rated, threshold="0.5"))
    assert report["threshold_rule"] == "value ≥ 0.5 is at_or_above"
    assert report["mapping"] == {"at_or_above": "yes", "below": "no"}
    assert {d["rater"]: d["value"] for d in report["model_vs_humans"]}["A"] == pytest.approx(1 / 3)


def test_mapping_to_an_option_the_question_lacks_is_refused(rated):
    with pytest.raises(ValidationFailed, match="mapping targets"):
        _params(rated, mapping="1=maybe")


def test_per_class_precision_recall_f1_against_a_reference_by_hand():
    # reference: yes yes no no; rater: yes no no yes → yes: tp 1, fp 1, fn 1 → P = R = F1 = 1/2.
    out = rater_stats.per_class_prf(
        np.array([0, 1, 1, 0.0]), np.array([0, 0, 1, 1.0]), ["yes", "no"], n_boot=200, seed=1
    )
    yes = out["per_class"][0]
    assert (yes["precision"]["value"], yes["recall"]["value"], yes["f1"]["value"]) == (0.5, 0.5, 0.5)
    assert yes["precision"]["ci_method"] == "Wilson" and yes["f1"]["ci95"] is not None
    assert out["confusion"] == [[1, 1], [1, 1]] and out["macro_f1"]["value"] == 0.5


def test_f1_of_a_class_in_neither_array_is_undefined_not_zero():
    out = rater_stats.per_class_prf(np.array([0, 0.0]), np.array([0, 0.0]), ["yes", "no"])
    assert out["per_class"][1]["f1"]["value"] is None
    assert out["macro_f1"]["classes_left_out"] == ["no"]


def test_rater_page_and_downloads_for_the_researcher(client, rated, researcher):
    client.force_login(researcher)
    slug = rated["study"].slug
    query = f"?run={rated['run'].pk}&pool={rated['pool'].pk}&question=pf"
    page = client.get(reverse("adjudication:rater-report", args=[slug]) + query)
    assert page.status_code == 200 and b"model ~ A" in page.content
    body = client.get(reverse("adjudication:rater-report-download", args=[slug, "csv"]) + query).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert any(r["section"] == "model_vs_human" and r["rater_b"] == "A" for r in rows)
    api = client.get(reverse("adjudication-api-rater-report", args=[slug]) + query)
    assert api.status_code == 200 and api.json()["run"]["id"] == rated["run"].pk
    assert client.get(reverse("adjudication:raters-index", args=[slug])).status_code == 200


def test_annotators_get_403_and_strangers_404_on_rater_pages(client, rated, annotator, stranger):
    slug = rated["study"].slug
    factories.add_member(rated["pool"], annotator, pseudonym="C")
    query = f"?run={rated['run'].pk}&pool={rated['pool'].pk}&question=pf"
    for user, code in ((annotator, 403), (stranger, 404)):
        client.force_login(user)
        assert client.get(reverse("adjudication:rater-report", args=[slug]) + query).status_code == code
        assert client.get(reverse("adjudication-api-rater-report", args=[slug]) + query).status_code == code
        assert client.get(reverse("adjudication:raters-index", args=[slug])).status_code == code


def test_rater_bootstrap_job_runs_once_per_parameters_and_gives_alpha_intervals(
    rated, researcher, django_capture_on_commit_callbacks
):
    from adjudication.models import ReportJobStatus

    params = {**_params(rated).as_dict(), "n_boot": 200, "seed": 3}
    with django_capture_on_commit_callbacks(execute=False):
        job = job_request(study=rated["study"], family=ANALYSIS, kind="raters", params=params, user=researcher)
        again = job_request(study=rated["study"], family=ANALYSIS, kind="raters", params=params, user=researcher)
    assert again.pk == job.pk
    job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ReportJobStatus.DONE and job.n_done == job.n_total > 0
    assert job.result["alpha_with_model"]["ci95"] is not None
