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
            # The flush's post_migrate signal has normally reinstalled them already (audit.on_post_migrate); on
            # PostgreSQL only what is missing is put back (all of it when the flush failed or post_migrate was
            # inhibited), rather than every table's triggers a second time.
            audit.triggers_install(using=using, only_missing=True)
