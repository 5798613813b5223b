"""How many SQL statements the annotator's hot paths run, whatever the size of the item: a label save
through the htmx view (its write and the redraw of its unit), opening an item page and submitting an
assignment. Counted as Django sends them, session and transaction statements included."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.labels import label_save
from annotation.models import Label
from annotation.protocols import study_protocol_apply
from annotation.services import pool_assign_items
from tests import factories

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
LONG_ANSWER = " ".join(f"Sentence number {n} says something." for n in range(1, 31))
LABEL_SAVE = 12
# One of these is the page header asking whether to link the researcher console (never for annotators). The
# session is not among them: it is written once a refresh interval (concord/sessions.py), not on every page.
ITEM_PAGE = 14
SUBMIT = 16


@pytest.fixture
def astrid(study, annotator, no_submit_receivers):
    """An item of 30 sentences and 10 passages under the ASTRID protocol."""
    questions = study_protocol_apply(study=study, presets="astrid")
    item = factories.make_item(study, "i1", answer=LONG_ANSWER, question="What dose of X?")
    for rank in range(1, 11):
        factories.make_chunk(item, rank, f"Passage {rank}.")
    pool = factories.make_pool(study, "clinicians", questions=questions)
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"pool": pool, "item": item, "assignment": pool.assignments.get(), "questions": questions}


def _save(client, assignment, question, unit, value, base=0):
    data = {"question": question, "unit_key": unit, "base_version": base, "value": value}
    return client.post(reverse("annotation:label-save", args=[assignment.pk]), data, **HX)


def test_a_label_save_through_the_htmx_view_redraws_its_unit_within_the_limit(
    client, annotator, astrid, django_assert_max_num_queries
):
    client.force_login(annotator)
    assignment = astrid["assignment"]
    client.get(reverse("annotation:item", args=[assignment.pk]))
    with django_assert_max_num_queries(LABEL_SAVE):
        response = _save(client, assignment, "context_relevant", "c:3", "yes")
    assert response.status_code == 200 and 'id="unit-c-3"' in response.content.decode()
    with django_assert_max_num_queries(LABEL_SAVE):
        response = _save(client, assignment, "context_relevant", "c:3", "no", base=1)
    assert response.status_code == 200 and Label.objects.get(unit_key="c:3").value == "no"
    with django_assert_max_num_queries(LABEL_SAVE):
        response = _save(client, assignment, "perceived_faithfulness", "item", "4")
    assert response.status_code == 200 and 'id="unit-item"' in response.content.decode()


def test_opening_an_item_page_stays_within_the_limit(client, annotator, astrid, django_assert_max_num_queries):
    client.force_login(annotator)
    client.get(reverse("annotation:home"))  # a session's first request writes what it checked into it
    with django_assert_max_num_queries(ITEM_PAGE):
        response = client.get(reverse("annotation:item", args=[astrid["assignment"].pk]))
    assert response.status_code == 200


def test_submitting_an_assignment_stays_within_the_limit(client, annotator, astrid, django_assert_max_num_queries):
    assignment = astrid["assignment"]
    unit_keys = {"item": ["item"], "sentence": [f"s:{i}" for i in range(30)], "chunk": [f"c:{r}" for r in range(1, 11)]}
    for question in astrid["questions"]:
        if question.key == "grounded":
            continue  # asked only where a sentence bears information
        value = "no" if question.key == "information_bearing" else question.option_values[0]
        for unit in unit_keys[question.scope]:
            label_save(
                assignment=assignment, question=question, unit_key=unit, value=value, base_version=0, actor=annotator
            )
    client.force_login(annotator)
    with django_assert_max_num_queries(SUBMIT):
        response = client.post(reverse("annotation:submit", args=[assignment.pk]), **HX)
    assert response.status_code == 200, response.content
