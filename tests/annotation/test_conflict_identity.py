"""A 409 on a label save says whether the annotator set the newer value themselves ("you"), never who else did
(issue Q): not on the page (htmx and plain form), not in the API's conflict body. A label of an annotator's own
assignment written by someone else is what the data manager's old reassign left behind (it moved a started
assignment, answers included, to another annotator)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Label, LabelHistory
from tests import factories

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def inherited(study, annotator):
    """The annotator's assignment holding an answer that "dr-previous" (pseudonym P-PREV) gave."""
    assignment, pf = factories.one_nominal_assignment(study, annotator)
    previous = factories.make_user("dr-previous")
    factories.add_member(assignment.pool, previous, "P-PREV")
    now = timezone.now()
    label = Label.objects.create(
        assignment=assignment, question=pf, unit_key="item", value="3", version=1, updated_by=previous, updated_at=now
    )
    LabelHistory.objects.create(label=label, new_value="3", new_version=1, actor=previous, at=now)
    return assignment


def test_a_conflict_on_the_page_never_names_the_person_who_set_the_newer_answer(client, annotator, inherited):
    client.force_login(annotator)
    url = reverse("annotation:label-save", args=[inherited.pk])
    response = client.post(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 0}, **HX)
    body = response.content.decode()
    assert response.status_code == 409 and 'class="conflict"' in body
    assert "set by someone else" in body
    assert "dr-previous" not in body and "P-PREV" not in body
    plain = client.post(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 0}, follow=True)
    assert "dr-previous" not in plain.content.decode() and "P-PREV" not in plain.content.decode()


def test_a_conflict_in_the_api_never_names_the_person_who_set_the_newer_answer(annotator, inherited):
    api = APIClient()
    api.force_authenticate(annotator)
    url = reverse("api-labels", args=[inherited.pk])
    response = api.put(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 0}, format="json")
    assert response.status_code == 409
    details = response.json()["details"]
    assert (details["value"], details["version"], details["updated_by"], details["your_value"]) == ("3", 1, None, "5")
    assert "dr-previous" not in json.dumps(response.json()) and "P-PREV" not in json.dumps(response.json())


def test_the_annotators_own_newer_answer_is_said_to_be_theirs(client, annotator, inherited):
    """'you', and the username still never appears (the API conflict tests check the same on their path)."""
    Label.objects.filter(assignment=inherited).update(updated_by=annotator)
    client.force_login(annotator)
    url = reverse("annotation:label-save", args=[inherited.pk])
    body = client.post(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 0}, **HX)
    assert "set by you" in body.content.decode() and annotator.get_username() not in body.content.decode()
