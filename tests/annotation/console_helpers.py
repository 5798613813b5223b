"""Shared set-up of the console tests: a researcher allowed to create studies, eager Celery."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission

from concord.celery import app as celery_app


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Accounts are created in most tests; the production hasher would dominate their run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def eager_celery():
    """Tasks run inline when their transaction commits (tests wrap the call in capture_on_commit)."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = before


def allow_study_creation(user) -> None:
    user.user_permissions.add(Permission.objects.get(codename="add_study", content_type__app_label="annotation"))


def jsonl(*records: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode() + b"\n"


ITEMS = [
    {"id": "q1", "question": "Can I take ibuprofen with warfarin?", "answer": "Usually not. Ask your doctor first!",
     "contexts": ["NSAIDs raise bleeding risk with warfarin."], "aspects": ["Mentions bleeding risk"],
     "system": "rag-a", "metadata": {"model": "secret-model", "topic": "drugs"}},
    {"id": "q2", "question": "Is 0.5 mg a normal dose?", "answer": "Yes. The usual dose is 0.5 mg daily.",
     "contexts": ["The usual dose is 0.5 mg daily."], "system": "rag-b"},
]
