"""A partial index of the unfinished assignments (assigned, started, skipped) by (item, pool) (issue W, scale).

The data manager's status-in-a-pool filters "done" (a submitted assignment and no unfinished one), "open" and
"skipped" ask, per item, whether it has unfinished work in the pool. Unfinished work is a small part of a
pool's assignments once annotation is under way (at 100,000 items in bench/scale.py: the open assignments of
one pool in ten items; none in the submitted pools), so this index is small, and the anti-join of "done" reads
it instead of every assignment of the pool (which the (pool, item, status) index holds: seconds at a million
items). The filters name exactly these statuses (``adjudication.data_manager.UNFINISHED``), so the planner can
prove that the index's condition holds. Item first: the anti-join is a merge along the item ids, which this
index gives in order with no sort, so a page (``LIMIT 50``) stops after its first items; on (pool, item) the
planner sorted it for the count and, for a page, walked the item id index of every assignment instead (235 ms
at 100,000 items, against 0.6 ms).

Built with ``CREATE INDEX CONCURRENTLY`` in a non-atomic migration on PostgreSQL, so building it on a large
table never blocks the annotators' writes; an interrupted build's INVALID index is dropped and built again.
SQLite (the embedded database) gets the same partial index with a plain ``CREATE INDEX``. It is not in the
models' state (like the trigram index of 0016).
"""

from django.db import migrations

INDEX = "asg_item_pool_unfinished_idx"
COLUMNS = "annotation_assignment (item_id, pool_id) WHERE status IN ('assigned', 'started', 'skipped')"


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    with schema_editor.connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute(
                "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s "
                "AND NOT i.indisvalid",
                [INDEX],
            )
            if cursor.fetchone():
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
            cursor.execute(f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON {COLUMNS}")
        elif vendor == "sqlite":
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {INDEX} ON {COLUMNS}")
        else:
            raise RuntimeError(f"Concord runs on PostgreSQL or SQLite, not {vendor}: no partial index {INDEX} for it")


def drop(apps, schema_editor):
    concurrently = "CONCURRENTLY " if schema_editor.connection.vendor == "postgresql" else ""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {concurrently}IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run inside a transaction.
    atomic = False

    dependencies = [
        ("annotation", "0016_item_text_trigram_index"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
