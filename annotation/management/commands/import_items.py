"""python manage.py import_items FILE --study SLUG [--create --protocol PRESET[,PRESET]] [--format jsonl|csv]
[--dry-run] [--adapter kqa-nli|kqa-questions|begin] [--pool NAME] [--owner USERNAME]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.adapters import ADAPTERS
from annotation.imports import ImportResult, items_import, records_from, records_import
from annotation.models import Role, Study, StudyRole
from annotation.protocols import study_protocol_apply
from concord.errors import DomainError


class _DryRunDone(Exception):
    """Raised to roll back a dry run that had to create the study to validate against it."""


class Command(BaseCommand):
    help = (
        "Import items (and optional existing labels) from a JSONL or CSV file, or a dataset through an adapter. "
        "All or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="JSONL or CSV file (may be gzip-compressed), or the adapter's source file")
        parser.add_argument("--study", required=True, help="slug of the study")
        parser.add_argument("--create", action="store_true", help="create the study if it does not exist")
        parser.add_argument("--name", help="name of a study created with --create (default: the slug)")
        parser.add_argument("--owner", help="username of the owner of a study created with --create")
        parser.add_argument("--protocol", default="", help="protocol presets to apply, comma-separated")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="file format (default: from the extension)")
        parser.add_argument("--dry-run", action="store_true", help="validate only; write nothing")
        parser.add_argument("--adapter", choices=sorted(ADAPTERS), help="read a bundled dataset's own file format")
        parser.add_argument("--pool", help="pool of the imported annotators (default: 'imported' or the adapter's)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with transaction.atomic():
                result = self._import(path, opts)
                if opts["dry_run"]:
                    raise _DryRunDone
        except _DryRunDone:
            pass
        except DomainError as exc:
            self._print_errors(exc)
            raise CommandError(exc.message) from exc
        else:
            self.stdout.write(self.style.SUCCESS(result.summary()))
            return
        self.stdout.write(result.summary() + " (dry run: nothing was written)")

    def _import(self, path: Path, opts: dict[str, Any]) -> ImportResult:
        study = self._study(opts)
        adapter = ADAPTERS.get(opts["adapter"] or "")
        presets = [p for p in opts["protocol"].split(",") if p.strip()]
        if adapter is not None:
            presets += [p for p in adapter.presets if p not in presets]
        if presets:
            study_protocol_apply(study=study, presets=presets)
        if adapter is None:
            with open(path, "rb") as f:
                return items_import(study=study, file=f, filename=path.name, fmt=opts["format"],
                                    dry_run=opts["dry_run"], pool_name=opts["pool"])
        if not study.licence:
            study.licence = adapter.licence(path)
            study.save(update_fields=["licence"])
        return records_import(
            study=study, source=records_from(lambda: adapter.records(path)), filename=path.name, where="record",
            adapter=adapter.name, dry_run=opts["dry_run"], pool_name=opts["pool"] or adapter.pool_name,
        )

    def _study(self, opts: dict[str, Any]) -> Study:
        slug = opts["study"]
        study = Study.objects.filter(slug=slug).first()
        if study is not None:
            return study
        if not opts["create"]:
            raise CommandError(f"no study {slug!r}; pass --create (with --protocol) to create it")
        User = get_user_model()
        if opts["owner"]:
            owner = User.objects.filter(username=opts["owner"]).first()
            if owner is None:
                raise CommandError(f"no user {opts['owner']!r}")
        else:
            owner = User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
            if owner is None:
                raise CommandError("a new study needs an owner: pass --owner USERNAME (or create a superuser)")
        study = Study.objects.create(name=opts["name"] or slug, slug=slug, owner=owner)
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        return study

    def _print_errors(self, exc: DomainError) -> None:
        rows = exc.details if isinstance(exc.details, list) else []
        if rows:
            self.stderr.write(f"{'where':<14} {'field':<24} reason")
            for row in rows:
                self.stderr.write(f"{row.get('location', ''):<14} {row.get('field', ''):<24} {row.get('reason', '')}")
