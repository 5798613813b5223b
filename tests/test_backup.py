"""The backup drill (docs/operations.md, "Backup and restore"): `manage.py backup`, then `manage.py restore` into a
fresh database and a fresh var directory, then `manage.py audit_verify` on the restored deployment; and the restores
that must be refused (a database or var directory that is not empty, a damaged backup), changing nothing.

Each command runs as a process of its own with the environment an operator gives it (DATABASE_URL, CONCORD_VAR_DIR),
as the test role: in CI one that may create databases but is not a superuser. PostgreSQL only: backup and restore
are pg_dump and pg_restore.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse
from psycopg import sql
from rest_framework.test import APIClient

from annotation.models import Label
from concord.ops import backup
from tests import factories, waiting

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(waiting.SLOW_TEST_TIMEOUT)]
postgres_only = pytest.mark.skipif(
    not POSTGRES, reason="backup and restore are pg_dump and pg_restore: PostgreSQL only"
)


def _url(database: str) -> str:
    s = connection.settings_dict
    auth = quote(s["USER"] or "", safe="")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"], safe="")
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}{port}/{database}"


def manage(*args: str, database: str, var_dir: Path) -> subprocess.CompletedProcess:
    """``manage.py <args>`` as an operator runs it: its own process, DATABASE_URL and CONCORD_VAR_DIR."""
    env = {key: value for key, value in os.environ.items() if key not in ("AUDIT_ANCHOR_FILE",)}
    env.update(DATABASE_URL=_url(database), CONCORD_VAR_DIR=str(var_dir))
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=waiting.SUBPROCESS_TIMEOUT, check=False,
    )


@pytest.fixture
def new_database() -> Iterator:
    """``new_database()`` creates an empty database (as the test role, which owns it) and returns its name; every
    one is dropped at the end."""
    created: list[str] = []

    def create() -> str:
        name = f"{connection.settings_dict['NAME']}_restore_{uuid.uuid4().hex[:8]}"
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return name

    yield create
    with connection.cursor() as cursor:
        for name in created:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute("SELECT datname FROM pg_database WHERE datname = ANY(%s)", [created])
        assert cursor.fetchall() == [], "a restored database was left behind"


def _query(database: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(_url(database)) as conn:
        return conn.execute(sql, params).fetchall()


def _tables(database: str) -> list[str]:
    rows = _query(database, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
    return [row[0] for row in rows]


def _contents(database: str) -> dict[str, tuple[int, str]]:
    """Every table's row count and a digest of its rows (their text, sorted): equal digests, equal data."""
    out = {}
    digest = sql.SQL("SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM {} t")
    with psycopg.connect(_url(database)) as conn:
        for table in _tables(database):
            out[table] = conn.execute(digest.format(sql.Identifier(table))).fetchone()
    return out


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def source_var(tmp_path, settings) -> Path:
    """The deployment's var directory, holding what Concord keeps there: an upload waiting to be imported, an
    export, a trained judge, the audit anchor, and the filesystem broker's messages (not backed up)."""
    var = tmp_path / "var"
    settings.VAR_DIR = var
    settings.MEDIA_ROOT = var / "media"
    settings.AUDIT_ANCHOR_FILE = var / "audit-anchor.json"
    default_storage.save("imports/1/upload.jsonl", ContentFile(b'{"id": "q1", "question": "?", "answer": "!"}\n'))
    (var / "media" / "exports").mkdir(parents=True)
    (var / "media" / "exports" / "study-1.jsonl.gz").write_bytes(os.urandom(300))
    (var / "models" / "judges" / ("a" * 32)).mkdir(parents=True)
    (var / "models" / "judges" / ("a" * 32) / "judge.joblib").write_bytes(os.urandom(2000))
    (var / "broker" / "queue").mkdir(parents=True)
    (var / "broker" / "queue" / "in-flight.msg").write_text("{}")
    return var


@pytest.fixture
def label_with_history(study, annotator):
    """A label saved through the API and changed once: two versions, two history rows, their audit events."""
    question = factories.make_question(
        study, "pf", kind="ordinal", options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)]
    )
    pool = factories.make_pool(study, questions=[question])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, factories.make_item(study, answer="Take 0.5 mg daily."), annotator)
    api = APIClient()
    api.force_authenticate(annotator)
    url = reverse("api-labels", args=[assignment.pk])
    for value, base in (("3", 0), ("4", 1)):
        response = api.put(url, {"question": "pf", "unit_key": "item", "value": value, "base_version": base},
                           format="json")
        assert response.status_code == 200, response.content
    label = Label.objects.get(assignment=assignment)
    assert (label.value, label.version, label.history.count()) == ("4", 2, 2)
    return label


@postgres_only
def test_a_backup_restored_into_a_fresh_database_and_var_directory_is_whole_and_passes_audit_verify(
    tmp_path, source_var, label_with_history, new_database
):
    source_db = connection.settings_dict["NAME"]
    call_command("audit_verify")  # seals the trail and records the anchor, as the deployment's cron does
    assert (source_var / "audit-anchor.json").is_file()

    backup_dir = tmp_path / "backup"
    made = manage("backup", str(backup_dir), database=source_db, var_dir=source_var)
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in backup_dir.iterdir()) == [
        "audit-anchor.json", "database.pgdump", "manifest.json", "var.tar.gz"
    ]

    restored_db, restored_var = new_database(), tmp_path / "var-restored"
    done = manage("restore", str(backup_dir), database=restored_db, var_dir=restored_var)
    assert done.returncode == 0, done.stderr
    assert "audit_verify" in done.stdout

    # Every table, row for row; every file but the broker's messages.
    assert _contents(restored_db) == _contents(source_db)
    expected_files = {path: data for path, data in _files(source_var).items() if not path.startswith("broker/")}
    assert _files(restored_var) == expected_files
    assert "media/imports/1/upload.jsonl" in expected_files and "audit-anchor.json" in expected_files

    # The label, its history and its audit events, as the restored deployment reads them.
    label = label_with_history
    assert _query(restored_db, "SELECT value::text, version FROM annotation_label WHERE id = %s", (label.pk,)) == [
        ('"4"', 2)
    ]
    history = _query(
        restored_db,
        "SELECT old_value::text, new_value::text, new_version FROM annotation_labelhistory WHERE label_id = %s "
        "ORDER BY id",
        (label.pk,),
    )
    assert history == [(None, '"3"', 1), ('"3"', '"4"', 2)]
    events = _query(
        restored_db,
        "SELECT operation FROM annotation_auditevent WHERE table_name = 'annotation_label' AND row_pk = %s "
        "AND seq IS NOT NULL ORDER BY seq",
        (str(label.pk),),
    )
    assert [op for (op,) in events] == ["INSERT", "UPDATE"]

    verified = manage("audit_verify", database=restored_db, var_dir=restored_var)
    assert verified.returncode == 0, verified.stderr
    assert "audit chain intact" in verified.stdout


@postgres_only
def test_a_restore_into_a_database_or_var_directory_that_is_not_empty_or_from_a_damaged_backup_is_refused(
    tmp_path, source_var, label_with_history, new_database
):
    source_db = connection.settings_dict["NAME"]
    backup_dir = tmp_path / "backup"
    assert manage("backup", str(backup_dir), database=source_db, var_dir=source_var).returncode == 0

    # Into the live database itself: refused, nothing merged.
    before = _contents(source_db)
    refused = manage("restore", str(backup_dir), database=source_db, var_dir=tmp_path / "var-a")
    assert refused.returncode != 0
    assert f"the database '{source_db}' is not empty" in refused.stderr
    assert "Nothing was changed" in refused.stderr
    assert _contents(source_db) == before
    assert not (tmp_path / "var-a").exists()

    # An empty database but a var directory with a file in it: refused, the database left empty.
    empty_db = new_database()
    (tmp_path / "var-b").mkdir()
    (tmp_path / "var-b" / "stray.txt").write_text("x")
    refused = manage("restore", str(backup_dir), database=empty_db, var_dir=tmp_path / "var-b")
    assert refused.returncode != 0
    assert "holds files (stray.txt)" in refused.stderr
    assert _tables(empty_db) == []
    assert _files(tmp_path / "var-b") == {"stray.txt": b"x"}

    # A backup made by a newer Concord (a migration this code does not have): refused before anything is touched.
    manifest_path = backup_dir / "manifest.json"
    original = manifest_path.read_text()
    manifest = json.loads(original)
    manifest["migrations"].append(["annotation", "9999_from_the_future"])
    manifest_path.write_text(json.dumps(manifest))
    refused = manage("restore", str(backup_dir), database=empty_db, var_dir=tmp_path / "var-c")
    assert refused.returncode != 0
    assert "migrations this code does not have (annotation.9999_from_the_future)" in refused.stderr
    assert _tables(empty_db) == []
    manifest_path.write_text(original)

    # A damaged backup: refused before anything is touched.
    archive = backup_dir / "var.tar.gz"
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    refused = manage("restore", str(backup_dir), database=empty_db, var_dir=tmp_path / "var-c")
    assert refused.returncode != 0
    assert "does not match its checksum" in refused.stderr
    assert _tables(empty_db) == []


@pytest.mark.skipif(POSTGRES, reason="what backup and restore answer on SQLite")
@pytest.mark.parametrize("command", ["backup", "restore"])
def test_backup_and_restore_on_sqlite_are_refused_saying_what_to_do(command, tmp_path):
    with pytest.raises(CommandError, match="backup and restore need PostgreSQL; the database 'default' is sqlite"):
        call_command(command, str(tmp_path / "backup"))
    assert not (tmp_path / "backup").exists()


@postgres_only
def test_a_backup_that_fails_half_way_leaves_nothing_that_could_pass_for_a_backup(tmp_path, source_var, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backup, "_archive_var", disk_full)  # after the dump was written
    destination = tmp_path / "backup"
    with pytest.raises(OSError, match="No space left"):
        backup.backup(destination, var_dir=source_var, anchor_file=source_var / "audit-anchor.json")
    assert list(destination.iterdir()) == []
