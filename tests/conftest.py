from __future__ import annotations

import pytest

from tests import factories

# The test identity providers (their own processes), started once per session for every single sign-on test.
from tests.sso.fixtures import oidc_op, saml_idp  # noqa: F401  (fixtures)


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


@pytest.fixture
def submit_receivers():
    """Chooses who receives ``annotation.signals.assignment_submitted`` for one test: call it with the receivers
    (``(sender, *, pool_id, item_id, **kwargs)``) in the order they are to run; with none, annotation runs alone,
    without adjudication's disagreement detection. adjudication's receivers are connected again afterwards, in
    their order, as adjudication/apps.py connects them."""
    from adjudication.apps import ASSIGNMENT_SUBMITTED_RECEIVERS
    from annotation.models import Assignment
    from annotation.signals import assignment_submitted

    connected: list[str] = []

    def replace(*receivers) -> None:
        for dispatch_uid in [uid for uid, _ in ASSIGNMENT_SUBMITTED_RECEIVERS] + connected:
            assignment_submitted.disconnect(dispatch_uid=dispatch_uid)
        connected.clear()
        # Every receiver must be one of adjudication's: one this fixture does not know of would still run.
        assert not assignment_submitted.has_listeners(Assignment), "an unknown receiver of assignment_submitted"
        for n, receiver in enumerate(receivers):
            connected.append(f"tests.submit_receivers.{n}")
            assignment_submitted.connect(receiver, dispatch_uid=connected[-1], weak=False)

    yield replace
    for dispatch_uid in connected:
        assignment_submitted.disconnect(dispatch_uid=dispatch_uid)
    for dispatch_uid, receiver in ASSIGNMENT_SUBMITTED_RECEIVERS:
        assignment_submitted.connect(receiver, dispatch_uid=dispatch_uid)


@pytest.fixture
def no_submit_receivers(submit_receivers):
    """Submitting sends ``assignment_submitted`` to nobody: annotation's tests without adjudication's work."""
    submit_receivers()
