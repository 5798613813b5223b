"""Imported labels belong to import-only identities: the pseudonym is data, the importer is the actor.

A researcher's import must never create work attributed to a live annotator's account (the label's
``updated_by``, the history's actor, the audit trail's actor), and an imported pseudonym must not equal
a live member's pseudonym anywhere in the study.
"""

from __future__ import annotations

import io
import json

import pytest

from annotation.imports import ImportRejected, items_import
from annotation.models import (
    Assignment,
    AuditEvent,
    ImportIdentity,
    Label,
    LabelHistory,
    PoolMembership,
)
from annotation.protocols import study_protocol_apply
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.ASSIGNMENT_SUBMITTED_HANDLERS = []


@pytest.fixture
def protocol_study(study):
    study_protocol_apply(study=study, presets=["astrid"])
    return study


def _file(*pseudonyms: str, item: str = "i1") -> io.BytesIO:
    record = {
        "id": item, "question": "How much?", "answer": "Take 0.5 mg. Daily.", "source": "0.5 mg daily.",
        "labels": [{"annotator": p, "question": "refused", "unit": "item", "value": "no"} for p in pseudonyms],
    }  # fmt: skip
    return io.BytesIO(json.dumps(record).encode() + b"\n")


def test_imported_labels_are_the_importers_actions_on_import_only_identities(protocol_study, researcher):
    items_import(study=protocol_study, file=_file("B"), filename="x.jsonl", actor=researcher)
    identity = ImportIdentity.objects.get(pseudonym="B")
    assert identity.created_by == researcher and not identity.user.is_active
    assert not identity.user.has_usable_password()
    label = Label.objects.get()
    assert label.assignment.annotator == identity.user
    assert label.updated_by == researcher
    assert LabelHistory.objects.get().actor == researcher
    events = AuditEvent.objects.filter(table_name__in=["annotation_label", "annotation_labelhistory"])
    assert {e.actor_id for e in events} == {researcher.pk}


def test_a_second_import_reuses_the_identity(protocol_study, researcher):
    items_import(study=protocol_study, file=_file("B", item="i1"), filename="x.jsonl", actor=researcher)
    items_import(study=protocol_study, file=_file("B", item="i2"), filename="y.jsonl", actor=researcher)
    assert ImportIdentity.objects.count() == 1
    assert Assignment.objects.values("annotator").distinct().count() == 1


def test_an_import_never_attributes_labels_to_a_live_member_of_the_pool(protocol_study, researcher, annotator):
    pool = factories.make_pool(protocol_study, "imported")
    factories.add_member(pool, annotator, pseudonym="A")
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_file("A"), filename="x.jsonl", actor=researcher)
    assert "live annotator" in json.dumps(refused.value.details)
    assert not Assignment.objects.filter(annotator=annotator).exists()
    assert not Label.objects.exists() and not ImportIdentity.objects.exists()


def test_an_imported_pseudonym_cannot_collide_with_a_live_one_in_another_pool(protocol_study, researcher, annotator):
    live_pool = factories.make_pool(protocol_study, "live")
    factories.add_member(live_pool, annotator, pseudonym="A")
    with pytest.raises(ImportRejected):
        items_import(study=protocol_study, file=_file("A"), filename="x.jsonl", actor=researcher, pool_name="other")
    assert not Label.objects.exists()
    assert PoolMembership.objects.filter(pseudonym="A").count() == 1
