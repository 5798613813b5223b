"""Validation-study pages and API: the wizard, refusal with the reason, the stamp on every output, access."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from adjudication.models import ValidationStudy
from annotation.models import Exposure, ExposureKind
from tests import factories
from tests.adjudication import validation_support as vs_support
from tests.adjudication.validation_support import make_run
from tests.test_security_pages import inline_code_problems

pytestmark = pytest.mark.django_db

CF = [0.9, 0.6, 0.1, 0.8, 0.3, 0.6]


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _labelled(researcher, *, shown_scores: bool = False):
    s = vs_support.build(researcher)
    if shown_scores:
        # While pool B is still collecting, one of its members is shown scores (an API read).
        Exposure.objects.create(
            user=s["b_users"][0], pool=s["pool_b"], item=s["items"][0], kind=ExposureKind.API, showed_scores=True
        )
    vs_support.label_pool_a(s)
    vs_support.label_pool_b(s)
    s["cf"] = make_run(s["study"], "cf", {i.pk: v for i, v in zip(s["items"], CF, strict=True)})
    return s


@pytest.fixture
def labelled(researcher):
    return _labelled(researcher)


def _form(s, **extra):
    return {
        "template": "astrid",
        "metric_run": s["cf"].pk,
        "metric_pool": s["pool_a"].pk,
        "metric_rater": "A1",
        "target": f"{s['pool_b'].pk}|perceived_faithfulness",
        "positive": "3",
        "target_mode": "per_annotator",
        "n_boot": "200",
        "seed": "0",
        "k": "5",
        **extra,
    }


def _no_inline_code(response):
    problems = inline_code_problems(response.content.decode())
    assert not problems, problems


def test_the_wizard_shows_the_checks_then_creates_and_runs_a_study(client, researcher, labelled):
    client.force_login(researcher)
    url = reverse("adjudication:validation-new", args=[labelled["study"].slug])
    page = client.get(url)
    assert page.status_code == 200
    _no_inline_code(page)
    checked = client.post(url, _form(labelled, action="check"))
    assert checked.status_code == 200
    assert b"Pools A and B share no annotator" in checked.content and b"No check refuses this study" in checked.content
    assert not ValidationStudy.objects.exists()
    _no_inline_code(checked)
    created = client.post(url, _form(labelled, action="create"))
    vs = ValidationStudy.objects.get()
    assert created.status_code == 302 and created["Location"] == reverse("adjudication:validation-report", args=[vs.pk])
    ran = client.post(reverse("adjudication:validation-run", args=[vs.pk]))
    assert ran.status_code == 302
    report = client.get(reverse("adjudication:validation-report", args=[vs.pk]))
    assert report.status_code == 200 and b"Automated CF against perceived_faithfulness" in report.content
    assert b"NOT INDEPENDENT" not in report.content
    _no_inline_code(report)
    index = client.get(reverse("adjudication:validation-index", args=[labelled["study"].slug]))
    assert vs.name.encode() in index.content
    _no_inline_code(index)


def test_a_refused_study_shows_the_reason_and_running_anyway_stamps_every_output(client, researcher):
    labelled = _labelled(researcher, shown_scores=True)
    client.force_login(researcher)
    url = reverse("adjudication:validation-new", args=[labelled["study"].slug])
    refused = client.post(url, _form(labelled, action="create"))
    assert refused.status_code == 400
    assert b"refused: this study is not independent" in refused.content and b"1 showed scores" in refused.content
    assert not ValidationStudy.objects.exists()
    _no_inline_code(refused)
    client.post(url, _form(labelled, action="create", run_anyway="on", override_reason="pilot"))
    vs = ValidationStudy.objects.get()
    assert vs.not_independent
    client.post(reverse("adjudication:validation-run", args=[vs.pk]))
    page = client.get(reverse("adjudication:validation-report", args=[vs.pk]))
    assert b"NOT INDEPENDENT" in page.content
    _no_inline_code(page)
    html = client.get(reverse("adjudication:validation-download", args=[vs.pk, "html"]))
    assert html["Content-Disposition"].startswith("attachment")
    body = html.content.decode()
    # Self-contained: its stylesheet is inline (it is opened from disk, not served by the app).
    assert "<style>" in body and "NOT INDEPENDENT" in body and "static/" not in body
    assert "ROC AUC" in body and "95% CI" in body
    data = json.loads(client.get(reverse("adjudication:validation-download", args=[vs.pk, "json"])).content)
    assert data["not_independent"] is True and data["stamp"].startswith("NOT INDEPENDENT")
    assert data["results"]["not_independent"] is True
    api = client.get(reverse("adjudication-api-validation-study", args=[vs.pk])).json()
    assert api["not_independent"] is True and api["stamp"].startswith("NOT INDEPENDENT")


def test_the_api_creates_refuses_and_runs_with_the_same_services(client, researcher, labelled):
    client.force_login(researcher)
    slug = labelled["study"].slug
    body = {
        "template": "astrid",
        "target_pool": labelled["pool_b"].pk,
        "target_question": "perceived_faithfulness",
        "positive": "3",
        "target_mode": "per_annotator",
        "metric_run": labelled["cf"].pk,
        "metric_pool": labelled["pool_a"].pk,
        "metric_rater": "A1",
        "n_boot": 200,
    }
    checks = client.post(
        reverse("adjudication-api-validation-checks", args=[slug]), body, content_type="application/json"
    )
    assert checks.status_code == 200 and checks.json()["blocking_failures"] == []
    created = client.post(
        reverse("adjudication-api-validation-studies", args=[slug]), body, content_type="application/json"
    )
    assert created.status_code == 201 and created.json()["not_independent"] is False
    pk = created.json()["id"]
    ran = client.post(reverse("adjudication-api-validation-run", args=[pk]))
    assert ran.status_code == 200
    analyses = ran.json()["results"]["analyses"]
    assert {a["key"] for a in analyses} == {"automated_cf", "human_cf", "cf_vs_rf"}
    factories.grant(labelled["study"], labelled["b_users"][0], "adjudicator")
    refused = client.post(
        reverse("adjudication-api-validation-studies", args=[slug]), body, content_type="application/json"
    )
    assert refused.status_code == 400 and "adjudicator" in refused.json()["detail"]
    assert any(c["key"] == "roles_blind" and c["status"] == "fail" for c in refused.json()["details"]["checks"])
    listed = client.get(reverse("adjudication-api-validation-studies", args=[slug])).json()
    assert [row["id"] for row in listed] == [pk]


def test_annotators_are_refused_and_strangers_learn_nothing(client, researcher, stranger, labelled):
    vs_body = {
        "template": "astrid",
        "target_pool": labelled["pool_b"].pk,
        "target_question": "perceived_faithfulness",
        "positive": "3",
        "metric_run": labelled["cf"].pk,
    }
    from adjudication.validation.inputs import validation_inputs_parse
    from adjudication.validation.services import validation_study_create

    vs = validation_study_create(
        study=labelled["study"],
        actor=researcher,
        inputs=validation_inputs_parse(study=labelled["study"], data=vs_body),
    )
    annotator = labelled["b_users"][0]
    client.force_login(annotator)
    assert client.get(reverse("adjudication:validation-report", args=[vs.pk])).status_code == 404
    assert client.get(reverse("adjudication-api-validation-study", args=[vs.pk])).status_code == 404
    assert client.get(reverse("adjudication:validation-new", args=[labelled["study"].slug])).status_code == 403
    client.force_login(stranger)
    assert client.get(reverse("adjudication:validation-report", args=[vs.pk])).status_code == 404
    assert client.post(reverse("adjudication-api-validation-run", args=[vs.pk])).status_code == 404
    assert client.get(reverse("adjudication:validation-download", args=[vs.pk, "json"])).status_code == 404


def test_the_pages_pool_b_opens_while_labelling_are_the_audit_trail_the_check_reads(client, researcher):
    from adjudication.validation.inputs import validation_checks_preview, validation_inputs_parse
    from annotation.models import Assignment

    s = vs_support.build(researcher)
    bob = s["b_users"][0]
    client.force_login(bob)
    for assignment in Assignment.objects.filter(pool=s["pool_b"], annotator=bob)[:2]:
        assert client.get(reverse("annotation:item", args=[assignment.pk])).status_code == 200
    inputs = validation_inputs_parse(
        study=s["study"],
        data={
            "template": "astrid",
            "target_pool": s["pool_b"].pk,
            "target_question": "perceived_faithfulness",
            "positive": "3",
            "metric_pool": s["pool_a"].pk,
        },
    )
    trail = next(c for c in validation_checks_preview(inputs=inputs) if c["key"] == "exposure_trail")
    assert trail["status"] == "pass" and trail["data"]["exposures_audited"] == 2
    assert Exposure.objects.filter(user=bob, showed_scores=False, showed_other_labels=False).count() == 2
