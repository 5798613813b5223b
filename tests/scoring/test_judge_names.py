"""Judge names are per study (issue Q, finding 12): a researcher who names a judge learns nothing about the
judges of studies they are not in. A name is refused only when the study already uses it (its own judges and
those shared with it); every lookup by name is scoped to one study; the database keeps names unique per study
and among the judges without a study."""

from __future__ import annotations

import threading

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from concord.errors import Conflict
from scoring.judges import services as judge_services
from scoring.judges.selectors import judge_for_scoring
from scoring.metrics import BackendUnavailable
from scoring.models import JudgeTrainJob, TrainedJudge
from tests import factories
from tests.scoring.judge_support import labelled_jsonl, study_with_gold

pytestmark = pytest.mark.django_db
LEXICAL = {"feature_sets": ["lexical"], "folds": 3}
TRAIN = {"question": "grounded", "task": "supports", "options": LEXICAL}


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def _judge(name: str, study) -> TrainedJudge:
    """A registry row (no artifact: enough for naming and lookups)."""
    return TrainedJudge.objects.create(
        name=name, study=study, task="supports", source_kind="file", data_hash="0" * 64, model_type="logistic",
        feature_set="lexical", n=20, n_positive=10, cv={}, path="unused",
    )


@pytest.fixture
def rival(db):
    """Another study, of someone else, with a judge named ``rival-judge``."""
    other = factories.make_study(owner=factories.make_user("olga-other"), slug="rival")
    return other, _judge("rival-judge", other)


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def test_a_name_another_study_uses_is_accepted_exactly_like_a_free_one(api, client, researcher, study, rival):
    study_with_gold(study)
    url = f"/api/scoring/studies/{study.slug}/judges/"
    taken_elsewhere = api.post(url, {**TRAIN, "name": "rival-judge"}, format="json")
    free = api.post(url, {**TRAIN, "name": "free-name"}, format="json")
    assert taken_elsewhere.status_code == free.status_code == 202
    assert set(taken_elsewhere.json()) == set(free.json())
    client.force_login(researcher)
    page = client.post(f"/scoring/studies/{study.slug}/judges/train", {**TRAIN, "name": "rival-judge", "folds": 3,
                                                                        "feature_sets": ["lexical"]})
    assert page.status_code == 302 and "/judges/jobs/" in page["Location"]
    assert JudgeTrainJob.objects.filter(study=study, name="rival-judge").count() == 2
    # The study's own names are refused, and the refusal speaks of this study only.
    _judge("ward-judge", study)
    own = api.post(url, {**TRAIN, "name": "ward-judge"}, format="json")
    assert own.status_code == 409
    assert own.json()["detail"] == (
        "a judge named 'ward-judge' already exists in study 'demo-study'; choose another name"
    )


def test_each_study_registers_and_scores_with_its_own_judge_of_one_name(study, researcher, rival):
    study_with_gold(study)
    mine = judge_services.judge_train_from_study(study=study, question_key="grounded", task="supports",
                                                 name="rival-judge", actor=researcher, options=LEXICAL)
    other, theirs = rival
    assert mine.pk != theirs.pk and TrainedJudge.objects.filter(name="rival-judge").count() == 2
    assert judge_for_scoring("rival-judge", study_id=study.pk).pk == mine.pk
    assert judge_for_scoring("rival-judge", study_id=other.pk).pk == theirs.pk
    _judge("only-theirs", other)
    with pytest.raises(BackendUnavailable, match="no trained judge named 'only-theirs' is available to this study"):
        judge_for_scoring("only-theirs", study_id=study.pk)


def test_a_study_uses_one_judge_per_name_so_a_clashing_share_or_training_is_refused(api, researcher, study):
    partner = factories.make_study(owner=researcher, slug="partner")
    mine, partners = _judge("same", study), _judge("same", partner)
    refused = api.post(f"/api/scoring/studies/{study.slug}/judges/{mine.pk}/share/", {"study": "partner"},
                       format="json")
    assert refused.status_code == 409
    assert refused.json()["detail"] == "a judge named 'same' already exists in study 'partner'; choose another name"
    assert not mine.shared_with.exists()
    assert judge_for_scoring("same", study_id=partner.pk).pk == partners.pk
    gift = _judge("gift", study)
    assert api.post(f"/api/scoring/studies/{study.slug}/judges/{gift.pk}/share/", {"study": "partner"},
                    format="json").status_code == 200
    assert api.post(f"/api/scoring/studies/{study.slug}/judges/{gift.pk}/share/", {"study": "partner"},
                    format="json").status_code == 200  # sharing again changes nothing
    clash = api.post("/api/scoring/studies/partner/judges/", {**TRAIN, "name": "gift"}, format="json")
    assert clash.status_code == 409 and "study 'partner'" in clash.json()["detail"]
    assert judge_for_scoring("gift", study_id=partner.pk).pk == gift.pk


def test_the_command_line_refuses_a_name_several_studies_use_unless_the_study_is_given(study, rival):
    other, theirs = rival
    mine, unowned = _judge("rival-judge", study), _judge("rival-judge", None)
    with pytest.raises(BackendUnavailable, match=(
        r"3 judges named 'rival-judge' are available \(no study, study demo-study \(id \d+\), study rival \(id \d+\)\);"
        r" give the option study=ID"
    )):
        judge_for_scoring("rival-judge", study_id=None)
    assert judge_for_scoring("rival-judge", study_id=study.pk).pk == mine.pk
    assert judge_for_scoring("rival-judge", study_id=other.pk).pk == theirs.pk
    unowned.delete()
    mine.delete()
    assert judge_for_scoring("rival-judge", study_id=None).pk == theirs.pk  # one judge of that name: the operator's


def test_the_train_command_registers_a_name_another_study_uses(tmp_path, study, rival):
    path = tmp_path / "claims.jsonl"
    path.write_bytes(labelled_jsonl())
    call_command("train_judge", "--from", str(path), "--task", "supports", "--name", "rival-judge", "--study",
                 study.slug, "--feature-sets", "lexical", "--folds", "3")
    assert TrainedJudge.objects.get(name="rival-judge", study=study).source_kind == "file"


def test_the_database_keeps_names_unique_per_study_and_among_judges_without_a_study(study, rival):
    other, _ = rival
    _judge("one", study)
    _judge("one", None)
    _judge("one", other)
    for owner in (study, None, other):
        with pytest.raises(IntegrityError), transaction.atomic():
            _judge("one", owner)
    assert TrainedJudge.objects.filter(name="one").count() == 3


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a registration between the check and the insert")
@pytest.mark.django_db(transaction=True)
def test_a_judge_without_a_study_registered_meanwhile_is_a_409_and_its_artifact_is_removed(monkeypatch, var_dir):
    """No study row to lock: when another process registers the name between the check and the insert, the
    constraint refuses the insert, and the answer is the 409 of a name in use (SQLite serialises the two)."""
    check = judge_services._refuse_name_in_use
    checks: list[str] = []

    def another_process_registers_after_the_second_check(name, owner, **kwargs):
        check(name, owner, **kwargs)
        checks.append(name)
        if len(checks) == 2:  # the check in the registration's transaction
            def register():
                try:
                    _judge(name, None)
                finally:
                    connection.close()

            thread = threading.Thread(target=register)
            thread.start()
            thread.join()

    monkeypatch.setattr(judge_services, "_refuse_name_in_use", another_process_registers_after_the_second_check)
    with pytest.raises(Conflict, match="a judge named 'late' already exists in the judges without a study"):
        judge_services.judge_train_from_file(content=labelled_jsonl(), filename="c.jsonl", task="supports",
                                             name="late", actor=None, options=LEXICAL)
    assert TrainedJudge.objects.filter(name="late").count() == 1
    root = var_dir / "models" / "judges"
    assert not root.exists() or not any(root.iterdir())


# --- A share and a registration of one name in one study, at the same time -------------------------------

GUARD_SECONDS = 120


def _in_thread(work, outcome: dict, name: str) -> threading.Thread:
    def run() -> None:
        try:
            outcome[name] = work()
        except Exception as exc:  # the test asserts on what was raised
            outcome[name] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread


def _holding_the_names_of(study, change, outcome: dict) -> tuple[threading.Thread, threading.Event]:
    """A transaction that takes ``study``'s names lock (as a registration or a share does), makes ``change`` and
    waits, uncommitted, until the returned event is set."""
    ready, go = threading.Event(), threading.Event()

    def hold():
        with transaction.atomic():
            judge_services._lock_names(study)
            change()
            ready.set()
            go.wait(GUARD_SECONDS)

    thread = _in_thread(hold, outcome, "held")
    assert ready.wait(GUARD_SECONDS), outcome.get("held")
    return thread, go


def _waited_for_a_lock(thread: threading.Thread) -> bool:
    """Wait (on the database, polling while ``thread`` runs) until a session of this database is blocked by a
    lock, or ``thread`` ended without ever being blocked; tells which."""
    import psycopg

    s = connection.settings_dict
    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], password=s["PASSWORD"],
                         dbname=s["NAME"], autocommit=True) as watcher:
        while thread.is_alive():
            if watcher.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                               " AND cardinality(pg_blocking_pids(pid)) > 0").fetchone()[0]:
                return True
            thread.join(0.01)  # a poll interval, not a deadline: the loop ends on progress only
    return False


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and pg_blocking_pids: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_a_share_waits_for_a_registration_of_the_name_in_the_target_study_and_is_refused(researcher):
    owner_study = factories.make_study(owner=researcher, slug="owner")
    partner = factories.make_study(owner=researcher, slug="partner")
    gift = _judge("x", owner_study)
    outcome: dict = {}
    held, go = _holding_the_names_of(partner, lambda: _judge("x", partner), outcome)
    try:
        share = _in_thread(lambda: judge_services.judge_share(judge=gift, target_slug="partner", actor=researcher),
                           outcome, "share")
        waited = _waited_for_a_lock(share)
    finally:
        go.set()
        held.join(GUARD_SECONDS)
    share.join(GUARD_SECONDS)
    assert isinstance(outcome["share"], Conflict), outcome["share"]
    assert not gift.shared_with.exists() and judge_for_scoring("x", study_id=partner.pk).study_id == partner.pk
    assert waited


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and pg_blocking_pids: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_a_registration_waits_for_a_share_of_the_name_into_its_study_and_is_refused(researcher):
    owner_study = factories.make_study(owner=researcher, slug="owner")
    partner = factories.make_study(owner=researcher, slug="partner")
    gift = _judge("x", owner_study)
    outcome: dict = {}
    held, go = _holding_the_names_of(partner, lambda: gift.shared_with.add(partner), outcome)
    try:
        register = _in_thread(lambda: judge_services.judge_train_from_file(
            content=labelled_jsonl(), filename="c.jsonl", task="supports", name="x", actor=None, owner=partner,
            options=LEXICAL), outcome, "register")
        waited = _waited_for_a_lock(register)
    finally:
        go.set()
        held.join(GUARD_SECONDS)
    register.join(GUARD_SECONDS)
    assert isinstance(outcome["register"], Conflict), outcome["register"]
    assert not TrainedJudge.objects.filter(study=partner).exists()
    assert judge_for_scoring("x", study_id=partner.pk).pk == gift.pk
    assert waited
