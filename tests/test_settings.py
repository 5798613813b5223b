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
            "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'concord.settings'); "
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
