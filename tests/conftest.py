from __future__ import annotations

import pytest

from tests import factories


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2's deliberate slowness protects stored passwords; in tests it only costs minutes.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def researcher(db):
    """Owns `study`: may set it up, import, read reports and export."""
    return factories.make_user("rita-researcher")


@pytest.fixture
def study(researcher):
    return factories.make_study(owner=researcher, slug="demo-study")


@pytest.fixture
def annotator(db):
    """A clinician in one pool: sees only their own assignments and labels."""
    return factories.make_user("anna-annotator")


@pytest.fixture
def adjudicator(db):
    """A senior clinician: resolves disagreements of the studies they adjudicate."""
    return factories.make_user("adam-adjudicator")


@pytest.fixture
def stranger(db):
    """A logged-in user with no role in `study`: must learn nothing about it (404s)."""
    return factories.make_user("sam-stranger")
