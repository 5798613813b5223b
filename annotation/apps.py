from typing import Any

from django.apps import AppConfig
from django.core.management import call_command
from django.db.models.signals import post_migrate, pre_migrate


def _create_cache_table(*, using: str = "default", **kwargs: Any) -> None:
    # The login throttle lives in the database cache (settings.CACHES); migrate creates its table so a
    # deployment cannot forget it. A no-op for other cache backends and when the table exists.
    call_command("createcachetable", database=using, verbosity=0)


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at module level: audit imports the models, which exist only once the app
        # registry is ready (Django's rule for AppConfig.ready), not to dodge an import cycle.
        from annotation import audit
        from annotation.accounts import tokens  # noqa: F401  (connects: a password change revokes API tokens)

        # Audit triggers are removed before and recreated after every migrate (see annotation/audit.py).
        pre_migrate.connect(audit.on_pre_migrate, sender=self, dispatch_uid="concord_audit_pre_migrate")
        post_migrate.connect(audit.on_post_migrate, sender=self, dispatch_uid="concord_audit_post_migrate")
        post_migrate.connect(_create_cache_table, sender=self, dispatch_uid="concord_cache_table")
