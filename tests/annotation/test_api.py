"""The workspace REST API: same services as the pages, token auth, OpenAPI."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import AssignmentStatus, Exposure, Label
from annotation.services import pool_assign_items
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def work(study, annotator, no_submit_receivers):
    study.blind_system = True
    study.visible_metadata_fields = ["topic", "model_temperature"]
    study.hidden_metadata_fields = ["model_temperature"]  # never shown, even when listed as visible
    study.save()
    ib = factories.make_question(study, "information_bearing", scope="sentence", order=1)
    pf = factories.make_question(
        study,
        "pf",
        kind="ordinal",
        order=2,
        options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)],
    )
    item = factories.make_item(
        study,
        "i1",
        answer="Take 0.5 mg daily.",
        system="GPT-Secret-System",
        metadata={"model_temperature": 0.7, "topic": "dosing"},
    )
    pool = factories.make_pool(study, questions=[ib, pf])
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"pool": pool, "item": item, "assignment": pool.assignments.get()}


@pytest.fixture
def api(annotator):
    client = APIClient()
    client.force_authenticate(annotator)
    return client


def labels_url(work):
    return reverse("api-labels", args=[work["assignment"].pk])


def test_my_assignments_are_listed_in_queue_order(api, work):
    body = api.get(reverse("api-assignments")).json()
    assert body["count"] == 1
    assert body["results"][0]["id"] == work["assignment"].pk
    assert api.get(reverse("api-assignments"), {"status": "nonsense"}).status_code == 400


def test_reserving_the_next_item(api, work):
    response = api.post(reverse("api-pool-next", args=[work["pool"].pk]))
    assert response.status_code == 200 and response.json()["status"] == AssignmentStatus.STARTED


def test_the_item_view_is_blinded_and_records_an_exposure(api, work):
    response = api.get(reverse("api-assignment", args=[work["assignment"].pk]))
    body = response.json()
    assert response.status_code == 200
    assert body["system"] is None
    assert body["metadata"] == {"topic": "dosing"}
    assert "GPT-Secret-System" not in response.content.decode()
    assert [s["text"] for s in body["sentences"]] == ["Take 0.5 mg daily."]
    assert {q["key"] for q in body["questions"]} == {"information_bearing", "pf"}
    exposure = Exposure.objects.get()
    assert exposure.kind == "api" and not exposure.showed_system
    assert exposure.metadata_keys == ["topic"]


def test_saving_and_reading_my_labels(api, work):
    response = api.put(
        labels_url(work), {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["version"] == 1
    listed = api.get(labels_url(work)).json()
    assert [(lb["question"], lb["unit_key"], lb["value"], lb["version"]) for lb in listed] == [("pf", "item", "4", 1)]


def test_a_stale_save_gets_409_with_the_newer_value(api, work, annotator):
    api.put(labels_url(work), {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}, format="json")
    api.put(labels_url(work), {"question": "pf", "unit_key": "item", "value": "5", "base_version": 1}, format="json")
    response = api.put(
        labels_url(work), {"question": "pf", "unit_key": "item", "value": "1", "base_version": 1}, format="json"
    )
    assert response.status_code == 409
    details = response.json()["details"]
    assert (details["value"], details["version"], details["updated_by"], details["your_value"]) == (
        "5",
        2,
        "you",  # the caller's own earlier save: never a username
        "1",
    )
    assert details["updated_at"]
    assert Label.objects.get().value == "5"


def test_an_invalid_value_gets_400(api, work):
    response = api.put(
        labels_url(work), {"question": "pf", "unit_key": "item", "value": "7", "base_version": 0}, format="json"
    )
    assert response.status_code == 400 and "not an option" in response.json()["detail"]
    assert (
        api.put(
            labels_url(work), {"question": "nope", "unit_key": "item", "value": "1", "base_version": 0}, format="json"
        ).status_code
        == 404
    )


def test_submit_lists_missing_answers_then_succeeds_idempotently(api, work):
    url = reverse("api-submit", args=[work["assignment"].pk])
    refused = api.post(url)
    assert refused.status_code == 400
    assert {(m["question"], m["unit_key"]) for m in refused.json()["details"]} == {
        ("information_bearing", "s:0"),
        ("pf", "item"),
    }
    api.put(labels_url(work), {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}, format="json")
    api.put(
        labels_url(work),
        {"question": "information_bearing", "unit_key": "s:0", "value": "yes", "base_version": 0},
        format="json",
    )
    assert api.post(url).json()["status"] == "submitted"
    assert api.post(url).status_code == 200


def test_skip_proposal_and_time(api, work):
    pk = work["assignment"].pk
    assert (
        api.post(
            reverse("api-aspect-propose", args=[pk]), {"text": "renal dosing", "importance": "must_have"}, format="json"
        ).status_code
        == 201
    )
    assert api.post(reverse("api-active-time", args=[pk]), {"seconds": 20}, format="json").json() == {"added": 20.0}
    assert api.post(reverse("api-skip", args=[pk]), {"reason": ""}, format="json").status_code == 400
    assert (
        api.post(reverse("api-skip", args=[pk]), {"reason": "outside my field"}, format="json").json()["status"]
        == "skipped"
    )


def test_scripts_authenticate_with_a_token(work, annotator):
    anonymous = APIClient()
    assert anonymous.get(reverse("api-assignments")).status_code in (401, 403)
    bad = anonymous.post(reverse("api-token"), {"username": annotator.username, "password": "wrong"}, format="json")
    assert bad.status_code == 400
    token = anonymous.post(
        reverse("api-token"), {"username": annotator.username, "password": factories.PASSWORD}, format="json"
    ).json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get(reverse("api-assignments")).json()["count"] == 1


def test_the_openapi_schema_describes_the_workspace_api(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("schema"), {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    put = schema["paths"]["/api/assignments/{id}/labels/"]["put"]
    assert {"200", "400", "404", "409"} <= set(put["responses"])
    assert "base_version" in schema["components"]["schemas"]["LabelInput"]["properties"]
    assert "/api/pools/{pool_id}/next/" in schema["paths"]


def test_saving_a_label_through_the_api_uses_a_bounded_number_of_queries(api, work, django_assert_max_num_queries):
    api.put(labels_url(work), {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}, format="json")
    with django_assert_max_num_queries(12) as captured:
        response = api.put(
            labels_url(work), {"question": "pf", "unit_key": "item", "value": "5", "base_version": 1}, format="json"
        )
    assert response.status_code == 200, response.content
    assert any("annotation_labelhistory" in q["sql"] for q in captured.captured_queries)  # it does write
