"""pytest plugin of bench/mutation.sh for runs that reuse one test database between mutants (one child, on
PostgreSQL or SQLite):
each mutant's tests start on a database that no earlier mutant left rows in.

mutmut stops a mutant's tests that run past their time with a signal (SIGXCPU), so a transactional test
(``django_db(transaction=True)``) stopped that way never flushes its rows. Every later mutant whose tests
create the same rows (a fixture's user, say) would then fail in setup, and be counted as killed whatever it
changed. When the database holds people at the start of a session (no migration creates one; every
transactional test does), it is flushed first, as a transactional test's own teardown would have done."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _mutation_database_left_clean(django_db_setup, django_db_blocker):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    # pytest-django sets up a test database only when a collected test needs one: a mutant reached only by tests
    # that never touch the database (the agreement statistics) would otherwise have this query the configured
    # database itself, fail in setup and be counted killed whatever it changed.
    if connection.settings_dict["NAME"] != connection.creation._get_test_db_name():
        yield
        return
    with django_db_blocker.unblock():
        if get_user_model().objects.exists():
            call_command("flush", interactive=False, verbosity=0)
    yield
