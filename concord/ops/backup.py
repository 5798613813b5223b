"""Backup and restore of a Concord deployment: the PostgreSQL database and the var directory, together.

A backup is a directory of four files (docs/operations.md, "Backup and restore"):

* ``database.pgdump``: ``pg_dump --format=custom`` of the whole database (one consistent snapshot);
* ``var.tar.gz``: the files of ``CONCORD_VAR_DIR`` (uploads waiting to be imported and finished exports under
  ``media/``, trained judges under ``models/judges/``, ...), without the filesystem broker's messages
  (``broker/``: work in flight, which the workers re-send from the database when they start) and without the
  audit anchor, which has a file of its own;
* ``audit-anchor.json``: the head of the audit chain that ``audit_verify`` last recorded (``AUDIT_ANCHOR_FILE``),
  read *before* the dump starts, so that the dump's snapshot holds every event the anchor vouches for;
* ``manifest.json``, written last: the format, when, the migrations applied, the original var directory, and
  each file's size and SHA-256. A backup without it is incomplete and is refused.

The database is dumped before the files are archived: every file the dump refers to (an import's upload, a
judge's directory, an export) was written before the snapshot and is in the archive, unless the application
deleted it in between (an import that finished, an export that expired).

``restore`` checks the manifest and the checksums, refuses a backup holding migrations this code does not know,
and refuses to write into a database that holds any table, view, sequence or function, into a var directory that
holds any file, or over an existing anchor file: a restore never merges into existing data. It then runs
``pg_restore --no-owner --no-privileges --single-transaction --exit-on-error`` (all or nothing; the objects are
owned by the role that restores, which needs no superuser right) and unpacks the files.

PostgreSQL only: pg_dump and pg_restore (the client programs of the server's major version or newer) must be on
the PATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from django.db import connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

FORMAT = 1
MANIFEST = "manifest.json"
DUMP = "database.pgdump"
VAR_ARCHIVE = "var.tar.gz"
ANCHOR = "audit-anchor.json"
# Top-level entries of the var directory that are never archived: the filesystem broker's messages (work in
# flight: the workers re-send unfinished work from the database when they start).
VAR_EXCLUDED = ("broker",)
_CHUNK = 1024 * 1024
# libpq's environment variables for the connection OPTIONS that dj-database-url passes through.
_LIBPQ_OPTIONS = {
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "sslcrl": "PGSSLCRL",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "options": "PGOPTIONS",
}


class BackupError(Exception):
    """A backup or restore that cannot be made, or is refused; the message says why and what to do."""


def _require_postgresql(using: str) -> Any:
    connection = connections[using]
    if connection.vendor != "postgresql":
        raise BackupError(
            f"backup and restore need PostgreSQL; the database {using!r} is {connection.vendor} "
            "(a SQLite file is backed up with `sqlite3 <file> '.backup <copy>'` while nothing writes)"
        )
    return connection


def libpq_environment(using: str = "default") -> dict[str, str]:
    """The environment for pg_dump and pg_restore to reach the database ``using``: libpq's PG* variables, so that
    no password appears on a command line (``ps`` shows those to every user of the machine)."""
    s = connections[using].settings_dict
    env = dict(os.environ)
    values = {"PGDATABASE": s["NAME"], "PGHOST": s.get("HOST") or "", "PGPORT": str(s.get("PORT") or ""),
              "PGUSER": s.get("USER") or "", "PGPASSWORD": s.get("PASSWORD") or ""}
    for option, variable in _LIBPQ_OPTIONS.items():
        if s.get("OPTIONS", {}).get(option) not in (None, ""):
            values[variable] = str(s["OPTIONS"][option])
    env.update({key: value for key, value in values.items() if value})
    return env


def _program(name: str) -> str:
    program = shutil.which(name)
    if not program:
        raise BackupError(
            f"{name} is not on the PATH: install the PostgreSQL client programs of the server's major version "
            "(e.g. postgresql-client-15), or put their directory first on the PATH"
        )
    return program


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    # The program is pg_dump or pg_restore, found on the PATH; no shell, fixed flags.
    done = subprocess.run(  # noqa: S603
        command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise BackupError(f"{what} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _applied_migrations(using: str) -> list[list[str]]:
    applied = MigrationRecorder(connections[using]).applied_migrations()
    return sorted([app, name] for app, name in applied)


def _archive_var(var_dir: Path, target: Path, anchor_file: Path) -> dict[str, Any]:
    """Write the files of ``var_dir`` to ``target`` (gzip'd tar, paths relative to the var directory). Only regular
    files and directories are archived; anything else (a link, a socket) is listed in ``skipped``."""
    files, size, skipped = 0, 0, []
    anchor = anchor_file.resolve() if anchor_file.exists() else None
    with tarfile.open(target, "w:gz") as archive:
        for root, dirs, names in os.walk(var_dir):
            here = Path(root)
            if here == var_dir:
                dirs[:] = [d for d in dirs if d not in VAR_EXCLUDED]
                names = [n for n in names if n not in VAR_EXCLUDED]
            links = sorted(d for d in dirs if (here / d).is_symlink())
            dirs[:] = sorted(d for d in dirs if d not in links)
            for name in dirs:
                archive.add(here / name, arcname=(here / name).relative_to(var_dir).as_posix(), recursive=False)
            for name in sorted(names) + links:
                path = here / name
                relative = path.relative_to(var_dir).as_posix()
                if path.is_symlink() or not path.is_file():
                    skipped.append(relative)
                elif anchor is None or path.resolve() != anchor:  # the anchor is archived on its own
                    archive.add(path, arcname=relative, recursive=False)
                    files += 1
                    size += path.stat().st_size
    return {"files": files, "bytes": size, "skipped": skipped}


def backup(destination: Path, *, var_dir: Path, anchor_file: Path, using: str = "default") -> dict[str, Any]:
    """Back the database ``using`` and ``var_dir`` up into the new directory ``destination``; returns the
    manifest."""
    connection = _require_postgresql(using)
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise BackupError(f"{destination} already exists and is not an empty directory: choose a new one")
    pg_dump = _program("pg_dump")
    destination.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        manifest = _backup_into(destination, connection, pg_dump, var_dir=var_dir, anchor_file=anchor_file,
                                using=using)
    except BaseException:
        # Nothing half-made is left behind to be mistaken for a backup: the directory is emptied (it was new or empty).
        for path in destination.iterdir():
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        raise
    return manifest


def _backup_into(
    destination: Path, connection: Any, pg_dump: str, *, var_dir: Path, anchor_file: Path, using: str
) -> dict[str, Any]:
    # The anchor first: the dump's snapshot, taken after, holds every sealed event it vouches for.
    anchor = anchor_file.read_bytes() if anchor_file.is_file() else None
    migrations = _applied_migrations(using)
    database = {"name": connection.settings_dict["NAME"], "server_version": connection.pg_version}
    connection.close()
    _run([pg_dump, "--format=custom", "--compress=6", f"--file={destination / DUMP}"],
         libpq_environment(using), "pg_dump")
    var = _archive_var(var_dir, destination / VAR_ARCHIVE, anchor_file)
    files = [DUMP, VAR_ARCHIVE]
    if anchor is not None:
        (destination / ANCHOR).write_bytes(anchor)
        files.append(ANCHOR)
    manifest = {
        "format": FORMAT,
        "created_at": timezone.now().isoformat(),
        "database": database,
        "migrations": migrations,
        "var_dir": str(var_dir),
        "var": var,
        "files": {name: {"bytes": (destination / name).stat().st_size, "sha256": _sha256(destination / name)}
                  for name in files},
    }
    partial = destination / f".{MANIFEST}.tmp"
    partial.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    partial.replace(destination / MANIFEST)
    return manifest


def manifest_read(source: Path) -> dict[str, Any]:
    """The manifest of the backup ``source``, after checking every file it lists against its size and SHA-256."""
    path = source / MANIFEST
    if not path.is_file():
        raise BackupError(f"{source} has no {MANIFEST}: not a Concord backup, or one that did not finish")
    try:
        manifest = json.loads(path.read_text())
    except ValueError as exc:
        raise BackupError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{path} is not a Concord backup manifest of format {FORMAT}")
    files = manifest.get("files") or {}
    for name in (DUMP, VAR_ARCHIVE):
        if name not in files:
            raise BackupError(f"the manifest lists no {name}")
    for name, expected in files.items():
        if name not in (DUMP, VAR_ARCHIVE, ANCHOR):
            raise BackupError(f"the manifest lists an unknown file {name!r}")
        file = source / name
        if not isinstance(expected, dict):
            raise BackupError(f"the manifest's entry of {name} is not an object")
        if not file.is_file():
            raise BackupError(f"{file} is missing")
        if file.stat().st_size != expected.get("bytes") or _sha256(file) != expected.get("sha256"):
            raise BackupError(f"{file} does not match its checksum in the manifest: the backup is damaged")
    return manifest


def _unknown_migrations(manifest: dict[str, Any]) -> list[str]:
    on_disk = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    return [f"{app}.{name}" for app, name in manifest.get("migrations", []) if (app, name) not in on_disk]


def database_contents(using: str = "default") -> list[str]:
    """Up to four of the tables, views, sequences and functions in the database's own schemas (none: it is empty)."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            """
            SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
               AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
            UNION ALL
            SELECT n.nspname || '.' || p.proname || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
            ORDER BY 1 LIMIT 4
            """
        )
        return [row[0] for row in cursor.fetchall()]


def _files_in(directory: Path) -> list[str]:
    if not directory.exists():
        return []
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if not p.is_dir())[:10]


def restore(source: Path, *, var_dir: Path, anchor_file: Path, using: str = "default") -> dict[str, Any]:
    """Restore the backup ``source`` into the database ``using``, which must be empty, and into ``var_dir``,
    which must hold no file; returns the manifest. Nothing is changed when it refuses."""
    connection = _require_postgresql(using)
    manifest = manifest_read(source)
    unknown = _unknown_migrations(manifest)
    if unknown:
        raise BackupError(
            f"the backup holds migrations this code does not have ({', '.join(unknown[:5])}): restore it with the "
            "version of Concord that made it (or a newer one); nothing was changed"
        )
    refusals = []
    contents = database_contents(using)
    if contents:
        refusals.append(
            f"the database {connection.settings_dict['NAME']!r} is not empty (it holds {', '.join(contents[:3])}"
            f"{', …' if len(contents) > 3 else ''}): restore into a new, empty database (`createdb`), never over "
            "or into an existing one"
        )
    files = _files_in(var_dir)
    if files:
        refusals.append(f"the var directory {var_dir} holds files ({', '.join(files)}): restore into an empty one")
    if anchor_file.exists():
        refusals.append(
            f"the audit anchor {anchor_file} exists: move it aside (it may record a head newer than this backup)"
        )
    if refusals:
        raise BackupError("refusing to restore: " + "; ".join(refusals) + ". Nothing was changed.")
    pg_restore = _program("pg_restore")
    connection.close()
    _run([pg_restore, "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error",
          f"--dbname={connection.settings_dict['NAME']}", str(source / DUMP)],
         libpq_environment(using), "pg_restore")
    var_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(source / VAR_ARCHIVE, "r:gz") as archive:
        # The "data" filter refuses absolute paths, paths leaving the directory, links and device files.
        archive.extractall(var_dir, filter="data")
    if ANCHOR in manifest["files"]:
        anchor_file.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / ANCHOR, anchor_file)
    return manifest
