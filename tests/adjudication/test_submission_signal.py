"""adjudication hears of submissions through annotation's ``assignment_submitted`` signal (adjudication/apps.py).

annotation imports no app above it (docs/architecture.md, "Calls that go up"), so what a submission sets off in
adjudication, disagreement detection and the fixed-precision rule, is connected by adjudication when the apps
load, once, by ``dispatch_uid``.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest
from django.apps import apps

import adjudication.apps
from adjudication import services as adjudication_services
from adjudication.models import AdjudicationCase, GoldLabel
from annotation.imports import items_import
from annotation.labels import label_save
from annotation.protocols import study_protocol_apply
from annotation.services import assignment_submit, pool_assign_items
from annotation.signals import assignment_submitted
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def disagreeing(study):
    """Two annotators of one pool answered one item differently; neither has submitted yet."""
    pf = factories.make_question(study, "pf")
    factories.make_item(study)
    pool = factories.make_pool(study, questions=[pf], overlap=2)
    people = [factories.make_user("first-annotator"), factories.make_user("second-annotator")]
    for person in people:
        factories.add_member(pool, person)
    pool_assign_items(pool=pool)
    assignments = []
    for person, value in zip(people, ("yes", "no"), strict=True):
        assignment = pool.assignments.get(annotator=person)
        label_save(assignment=assignment, question=pf, unit_key="item", value=value, base_version=0, actor=person)
        assignments.append((assignment, person))
    return pool, assignments


def _submit_all(assignments) -> None:
    for assignment, person in assignments:
        assignment_submit(assignment=assignment, actor=person)


def test_submitting_the_last_assignment_opens_a_case_through_the_signal(disagreeing):
    pool, assignments = disagreeing
    _submit_all(assignments)
    case = AdjudicationCase.objects.get(pool=pool)
    assert (case.unit_key, case.question.key) == ("item", "pf")
    assert not GoldLabel.objects.filter(pool=pool).exists()


def test_without_adjudications_receivers_a_submission_opens_no_case(disagreeing, no_submit_receivers):
    """The signal is the only way a submission reaches adjudication: nothing else calls detection."""
    pool, assignments = disagreeing
    _submit_all(assignments)
    assert pool.assignments.filter(status="submitted").count() == 2
    assert not AdjudicationCase.objects.exists()


def test_imported_labels_that_disagree_open_a_case_through_the_signal(study, researcher):
    """An import's labels arrive as submitted assignments: the importer sends the signal for each such item, so
    two imported annotators who disagree leave a case, as two who submitted in the workspace would."""
    study_protocol_apply(study=study, presets=["astrid"])
    labels = [
        {"annotator": name, "question": "refused", "unit": "item", "value": value}
        for name, value in (("A", "yes"), ("B", "no"))
    ]
    record = {"id": "q1", "question": "What dose of drug X?", "answer": "Take 0.5 mg daily.", "labels": labels}
    items_import(study=study, file=io.BytesIO(json.dumps(record).encode() + b"\n"), filename="items.jsonl",
                 actor=researcher)
    case = AdjudicationCase.objects.get()
    assert (case.pool.name, case.item.external_id, case.question.key, case.unit_key) == (
        "imported", "q1", "refused", "item"
    )


def test_adjudications_receivers_are_connected_once_even_when_its_apps_module_is_loaded_twice(
    disagreeing, monkeypatch
):
    """A module imported under a second name (or its ready() run again) connects new function objects; the
    dispatch_uid keeps one receiver per purpose, so detection runs once per submission, not twice."""
    calls = []
    real_detect = adjudication_services.item_disagreements_detect

    def counted(**kwargs):
        calls.append(kwargs)
        return real_detect(**kwargs)

    monkeypatch.setattr(adjudication_services, "item_disagreements_detect", counted)
    spec = importlib.util.spec_from_file_location("adjudication_apps_again", Path(adjudication.apps.__file__))
    again = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(again)
    try:
        again.AdjudicationConfig.ready(apps.get_app_config("adjudication"))
        adjudication.apps.AdjudicationConfig.ready(apps.get_app_config("adjudication"))
        pool, assignments = disagreeing
        _submit_all(assignments)
    finally:  # receivers the second copy connected, were it ever to connect them without a dispatch_uid
        for _, receiver in again.ASSIGNMENT_SUBMITTED_RECEIVERS:
            assignment_submitted.disconnect(receiver)
    assert calls == [{"pool_id": pool.pk, "item_id": assignments[0][0].item_id}] * 2  # one per submission
    assert AdjudicationCase.objects.filter(pool=pool).count() == 1
