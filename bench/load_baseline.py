"""The bare save that ``bench/annotate_load.py --baseline`` measures Concord against.

A minimal Django application in one module, which is at once its settings module, its URLconf and its
WSGI module (``DJANGO_SETTINGS_MODULE=load_baseline``, ``gunicorn --pythonpath bench
load_baseline:application``), served by the same gunicorn.conf.py as Concord and with Concord's own
``DATABASES`` setting (imported from concord.settings: the same persistent connections and health
checks), so that the framework, the WSGI server and the database driver are the same and only Concord's
own work differs.

One URL, ``PUT /api/assignments/<id>/labels/``, taking and answering what Concord's does (the JSON body
``question``, ``unit_key``, ``value``, ``base_version``; 200 with the label, 409 with the stored version
and value in ``details``), in raw SQL on Concord's tables of a database seeded like Concord's:

1. the token → its (active) user: one SELECT;
2. in one transaction: one INSERT of the label (``base_version`` 0, ``ON CONFLICT DO NOTHING``) or one
   UPDATE of it (``WHERE version = base_version``), bumping the version, both restricted to an
   assignment of that user in the same statement; then one INSERT of the history row (its old value
   read by a sub-select of the history row of the base version).

Anything else Concord does is left out on purpose: no middleware, no sessions, no DRF, no validation of
the value against the question, no open-assignment or unit check, no reservation, no dependent questions.
The question keys are read once per process (the benchmark seeds one study).

Audit triggers: none. The benchmark copies the seeded database for the baseline and drops Concord's
audit triggers from the two tables this app writes (``annotation_label``, ``annotation_labelhistory``).
The baseline is a *bare* save, the minimum any application storing versioned labels with history
must do; the audit trail is part of Concord's own work, whose cost the ratio is meant to show (the
triggers are bounded separately, at 1.3 × a save without them: bench/audit_overhead.py).

Stale base version → 409 (extra reads only on that path); assignment not the user's → 404; bad token → 401.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from django.core.wsgi import get_wsgi_application
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.urls import path

from concord.settings import DATABASES  # noqa: F401 (a setting of this module: Concord's own)

SECRET_KEY = os.environ.get("SECRET_KEY") or "load-baseline-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "load_baseline"
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The readiness probe of the benchmark asks for "/": no "Not Found" warning for it.
LOGGING = {"version": 1, "disable_existing_loggers": False, "loggers": {"django.request": {"level": "ERROR"}}}

_questions: dict[str, int] = {}

_TOKEN_USER = (
    "SELECT t.user_id FROM authtoken_token t JOIN auth_user u ON u.id = t.user_id WHERE t.key = %s AND u.is_active"
)
_INSERT_LABEL = (
    "INSERT INTO annotation_label (assignment_id, question_id, unit_key, value, version, updated_by_id, updated_at) "
    "SELECT a.id, %s, %s, %s::jsonb, 1, %s, %s FROM annotation_assignment a WHERE a.id = %s AND a.annotator_id = %s "
    "ON CONFLICT (assignment_id, question_id, unit_key) DO NOTHING RETURNING id, version"
)
_UPDATE_LABEL = (
    "UPDATE annotation_label l SET value = %s::jsonb, version = l.version + 1, updated_by_id = %s, updated_at = %s "
    "FROM annotation_assignment a WHERE a.id = l.assignment_id AND a.annotator_id = %s "
    "AND l.assignment_id = %s AND l.question_id = %s AND l.unit_key = %s AND l.version = %s RETURNING l.id, l.version"
)
_INSERT_HISTORY = (
    "INSERT INTO annotation_labelhistory (label_id, old_value, new_value, old_version, new_version, actor_id, at) "
    "VALUES (%s, (SELECT h.new_value FROM annotation_labelhistory h WHERE h.label_id = %s AND h.new_version = %s), "
    "%s::jsonb, %s, %s, %s, %s)"
)
_CURRENT = (
    "SELECT l.version, l.value FROM annotation_assignment a LEFT JOIN annotation_label l "
    "ON l.assignment_id = a.id AND l.question_id = %s AND l.unit_key = %s WHERE a.id = %s AND a.annotator_id = %s"
)


def _json(status: int, body: dict) -> HttpResponse:
    content = json.dumps(body).encode()
    response = HttpResponse(content, status=status, content_type="application/json")
    response["Content-Length"] = str(len(content))
    return response


def _question_id(cursor, key: str) -> int | None:
    if not _questions:
        cursor.execute("SELECT key, id FROM annotation_question")
        _questions.update(cursor.fetchall())
    return _questions.get(key)


def label_save(request: HttpRequest, pk: int) -> HttpResponse:
    if request.method != "PUT":
        return _json(405, {"error": "method"})
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    try:
        data = json.loads(request.body)
        question, unit_key, base = str(data["question"]), str(data["unit_key"]), int(data["base_version"])
        value = json.dumps(data["value"])
    except (ValueError, KeyError, TypeError):
        return _json(400, {"error": "invalid"})
    now = datetime.now(UTC)
    with connection.cursor() as cursor:
        cursor.execute(_TOKEN_USER, [key if scheme == "Token" else ""])
        row = cursor.fetchone()
        if row is None:
            return _json(401, {"error": "unauthenticated"})
        user_id = row[0]
        question_id = _question_id(cursor, question)
        if question_id is None or base < 0:
            return _json(400, {"error": "invalid"})
        with transaction.atomic():
            if base == 0:
                cursor.execute(_INSERT_LABEL, [question_id, unit_key, value, user_id, now, pk, user_id])
            else:
                cursor.execute(_UPDATE_LABEL, [value, user_id, now, user_id, pk, question_id, unit_key, base])
            saved = cursor.fetchone()
            if saved is not None:
                label_id, version = saved
                cursor.execute(
                    _INSERT_HISTORY, [label_id, label_id, base, value, base or None, version, user_id, now]
                )
        if saved is None:
            cursor.execute(_CURRENT, [question_id, unit_key, pk, user_id])
            current = cursor.fetchone()
            if current is None:
                return _json(404, {"error": "not_found"})
            stored_version, stored_value = current
            # Django reads jsonb as its text (the JSONField decodes it); so does this raw cursor.
            stored = json.loads(stored_value) if stored_value is not None else None
            details = {"version": stored_version or 0, "value": stored}
            return _json(409, {"error": "conflict", "detail": "changed since", "details": details})
    body = {"question": question, "unit_key": unit_key, "value": data["value"], "version": version}
    return _json(200, {**body, "updated_at": now.isoformat()})


urlpatterns = [path("api/assignments/<int:pk>/labels/", label_save)]

application = get_wsgi_application()
