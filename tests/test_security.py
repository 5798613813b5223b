"""Sessions and authentication: login throttling, session rotation, idle timeout, production settings."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.http import HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from concord import auth, sessions
from tests import factories
from tests.waiting import SUBPROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parent.parent
STRONG_KEY = "x7Qp2vR9sT4wY6zA1bC3dE5fG8hJ0kL2mN4pQ6rS8tU0vW2xY4z"
_PRODUCTION = {
    "CONCORD_ENV": "production",
    "SECRET_KEY": STRONG_KEY,
    "DATABASE_URL": "postgres://concord@127.0.0.1:5432/concord",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "ALLOWED_HOSTS": "concord.example.org",
}


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    # The personas' passwords are hashed on creation and checked at each log-in; what these tests
    # exercise does not depend on the hash's cost.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CONCORD_", "DJANGO_"))
        and k
        not in {
            "DATABASE_URL",
            "CELERY_BROKER_URL",
            "SECRET_KEY",
            "DEBUG",
            "ALLOWED_HOSTS",
            "CACHE_URL",
        }
    }
    clean.update({"CONCORD_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "concord.settings", **env})
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT
    )


def _settings_value(tmp_path: Path, expression: str, **env: str) -> subprocess.CompletedProcess:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    return _run(["-c", code], tmp_path, **env)


# --- Login throttling -------------------------------------------------------------------------


@pytest.fixture
def throttle(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    return settings


def _login(client: Client, username: str, password: str, **extra):
    return client.post(reverse("login"), {"username": username, "password": password}, **extra)


def _fail_until_locked(client: Client, username: str, **extra) -> None:
    for _ in range(3):
        assert _login(client, username, "wrong-password", **extra).status_code == 200


def test_repeated_failed_logins_lock_the_username_and_address_out_with_429(client, annotator, throttle):
    _fail_until_locked(client, "anna-annotator")
    response = _login(client, "anna-annotator", "wrong-password")
    assert response.status_code == 429
    assert b"Too many failed log-in attempts. Try again in 10 minutes." in response.content


def test_a_locked_out_user_cannot_log_in_even_with_the_right_password(client, annotator, throttle):
    _fail_until_locked(client, "anna-annotator")
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 429
    assert "_auth_user_id" not in client.session


def test_an_unknown_username_is_locked_out_the_same_way(client, throttle, db):
    _fail_until_locked(client, "nobody-here")
    assert _login(client, "nobody-here", "wrong-password").status_code == 429


def test_the_lock_is_per_address_and_per_username(client, annotator, researcher, throttle):
    _fail_until_locked(client, "anna-annotator")
    other_address = _login(client, "anna-annotator", factories.PASSWORD, REMOTE_ADDR="10.1.2.3")
    assert other_address.status_code == 302
    assert _login(Client(), "rita-researcher", factories.PASSWORD).status_code == 302


def test_usernames_differing_only_in_case_share_one_count(client, annotator, throttle):
    _fail_until_locked(client, "ANNA-annotator")
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 429


def test_a_successful_login_clears_the_failure_count(client, annotator, throttle):
    for _ in range(2):
        _login(client, "anna-annotator", "wrong-password")
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):
        _login(client, "anna-annotator", "wrong-password")
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 302


def test_the_lock_ends_with_its_window(client, annotator, throttle, monkeypatch):
    _fail_until_locked(client, "anna-annotator")
    later = time.time() + 601
    monkeypatch.setattr(auth.time, "time", lambda: later)
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 302


def test_the_admin_login_form_is_throttled_too(client, throttle, db):
    get_user_model().objects.create_superuser("root-admin", password=factories.PASSWORD)
    _fail_until_locked(client, "root-admin")
    client.post("/admin/login/", {"username": "root-admin", "password": factories.PASSWORD, "next": "/admin/"})
    assert "_auth_user_id" not in client.session


def test_the_failure_count_is_kept_in_the_shared_database_cache_under_a_hashed_key(settings):
    assert settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert "anna" not in auth._key("anna-annotator", "127.0.0.1")


# --- Sessions -------------------------------------------------------------------------------


def test_logging_in_gives_a_new_session_key_and_destroys_the_old_one(client, annotator):
    session = client.session
    session["seen_intro"] = True
    session.save()
    before = session.session_key
    assert _login(client, "anna-annotator", factories.PASSWORD).status_code == 302
    after = client.cookies["sessionid"].value
    assert after != before
    assert not Session.objects.filter(session_key=before).exists()
    assert Session.objects.filter(session_key=after).exists()


def _session_written(client: Client, seconds_ago: int) -> tuple[str, datetime]:
    """Mark the client's session as last written that many seconds ago, its expiry 30 s away; its key and
    that expiry. A session's first request remembers what it checked (a change, written at once): made first."""
    assert client.get(reverse("annotation:home")).status_code == 200
    key = client.cookies["sessionid"].value
    store = SessionStore(session_key=key)
    store[sessions.WRITTEN_AT] = int(time.time()) - seconds_ago
    store.save()
    soon = timezone.now() + timedelta(seconds=30)
    Session.objects.filter(session_key=key).update(expire_date=soon)
    return key, soon


def test_a_request_once_the_refresh_interval_has_passed_pushes_the_idle_deadline_forward(client, annotator, settings):
    client.force_login(annotator)
    key, _ = _session_written(client, settings.SESSION_IDLE_REFRESH_SECONDS + 1)
    before = timezone.now()  # the request's own time, whatever the machine's speed: the deadline counts from it
    response = client.get(reverse("annotation:home"))
    assert response.status_code == 200
    assert response.cookies["sessionid"]["max-age"] == settings.SESSION_COOKIE_AGE
    deadline = Session.objects.get(session_key=key).expire_date
    assert deadline >= before + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    assert SessionStore(session_key=key)[sessions.WRITTEN_AT] >= int(before.timestamp())


@pytest.mark.parametrize("seconds_ago", [0, 5])
def test_a_request_within_the_refresh_interval_writes_no_session(client, annotator, settings, seconds_ago):
    # Each page view used to rewrite the session row (an UPDATE and a commit) only to move its deadline. The
    # interval is as long as it may be, so no pause of a loaded machine between the write and the request ends it.
    settings.SESSION_IDLE_REFRESH_SECONDS = settings.SESSION_COOKIE_AGE - 1
    client.force_login(annotator)
    key, soon = _session_written(client, seconds_ago)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("annotation:home"))
    assert response.status_code == 200
    assert "sessionid" not in response.cookies
    assert not [q["sql"] for q in queries.captured_queries if "django_session" in q["sql"] and "SELECT" not in q["sql"]]
    assert Session.objects.get(session_key=key).expire_date == soon


def test_a_session_written_in_the_future_is_written_again(client, annotator, settings):
    # A clock set back must not keep a session from ever being refreshed.
    client.force_login(annotator)
    key, soon = _session_written(client, -3600)
    response = client.get(reverse("annotation:home"))
    assert response.cookies["sessionid"]["max-age"] == settings.SESSION_COOKIE_AGE
    assert Session.objects.get(session_key=key).expire_date > soon


def test_a_changed_session_is_written_at_once(rf, db, settings):
    settings.SESSION_IDLE_REFRESH_SECONDS = 60
    store = SessionStore()
    store[sessions.WRITTEN_AT] = int(time.time())
    store.create()

    def view(request):
        request.session["step"] = "two"
        return HttpResponse("ok")

    request = rf.get("/")
    request.COOKIES[settings.SESSION_COOKIE_NAME] = store.session_key
    response = sessions.IdleTimeoutSessionMiddleware(view)(request)
    assert response.cookies["sessionid"]["max-age"] == settings.SESSION_COOKIE_AGE
    assert SessionStore(session_key=store.session_key)["step"] == "two"


def test_signing_out_leaves_no_session_behind(client, annotator):
    client.force_login(annotator)
    key = client.cookies["sessionid"].value
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert not Session.objects.filter(session_key=key).exists()
    assert Session.objects.count() == 0
    assert response.cookies["sessionid"].value == ""


def test_a_session_idle_past_the_timeout_is_logged_out(client, annotator):
    client.force_login(annotator)
    key = client.cookies["sessionid"].value
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    response = client.get(reverse("annotation:home"))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SESSION_IDLE_TIMEOUT_SECONDS": "900"}, "900 60"),
        ({"SESSION_IDLE_TIMEOUT_SECONDS": "300"}, "300 30"),  # a tenth of a short timeout
        ({"SESSION_IDLE_TIMEOUT_SECONDS": "900", "SESSION_IDLE_REFRESH_SECONDS": "0"}, "900 0"),  # every request
    ],
)
def test_the_idle_timeout_and_its_refresh_interval_come_from_the_environment(tmp_path, env, expected):
    result = _settings_value(tmp_path, "settings.SESSION_COOKIE_AGE, settings.SESSION_IDLE_REFRESH_SECONDS", **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_a_refresh_interval_as_long_as_the_idle_timeout_is_refused(tmp_path):
    result = _settings_value(
        tmp_path, "settings.SESSION_COOKIE_AGE", SESSION_IDLE_TIMEOUT_SECONDS="900", SESSION_IDLE_REFRESH_SECONDS="900"
    )
    assert result.returncode != 0
    assert "SESSION_IDLE_REFRESH_SECONDS=900 must be less than the idle timeout" in result.stderr


def test_migrations_create_no_user_accounts(db):
    assert get_user_model().objects.count() == 0


# --- Production settings --------------------------------------------------------------------


def test_production_cookies_are_secure_http_only_and_same_site(tmp_path):
    expression = (
        "settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, settings.SESSION_COOKIE_HTTPONLY, "
        "settings.SESSION_COOKIE_SAMESITE, settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS >= 31536000, "
        "settings.DEBUG"
    )
    result = _settings_value(tmp_path, expression, **_PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True True True Lax True True False"


@pytest.mark.parametrize(
    "key",
    ["", "changeme", "django-insecure-abcdefghijklmnopqrstuvwxyz0123456789abcdefgh", "too-short-but-random-Qx7"],
    ids=["missing", "published", "django-template", "short"],
)
def test_production_refuses_a_missing_published_or_weak_secret_key(tmp_path, key):
    result = _settings_value(tmp_path, "settings.SECRET_KEY", **{**_PRODUCTION, "SECRET_KEY": key})
    assert result.returncode != 0
    assert "SECRET_KEY must be set to a random value" in result.stderr


def test_production_refuses_a_per_process_cache(tmp_path):
    result = _settings_value(tmp_path, "settings.CACHES", **_PRODUCTION, CACHE_URL="locmem://")
    assert result.returncode != 0
    assert "CACHE_URL must be" in result.stderr


def test_check_deploy_raises_no_security_warning_with_production_settings(tmp_path):
    result = _run(
        ["manage.py", "check", "--deploy", "--tag", "security", "--fail-level", "DEBUG"], tmp_path, **_PRODUCTION
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "DEBUG"], tmp_path, **_PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


# --- API schema and docs --------------------------------------------------------------------


def test_anonymous_visitors_cannot_read_the_api_schema_or_its_docs(client, db):
    assert client.get(reverse("schema")).status_code in (401, 403)
    assert client.get(reverse("api-docs")).status_code in (401, 403)


def test_the_api_docs_load_their_script_and_styles_from_this_site_only(client, annotator):
    client.force_login(annotator)
    page = client.get(reverse("api-docs")).content.decode()
    assert "cdn." not in page and "<style" not in page
    assert f'src="{reverse("api-docs")}?script="' in page
    script = client.get(reverse("api-docs") + "?script=")
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
