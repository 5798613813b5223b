"""The label save's hand-written statements (annotation/labels/statements.py) read and write exactly what the ORM would:
the same access rule, the same authentication refusals, the same stored values and history, in two
statements for a save through the API with a token on PostgreSQL (the issue's bound is eight); the pool's
questions that a process keeps between saves follow every change of the questions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import selectors
from annotation.labels import label_save, statements
from annotation.labels.questions import pool_questions
from annotation.models import Assignment, Label, LabelHistory, PasswordChangeRequired, PoolMembership
from annotation.services import pool_assign_items
from concord.errors import NotFound
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_hasher(settings, no_submit_receivers):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def work(study, annotator):
    pf = factories.make_question(
        study, "pf", kind="ordinal", order=2,
        options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)],
    )
    ib = factories.make_question(study, "ib", scope="sentence", order=1)
    other_study_question = factories.make_question(factories.make_study(), "pf")
    item = factories.make_item(study, "i1", answer="Take 0.5 mg daily. Stop if a rash appears.")
    pool = factories.make_pool(study, questions=[pf, ib])
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    return {"pool": pool, "item": item, "assignment": pool.assignments.get(), "pf": pf, "ib": ib,
            "foreign": other_study_question}


def _orm_rule(user, pk):
    """The access rule as the ORM states it (annotation.labels.access.own_assignments)."""
    return Assignment.objects.filter(pk=pk, annotator=user, pool__memberships__user=user,
                                     pool__memberships__active=True).first()


def test_the_access_statement_gives_what_the_orm_rule_gives(work, annotator, study):
    assignment = work["assignment"]
    stranger = factories.make_user()
    other_pool = factories.make_pool(study)
    factories.add_member(other_pool, stranger)
    peer = factories.make_user()  # an active member of the same pool, but not the assignment's annotator
    factories.add_member(work["pool"], peer)
    cases = [(annotator, assignment.pk), (stranger, assignment.pk), (peer, assignment.pk),
             (annotator, assignment.pk + 1000),
             (annotator, 0), (annotator, -1)]
    for user, pk in cases:
        expected = _orm_rule(user, pk)
        try:
            found = selectors.get_assignment_for_annotator(user, pk, with_item=True)
        except NotFound:
            found = None
        assert (found and found.pk) == (expected and expected.pk), (user, pk)
    found = selectors.get_assignment_for_annotator(annotator, assignment.pk, with_item=True)
    # Pool, study and item come with it, equal to the ORM's (no further query).
    with_orm = Assignment.objects.select_related("pool__study", "item").get(pk=assignment.pk)
    for attribute in ("pool", "item"):
        ours, theirs = getattr(found, attribute), getattr(with_orm, attribute)
        assert [getattr(ours, f.attname) for f in ours._meta.concrete_fields] == [
            getattr(theirs, f.attname) for f in theirs._meta.concrete_fields
        ]
    assert found.pool.study.slug == study.slug
    assert [getattr(found, f.attname) for f in Assignment._meta.concrete_fields] == [
        getattr(with_orm, f.attname) for f in Assignment._meta.concrete_fields
    ]


def test_an_inactive_membership_or_an_id_beyond_any_integer_names_nothing(work, annotator):
    assignment = work["assignment"]
    PoolMembership.objects.filter(user=annotator).update(active=False)
    with pytest.raises(NotFound):
        selectors.get_assignment_for_annotator(annotator, assignment.pk)
    PoolMembership.objects.filter(user=annotator).update(active=True)
    for pk in (2**63, -(2**63) - 1, 10**30):
        with pytest.raises(NotFound):
            selectors.get_assignment_for_annotator(annotator, pk)
    client = APIClient()
    client.force_authenticate(annotator)
    huge = reverse("api-labels", args=[2**63])
    assert _put_pf(client, huge, "4", 0).status_code == 404


def test_the_pool_questions_are_those_of_the_pool_in_protocol_order(work):
    questions = pool_questions(work["pool"])
    assert [q.key for q in questions] == ["ib", "pf"]
    assert questions[1].options == work["pf"].options and questions[1].condition == {}
    # Kept where a prefetch keeps them: pool.questions.all() is answered without a query, and a filter on it
    # still only sees the pool's questions.
    assert list(work["pool"].questions.all()) == questions
    assert work["foreign"] not in list(work["pool"].questions.filter(key="pf"))


def _token_client(user):
    token = Token.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client, token


def _put_pf(client, url, value, base_version):
    """A save of the item-level answer to question "pf" through the labels API."""
    return client.put(url, {"question": "pf", "unit_key": "item", "value": value, "base_version": base_version},
                      format="json")


def test_unknown_tokens_and_inactive_people_are_refused_as_drf_refuses_them(work, annotator):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    url = reverse("api-labels", args=[work["assignment"].pk])
    response = client.get(url)
    # DRF answers 403 (not 401) because the first authentication class, the session, sends no challenge.
    assert response.status_code == 403 and "Invalid token" in response.content.decode()
    client, _ = _token_client(annotator)
    assert client.get(url).status_code == 200
    annotator.is_active = False
    annotator.save()
    response = client.get(url)
    assert response.status_code == 403 and "inactive" in response.content.decode()


def test_the_token_lookup_returns_the_person_and_the_one_time_password_flag(annotator):
    token = Token.objects.create(user=annotator)
    user, found, must_change, assignment = statements.token_lookup(token.key)
    assert assignment is None
    assert (user.pk, user.username, found.key, found.user.pk, must_change) == (
        annotator.pk, annotator.username, token.key, annotator.pk, False
    )
    assert found.created == Token.objects.get(pk=token.key).created
    assert statements.token_lookup("nope") is None


def test_the_token_lookup_says_when_its_holder_must_change_a_one_time_password(annotator):
    """The flag the label save refuses a token on (SECURITY.md, tokens): read from the same statement."""
    token = Token.objects.create(user=annotator)
    PasswordChangeRequired.objects.create(user=annotator)
    assert statements.token_lookup(token.key)[2] is True
    assert statements.token_lookup(token.key, assignment_pk=10**6)[2] is True


def test_the_token_lookup_names_the_assignment_only_when_it_is_the_holders_own(work, annotator):
    own = work["assignment"]
    peer = factories.make_user()
    factories.add_member(work["pool"], peer)
    others = factories.make_assignment(work["pool"], factories.make_item(work["pool"].study, "i2"), peer)
    token = Token.objects.create(user=annotator)
    *_, assignment = statements.token_lookup(token.key, assignment_pk=own.pk)
    assert (assignment.pk, assignment.pool_id, assignment.pool.study_id) == (own.pk, own.pool_id, own.pool.study_id)
    for pk in (others.pk, 10**6):  # a colleague's assignment, and one that does not exist: nothing
        user, found, must_change, assignment = statements.token_lookup(token.key, assignment_pk=pk)
        assert (user.pk, found.key, must_change, assignment) == (annotator.pk, token.key, False, None)


def test_a_token_save_through_the_api_runs_two_statements_on_postgresql(work, annotator, django_assert_max_num_queries):
    client, _ = _token_client(annotator)
    url = reverse("api-labels", args=[work["assignment"].pk])
    assert _put_pf(client, url, "4", 0).status_code == 200
    # Token, person, assignment and the questions' revision in one; the pool's questions are those this
    # process read at the first save (same revision). Then on PostgreSQL the save itself is one statement
    # (lock, checks, label, history: statements.save_label_at_once); on SQLite the locked save: transaction, lock,
    # label, history, end.
    limit = 2 if connection.vendor == "postgresql" else 6
    with django_assert_max_num_queries(limit) as captured:
        response = _put_pf(client, url, "5", 1)
    assert response.status_code == 200, response.content
    assert len(captured) == limit
    assert Label.objects.get(unit_key="item").value == "5"


def _revision():
    with connection.cursor() as cursor:
        cursor.execute("SELECT n FROM annotation_questions_revision")
        (n,) = cursor.fetchall()
        return n[0]


def test_the_questions_revision_changes_with_every_change_of_questions_or_of_a_pools_questions(work, study):
    seen = [_revision()]

    def changed():
        seen.append(_revision())
        return seen[-1] != seen[-2]

    pf = work["pf"]
    assert not changed()
    pf.prompt = "Perceived faithfulness (1–5)"
    pf.save()
    assert changed()
    new = factories.make_question(study, "extra")
    assert changed()
    work["pool"].questions.add(new)
    assert changed()
    work["pool"].questions.remove(new)
    assert changed()
    from annotation.models import Question

    Question.objects.filter(pk=new.pk).update(options=[{"value": "a", "label": "A"}])
    assert changed()
    new.delete()
    assert changed()
    assert len(set(seen)) == len(seen) - 1  # never a number it has been before (only the first step kept it)


def test_a_token_save_validates_against_the_questions_as_they_are_now(work, annotator):
    """The questions a process keeps between saves are used only under the revision read by the save's own
    statement: a change of options, of the pool's questions or a new question is seen by the next save."""
    client, _ = _token_client(annotator)
    url = reverse("api-labels", args=[work["assignment"].pk])

    def put(question, value, base=0, unit="item"):
        return client.put(url, {"question": question, "unit_key": unit, "value": value, "base_version": base},
                          format="json")

    assert put("pf", "4").status_code == 200
    assert put("pf", "9", base=1).status_code == 400  # not an option (yet)
    pf = work["pf"]
    pf.options = [*pf.options, {"value": "9", "label": "9", "key": "9"}]
    pf.save()
    assert put("pf", "9", base=1).status_code == 200
    work["pool"].questions.remove(work["ib"])
    assert put("ib", "yes", unit="s:0").status_code == 404
    work["pool"].questions.add(work["ib"])
    assert put("ib", "yes", unit="s:0").status_code == 200


@pytest.mark.parametrize(
    "first, second",
    [("4", "5"), (["a", "b"], ["b"]), (3, 2.5), ({"k": "v ' \" é"}, None), ("line\nbreak ' quote", "x")],
)
def test_values_written_in_sql_read_back_as_the_orm_stores_them(work, annotator, first, second):
    """Whatever the JSON value, the label and its history hold what Label.objects.create / update would."""
    assignment, question = work["assignment"], work["pf"]
    now = timezone.now()
    # The service normalises answers for the question's kind; write through the statements directly so that
    # every JSON shape is covered.
    label = Label(assignment=assignment, question=question, unit_key="item", value=first, version=1,
                  updated_by=annotator, updated_at=now)
    label.pk = statements.insert_label_and_history(label)
    stored = Label.objects.get(pk=label.pk)
    assert (stored.value, stored.version, stored.updated_by_id, stored.updated_at) == (first, 1, annotator.pk, now)
    (history,) = LabelHistory.objects.filter(label=stored)
    assert (history.old_value, history.new_value, history.old_version, history.new_version, history.actor_id,
            history.at, history.undoes_id) == (None, first, None, 1, annotator.pk, now, None)
    later = now + timedelta(seconds=5)
    assert statements.update_label_and_history(stored, second, annotator.pk, later) is True
    stored.refresh_from_db()
    assert (stored.value, stored.version, stored.updated_at) == (second, 2, later)
    newest = LabelHistory.objects.get(label=stored, new_version=2)
    assert (newest.old_value, newest.new_value, newest.old_version, newest.at) == (first, second, 1, later)
    # A write based on a version that is no longer current changes nothing.
    stale = Label(pk=stored.pk, value=second, version=1)
    assert statements.update_label_and_history(stale, "other", annotator.pk, later) is False
    assert Label.objects.get(pk=stored.pk).version == 2 and LabelHistory.objects.filter(label=stored).count() == 2
    if second is None:
        # None is SQL NULL, as the ORM stores it for a nullable JSONField.
        assert Label.objects.filter(pk=stored.pk, value__isnull=True).exists()


def test_the_lock_statement_reads_the_unit_and_the_item_labels_and_whether_the_unit_exists(work, annotator):
    assignment = work["assignment"]
    label_save(assignment=assignment, question=work["pf"], unit_key="item", value="3", base_version=0,
               actor=annotator)
    label_save(assignment=assignment, question=work["ib"], unit_key="s:1", value="yes", base_version=0,
               actor=annotator)
    rows = statements.lock_open_assignment(assignment.pk, "sentence", "s:1")
    assert {(r[0], r[2]) for r in rows} == {(assignment.status, True)}
    assert sorted((r[5], r[6]) for r in rows) == [("item", "3"), ("s:1", "yes")]
    assert statements.lock_open_assignment(assignment.pk, "sentence", "s:2")[0][2] in (False, 0)  # two sentences
    assert statements.lock_open_assignment(assignment.pk, "item", "s:1")[0][2] in (False, 0)  # wrong scope
    assert statements.lock_open_assignment(assignment.pk, "sentence", f"s:{2**40}")[0][2] in (False, 0)
    assert statements.lock_open_assignment(assignment.pk, "chunk", "c:1")[0][2] in (False, 0)  # no chunks
    factories.make_chunk(work["item"], 1)
    assert statements.lock_open_assignment(assignment.pk, "chunk", "c:1")[0][2] in (True, 1)


def test_the_pool_questions_follow_a_change_made_through_the_pool_on_the_same_object(work):
    pool = work["pool"]
    assert [q.key for q in pool_questions(pool)] == ["ib", "pf"]
    pool.questions.set([work["pf"]])
    assert [q.key for q in pool_questions(pool)] == ["pf"]
    returned = pool_questions(pool)
    returned.clear()  # a caller's list is its own
    assert [q.key for q in pool_questions(pool)] == ["pf"]


def test_a_token_naming_someone_elses_assignment_gets_404_from_the_same_statement(work, annotator, study):
    peer = factories.make_user()
    factories.add_member(work["pool"], peer)
    mine = factories.make_assignment(work["pool"], factories.make_item(study, "i2"), peer)
    client, _ = _token_client(peer)
    url = reverse("api-labels", args=[work["assignment"].pk])
    body = {"question": "pf", "unit_key": "item", "value": "4", "base_version": 0}
    assert client.put(url, body, format="json").status_code == 404
    assert client.get(url).status_code == 404
    assert client.put(reverse("api-labels", args=[2**63]), body, format="json").status_code == 404
    own = reverse("api-labels", args=[mine.pk])
    assert client.put(own, body, format="json").status_code == 200
    # The owner's token reaches it; so does the owner's session (read by the access statement instead).
    owner, _ = _token_client(annotator)
    assert owner.put(url, body, format="json").status_code == 200
    session = APIClient()
    session.force_login(annotator)
    assert session.get(url).status_code == 200
    PoolMembership.objects.filter(user=annotator).update(active=False)
    assert owner.get(url).status_code == 404 and session.get(url).status_code == 404


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements: PostgreSQL")
def test_on_postgresql_the_saves_statements_are_prepared_once_per_connection(work, annotator, settings):
    """After DB_PREPARE_THRESHOLD runs the save's statements run as prepared statements (parsed and planned
    once per connection); Django's own statements are bound on the client and never prepared."""
    client, _ = _token_client(annotator)
    url = reverse("api-labels", args=[work["assignment"].pk])
    threshold = connection.settings_dict["OPTIONS"]["prepare_threshold"]
    assert threshold == 5
    for version in range(threshold + 2):
        body = {"question": "pf", "unit_key": "item", "value": str(1 + version % 5), "base_version": version}
        assert client.put(url, body, format="json").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    tables = {"authtoken_token": "the token", "annotation_labelhistory": "the write", "FOR UPDATE": "the lock"}
    for text, what in tables.items():
        assert any(text in statement for statement in prepared), (what, prepared)


def _history(label):
    return list(LabelHistory.objects.filter(label=label).order_by("id").values_list(
        "old_value", "new_value", "old_version", "new_version"))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement save: PostgreSQL")
def test_the_one_statement_save_writes_the_common_cases_and_nothing_otherwise(work, annotator):
    """statements.save_label_at_once writes a first answer and a next version, with their history rows, exactly as
    the locked save does; it writes nothing (and says so) for every case the locked save must answer."""
    from annotation.models import AssignmentStatus

    assignment, pf = work["assignment"], work["pf"]
    now = timezone.now()

    def at_once(value, base, unit="item", question=pf, scope="item"):
        return statements.save_label_at_once(
            assignment_id=assignment.pk, question_id=question.pk, scope=scope, unit_key=unit, value=value,
            base_version=base, actor_id=annotator.pk, now=now, reserve_until=now + timedelta(minutes=30),
            reserve_if_before=now + timedelta(minutes=5),
        )

    assert at_once("4", 1) is None  # no label at version 1
    assert not Label.objects.exists() and not LabelHistory.objects.exists()
    label_id, version = at_once("4", 0)
    label = Label.objects.get(pk=label_id)
    assert (version, label.value, label.version, label.updated_by_id) == (1, "4", 1, annotator.pk)
    assert _history(label) == [(None, "4", None, 1)]
    assert at_once("5", 0) is None  # a second first answer
    assert at_once("4", 1) is None  # the stored value again: the locked save answers with the stored label
    assert at_once("5", 2) is None  # a version that does not exist yet
    assert at_once("5", 1) == (label_id, 2)
    assert _history(label) == [(None, "4", None, 1), ("4", "5", 1, 2)]
    assert at_once("yes", 0, unit="s:9", question=work["ib"], scope="sentence") is None  # no such sentence
    assert at_once("yes", 0, unit="s:1", question=work["ib"], scope="sentence") is not None
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    assert at_once("3", 2) is None
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SKIPPED)
    assert at_once("3", 2) is None
    assert Label.objects.get(pk=label_id).version == 2 and LabelHistory.objects.count() == 3


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement save: PostgreSQL")
def test_the_one_statement_save_extends_a_reservation_about_to_lapse_and_only_that(work, annotator):
    assignment = work["assignment"]
    client, _ = _token_client(annotator)
    url = reverse("api-labels", args=[assignment.pk])
    soon = timezone.now() + timedelta(minutes=2)
    Assignment.objects.filter(pk=assignment.pk).update(reserved_until=soon)
    assert _put_pf(client, url, "4", 0).status_code == 200
    assignment.refresh_from_db()
    extended = assignment.reserved_until
    assert extended > soon + timedelta(minutes=work["pool"].reservation_minutes - 3)
    assert _put_pf(client, url, "5", 1).status_code == 200
    assignment.refresh_from_db()
    assert assignment.reserved_until == extended  # far from lapsing: untouched


def _save_while_the_assignment_is_locked(study, annotator, save, *, what: str) -> None:
    """Run ``save`` (a save of value "5" on base version 1 of the assignment's "item" label, saved once before as
    "1") in a thread of its own while another transaction holds the assignment's row lock (``FOR UPDATE``); once the
    save waits for that lock (seen on the database, not a clock), the other transaction changes the label to version
    2 ("7") and commits. The save must not write over it: it answers 409 (Conflict) with the value committed
    meanwhile. ``what`` names the save in the failure when it did not wait for the lock."""
    import threading

    import psycopg

    from concord.errors import Conflict

    assignment, pf = factories.one_nominal_assignment(study, annotator)
    label = label_save(assignment=assignment, question=pf, unit_key="item", value="1", base_version=0, actor=annotator)
    s = connection.settings_dict
    conninfo = {"host": s["HOST"], "port": s["PORT"] or 5432, "user": s["USER"], "password": s["PASSWORD"],
                "dbname": s["NAME"]}
    other = psycopg.connect(**conninfo)
    watcher = psycopg.connect(**conninfo, autocommit=True)
    outcome: list[object] = []

    def run() -> None:
        try:
            save(assignment=assignment, question=pf, unit_key="item", value="5", base_version=1, actor=annotator)
            outcome.append("saved")
        except Conflict as exc:
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    try:
        other.execute("SELECT 1 FROM annotation_assignment WHERE id = %s FOR UPDATE", [assignment.pk])
        thread.start()
        # Wait (on the database, not a clock) until the save's statement is blocked by the lock held here; if
        # it never blocks, its thread ends instead (and the assertion below fails).
        blocked = [other.info.backend_pid]
        waiting = 0
        while not waiting and thread.is_alive():
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", blocked
            ).fetchone()[0]
        assert waiting == 1, f"{what} did not wait for the assignment's lock"
        other.execute("UPDATE annotation_label SET value = %s, version = 2 WHERE id = %s", ['"7"', label.pk])
        other.commit()
    finally:
        other.close()
        watcher.close()
        thread.join()
    assert isinstance(outcome[0], Conflict), outcome
    assert outcome[0].details["value"] == "7" and outcome[0].details["version"] == 2
    stored = Label.objects.get()
    assert (stored.value, stored.version) == ("7", 2)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement save: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_a_save_that_waited_for_the_lock_never_overwrites_the_version_committed_meanwhile(study, annotator):
    """The one-statement save reads the label in its snapshot, taken before it waits for the assignment's
    lock. Another transaction holds that lock, the save starts and waits, the other changes the label to a
    new version and commits: the save must not write over it (the updated row's version is checked again)
    but answer 409 with the newer value, through the locked save."""
    _save_while_the_assignment_is_locked(study, annotator, label_save, what="the save")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_the_pages_save_waits_for_the_assignments_lock_and_answers_from_the_label_committed_meanwhile(
    study, annotator
):
    """The item page's save (the locked save) locks the assignment row first (``FOR UPDATE``), so it waits for a
    transaction that holds it (a submit, another save). When that transaction changed the label and commits,
    the page's save must not write over the new version: it answers 409 with the value committed meanwhile."""
    from annotation.labels import label_save_in_unit

    _save_while_the_assignment_is_locked(study, annotator, label_save_in_unit, what="the page's save")


def test_an_update_builds_its_statement_when_it_is_the_first_write_of_the_process(work, annotator, monkeypatch):
    """The statements are built on first use and kept per process: an update before any insert (a worker whose
    first save changes an answer imported earlier) builds them itself."""
    label = Label.objects.create(assignment=work["assignment"], question=work["pf"], unit_key="item", value="4",
                                 version=1, updated_by=annotator, updated_at=timezone.now())
    monkeypatch.setattr(statements, "_cache", {})
    assert statements.update_label_and_history(label, "5", annotator.pk, timezone.now()) is True
    assert Label.objects.get(pk=label.pk).value == "5" and LabelHistory.objects.get(label=label).new_value == "5"
