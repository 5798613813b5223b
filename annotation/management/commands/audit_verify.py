"""Seal pending audit events, recompute the whole hash chain, then check the data against the trail.

Exits 1 at the first bad event of the chain, when an audit trigger is missing or silenced, or when the data
holds what the trail cannot account for: labels changed without their history, attribution (an assignment's
annotator, a label's assignment, a history row's actor, ...) changed by an UPDATE, or rows created, changed
or deleted with the triggers off (``annotation.audit``: ``labels_unaccounted``, ``attribution_changes``,
``rows_unaccounted``). Each problem names its row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation import audit


class Command(BaseCommand):
    help = "Verify the audit trail's hash chain (sealing pending events first); exits 1 when it was tampered with."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--database", default="default")
        parser.add_argument("--no-seal", action="store_true", help="Verify only what is sealed already.")
        parser.add_argument(
            "--anchor",
            default=None,
            help="File recording the last verified head outside the database (default: settings.AUDIT_ANCHOR_FILE).",
        )
        parser.add_argument("--no-anchor", action="store_true", help="Neither check nor update the anchor file.")
        parser.add_argument(
            "--no-labels",
            action="store_true",
            help="Check only the chain and the triggers: skip checking labels, attribution and rows against the trail.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        using = options["database"]
        sealed = 0 if options["no_seal"] else audit.events_seal(using=using)
        anchor_path = None if options["no_anchor"] else Path(options["anchor"] or settings.AUDIT_ANCHOR_FILE)
        try:
            anchor = audit.anchor_read(anchor_path) if anchor_path else None
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        report = audit.chain_verify(using=using, anchor=anchor)
        if not report.ok:
            raise CommandError(f"audit chain broken: {report.problem}", returncode=1)
        missing = audit.triggers_missing(using=using)
        if missing:
            raise CommandError(
                f"audit chain intact but triggers are missing, so changes go unrecorded: {', '.join(missing)} "
                "(`manage.py migrate` reinstalls them; find out who removed them)",
                returncode=1,
            )
        silenced = audit.triggers_not_always_enabled(using=using)
        if silenced:
            raise CommandError(
                f"audit chain intact but triggers would not record every change: {', '.join(silenced)} "
                "(`manage.py migrate` re-enables them; find out who disabled them)",
                returncode=1,
            )
        if not options["no_labels"]:
            self._check_data(using)
        if anchor_path:
            audit.anchor_write(anchor_path, seq=report.head_seq, hash=report.head_hash)
        self.stdout.write(
            f"audit chain intact: {report.n_sealed} events (sealed {sealed} now), "
            f"head seq {report.head_seq} hash {report.head_hash or '-'}; {report.n_unsealed} unsealed"
        )

    def _check_data(self, using: str) -> None:
        """The data against its history and the trail: every finding of every check, in one failure."""
        findings = [
            ("labels changed outside the application (no version, history row or both)", audit.labels_unaccounted),
            ("attribution changed by an UPDATE", audit.attribution_changes),
            ("rows the audit trail does not account for", audit.rows_unaccounted),
        ]
        problems = [(what, found) for what, check in findings if (found := check(using=using))]
        if problems:
            raise CommandError(
                "; ".join(f"{what}: " + "; ".join(found) for what, found in problems),
                returncode=1,
            )
