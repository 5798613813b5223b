"""load_demo builds the demo studies once, with one working login per role."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotation.models import Assignment, Item, Label, Pool, PoolMembership, Role, Study, StudyRole


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The personas' passwords are hashed once per test; the production hasher costs ~1 s each here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _logins(output: str) -> dict[str, str]:
    return dict(re.findall(r"^\s+\w+\s+(demo-[\w-]+)\s+(\S+)$", output, flags=re.MULTILINE))


def _snapshot():
    return (
        Study.objects.count(),
        Item.objects.count(),
        Label.objects.count(),
        Pool.objects.count(),
        PoolMembership.objects.count(),
        Assignment.objects.count(),
        StudyRole.objects.count(),
    )


@pytest.mark.slow
def test_load_demo_builds_the_studies_once_and_prints_working_logins(db, capsys, client):
    call_command("load_demo")
    first = _logins(capsys.readouterr().out)
    assert set(first) == {"demo-researcher", "demo-adjudicator", "demo-annotator-1", "demo-annotator-2"}
    for username, password in first.items():
        assert authenticate(username=username, password=password) is not None, username
        assert len(password) >= 16

    kqa = Study.objects.get(slug="kqa-demo")
    assert kqa.items.count() == 50 and "MIT" in kqa.licence
    assert set(kqa.protocol_presets) >= {"astrid", "icat", "kqa"}
    roles = set(
        StudyRole.objects.filter(study=kqa, user__username__startswith="demo-").values_list("user__username", "role")
    )
    assert {
        ("demo-researcher", Role.RESEARCHER),
        ("demo-adjudicator", Role.ADJUDICATOR),
        ("demo-annotator-1", Role.ANNOTATOR),
        ("demo-annotator-2", Role.ANNOTATOR),
    } <= roles
    physicians = Pool.objects.get(study=kqa, name="K-QA physicians")
    assert Label.objects.filter(assignment__pool=physicians).count() == 1197
    live = Pool.objects.get(study=kqa, name="Demo annotators")
    for n in (1, 2):
        assert Assignment.objects.filter(pool=live, annotator__username=f"demo-annotator-{n}").exists()
    assert Study.objects.get(slug="begin-demo").items.count() == 416

    before = _snapshot()
    call_command("load_demo")
    second = _logins(capsys.readouterr().out)
    assert _snapshot() == before, "a second run must not add anything"
    assert authenticate(username="demo-researcher", password=second["demo-researcher"]) is not None
    assert authenticate(username="demo-researcher", password=first["demo-researcher"]) is None

    client.login(username="demo-researcher", password=second["demo-researcher"])
    assert client.get("/studies/kqa-demo/import/").status_code == 200


@override_settings(PRODUCTION=True)
def test_load_demo_refuses_to_run_in_production(db):
    with pytest.raises(CommandError, match="refusing in production"):
        call_command("load_demo")
    assert not Study.objects.exists()
