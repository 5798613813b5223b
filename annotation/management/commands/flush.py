"""Django's flush, made to work with the append-only audit table.

flush empties every table, the audit trail included, which the audit table's protective triggers
refuse (and emptying the audited tables would itself write DELETE events). Test suites flush between
transactional tests, so the audit triggers are removed for the flush only and put back afterwards,
whatever happened. A flush wipes the whole database (an operator's
act, not an application's); the anchor file checked by ``audit_verify`` still shows that the chain
it last verified is gone.
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands.flush import Command as FlushCommand

from annotation import audit


class Command(FlushCommand):
    def handle(self, **options: Any) -> None:
        using = options["database"]
        audit.triggers_remove(using=using)
        try:
            super().handle(**options)
        finally:
            audit.triggers_install(using=using)
