from typing import Any

from django.apps import AppConfig
from django.core.management import call_command
from django.db.models.signals import post_migrate, pre_migrate

from annotation import audit, pool_counts
from annotation.audit import ATTRIBUTION_ASSIGNMENT, Audited


def _create_cache_table(*, using: str = "default", **kwargs: Any) -> None:
    # The login throttle lives in the database cache (settings.CACHES); migrate creates its table so a
    # deployment cannot forget it. A no-op for other cache backends and when the table exists.
    call_command("createcachetable", database=using, verbosity=0)


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    # This app's tables in the audit trail, and Django's user tables (who may sign in, with which rights);
    # each app above declares its own (annotation.audit.audited_tables collects them).
    audited_tables = (
        # Study settings.
        Audited("annotation_study"),
        Audited("annotation_question"),
        Audited("annotation_pool"),
        Audited("annotation_pool_questions"),
        # Roles and memberships (a membership's pseudonym is whom exports and adjudication credit).
        Audited("annotation_studyrole"),
        Audited(
            "annotation_poolmembership",
            fixed_columns=("pool_id", "study_id", "user_id", "pseudonym"),
            tracked_columns=("active",),
        ),
        Audited("annotation_studyinvitation", actor_column="updated_by_id"),
        Audited(
            "auth_user",
            watched_columns=("is_active", "is_staff", "is_superuser"),
            excluded_columns=("password",),
        ),
        Audited("auth_user_groups"),
        Audited("auth_user_user_permissions"),
        # Who is credited for work: an assignment's annotator is the author of every label under it. Only these
        # columns are watched: its status, reservation and timings change on every open, save and submit.
        Audited(
            "annotation_assignment",
            watched_columns=ATTRIBUTION_ASSIGNMENT,
            fixed_columns=ATTRIBUTION_ASSIGNMENT,
        ),
        # The import-only identity standing for an imported pseudonym (annotation.models.ImportIdentity).
        Audited(
            "annotation_importidentity", actor_column="created_by_id", fixed_columns=("user_id", "pool_id", "pseudonym")
        ),
        # Labels and their history.
        Audited(
            "annotation_label",
            actor_column="updated_by_id",
            fixed_columns=("assignment_id", "question_id", "unit_key"),
            tracked_columns=("value", "version", "updated_by_id"),
        ),
        Audited(
            "annotation_labelhistory",
            actor_column="actor_id",
            # Append-only; only an undo sets ``undoes`` on the rows it wrote.
            fixed_columns=("label_id", "old_value", "new_value", "old_version", "new_version", "actor_id", "at"),
            tracked_columns=("undoes_id",),
        ),
        Audited("annotation_assignmentreopening", actor_column="actor_id"),
    )

    def ready(self) -> None:
        # Imported here, not at module level: tokens imports the models, which exist only once the app registry
        # is ready (Django's rule for AppConfig.ready). annotation.audit imports them only when it runs.
        from annotation.accounts import tokens  # noqa: F401  (connects: a password change revokes API tokens)

        # Audit triggers are removed before and recreated after every migrate (see annotation/audit.py).
        pre_migrate.connect(audit.on_pre_migrate, sender=self, dispatch_uid="concord_audit_pre_migrate")
        post_migrate.connect(audit.on_post_migrate, sender=self, dispatch_uid="concord_audit_post_migrate")
        post_migrate.connect(_create_cache_table, sender=self, dispatch_uid="concord_cache_table")
        # So are the assignment counts' triggers on SQLite, which then rebuilds the counts (annotation/pool_counts.py).
        pre_migrate.connect(pool_counts.on_pre_migrate, sender=self, dispatch_uid="concord_pool_counts_pre_migrate")
        post_migrate.connect(pool_counts.on_post_migrate, sender=self, dispatch_uid="concord_pool_counts_post_migrate")
