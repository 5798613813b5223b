"""Restore a backup made by `manage.py backup` into an empty database and an empty var directory: those that
DATABASE_URL and CONCORD_VAR_DIR name (concord.ops.backup; docs/operations.md, "Backup and restore"). Refuses,
changing nothing, when either holds anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from concord.ops import backup


class Command(BaseCommand):
    help = "Restore a backup into an EMPTY database and var directory; then run migrate and audit_verify."
    # The database is empty: no check may read it.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="A directory written by `manage.py backup`.")
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        var_dir = Path(settings.VAR_DIR)
        try:
            manifest = backup.restore(
                Path(options["source"]), var_dir=var_dir, anchor_file=Path(settings.AUDIT_ANCHOR_FILE),
                using=options["database"],
            )
        except backup.BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"restored the backup of {manifest['created_at']} into the database "
            f"{settings.DATABASES[options['database']]['NAME']!r} and {var_dir} ({manifest['var']['files']} files). "
            "Next: `manage.py migrate` (applies what this code has beyond the backup), then `manage.py audit_verify`."
        )
        if manifest["var_dir"] != str(var_dir):
            self.stdout.write(
                f"note: the backup's var directory was {manifest['var_dir']}; exports made before the backup record "
                "their files under it, so they can be downloaded only where CONCORD_VAR_DIR is that path again"
            )
