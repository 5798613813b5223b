"""A 409 on a label save says whether the annotator set the newer value themselves ("you"), never who else did
(issue Q): not on the page (htmx and plain form), not in the API's conflict body. A label of an annotator's own
assignment written by someone else is what the data manager's old reassign left behind (it moved a started
assignment, answers included, to another annotator)."""

from __future__ import annotations

import json
import re

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


# --- What a 409 offers: the newer answer in words, the refused one to save again ---------------------------


@pytest.fixture
def tagged(study, annotator):
    """The annotator's assignment of an item asking a multi-label question whose option labels differ from
    their values, with an answer ("Alpha") that someone else gave."""
    tags = factories.make_question(
        study,
        "tags",
        kind="multilabel",
        options=[
            {"value": "a", "label": "Alpha", "key": "1"},
            {"value": "b", "label": "Beta", "key": "2"},
            {"value": "c", "label": "Gamma", "key": "3"},
        ],
    )
    pool = factories.make_pool(study, "tagging", questions=[tags])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, factories.make_item(study, "t-1"), annotator)
    previous = factories.make_user("dr-previous")
    factories.add_member(pool, previous, "P-PREV")
    now = timezone.now()
    label = Label.objects.create(
        assignment=assignment,
        question=tags,
        unit_key="item",
        value=["a"],
        version=1,
        updated_by=previous,
        updated_at=now,
    )
    LabelHistory.objects.create(label=label, new_value=["a"], new_version=1, actor=previous, at=now)
    return assignment


def test_a_refused_list_answer_is_shown_in_words_and_offered_again_as_a_list(client, annotator, tagged):
    client.force_login(annotator)
    url = reverse("annotation:label-save", args=[tagged.pk])
    data = {"question": "tags", "unit_key": "item", "list": "1", "value": ["b", "c"], "base_version": 0}
    response = client.post(url, data, **HX)
    body = response.content.decode()
    assert response.status_code == 409
    assert 'class="conflict-value">Alpha</strong>' in body and 'class="conflict-mine">Beta, Gamma</strong>' in body
    form = body[body.index('class="use-mine"') : body.index('class="use-mine-button"')]  # "save my answer"
    assert '<input type="hidden" name="base_version" value="1">' in form
    assert '<input type="hidden" name="list" value="1">' in form
    assert re.findall(r'<input type="hidden" name="value" value="([^"]*)">', form) == ["b", "c"]
    assert "Save my answer (Beta, Gamma) over it" in body


def test_a_refused_single_answer_is_shown_in_words_and_offered_again(client, annotator, inherited):
    client.force_login(annotator)
    url = reverse("annotation:label-save", args=[inherited.pk])
    response = client.post(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 0}, **HX)
    body = response.content.decode()
    assert response.status_code == 409
    assert 'class="conflict-value">3</strong>' in body and 'class="conflict-mine">5</strong>' in body
    form = body[body.index('class="use-mine"') : body.index('class="use-mine-button"')]  # "save my answer"
    assert 'name="list"' not in form
    assert re.findall(r'<input type="hidden" name="value" value="([^"]*)">', form) == ["5"]
    assert "Save my answer (5) over it" in body


def test_a_save_based_on_a_version_that_never_existed_is_told_there_is_no_answer(annotator, inherited):
    api = APIClient()
    api.force_authenticate(annotator)
    question = inherited.pool.questions.get()
    fresh = factories.make_assignment(inherited.pool, factories.make_item(inherited.pool.study, "n-1"), annotator)
    assert question.key == "pf"
    url = reverse("api-labels", args=[fresh.pk])
    response = api.put(url, {"question": "pf", "unit_key": "item", "value": "5", "base_version": 4}, format="json")
    assert response.status_code == 409
    assert response.json()["details"] == {
        "question": "pf",
        "unit_key": "item",
        "value": None,
        "version": 0,
        "updated_by": None,
        "updated_at": None,
        "your_value": "5",
    }


def test_a_refused_clearing_is_offered_again_as_a_clearing(client, annotator, inherited):
    client.force_login(annotator)
    url = reverse("annotation:label-save", args=[inherited.pk])
    response = client.post(url, {"question": "pf", "unit_key": "item", "clear": "1", "base_version": 0}, **HX)
    body = response.content.decode()
    assert response.status_code == 409
    assert 'class="conflict-value">3</strong>' in body and 'class="conflict-mine">no answer</strong>' in body
    form = body[body.index('class="use-mine"') : body.index('class="use-mine-button"')]  # "save my answer"
    assert '<input type="hidden" name="clear" value="1">' in form
    assert 'name="value"' not in form and 'name="list"' not in form
