"""The REST API's one error shape (concord.api_errors): ``{"error", "detail", "details"?}`` for DRF's errors as
for the domain's, with DRF's status codes and headers kept."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.urls import reverse
from rest_framework import exceptions
from rest_framework.test import APIClient

from annotation.services import pool_assign_items
from concord.api_errors import exception_handler
from tests import factories

pytestmark = pytest.mark.django_db

KEYS = {"error", "detail", "details"}


def _shaped(response, status, code):
    """The body of ``response`` is one error of the API's shape, with ``status`` and ``code``."""
    assert response.status_code == status, response.content
    body = response.json() if hasattr(response, "json") else response.data
    assert set(body) <= KEYS and {"error", "detail"} <= set(body), body
    assert body["error"] == code, body
    assert isinstance(body["detail"], str) and body["detail"], body
    return body


@pytest.mark.parametrize(
    ("exc", "status", "code", "headers"),
    [
        (exceptions.ValidationError("the value is bad"), 400, "invalid", {}),
        (exceptions.ParseError("JSON parse error - Expecting value"), 400, "parse_error", {}),
        (exceptions.NotAuthenticated(), 401, "not_authenticated", {}),
        (exceptions.AuthenticationFailed("Invalid token."), 401, "authentication_failed", {}),
        (exceptions.PermissionDenied("CSRF Failed: CSRF token missing."), 403, "forbidden", {}),
        (DjangoPermissionDenied("not yours"), 403, "forbidden", {}),
        (exceptions.NotFound("no such job"), 404, "not_found", {}),
        (Http404("no such job"), 404, "not_found", {}),
        (exceptions.MethodNotAllowed("DELETE"), 405, "method_not_allowed", {}),
        (exceptions.NotAcceptable(), 406, "not_acceptable", {}),
        (exceptions.UnsupportedMediaType("text/plain"), 415, "unsupported_media_type", {}),
        (exceptions.Throttled(wait=7), 429, "too_many_requests", {"Retry-After": "7"}),
    ],
)
def test_each_drf_error_family_answers_in_the_one_shape_with_its_status_and_headers(exc, status, code, headers):
    response = exception_handler(exc, {})
    body = _shaped(response, status, code)
    assert "details" not in body  # one sentence says it all
    for name, value in headers.items():
        assert response[name] == value


def test_an_authentication_challenge_keeps_its_www_authenticate_header():
    exc = exceptions.NotAuthenticated()
    exc.auth_header = 'Token realm="api"'  # what APIView.handle_exception sets from the first authenticator
    response = exception_handler(exc, {})
    _shaped(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == 'Token realm="api"'


def test_a_validation_error_names_each_field_in_its_sentence_and_keeps_the_fields_in_details():
    exc = exceptions.ValidationError(
        {
            "prompt": ["This field is required."],
            "options": [{}, {"value": ["This field may not be blank."]}],
            "non_field_errors": ["The options repeat a value."],
            "limit": ["limit must be a whole number from 1 to 1000"],
        }
    )
    body = _shaped(exception_handler(exc, {}), 400, "invalid")
    assert body["detail"] == (
        "prompt: This field is required; options.1.value: This field may not be blank; "
        "The options repeat a value; limit must be a whole number from 1 to 1000"
    )
    assert body["details"] == {
        "prompt": ["This field is required."],
        "options": [{}, {"value": ["This field may not be blank."]}],
        "non_field_errors": ["The options repeat a value."],
        "limit": ["limit must be a whole number from 1 to 1000"],
    }


def test_an_error_drf_does_not_handle_is_left_to_django():
    assert exception_handler(ValueError("a bug"), {}) is None


# --- Through the endpoints ----------------------------------------------------------------------------


@pytest.fixture
def work(study, annotator, no_submit_receivers):
    question = factories.make_question(study, "pf", kind="binary", options=[
        {"value": "yes", "label": "Yes", "key": "y"}, {"value": "no", "label": "No", "key": "n"},
    ])
    factories.make_item(study, "i1")
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"study": study, "assignment": pool.assignments.get()}


def _client(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_drf_errors_from_the_endpoints_answer_in_the_one_shape(work, annotator):
    token = APIClient()
    malformed = token.post(reverse("api-token"), "{not json", content_type="application/json")
    assert _shaped(malformed, 400, "parse_error")["detail"].startswith("JSON parse error")
    _shaped(token.post(reverse("api-token"), "username=a", content_type="text/plain"), 415, "unsupported_media_type")
    _shaped(token.delete(reverse("api-token")), 405, "method_not_allowed")
    anonymous = _shaped(APIClient().get(reverse("api-assignments")), 403, "not_authenticated")
    assert "credentials were not provided" in anonymous["detail"]
    bad_token = APIClient(HTTP_AUTHORIZATION="Token not-a-token")
    _shaped(bad_token.get(reverse("api-assignments")), 403, "authentication_failed")
    session = APIClient(enforce_csrf_checks=True)
    session.force_login(annotator)
    csrf = _shaped(session.post(reverse("api-skip", args=[work["assignment"].pk]), {"reason": "x"}), 403, "forbidden")
    assert csrf["detail"].startswith("CSRF Failed")
    unacceptable = _client(annotator).get(reverse("api-assignments"), HTTP_ACCEPT="application/xml")
    _shaped(unacceptable, 406, "not_acceptable")


def test_a_domain_error_and_a_drf_validation_error_share_the_shape_on_the_same_endpoints(work, annotator, researcher):
    """Each endpoint answers one refusal from a service (a DomainError) and one from its serializer (DRF's
    ValidationError); both carry the same keys, and the validation error's details name the fields."""
    pk, slug = work["assignment"].pk, work["study"].slug
    labels_url = reverse("api-labels", args=[pk])
    annotator_api, researcher_api = _client(annotator), _client(researcher)
    questions_url = reverse("console-api-questions", args=[slug])
    cases = [
        # (client, method, url, body refused by a service, body refused by the serializer, field named)
        (
            annotator_api, "put", labels_url,
            {"question": "pf", "unit_key": "item", "value": "maybe", "base_version": 0},
            {"question": "pf", "unit_key": "item", "base_version": "not a version"},
            "value",
        ),
        (
            researcher_api, "post", questions_url,
            {"key": "pf", "prompt": "Again?", "scope": "item", "kind": "binary"},
            {"key": "fresh", "scope": "item", "kind": "binary"},
            "prompt",
        ),
        (
            researcher_api, "post", reverse("adjudication-api-exports", args=[slug]),
            {"format": "xlsx"},
            {"format": "csv", "gold_only": "perhaps"},
            "gold_only",
        ),
    ]
    for client, method, url, domain_body, drf_body, field in cases:
        domain = getattr(client, method)(url, domain_body, format="json")
        drf = getattr(client, method)(url, drf_body, format="json")
        assert domain.status_code in (400, 409) and drf.status_code == 400, (url, domain.content, drf.content)
        domain_shape, drf_shape = domain.json(), drf.json()
        assert {"error", "detail"} <= set(domain_shape) <= KEYS, (url, domain_shape)
        assert {"error", "detail", "details"} == set(drf_shape), (url, drf_shape)
        assert drf_shape["error"] == "invalid" and field in drf_shape["details"], (url, drf_shape)
        assert drf_shape["detail"].startswith(f"{field}: "), (url, drf_shape)


def test_the_token_endpoints_refusals_are_of_the_one_shape(annotator):
    refused = APIClient().post(reverse("api-token"), {"username": annotator.username, "password": "wrong"})
    assert _shaped(refused, 400, "invalid")["detail"] == "Unknown username or wrong password."
    unknown_token = APIClient(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert _shaped(unknown_token.get(reverse("api-assignments")), 403, "authentication_failed")["detail"] == (
        "Invalid token."
    )


def test_a_stranger_gets_the_404_shape_from_the_console(study, stranger):
    _shaped(_client(stranger).get(reverse("console-api-study", args=[study.slug])), 404, "not_found")


def test_an_api_path_that_names_no_endpoint_answers_404_in_the_one_shape(client, annotator):
    client.force_login(annotator)
    for path in ("/api/nope/", "/api/console/studies/demo/nope/", "/api/scoring/"):
        _shaped(client.get(path), 404, "not_found")
    # Pages keep Django's HTML 404.
    page = client.get("/console/nope/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_an_unhandled_error_in_an_endpoint_answers_500_in_the_one_shape(client, annotator, monkeypatch):
    from annotation import api

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    client.force_login(annotator)
    client.raise_request_exception = False
    monkeypatch.setattr(api.AssignmentListApi, "get", broken)
    body = _shaped(client.get(reverse("api-assignments")), 500, "server_error")
    assert "a bug" not in str(body)
    # Pages keep Django's HTML 500.
    from django.test import RequestFactory

    from concord.api_errors import server_error

    page = server_error(RequestFactory().get("/console/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")
