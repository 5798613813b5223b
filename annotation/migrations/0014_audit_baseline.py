"""The trail begins to vouch for who is credited for work (issue Q): every row of the tables whose attribution
``audit_verify`` checks (annotation.audit: ``Audited.fixed_columns`` / ``tracked_columns``) must have a
creation event. Assignments and import identities were not audited before, and rows of the other tables may
predate the trail (0002), so each row without a creation event gets one baseline event (operation ``EXISTS``:
the row as it stands now, no actor). This is the cut-off: rows as they stood at this migration are taken as
given; every later creation, change or deletion must be in the trail.

On PostgreSQL the audit triggers are installed first, in the same transaction, so no row is created between
the baseline and its table's first trigger; only the missing ones (``only_missing``): a table whose triggers
exist (the labels, audited since 0002) is not locked while the baseline runs, so label saves go on meanwhile
(bench/scale.py measured them blocked for the whole baseline otherwise). On SQLite the triggers are off during migrations and come back
after them (annotation.audit.on_post_migrate), as for every migration there.
"""

from django.db import migrations


def record_baseline(apps, schema_editor):
    from annotation import audit

    using = schema_editor.connection.alias
    if schema_editor.connection.vendor == "postgresql":
        audit.triggers_install(using=using, only_missing=True)
    audit.baseline_record(using=using)


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0013_assignment_withdrawn"),
        ("adjudication", "0008_case_withdrawn"),
    ]

    operations = [migrations.RunPython(record_baseline, migrations.RunPython.noop)]
