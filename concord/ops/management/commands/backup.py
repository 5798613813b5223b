"""Back the deployment up: the PostgreSQL database (pg_dump, custom format) and the var directory, into a new
directory (concord.ops.backup; docs/operations.md, "Backup and restore")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from concord.ops import backup


class Command(BaseCommand):
    help = "Back up the database and CONCORD_VAR_DIR into a new directory (restore it with `manage.py restore`)."
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("destination", help="A directory that does not exist yet (or is empty).")
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        destination = Path(options["destination"])
        try:
            manifest = backup.backup(
                destination, var_dir=Path(settings.VAR_DIR), anchor_file=Path(settings.AUDIT_ANCHOR_FILE),
                using=options["database"],
            )
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from exc
        var = manifest["var"]
        self.stdout.write(
            f"backed up the database {manifest['database']['name']!r} ({manifest['files'][backup.DUMP]['bytes']} "
            f"bytes) and {var['files']} files of {manifest['var_dir']} ({var['bytes']} bytes) into {destination}"
            + (f"; anchor {backup.ANCHOR} included" if backup.ANCHOR in manifest["files"] else "; no audit anchor yet")
        )
        for skipped in var["skipped"]:
            self.stderr.write(f"not archived (not a regular file): {skipped}")
