"""Imported labels belong to import-only identities: the pseudonym is data, the importer is the actor.

A researcher's import must never create work attributed to a live annotator's account (the label's
``updated_by``, the history's actor, the audit trail's actor), and an imported pseudonym must not equal,
or look like, a live member's pseudonym anywhere in the study: pseudonyms are compared by their key
(``annotation.pseudonyms``: NFKC, invisible characters removed, white space trimmed and collapsed, the
UTS #39 confusables skeleton, case folded), in the dry run as in the import, within the file as against
the study, and by the console when it names a new member.
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
from annotation.pseudonyms import look_alike, pseudonym_keys
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_hasher(settings, no_submit_receivers):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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


def _records(*records: dict) -> io.BytesIO:
    """A JSONL file of items whose ``labels`` name only their annotators (one label each, on the item)."""
    lines = []
    for record in records:
        labels = [{"annotator": p, "question": "refused", "unit": "item", "value": "no"} for p in record["labels"]]
        lines.append(json.dumps({"id": record["id"], "question": "How much?", "answer": "Take 0.5 mg. Daily.",
                                 "labels": labels}))
    return io.BytesIO("\n".join(lines).encode() + b"\n")


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


# --- pseudonyms are compared as a reader sees them (annotation.pseudonyms) --------------------------------

# Each is one pseudonym to a reader: a case variant, Cyrillic and Greek capitals, full-width forms, an
# invisible character inside, white space around or inside it, a capital i or a one for a small L.
LOOK_ALIKES = ["a1", "А1", "Α1", "Ａ１", "A\u200b1", "A\u00ad1", "Al", "AI", "\u0410l", " a1\u00a0"]
# Different people: accented and unaccented names, and other names that only share letters.
DIFFERENT = [("José", "Jose"), ("Müller", "Muller"), ("Łukasz", "Lukasz"), ("Zoë", "Zoe"), ("Åsa", "Asa"),
             ("Nguyễn", "Nguyen"), ("Chloé", "Chloe"), ("Иван", "Ivan"), ("Наташа", "Natasha"), ("Ana", "Anna"),
             ("A1", "A11"), ("A1", "A 1"), ("P1", "P2")]


@pytest.mark.parametrize("variant", [*LOOK_ALIKES, "A1", "ａ1", "AＩ"])
def test_look_alike_pseudonyms_share_a_key(variant):
    assert look_alike(variant, "A1") and look_alike("A1", variant)


@pytest.mark.parametrize(("one", "other"), [("KIM", "Kim"), ("Kim", "Кim"), ("M", "rn"), ("0", "o"), ("Ali", "ALI"),
                                            ("Jos\u00e9", "JOSE\u0301"), ("A\u2002\u2002B", "a b")])
def test_case_variants_and_what_they_look_like_share_a_key(one, other):
    assert look_alike(one, other)


@pytest.mark.parametrize(("one", "other"), [*DIFFERENT, ("Ali", "All")])
def test_different_names_keep_different_keys(one, other):
    assert not look_alike(one, other)


def test_invisible_characters_leave_no_key():
    assert pseudonym_keys("\u200b\u200d\u00ad") == ("", "")


@pytest.mark.parametrize("variant", LOOK_ALIKES)
@pytest.mark.parametrize("dry_run", [True, False])
def test_an_imported_pseudonym_that_looks_like_a_live_one_is_refused_naming_row_field_and_whom(
        protocol_study, researcher, annotator, variant, dry_run):
    live_pool = factories.make_pool(protocol_study, "live")
    factories.add_member(live_pool, annotator, pseudonym="A1")
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study,
                     file=_records({"id": "i1", "labels": ["B"]}, {"id": "i2", "labels": [variant]}),
                     filename="x.jsonl", actor=researcher, dry_run=dry_run)
    [error] = refused.value.details
    assert (error["location"], error["field"]) == ("line 2", "labels[0].annotator")
    assert error["reason"].startswith(f"pseudonym {variant.strip()!r} looks like 'A1', the pseudonym of a live "
                                      "annotator of pool 'live'; imported labels need pseudonyms of their own")
    assert not Label.objects.exists() and not ImportIdentity.objects.exists()


@pytest.mark.parametrize("padded", [" A1", "A1 ", "\tA1\u00a0", "\u3000A1\n"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_padded_copy_of_a_live_pseudonym_is_refused_as_that_pseudonym(protocol_study, researcher, annotator, padded,
                                                                        dry_run):
    factories.add_member(factories.make_pool(protocol_study, "live"), annotator, pseudonym="A1")
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_file(padded), filename="x.jsonl", actor=researcher, dry_run=dry_run)
    assert [(e["location"], e["field"], e["reason"]) for e in refused.value.details] == [
        ("line 1", "labels[0].annotator", "pseudonym 'A1' is the pseudonym of a live annotator of pool 'live'; "
                                          "imported labels need pseudonyms of their own")]
    assert not ImportIdentity.objects.exists()


@pytest.mark.parametrize(("live", "imported"), DIFFERENT)
def test_an_imported_pseudonym_unlike_every_live_one_is_imported(protocol_study, researcher, annotator, live, imported):
    factories.add_member(factories.make_pool(protocol_study, "live"), annotator, pseudonym=live)
    items_import(study=protocol_study, file=_file(imported), filename="x.jsonl", actor=researcher)
    assert ImportIdentity.objects.get().pseudonym == imported


@pytest.mark.parametrize("dry_run", [True, False])
def test_two_spellings_of_one_pseudonym_in_a_file_are_refused_naming_both(protocol_study, researcher, dry_run):
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_records({"id": "i1", "labels": ["Kim"]},
                                                         {"id": "i2", "labels": ["B", "KIM"]},
                                                         {"id": "i3", "labels": ["Кim"]}),  # a Cyrillic K
                     filename="x.jsonl", actor=researcher, dry_run=dry_run)
    advice = "write one annotator one way, and give two annotators pseudonyms that do not look alike"
    assert [(e["location"], e["field"], e["reason"]) for e in refused.value.details] == [
        ("line 2", "labels[1].annotator", f"pseudonym 'KIM' looks like 'Kim' (line 1, labels[0].annotator): {advice}"),
        ("line 3", "labels[0].annotator", f"pseudonym 'Кim' looks like 'Kim' (line 1, labels[0].annotator): {advice}"),
    ]
    assert not Label.objects.exists() and not ImportIdentity.objects.exists()


def test_a_pool_s_imported_annotator_is_added_to_by_their_spelling_only(protocol_study, researcher):
    items_import(study=protocol_study, file=_file("Kim", item="i1"), filename="x.jsonl", actor=researcher)
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_file("kim", item="i2"), filename="y.jsonl", actor=researcher)
    [error] = refused.value.details
    assert (error["location"], error["field"]) == ("line 1", "labels[0].annotator")
    assert "looks like 'Kim', the pseudonym of an imported annotator of pool 'imported'; write 'Kim'" in error["reason"]
    # The exact spelling adds to their labels; another pool's imported annotators are that pool's own.
    items_import(study=protocol_study, file=_file(" Kim ", item="i2"), filename="y.jsonl", actor=researcher)
    items_import(study=protocol_study, file=_file("kim", item="i3"), filename="z.jsonl", actor=researcher,
                 pool_name="second")
    assert sorted(ImportIdentity.objects.values_list("pool__name", "pseudonym")) == [
        ("imported", "Kim"), ("second", "kim")]
    assert Assignment.objects.filter(pool__name="imported").values("annotator").distinct().count() == 1


def test_a_padded_pseudonym_is_trimmed_before_it_is_checked_stored_and_compared(protocol_study, researcher):
    long = "P" * 40  # the longest pseudonym there is, here with white space around it
    result = items_import(study=protocol_study, file=_records({"id": "i1", "labels": [f"  {long}\t", " B"]},
                                                              {"id": "i2", "labels": ["B\u00a0", long]}),
                          filename="x.jsonl", actor=researcher)
    assert result.n_annotators == 2
    assert sorted(ImportIdentity.objects.values_list("pseudonym", flat=True)) == ["B", long]
    assert sorted(PoolMembership.objects.values_list("pseudonym", flat=True)) == ["B", long]
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_records({"id": "i3", "labels": [" " * 3, "P" * 41, "\u200b "]}),
                     filename="y.jsonl", actor=researcher)
    assert [(e["field"], e["reason"]) for e in refused.value.details] == [
        ("labels[0].annotator", "must be a pseudonym of 1 to 40 characters, not counting white space around it"),
        ("labels[1].annotator", "must be a pseudonym of 1 to 40 characters, not counting white space around it"),
        ("labels[2].annotator", "'\\u200b' has no visible character"),
    ]


def test_the_console_never_gives_a_new_member_a_pseudonym_that_looks_like_one_of_the_study(
        protocol_study, researcher):
    from annotation.console.services import pool_membership_add

    # An import made "a2" before any live member joined; the next free "A<n>" counts from the study's size.
    items_import(study=protocol_study, file=_file("a2"), filename="x.jsonl", actor=researcher)
    pool = factories.make_pool(protocol_study, "clinicians")
    added = [pool_membership_add(pool=pool, user=factories.make_user(), actor=researcher).pseudonym for _ in range(3)]
    assert added == ["A3", "A4", "A5"]  # not "A2", which looks like "a2"
    pseudonyms = list(PoolMembership.objects.values_list("pseudonym", flat=True))
    assert len(pseudonyms) == 4
    assert not [(a, b) for a in pseudonyms for b in pseudonyms if a != b and look_alike(a, b)]


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_pseudonym_like_several_of_the_studys_people_names_each_in_turn(protocol_study, researcher, dry_run):
    # An earlier import made "A1" an imported annotator of its own pool: another pool's, never compared.
    items_import(study=protocol_study, file=_file("A1", item="old"), filename="old.jsonl", actor=researcher,
                 pool_name="other-import")
    # Each pool numbers its own members: "A1" of one pool is not "A1" of another.
    factories.add_member(factories.make_pool(protocol_study, "z-pool"), factories.make_user(), pseudonym="A1")
    factories.add_member(factories.make_pool(protocol_study, "m-pool"), factories.make_user(), pseudonym="A1")
    factories.add_member(factories.make_pool(protocol_study, "a-pool"), factories.make_user(), pseudonym="Al")
    factories.add_member(factories.make_pool(protocol_study, "b-pool"), factories.make_user(), pseudonym="A0")
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_file("a1"), filename="x.jsonl", actor=researcher, dry_run=dry_run)
    advice = "imported labels need pseudonyms of their own"
    # By pseudonym, then by pool: one error for each person it looks like.
    assert [(e["location"], e["field"], e["reason"]) for e in refused.value.details] == [
        ("line 1", "labels[0].annotator", f"pseudonym 'a1' looks like 'A1', the pseudonym of a live annotator of "
                                          f"pool 'm-pool'; {advice}"),
        ("line 1", "labels[0].annotator", f"pseudonym 'a1' looks like 'A1', the pseudonym of a live annotator of "
                                          f"pool 'z-pool'; {advice}"),
        ("line 1", "labels[0].annotator", f"pseudonym 'a1' looks like 'Al', the pseudonym of a live annotator of "
                                          f"pool 'a-pool'; {advice}"),
    ]
    assert list(ImportIdentity.objects.values_list("pseudonym", "pool__name")) == [("A1", "other-import")]


def test_a_dry_run_refuses_another_spelling_of_the_pools_imported_annotator(protocol_study, researcher):
    items_import(study=protocol_study, file=_file("Kim", item="i1"), filename="x.jsonl", actor=researcher)
    with pytest.raises(ImportRejected) as refused:
        items_import(study=protocol_study, file=_file("kim", item="i2"), filename="y.jsonl", actor=researcher,
                     dry_run=True)
    assert [(e["location"], e["field"], e["reason"]) for e in refused.value.details] == [
        ("line 1", "labels[0].annotator", "pseudonym 'kim' looks like 'Kim', the pseudonym of an imported annotator "
                                          "of pool 'imported'; write 'Kim' to add to their labels, or give this "
                                          "annotator a pseudonym of their own")]
