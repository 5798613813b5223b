"""A trigram index over the item text the data manager searches (issue W).

The data manager's text filter is ``external_id__icontains | question__icontains | answer__icontains``, which
PostgreSQL runs as ``UPPER(col::text) LIKE UPPER('%…%')``: without an index, a sequential scan of every item's
text (seconds at a million items). A GIN index with pg_trgm's ``gin_trgm_ops`` on exactly those expressions
serves such a ``LIKE`` (one index, each column's condition a bitmap scan of it, OR-ed).

PostgreSQL only (SQLite has no trigram index; its search stays a scan, as before). Built with ``CREATE INDEX
CONCURRENTLY`` in a non-atomic migration, so building it on a large table never blocks writes to the items
(imports); it is not in the models' state, being an index Django's schema does not describe. ``pg_trgm`` is a
trusted extension (PostgreSQL 13+): a database owner may create it without superuser rights.
"""

from django.db import migrations

INDEX = "item_text_trgm_idx"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        # An interrupted CONCURRENTLY build leaves an INVALID index behind: drop it and build again.
        cursor.execute(
            "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s "
            "AND NOT i.indisvalid",
            [INDEX],
        )
        if cursor.fetchone():
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")
        cursor.execute(
            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {INDEX} ON annotation_item USING gin "
            "((UPPER(external_id::text)) gin_trgm_ops, (UPPER(question::text)) gin_trgm_ops, "
            "(UPPER(answer::text)) gin_trgm_ops)"
        )
        # The planner's statistics of the indexed expressions: without them it guesses that a search matches a
        # handful of items and, combined with another filter, can pick a nested loop that runs for minutes
        # (measured at 100,000 items: bench/scale.py). ANALYZE samples the table and blocks no reads or writes.
        cursor.execute("ANALYZE annotation_item")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run inside a transaction.
    atomic = False

    dependencies = [
        ("annotation", "0015_quality_controls"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
