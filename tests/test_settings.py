"""Settings come from the environment and refuse bad values loudly."""

import os
import subprocess
import sys
from pathlib import Path

from tests.waiting import SUBPROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parent.parent


def _load_settings(**env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "CONCORD_ENV", "DEBUG", "ALLOWED_HOSTS"}
    }
    base.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'concord.settings'; "
            "django.setup(); from django.conf import settings; "
            "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL, settings.DEBUG)",
        ],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )


def test_development_defaults_are_sqlite_and_filesystem_broker(tmp_path):
    result = _load_settings(CONCORD_VAR_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "filesystem://", "True"]


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    result = _load_settings(
        CONCORD_ENV="production",
        DATABASE_URL="postgres://x@127.0.0.1/x",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        ALLOWED_HOSTS="concord.example",
        CONCORD_VAR_DIR=str(tmp_path),
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_the_published_development_key(tmp_path):
    result = _load_settings(
        CONCORD_ENV="production",
        SECRET_KEY="dev-insecure-key-do-not-use-in-production",
        DATABASE_URL="postgres://x@127.0.0.1/x",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        ALLOWED_HOSTS="concord.example",
        CONCORD_VAR_DIR=str(tmp_path),
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_a_malformed_boolean_is_refused(tmp_path):
    result = _load_settings(DEBUG="maybe", CONCORD_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_an_unknown_database_scheme_is_refused(tmp_path):
    result = _load_settings(DATABASE_URL="mysql://root@localhost/x", CONCORD_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "DATABASE_URL must start with" in result.stderr


def _test_settings_under(**env: str) -> list[str]:
    """VAR_DIR and the broker URL of the suite's own settings (tests/settings.py) in a fresh process."""
    base = {k: v for k, v in os.environ.items() if k not in {"PYTEST_XDIST_WORKER", "CONCORD_XDIST_WORKER"}}
    base.update(env)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'; "
            "django.setup(); from django.conf import settings as s; "
            "print(s.VAR_DIR, s.CELERY_BROKER_URL, os.environ.get('CONCORD_XDIST_WORKER', '-'))",
        ],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_each_xdist_worker_gets_its_own_var_dir_and_redis_database(tmp_path):
    # Two workers of one run never share files (uploads, the SQLite test database, the filesystem broker)
    # or a Redis database (a real Celery worker started by one test would consume the other's tasks).
    common = {"CONCORD_VAR_DIR": str(tmp_path), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15"}
    gw0 = _test_settings_under(PYTEST_XDIST_WORKER="gw0", **common)
    gw1 = _test_settings_under(PYTEST_XDIST_WORKER="gw1", **common)
    assert gw0 == [str(tmp_path / "xdist-gw0"), "redis://127.0.0.1:6379/15", "gw0"]
    assert gw1 == [str(tmp_path / "xdist-gw1"), "redis://127.0.0.1:6379/0", "gw1"]
    # Without xdist nothing changes.
    assert _test_settings_under(**common) == [str(tmp_path), "redis://127.0.0.1:6379/15", "-"]


def test_a_process_started_by_a_test_keeps_the_values_its_worker_gave_it(tmp_path):
    # A Celery worker or manage.py command inherits the xdist worker's environment, already per worker:
    # applying the rule again would move it to another directory and broker than its test's.
    inherited = _test_settings_under(
        PYTEST_XDIST_WORKER="gw1",
        CONCORD_XDIST_WORKER="gw1",
        CONCORD_VAR_DIR=str(tmp_path / "xdist-gw1"),
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
    )
    assert inherited == [str(tmp_path / "xdist-gw1"), "redis://127.0.0.1:6379/0", "gw1"]


def test_redis_urls_keep_their_host_credentials_and_options():
    from tests.settings import redis_url_for_worker

    assert redis_url_for_worker("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"
    assert redis_url_for_worker("redis://:pw@h:1/3?ssl_cert_reqs=none", 2) == "redis://:pw@h:1/5?ssl_cert_reqs=none"
    assert redis_url_for_worker("rediss://h/14", 3) == "rediss://h/1"
