"""The audit trail: database triggers record every change, whatever wrote it, into a hash chain
that `manage.py audit_verify` recomputes (annotation/audit.py)."""

from __future__ import annotations

import hashlib
import importlib
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.urls import reverse
from django.utils import timezone

from adjudication.exports.roundtrip import study_import_export
from adjudication.exports.writers import write_export
from adjudication.models import GoldLabel, GoldSource
from adjudication.services import gold_set
from annotation import audit
from annotation.console.services import pool_membership_add, pool_membership_remove
from annotation.imports import items_import
from annotation.labels import label_save, label_undo
from annotation.models import (
    Assignment,
    AssignmentStatus,
    AuditEvent,
    ImportIdentity,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Study,
    StudyRole,
)
from annotation.protocols import study_protocol_apply
from annotation.services import assignment_reopen, assignment_submit
from annotation.tasks import audit_seal_task
from concord.celery import app as celery_app
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    # The personas' passwords are hashed on creation and checked at each log-in; what these tests
    # exercise does not depend on the hash's cost.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def anchor_file(tmp_path, settings):
    settings.AUDIT_ANCHOR_FILE = tmp_path / "audit-anchor.json"
    return settings.AUDIT_ANCHOR_FILE


@pytest.fixture
def label(study, annotator):
    question = factories.make_question(study)
    item = factories.make_item(study)
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    # Through the service, as the application writes labels: version 1 and its history row.
    return label_save(
        assignment=assignment, question=question, unit_key="item", value="yes", base_version=0, actor=annotator
    )


def events_for(table: str, **filters) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(table_name=table, **filters).order_by("id"))


def test_every_audited_table_in_the_test_database_has_insert_update_and_delete_triggers():
    with connection.cursor() as cursor:
        existing = set(connection.introspection.table_names(cursor))
    present = audit.triggers_present()
    audited = [spec.table for spec in audit.audited_tables() if spec.table in existing]
    assert {"annotation_label", "adjudication_goldlabel", "annotation_studyrole", "auth_user"} <= set(audited)
    for table in audited:
        for operation in ("insert", "update", "delete"):
            assert f"concord_audit_{table}_{operation}" in present


def test_installing_the_triggers_twice_is_harmless():
    first = audit.triggers_install()
    second = audit.triggers_install()
    assert first == second
    assert "concord_audit_protect" in audit.triggers_present()


def test_a_queryset_update_of_labels_is_recorded_with_old_and_new_value_and_actor(label, annotator):
    Label.objects.filter(pk=label.pk).update(value="no", version=2)
    insert, update = events_for("annotation_label", row_pk=str(label.pk))
    assert insert.operation == "INSERT" and insert.old_row is None and insert.new_row["value"] == "yes"
    assert update.operation == "UPDATE"
    assert (update.old_row["value"], update.new_row["value"]) == ("yes", "no")
    assert (update.old_row["version"], update.new_row["version"]) == (1, 2)
    assert update.actor_id == annotator.pk
    assert update.seq is None and update.hash == ""


def test_an_update_that_changes_nothing_is_not_recorded(label):
    Label.objects.filter(pk=label.pk).update(value="yes")
    assert [e.operation for e in events_for("annotation_label", row_pk=str(label.pk))] == ["INSERT"]


def test_a_raw_sql_delete_of_a_label_is_recorded_with_the_deleted_row(label):
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM annotation_labelhistory WHERE label_id = %s", [label.pk])
        cursor.execute("DELETE FROM annotation_label WHERE id = %s", [label.pk])
    delete = events_for("annotation_label", row_pk=str(label.pk))[-1]
    assert delete.operation == "DELETE" and delete.new_row is None
    assert delete.old_row["unit_key"] == "item" and delete.actor_id is None


def test_bulk_membership_and_role_changes_are_recorded(study, researcher):
    pool = factories.make_pool(study)
    users = [get_user_model().objects.create(username=f"member-{i}") for i in range(3)]
    PoolMembership.objects.bulk_create(
        PoolMembership(pool=pool, study=study, user=u, independent=True, pseudonym=f"P{i}") for i, u in enumerate(users)
    )
    PoolMembership.objects.filter(pool=pool).update(active=False)
    StudyRole.objects.filter(study=study, user=researcher).delete()
    memberships = events_for("annotation_poolmembership")
    assert [e.operation for e in memberships] == ["INSERT"] * 3 + ["UPDATE"] * 3
    assert all(e.old_row["active"] in (True, 1) and e.new_row["active"] in (False, 0) for e in memberships[3:])
    role_delete = events_for("annotation_studyrole", operation="DELETE")
    assert [e.old_row["user_id"] for e in role_delete] == [researcher.pk]


def test_study_settings_and_the_questions_a_pool_answers_are_recorded(study):
    Study.objects.filter(pk=study.pk).update(blind_system=False, hidden_metadata_fields=["model"])
    update = events_for("annotation_study", operation="UPDATE")[-1]
    assert update.new_row["hidden_metadata_fields"] == ["model"]
    assert update.old_row["blind_system"] in (True, 1) and update.new_row["blind_system"] in (False, 0)
    question = factories.make_question(study, "helpful")
    pool = factories.make_pool(study)
    pool.questions.add(question)
    Pool.objects.filter(pk=pool.pk).update(overlap=3)
    assert events_for("annotation_pool_questions", operation="INSERT")[-1].new_row["question_id"] == question.pk
    assert events_for("annotation_pool", operation="UPDATE")[-1].new_row["overlap"] == 3


def test_a_user_becoming_staff_is_recorded_but_neither_a_login_time_nor_the_password_is():
    user = factories.make_user("promoted")
    User = get_user_model()
    User.objects.filter(pk=user.pk).update(last_login=timezone.now())
    user.set_password("another-long-password")
    user.save(update_fields=["password"])
    User.objects.filter(pk=user.pk).update(is_staff=True)
    events = events_for("auth_user", row_pk=str(user.pk))
    assert [e.operation for e in events] == ["INSERT", "UPDATE"]
    assert events[1].old_row["is_staff"] in (False, 0) and events[1].new_row["is_staff"] in (True, 1)
    assert all("password" not in (e.new_row or {}) and "password" not in (e.old_row or {}) for e in events)


def test_gold_labels_are_recorded_with_the_adjudicator_as_actor(study, adjudicator):
    GoldLabel = apps.get_model("adjudication", "GoldLabel")
    question = factories.make_question(study)
    item = factories.make_item(study)
    pool = factories.make_pool(study, questions=[question])
    gold = GoldLabel.objects.create(
        pool=pool,
        item=item,
        unit_key="item",
        question=question,
        value="yes",
        source="adjudicated",
        adjudicator=adjudicator,
        rationale="Both readings are supported by chunk 2.",
    )
    (event,) = events_for("adjudication_goldlabel", row_pk=str(gold.pk))
    assert event.actor_id == adjudicator.pk and event.new_row["rationale"].startswith("Both readings")


def test_an_export_download_is_recorded_as_who_what_when_without_content(study, researcher):
    ExportJob = apps.get_model("adjudication", "ExportJob")
    ExportDownload = apps.get_model("adjudication", "ExportDownload")
    job = ExportJob.objects.create(study=study, format="jsonl", requested_by=researcher)
    download = ExportDownload.objects.create(job=job, user=researcher)
    (event,) = events_for("adjudication_exportdownload", row_pk=str(download.pk))
    assert event.actor_id == researcher.pk
    assert event.new_row["job_id"] == job.pk and event.at is not None
    assert events_for("adjudication_exportjob", row_pk=str(job.pk))[0].actor_id == researcher.pk


def test_audit_events_cannot_be_deleted_or_rewritten(label):
    event = events_for("annotation_label")[0]
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM annotation_auditevent WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_auditevent SET operation = 'DELETE' WHERE id = %s", [event.pk])
    assert AuditEvent.objects.get(pk=event.pk).operation == "INSERT"


def test_a_sealed_event_cannot_be_resealed(label):
    audit.events_seal()
    event = events_for("annotation_label")[0]
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_auditevent SET hash = %s WHERE id = %s", ["0" * 64, event.pk])


def test_sealing_chains_events_in_order_with_sha256_of_previous_hash_and_canonical_json(label):
    sealed = audit.events_seal()
    assert sealed == AuditEvent.objects.count() > 0
    events = list(AuditEvent.objects.order_by("seq"))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    first, second = events[0], events[1]
    canonical = json.dumps(
        {
            "seq": 1,
            "id": first.id,
            "table": first.table_name,
            "row_pk": first.row_pk,
            "operation": first.operation,
            "old": first.old_row,
            "new": first.new_row,
            "actor_id": first.actor_id,
            "at": first.at.isoformat(),
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert first.prev_hash == "" and first.hash == hashlib.sha256(canonical.encode()).hexdigest()
    assert second.prev_hash == first.hash
    assert audit.events_seal() == 0


def test_sealing_in_batches_extends_one_chain_and_holds_only_a_batch_at_a_time(label, monkeypatch):
    """The chain sealed a few events at a time is the one chain: each batch links to the previous batch's last
    hash and continues its positions, and no read of pending events fetches more than one batch."""
    pending = AuditEvent.objects.filter(seq__isnull=True).count()
    assert pending >= 5
    fetched: list[int] = []
    real_event_hash = audit.event_hash

    def counting_hash(event, prev_hash):
        fetched.append(event.id)
        return real_event_hash(event, prev_hash)

    monkeypatch.setattr(audit, "event_hash", counting_hash)
    assert audit.events_seal(batch=2) == pending
    events = list(AuditEvent.objects.order_by("seq"))
    assert [e.seq for e in events] == list(range(1, pending + 1))
    assert [e.id for e in events] == sorted(e.id for e in events) == fetched
    prev = ""
    for event in events:
        assert event.prev_hash == prev and event.hash == real_event_hash(event, prev)
        prev = event.hash
    assert audit.chain_verify().ok
    assert audit.events_seal(batch=2) == 0


def test_audit_verify_seals_and_accepts_an_intact_chain_and_records_its_head(label, anchor_file, capsys):
    call_command("audit_verify")
    assert "audit chain intact" in capsys.readouterr().out
    head = AuditEvent.objects.order_by("-seq").first()
    assert json.loads(anchor_file.read_text()) == {"seq": head.seq, "hash": head.hash}
    label_save(
        assignment=label.assignment,
        question=label.question,
        unit_key="item",
        value="no",
        base_version=1,
        actor=label.updated_by,
    )
    call_command("audit_verify")
    assert json.loads(anchor_file.read_text())["seq"] == head.seq + 2  # the label's UPDATE and its history row


def test_audit_verify_fails_on_a_raw_update_of_a_label_that_bypassed_its_version_and_history(label, anchor_file):
    call_command("audit_verify")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_label SET value = %s WHERE id = %s", ['"no"', label.pk])
    with pytest.raises(CommandError) as failure:
        call_command("audit_verify")
    assert failure.value.returncode == 1
    message = str(failure.value)
    assert f"label {label.pk}'s value differs from its history" in message
    assert "changed without a new version" in message


def test_audit_verify_fails_on_a_label_whose_version_was_bumped_without_a_history_row(label, anchor_file):
    Label.objects.filter(pk=label.pk).update(value="no", version=2)
    with pytest.raises(CommandError, match=rf"label {label.pk} is at version 2 but its history ends at version 1"):
        call_command("audit_verify")


def _tamper(sql: str, params: list) -> None:
    # What an attacker with database access does: lift the protection, then edit.
    audit.triggers_remove(protection_only=True)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_audit_verify_exits_non_zero_naming_an_edited_event(label, anchor_file):
    call_command("audit_verify")
    victim = events_for("annotation_label")[0]
    _tamper("UPDATE annotation_auditevent SET actor_id = %s WHERE id = %s", [999, victim.pk])
    with pytest.raises(CommandError) as failure:
        call_command("audit_verify")
    assert failure.value.returncode == 1
    assert f"event seq {victim.seq} (id {victim.pk}" in str(failure.value) and "was edited" in str(failure.value)


def test_audit_verify_exits_non_zero_when_a_sealed_event_was_deleted(label, anchor_file):
    call_command("audit_verify")
    victim = AuditEvent.objects.get(seq=2)
    _tamper("DELETE FROM annotation_auditevent WHERE id = %s", [victim.pk])
    with pytest.raises(CommandError, match="event seq 2 is missing"):
        call_command("audit_verify")


def test_audit_verify_exits_non_zero_when_the_tail_was_deleted_behind_the_anchor(label, anchor_file):
    call_command("audit_verify")
    head = AuditEvent.objects.order_by("-seq").first()
    _tamper("DELETE FROM annotation_auditevent WHERE id = %s", [head.pk])
    with pytest.raises(CommandError, match=f"anchored head \\(seq {head.seq}\\) is no longer in the chain"):
        call_command("audit_verify")


def test_audit_verify_exits_non_zero_when_the_chain_was_consistently_rewritten(label, anchor_file):
    call_command("audit_verify")
    head = AuditEvent.objects.order_by("-seq").first()
    _tamper("UPDATE annotation_auditevent SET actor_id = 999 WHERE seq = %s", [head.seq])
    forged = AuditEvent.objects.get(pk=head.pk)
    forged_hash = audit.event_hash(forged, forged.prev_hash)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_auditevent SET hash = %s WHERE id = %s", [forged_hash, head.pk])
    assert audit.chain_verify().ok  # consistent on its own ...
    with pytest.raises(CommandError, match="differs from the anchored head"):
        call_command("audit_verify")  # ... but not with the head recorded outside the database


@pytest.mark.django_db(transaction=True)
def test_flush_between_transactional_tests_still_works_and_keeps_the_protection():
    get_user_model().objects.create(username="flushed")
    assert AuditEvent.objects.exists()
    call_command("flush", interactive=False, verbosity=0)
    assert not AuditEvent.objects.exists()
    assert {"concord_audit_protect", "concord_audit_auth_user_insert"} <= audit.triggers_present()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("inhibit_post_migrate", [False, True])
def test_after_a_flush_every_audit_trigger_is_there_and_always_enabled(inhibit_post_migrate):
    # Normally the flush's post_migrate signal puts the triggers back; without it (inhibited, as Django does for
    # tests with available_apps) the flush command's own reinstall must.
    get_user_model().objects.create(username="flushed")
    call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=inhibit_post_migrate)
    assert audit.triggers_missing() == []
    assert audit.triggers_not_always_enabled() == []


def test_audit_verify_exits_non_zero_when_an_audit_trigger_is_missing(label, anchor_file):
    with connection.cursor() as cursor:
        table = "" if connection.vendor == "sqlite" else " ON annotation_label"
        cursor.execute(f"DROP TRIGGER concord_audit_annotation_label_update{table}")
    with pytest.raises(CommandError, match=r"triggers are missing.*concord_audit_annotation_label_update"):
        call_command("audit_verify")
    assert not anchor_file.exists()


# --- PostgreSQL: disabled triggers and the replication role ------------------------------------------

ON_POSTGRES = "postgresql" in django_settings.DATABASES["default"]["ENGINE"]
postgres_only = pytest.mark.skipif(not ON_POSTGRES, reason="PostgreSQL triggers can be disabled; SQLite's cannot")


def _is_superuser() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        return bool(cursor.fetchone()[0])


@postgres_only
def test_every_audit_trigger_is_enabled_always():
    assert audit.triggers_not_always_enabled() == []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_trigger "
            "WHERE tgname LIKE 'concord_audit%%' AND NOT tgisinternal AND tgenabled = 'A'"
        )
        assert cursor.fetchone()[0] == len(audit.triggers_present())


@postgres_only
def test_audit_verify_fails_while_an_audit_trigger_is_disabled(label, anchor_file):
    call_command("audit_verify")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred checks pending in the test's transaction
        cursor.execute("ALTER TABLE annotation_label DISABLE TRIGGER USER")
        cursor.execute("UPDATE annotation_label SET unit_key = unit_key WHERE id = %s", [label.pk])
    with pytest.raises(CommandError, match=r"concord_audit_annotation_label_update \(disabled\)") as failure:
        call_command("audit_verify")
    assert failure.value.returncode == 1
    call_command("migrate", verbosity=0)  # reinstalling re-enables them
    assert audit.triggers_not_always_enabled() == []


@postgres_only
def test_audit_verify_fails_when_a_trigger_is_enabled_but_not_always(label, anchor_file):
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE annotation_label ENABLE TRIGGER concord_audit_annotation_label_update")
    with pytest.raises(CommandError, match=r"concord_audit_annotation_label_update \(enabled, but not ALWAYS\)"):
        call_command("audit_verify")


@postgres_only
def test_the_replication_role_does_not_silence_the_triggers(label):
    if not _is_superuser():
        pytest.skip("setting session_replication_role needs a PostgreSQL superuser (the attack needs one too)")
    before = AuditEvent.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("UPDATE annotation_label SET value = %s WHERE id = %s", ['"no"', label.pk])
        with pytest.raises(DatabaseError), transaction.atomic():
            cursor.execute("UPDATE annotation_auditevent SET actor_id = NULL WHERE seq IS NULL")
        cursor.execute("SET LOCAL session_replication_role = origin")
    assert AuditEvent.objects.count() == before + 1


def test_pending_events_are_sealed_by_a_periodic_task_every_minute(label, settings):
    entry = settings.CELERY_BEAT_SCHEDULE["audit-seal"]
    assert entry["task"] == audit_seal_task.name and entry["task"] in celery_app.tasks
    assert entry["schedule"] == settings.AUDIT_SEAL_INTERVAL_SECONDS == 60
    assert AuditEvent.objects.filter(seq__isnull=True).exists()
    assert audit_seal_task.apply().get() > 0
    assert not AuditEvent.objects.filter(seq__isnull=True).exists()


# --- Attribution: who is credited for work (issue Q) ----------------------------------------------------
#
# An assignment's annotator is the author of every label under it; a label's assignment, a history row's
# actor, a membership's pseudonym, an import identity and a gold label's adjudicator decide who is credited
# for the rest. The application writes these columns once, when it creates the row.


@contextmanager
def triggers_off(*tables: str) -> Iterator[None]:
    """What someone owning the tables does to change them unseen: silence the audit triggers, change the
    data, then put the triggers back (ENABLE ALWAYS again), so that audit_verify's trigger checks pass."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending deferred checks
            for table in tables:
                for operation in ("insert", "update", "delete"):
                    cursor.execute(f'ALTER TABLE "{table}" DISABLE TRIGGER concord_audit_{table}_{operation}')
    else:
        audit.triggers_remove()  # SQLite's triggers cannot be disabled, only dropped
    try:
        yield
    finally:
        audit.triggers_install()
    assert audit.triggers_missing() == [] and audit.triggers_not_always_enabled() == []


@pytest.fixture
def credited(study, annotator, adjudicator, researcher):
    """A label and its history in an assignment, another annotator with an assignment of their own, a
    membership, an import identity and a gold label: one row of every table whose attribution is verified."""
    question = factories.make_question(study)
    item, other_item = factories.make_item(study), factories.make_item(study)
    pool = factories.make_pool(study, questions=[question])
    colleague = factories.make_user("colin-colleague")
    membership = factories.add_member(pool, annotator, "A1")
    factories.add_member(pool, colleague, "A2")
    assignment = factories.make_assignment(pool, item, annotator)
    other = factories.make_assignment(pool, other_item, colleague)
    label = label_save(
        assignment=assignment, question=question, unit_key="item", value="yes", base_version=0, actor=annotator
    )
    identity = ImportIdentity.objects.create(
        user=factories.make_user("imported-b", is_active=False), pool=pool, pseudonym="B", created_by=researcher
    )
    gold = gold_set(
        pool_id=pool.pk, item_id=item.pk, unit_key="item", question_id=question.pk, value="yes",
        source=GoldSource.ADJUDICATED, adjudicator=adjudicator, rationale="Chunk 2 says so.",
    )
    return SimpleNamespace(
        question=question, pool=pool, item=item, other_item=other_item, annotator=annotator, colleague=colleague,
        membership=membership, assignment=assignment, other=other, label=label, history=label.history.get(),
        identity=identity, gold=gold,
    )


def _moves(c: SimpleNamespace) -> dict[str, tuple[str, str, object, int]]:
    """Each way of moving credit: (table, column, new value, row id)."""
    return {
        "assignment to another annotator": ("annotation_assignment", "annotator_id", c.colleague.pk, c.assignment.pk),
        "assignment to another item": ("annotation_assignment", "item_id", c.other_item.pk, c.assignment.pk),
        "label to another assignment": ("annotation_label", "assignment_id", c.other.pk, c.label.pk),
        "history row to another actor": ("annotation_labelhistory", "actor_id", c.colleague.pk, c.history.pk),
        "membership to another pseudonym": ("annotation_poolmembership", "pseudonym", "A9", c.membership.pk),
        "import identity to another user": ("annotation_importidentity", "user_id", c.colleague.pk, c.identity.pk),
        "gold to another adjudicator": ("adjudication_goldlabel", "adjudicator_id", c.colleague.pk, c.gold.pk),
    }


MOVES = [
    "assignment to another annotator", "assignment to another item", "label to another assignment",
    "history row to another actor", "membership to another pseudonym", "import identity to another user",
    "gold to another adjudicator",
]


def _raw_update(table: str, column: str, value: object, pk: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f'UPDATE "{table}" SET "{column}" = %s WHERE id = %s', [value, pk])  # noqa: S608 (names: MOVES)


def _verify_fails() -> str:
    with pytest.raises(CommandError) as failure:
        call_command("audit_verify")
    assert failure.value.returncode == 1
    return str(failure.value)


def test_every_column_that_decides_attribution_is_verified_and_exists(credited):
    specs = {spec.table: spec for spec in audit.audited_tables()}
    assert set(audit.ATTRIBUTION_ASSIGNMENT) == {"pool_id", "item_id", "annotator_id"}
    for table, columns in {
        "annotation_assignment": {"annotator_id", "pool_id", "item_id"},
        "annotation_label": {"assignment_id"},
        "annotation_labelhistory": {"label_id", "actor_id", "new_value", "new_version"},
        "annotation_poolmembership": {"user_id", "pseudonym", "pool_id"},
        "annotation_importidentity": {"user_id", "pseudonym", "pool_id"},
        "adjudication_goldlabel": {"adjudicator_id", "adjudicator_name", "value"},
    }.items():
        assert columns <= set(specs[table].fixed_columns), table
    for spec in audit.audited_tables():
        with connection.cursor() as cursor:
            existing = {c.name for c in connection.introspection.get_table_description(cursor, spec.table)}
        assert set(spec.verified_columns) <= existing, spec.table
        if spec.watched_columns:  # a tracked column that is not watched could change without an event
            assert set(spec.verified_columns) <= set(spec.watched_columns), spec.table


def test_an_assignment_is_audited_for_its_attribution_only_not_for_every_status_change(credited):
    work = credited
    assignment_submit(assignment=work.assignment, actor=work.annotator)
    assert Assignment.objects.get(pk=work.assignment.pk).status == AssignmentStatus.SUBMITTED
    assert [e.operation for e in events_for("annotation_assignment", row_pk=str(work.assignment.pk))] == ["INSERT"]
    Assignment.objects.filter(pk=work.assignment.pk).update(annotator=work.colleague)
    insert, update = events_for("annotation_assignment", row_pk=str(work.assignment.pk))
    assert insert.new_row["annotator_id"] == work.annotator.pk
    assert (update.old_row["annotator_id"], update.new_row["annotator_id"]) == (work.annotator.pk, work.colleague.pk)


@pytest.mark.parametrize("move", MOVES)
def test_a_raw_update_that_moves_credit_is_recorded_and_fails_audit_verify(credited, anchor_file, move):
    call_command("audit_verify")
    table, column, value, pk = _moves(credited)[move]
    _raw_update(table, column, value, pk)
    assert events_for(table, row_pk=str(pk))[-1].operation == "UPDATE"
    message = _verify_fails()
    assert f"attribution changed by an UPDATE: {table}#{pk}: audit event id" in message
    assert f"records an UPDATE of {column} " in message
    assert f"{table}#{pk}: {column} differ from what its INSERT (or baseline) audit event" in message
    assert "moved by an UPDATE in the trail" in message and "triggers off" not in message


@pytest.mark.parametrize("move", MOVES)
def test_a_move_of_credit_made_with_the_triggers_off_fails_audit_verify(credited, anchor_file, move):
    call_command("audit_verify")
    table, column, value, pk = _moves(credited)[move]
    before = AuditEvent.objects.count()
    with triggers_off(table):
        _raw_update(table, column, value, pk)
    assert AuditEvent.objects.count() == before  # nothing recorded the change
    message = _verify_fails()
    assert f"rows the audit trail does not account for: {table}#{pk}: {column} differ from what its INSERT" in message
    assert "changed with the audit triggers off" in message


def test_a_label_edit_with_a_forged_history_row_made_with_the_triggers_off_fails_audit_verify(label, anchor_file):
    call_command("audit_verify")
    with triggers_off("annotation_label", "annotation_labelhistory"):
        Label.objects.filter(pk=label.pk).update(value="no", version=2)
        forged = LabelHistory.objects.create(
            label=label, old_value="yes", new_value="no", old_version=1, new_version=2, actor=label.updated_by,
            at=timezone.now(),
        )
    assert audit.labels_unaccounted() == []  # the label and its history agree: that check alone is fooled
    message = _verify_fails()
    assert f"annotation_label#{label.pk}: value, version differ from what its INSERT (or baseline) audit" in message
    assert f"annotation_labelhistory#{forged.pk} has no INSERT audit event" in message


def test_a_history_row_whose_content_was_rewritten_with_the_triggers_off_fails_audit_verify(label, anchor_file):
    history = label.history.get()
    with triggers_off("annotation_labelhistory"):
        LabelHistory.objects.filter(pk=history.pk).update(new_value="maybe", old_value="no")
    message = _verify_fails()
    assert f"annotation_labelhistory#{history.pk}: old_value, new_value differ from what its INSERT" in message


def test_a_membership_reactivated_with_the_triggers_off_after_a_recorded_removal_fails_audit_verify(
    credited, researcher, anchor_file
):
    pool_membership_remove(membership=credited.membership, actor=researcher)  # recorded: active → false
    call_command("audit_verify")
    removal = events_for("annotation_poolmembership", row_pk=str(credited.membership.pk))[-1]
    with triggers_off("annotation_poolmembership"):
        PoolMembership.objects.filter(pk=credited.membership.pk).update(active=True)
    message = _verify_fails()
    assert (
        f"annotation_poolmembership#{credited.membership.pk}: active differ from what its latest audit event "
        f"(id {removal.pk}) recorded: changed with the audit triggers off"
    ) in message


def test_an_assignment_created_with_the_triggers_off_fails_audit_verify(credited, anchor_file):
    with triggers_off("annotation_assignment"):
        smuggled = factories.make_assignment(credited.pool, credited.other_item, credited.annotator)
    message = _verify_fails()
    assert f"annotation_assignment#{smuggled.pk} has no INSERT audit event" in message


def test_an_assignment_deleted_with_the_triggers_off_fails_audit_verify(credited, anchor_file):
    with triggers_off("annotation_assignment"):
        Assignment.objects.filter(pk=credited.other.pk).delete()
    message = _verify_fails()
    assert f"annotation_assignment#{credited.other.pk} is gone, but the trail records no DELETE of it" in message


def test_rows_that_predate_the_trail_get_one_baseline_event_from_the_migration_and_then_pass(credited, anchor_file):
    # Before migration 0012 assignments were not audited: rows like these have no INSERT event.
    with triggers_off("annotation_assignment", "annotation_importidentity"):
        old = factories.make_assignment(credited.pool, credited.other_item, credited.annotator)
    assert f"annotation_assignment#{old.pk} has no INSERT audit event" in _verify_fails()
    migration = importlib.import_module("annotation.migrations.0014_audit_baseline")
    migration.record_baseline(apps, SimpleNamespace(connection=connection))
    (baseline,) = events_for("annotation_assignment", row_pk=str(old.pk))
    assert (baseline.operation, baseline.actor_id, baseline.old_row) == (audit.BASELINE, None, None)
    assert baseline.new_row["annotator_id"] == credited.annotator.pk
    call_command("audit_verify")
    assert audit.baseline_record() == {spec.table: 0 for spec in audit._verified_specs(connection)}  # once per row
    # From then on, the baseline is what a change is checked against.
    with triggers_off("annotation_assignment"):
        Assignment.objects.filter(pk=old.pk).update(annotator=factories.make_user("someone-else"))
    assert f"annotation_assignment#{old.pk}: annotator_id differ from what its INSERT" in _verify_fails()


def _import_file(*pseudonyms: str) -> io.BytesIO:
    record = {
        "id": "imported-1", "question": "How much?", "answer": "Take 0.5 mg. Daily.", "source": "0.5 mg daily.",
        "labels": [{"annotator": p, "question": "refused", "unit": "item", "value": "no"} for p in pseudonyms],
    }  # fmt: skip
    return io.BytesIO(json.dumps(record).encode() + b"\n")


def test_the_applications_own_flows_pass_audit_verify(
    study, researcher, annotator, adjudicator, anchor_file, no_submit_receivers
):
    """Import with labels, save, undo, submit, reopen, gold and a re-decision, membership changes: every
    row they write is accounted for by the trail, and none of them moves credit."""
    study_protocol_apply(study=study, presets=["astrid"])
    items_import(study=study, file=_import_file("B", "C"), filename="x.jsonl", actor=researcher)
    assert Label.objects.count() == 2 and ImportIdentity.objects.count() == 2
    question = factories.make_question(study, "overall-ok")
    pool = factories.make_pool(study, questions=[question], reopen_allowed=True)
    membership = pool_membership_add(pool=pool, user=annotator, actor=researcher)
    assignment = factories.make_assignment(pool, factories.make_item(study), annotator)

    def save(value: str) -> Label:
        current = Label.objects.filter(assignment=assignment, question=question).first()
        return label_save(
            assignment=assignment, question=question, unit_key="item", value=value,
            base_version=current.version if current else 0, actor=annotator,
        )

    save("yes")
    save("no")
    label_undo(assignment=assignment, actor=annotator)
    assignment_submit(assignment=assignment, actor=annotator)
    assignment_reopen(assignment=assignment, actor=annotator)
    save("no")
    assignment_submit(assignment=assignment, actor=annotator)
    key = {"pool_id": pool.pk, "item_id": assignment.item_id, "unit_key": "item", "question_id": question.pk}
    gold_set(**key, value="yes", source=GoldSource.ADJUDICATED, adjudicator=adjudicator)
    gold_set(**key, value="no", source=GoldSource.ADJUDICATED, adjudicator=adjudicator, expected_version=1)
    assert GoldLabel.objects.filter(is_current=False).count() == 1
    pool_membership_remove(membership=membership, actor=researcher)
    assert not PoolMembership.objects.get(pk=membership.pk).active
    call_command("audit_verify")
    assert Label.objects.get(assignment=assignment).version == 4


def test_the_demo_study_and_its_export_imported_again_pass_audit_verify(anchor_file, tmp_path):
    """The demo loader and the study round-trip write assignments, labels, history, gold and pseudonymous
    members in bulk: all of it accounted for, none of it moved."""
    call_command("load_demo", "--no-begin", stdout=io.StringIO())
    demo = Study.objects.get(slug="kqa-demo")
    out = write_export(study=demo, fmt="jsonl", out=tmp_path / "kqa.jsonl")
    copy = study_import_export(path=out, slug="kqa-copy", owner=demo.owner)
    assert Label.objects.filter(assignment__pool__study=copy).count() == Label.objects.filter(
        assignment__pool__study=demo
    ).count() > 0
    assert GoldLabel.objects.filter(pool__study=copy).exists()
    call_command("audit_verify")


def test_a_data_manager_reassign_passes_audit_verify(client, study, researcher, anchor_file):
    """A reassignment closes the giver's assignments (withdrawn with their answers, or deleted when empty)
    and creates the receiver's own: it never moves an assignment, so nothing is flagged."""
    question = factories.make_question(study)
    pool = factories.make_pool(study, questions=[question], overlap=1)
    kim, lee = factories.make_user("kim"), factories.make_user("lee")
    factories.add_member(pool, kim, "P-A1")
    factories.add_member(pool, lee, "P-A2")
    answered, empty = factories.make_item(study), factories.make_item(study)
    started = factories.make_assignment(pool, answered, kim)
    label_save(assignment=started, question=question, unit_key="item", value="yes", base_version=0, actor=kim)
    factories.make_assignment(pool, empty, kim)
    client.force_login(researcher)
    fields = {
        "action": "reassign", "target_pool": pool.pk, "from_user": kim.pk, "to_user": lee.pk,
        "item": [answered.pk, empty.pk], "confirmed": "1",
    }  # fmt: skip
    assert client.post(reverse("adjudication:data-bulk", args=[study.slug]), fields).status_code == 302
    assert Assignment.objects.get(pk=started.pk).annotator == kim  # the giver's answers stay theirs
    assert Assignment.objects.filter(annotator=lee, item__in=[answered, empty]).count() == 2
    call_command("audit_verify")


@postgres_only
def test_a_superuser_who_demotes_the_triggers_and_replicates_a_forged_edit_fails_audit_verify(label, anchor_file):
    if not _is_superuser():
        pytest.skip("setting session_replication_role needs a PostgreSQL superuser (the attack needs one too)")
    call_command("audit_verify")
    tables = ("annotation_label", "annotation_labelhistory")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for table in tables:  # from ALWAYS to origin-only, which the replication role silences
            for operation in ("insert", "update", "delete"):
                cursor.execute(f'ALTER TABLE "{table}" ENABLE TRIGGER concord_audit_{table}_{operation}')
        cursor.execute("SET LOCAL session_replication_role = replica")
        before = AuditEvent.objects.count()
        Label.objects.filter(pk=label.pk).update(value="no", version=2)
        forged = LabelHistory.objects.create(
            label=label, old_value="yes", new_value="no", old_version=1, new_version=2, actor=label.updated_by,
            at=timezone.now(),
        )
        cursor.execute("SET LOCAL session_replication_role = origin")
    assert AuditEvent.objects.count() == before
    audit.triggers_install()  # ENABLE ALWAYS again: the trigger checks pass
    message = _verify_fails()
    assert f"annotation_label#{label.pk}: value, version differ" in message
    assert f"annotation_labelhistory#{forged.pk} has no INSERT audit event" in message


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's lock levels")
@pytest.mark.django_db(transaction=True)  # as after a migrate: no pending (deferred) trigger events of the test's own
def test_reinstalling_the_triggers_lets_labels_be_read_meanwhile(label):
    """``triggers_install`` runs after every ``migrate``, on a live database. While another session reads the
    labels (its transaction holds ACCESS SHARE on the table), the install must neither wait for it nor make it
    wait: it replaces triggers in place, never with the ACCESS EXCLUSIVE lock of a DROP TRIGGER."""
    import psycopg

    settings = connection.settings_dict
    reader = psycopg.connect(
        dbname=settings["NAME"], user=settings["USER"], password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None, port=settings["PORT"] or None,
    )
    try:
        reader.execute("SELECT count(*) FROM annotation_label").fetchone()  # the reader's transaction stays open
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        try:
            assert "annotation_label" in audit.triggers_install()
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        assert audit.triggers_missing() == [] and audit.triggers_not_always_enabled() == []
    finally:
        reader.rollback()
        reader.close()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's lock levels")
@pytest.mark.django_db(transaction=True)
def test_installing_only_the_missing_triggers_leaves_tables_being_written_alone(label):
    """Migration 0014 installs triggers inside its long baseline transaction: with ``only_missing`` it restores a
    missing trigger without taking a lock on a table whose triggers exist, so a label save in progress (another
    session holding the label's row lock) neither blocks it nor, later, is blocked by it."""
    import psycopg

    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER concord_audit_annotation_assignment_insert ON annotation_assignment")
    assert "concord_audit_annotation_assignment_insert" in audit.triggers_missing()
    settings = connection.settings_dict
    writer = psycopg.connect(
        dbname=settings["NAME"], user=settings["USER"], password=settings["PASSWORD"] or None,
        host=settings["HOST"] or None, port=settings["PORT"] or None,
    )
    try:
        writer.execute("UPDATE annotation_label SET updated_at = updated_at WHERE id = %s", [label.pk])  # uncommitted
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        try:
            audit.triggers_install(only_missing=True)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        assert audit.triggers_missing() == [] and audit.triggers_not_always_enabled() == []
    finally:
        writer.rollback()
        writer.close()
