"""Seal pending audit events into the hash chain (run from cron or a periodic task; audit_verify also seals)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from annotation import audit


class Command(BaseCommand):
    help = "Append unsealed audit events to the hash chain."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database", default="default")

    def handle(self, *args: Any, **options: Any) -> None:
        sealed = audit.events_seal(using=options["database"])
        self.stdout.write(f"sealed {sealed} audit events")
