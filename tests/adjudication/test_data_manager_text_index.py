"""The data manager's text search is served by the trigram index of migration annotation 0015 (issue W).

On PostgreSQL the index must exist, be valid, and be the one the planner can use for the very query the data
manager runs (``filtered_items`` with a text filter): its expressions must match Django's ``icontains`` SQL
(``UPPER(col::text) LIKE UPPER(…)``) exactly, else it is dead weight and the search scans every item. Sequential
and plain index scans are switched off for the EXPLAIN of that condition so that the answer does not depend on
the table's (tiny) size.
"""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

from adjudication.data_manager import Filters, filtered_items
from annotation.models import Item

MIGRATION = importlib.import_module("annotation.migrations.0016_item_text_trigram_index")

pytestmark = pytest.mark.django_db


def test_the_index_is_built_outside_a_transaction_so_that_it_can_be_built_concurrently():
    assert MIGRATION.Migration.atomic is False


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a trigram index is PostgreSQL's")
def test_the_trigram_index_exists_and_is_valid():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [MIGRATION.INDEX],
        )
        assert cursor.fetchall() == [(True,)]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a trigram index is PostgreSQL's")
def test_the_data_manager_text_filter_can_use_the_trigram_index(study):
    # The data manager's own text condition (the OR of its three icontains), alone: the study's condition would
    # let the planner pick the study's btree on a near-empty table, whatever the trigram index is worth.
    items = filtered_items(study, Filters.parse(study, {"q": "warfarin"}))
    text = [node for node in items.query.where.children if getattr(node, "connector", None) == "OR"]
    assert len(text) == 1
    alone = Item.objects.all()
    alone.query.where.add(text[0], "AND")
    sql, params = alone.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_indexscan = off")
        try:
            cursor.execute(f"EXPLAIN {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_indexscan")
    assert MIGRATION.INDEX in plan, plan
