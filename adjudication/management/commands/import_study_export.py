"""python manage.py import_study_export FILE --study NEWSLUG --create [--owner USERNAME] [--name NAME]

Imports a JSONL export (python manage.py export_study SLUG --format jsonl) into a new study,
reproducing every label under its pseudonymous annotator, every gold version with its provenance,
the cases and the scores with their runs. All or nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from adjudication.exports.roundtrip import study_import_export
from concord.errors import DomainError


class Command(BaseCommand):
    help = "Import a Concord JSONL export into a new study (labels, gold with provenance, scores)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--study", required=True, help="slug of the new study")
        parser.add_argument(
            "--create",
            action="store_true",
            help="create the study (required: an export never merges into an existing one)",
        )
        parser.add_argument("--owner", help="username of the new study's owner (default: the first active superuser)")
        parser.add_argument(
            "--name", default="", help="name of the new study (default: the exported name + ' (imported)')"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if not opts["create"]:
            raise CommandError("pass --create: an export is imported into a new study")
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"no file {path}")
        User = get_user_model()
        if opts["owner"]:
            owner = User.objects.filter(username=opts["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {opts['owner']!r}")
        else:
            owner = User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
            if owner is None:
                raise CommandError("a new study needs an owner: pass --owner USERNAME (or create a superuser)")
        try:
            study = study_import_export(path=path, slug=opts["study"], owner=owner, name=opts["name"])
        except DomainError as exc:
            details = exc.details if isinstance(exc.details, list) else []
            for row in details[:50]:
                self.stderr.write(str(row))
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Imported {study.items.count()} items into {study.slug} "
            f"({study.pools.count()} pools, {study.score_runs.count()} score runs)"
        )
