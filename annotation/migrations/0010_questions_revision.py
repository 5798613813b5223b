"""The revision of the questions: a number that changes whenever any question or any pool's list of questions
changes (triggers on both tables), so that a web process may keep a pool's questions between requests and
know, from the statement that authenticates a save, whether they are still current (annotation/labels/statements.py,
``questions_revision``).

It is never a number it has been before: on PostgreSQL it comes from a sequence (a rolled-back change takes
its number with it), on SQLite from ``random()`` (64 bits). The table holds one row and has no model.
"""

from django.db import migrations

TABLE = "annotation_questions_revision"
_PG = [
    f"CREATE SEQUENCE {TABLE}_seq",
    f"CREATE TABLE {TABLE} (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL)",
    f"INSERT INTO {TABLE} (id, n) VALUES (1, nextval('{TABLE}_seq'))",
    f"""CREATE FUNCTION concord_questions_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {TABLE} SET n = nextval('{TABLE}_seq') WHERE id = 1;
    RETURN NULL;
END $$""",
]
_PG_TRIGGERS = [
    ("annotation_question", "INSERT OR UPDATE OR DELETE OR TRUNCATE"),
    ("annotation_pool_questions", "INSERT OR UPDATE OR DELETE OR TRUNCATE"),
]
_SQLITE = [f"CREATE TABLE {TABLE} (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL)",
           f"INSERT INTO {TABLE} (id, n) VALUES (1, random())"]
_SQLITE_TRIGGERS = [
    (table, operation)
    for table in ("annotation_question", "annotation_pool_questions")
    for operation in ("INSERT", "UPDATE", "DELETE")
]


def create(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        statements = list(_PG)
        for table, operations in _PG_TRIGGERS:
            name = f"concord_questions_revision_{table}"
            statements += [
                f'CREATE TRIGGER {name} AFTER {operations} ON "{table}" FOR EACH STATEMENT '
                "EXECUTE FUNCTION concord_questions_revision_bump()",
                # Fires even for a session whose session_replication_role is replica (as the audit triggers).
                f'ALTER TABLE "{table}" ENABLE ALWAYS TRIGGER {name}',
            ]
    elif connection.vendor == "sqlite":
        statements = list(_SQLITE)
        for table, operation in _SQLITE_TRIGGERS:
            statements.append(
                f"CREATE TRIGGER concord_questions_revision_{table}_{operation.lower()} AFTER {operation} "
                f'ON "{table}" FOR EACH ROW BEGIN UPDATE {TABLE} SET n = random() WHERE id = 1; END'
            )
    else:
        raise RuntimeError(f"Concord supports SQLite and PostgreSQL, not {connection.vendor}")
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        for table, _ in _PG_TRIGGERS:
            schema_editor.execute(f'DROP TRIGGER IF EXISTS concord_questions_revision_{table} ON "{table}"')
        schema_editor.execute("DROP FUNCTION IF EXISTS concord_questions_revision_bump()")
        schema_editor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        schema_editor.execute(f"DROP SEQUENCE IF EXISTS {TABLE}_seq")
    else:
        for table, operation in _SQLITE_TRIGGERS:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS concord_questions_revision_{table}_{operation.lower()}")
        schema_editor.execute(f"DROP TABLE IF EXISTS {TABLE}")


class Migration(migrations.Migration):

    dependencies = [("annotation", "0009_pool_reopen_and_visible_metadata")]

    operations = [migrations.RunPython(create, drop)]
