"""pytest plugin of bench/mutation.sh for mutants run in parallel on SQLite: each mutant's tests get a test
database file of their own.

The settings name one file for SQLite's test database (in CONCORD_VAR_DIR, so that a worker process that a
test starts sees it), and mutmut's children are forked processes, not pytest-xdist workers, so pytest-django
gives them no suffix of their own. Two children would then create, use and drop the same file under each
other's tests; every test fails at once and the mutant is counted as killed whatever it changed (a run of
adjudication/selectors.py with two children "killed" 750 of 751 mutants in 0.0 s each, one-child runs kill
none of the equivalent ones). Each mutant's tests run in a new process (``pytest.main`` in a fork), so the
process id names the file; pytest-django drops it when the tests end."""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    database = settings.DATABASES["default"]
    if not database["ENGINE"].endswith("sqlite3"):
        return
    name = database.setdefault("TEST", {}).get("NAME")
    if name:
        database["TEST"]["NAME"] = f"{name}.{os.getpid()}"
