"""Saving answers: validation, versions, history, conflicts, conditions, submission."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.labels import label_save, label_save_in_unit, statements
from annotation.labels.access import WITHDRAWN_REFUSAL
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Label,
    LabelHistory,
    Sentence,
)
from annotation.segmentation import split_sentences
from annotation.services import (
    MAX_ACTIVE_SECONDS_PER_BEAT,
    MAX_ASPECT_TEXT,
    MAX_SKIP_REASON,
    aspect_propose,
    assignment_skip,
    assignment_submit,
    assignment_time_record,
)
from concord.errors import Conflict, Forbidden, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


CALLS: list[dict] = []


def record_submission(sender, *, pool_id, item_id, **kwargs):
    CALLS.append({"sender": sender, "pool_id": pool_id, "item_id": item_id})


def explode(sender, **kwargs):
    raise RuntimeError("receiver failed")


@pytest.fixture
def setup(study, annotator):
    item = factories.make_item(study, answer="Take 0.5 mg daily. I hope this helps!")
    factories.make_chunk(item, 1)
    ib = factories.make_question(study, "information_bearing", scope="sentence", order=1)
    grounded = factories.make_question(
        study,
        "grounded",
        scope="sentence",
        kind="nominal",
        order=2,
        options=[
            {"value": v, "label": v, "key": str(n)}
            for n, v in enumerate(["supported", "unsupported", "contradicted"], 1)
        ],
        condition={"question": "information_bearing", "in": ["yes"]},
    )
    pf = factories.make_question(
        study,
        "pf",
        kind="ordinal",
        order=3,
        options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)],
    )
    note = factories.make_question(study, "note", kind="text", required=False, order=4)
    pool = factories.make_pool(study, questions=[ib, grounded, pf, note])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {
        "assignment": assignment,
        "ib": ib,
        "grounded": grounded,
        "pf": pf,
        "note": note,
        "pool": pool,
        "item": item,
    }


def save(setup, annotator, q, unit, value, base=0):
    return label_save(
        assignment=setup["assignment"],
        question=setup[q],
        unit_key=unit,
        value=value,
        base_version=base,
        actor=annotator,
    )


def test_a_first_save_creates_version_one_with_history(setup, annotator):
    label = save(setup, annotator, "pf", "item", "4")
    assert (label.value, label.version) == ("4", 1)
    history = list(LabelHistory.objects.filter(label=label))
    assert [(h.old_value, h.new_value, h.new_version) for h in history] == [(None, "4", 1)]


def test_each_change_bumps_the_version_and_appends_history(setup, annotator):
    save(setup, annotator, "pf", "item", "4")
    label = save(setup, annotator, "pf", "item", "2", base=1)
    assert label.version == 2
    assert list(LabelHistory.objects.filter(label=label).values_list("old_value", "new_value")) == [
        (None, "4"),
        ("4", "2"),
    ]


def test_a_save_based_on_an_old_version_is_a_conflict_with_the_newer_value(setup, annotator):
    save(setup, annotator, "pf", "item", "4")
    save(setup, annotator, "pf", "item", "5", base=1)
    with pytest.raises(Conflict) as caught:
        save(setup, annotator, "pf", "item", "1", base=1)
    details = caught.value.details
    assert details["value"] == "5" and details["version"] == 2
    assert details["updated_by"] == "you" and details["updated_at"]  # the annotator's own save; never a username
    assert details["your_value"] == "1"
    assert Label.objects.get().value == "5"


def test_creating_a_label_that_already_exists_is_a_conflict(setup, annotator):
    save(setup, annotator, "pf", "item", "4")
    with pytest.raises(Conflict):
        save(setup, annotator, "pf", "item", "3", base=0)


def test_retrying_a_save_that_already_happened_is_not_a_conflict(setup, annotator):
    save(setup, annotator, "pf", "item", "4")
    again = save(setup, annotator, "pf", "item", "4", base=0)
    assert again.version == 1
    assert LabelHistory.objects.count() == 1


@pytest.mark.parametrize(
    ("q", "unit", "value", "message"),
    [
        ("pf", "item", "9", "not an option"),
        ("pf", "s:0", "4", "no item"),
        ("information_bearing", "s:99", "yes", "no sentence"),
        ("information_bearing", "c:1", "yes", "no sentence"),
        ("pf", "item", ["4"], "expected one of"),
        ("pf", "item", True, "expected one of"),
        ("note", "item", "x" * 10_001, "longer than"),
    ],
)
def test_invalid_values_are_refused_and_nothing_is_stored(setup, annotator, q, unit, value, message):
    setup["information_bearing"] = setup["ib"]
    with pytest.raises(ValidationFailed, match=message):
        save(setup, annotator, q, unit, value)
    assert not Label.objects.exists()


def test_a_question_of_another_pool_is_refused(setup, annotator, study):
    other = factories.make_question(study, "other")
    setup["other"] = other
    with pytest.raises(ValidationFailed, match="not asked in this pool"):
        save(setup, annotator, "other", "item", "yes")


def test_a_conditional_question_cannot_be_answered_while_its_condition_does_not_hold(setup, annotator):
    with pytest.raises(ValidationFailed, match="not asked here"):
        save(setup, annotator, "grounded", "s:0", "supported")
    save(setup, annotator, "ib", "s:0", "yes")
    assert save(setup, annotator, "grounded", "s:0", "supported").value == "supported"


def test_turning_a_condition_off_clears_the_dependent_answer_with_history(setup, annotator):
    save(setup, annotator, "ib", "s:0", "yes")
    save(setup, annotator, "grounded", "s:0", "supported")
    save(setup, annotator, "ib", "s:0", "no", base=1)
    grounded = Label.objects.get(question=setup["grounded"], unit_key="s:0")
    assert grounded.value is None and grounded.version == 2
    assert list(grounded.history.values_list("new_value", flat=True)) == ["supported", None]


def test_someone_else_cannot_save_into_my_assignment(setup, stranger):
    with pytest.raises(Forbidden):
        save(setup, stranger, "pf", "item", "4")


def test_submit_lists_the_missing_required_answers_respecting_conditions(setup, annotator, no_submit_receivers):
    save(setup, annotator, "ib", "s:0", "yes")
    save(setup, annotator, "ib", "s:1", "no")
    with pytest.raises(ValidationFailed) as caught:
        assignment_submit(assignment=setup["assignment"], actor=annotator)
    missing = {(m["question"], m["unit_key"]) for m in caught.value.details}
    # grounded is required only for the information-bearing sentence; note is optional.
    assert missing == {("grounded", "s:0"), ("pf", "item")}
    setup["assignment"].refresh_from_db()
    assert setup["assignment"].status != AssignmentStatus.SUBMITTED


def test_submit_counts_the_missing_answers_and_asks_an_alignment_only_where_there_is_a_source(
    study, annotator, no_submit_receivers
):
    pf = factories.make_question(study, "pf", prompt="Is it correct?", order=1)
    where = factories.make_question(
        study, "where", kind="alignment", scope="sentence", options=[], prompt="Where in the source?", order=2
    )
    pool = factories.make_pool(study, questions=[pf, where])
    factories.add_member(pool, annotator)
    sourced = factories.make_item(study, answer="Take 0.5 mg daily.", source="Aspirin thins blood. Doses vary.")
    Sentence.objects.bulk_create(
        Sentence(item=sourced, part="source", index=i, text=s.text, start=s.start, end=s.end)
        for i, s in enumerate(split_sentences(sourced.source))
    )
    assignment = factories.make_assignment(pool, sourced, annotator)
    with pytest.raises(ValidationFailed) as caught:
        assignment_submit(assignment=assignment, actor=annotator)
    assert caught.value.message == "2 required answers missing."
    assert caught.value.details == [
        {"question": "pf", "unit_key": "item", "prompt": "Is it correct?", "unit": "the answer as a whole"},
        {"question": "where", "unit_key": "s:0", "prompt": "Where in the source?", "unit": "sentence 1"},
    ]
    label_save(assignment=assignment, question=pf, unit_key="item", value="yes", base_version=0, actor=annotator)
    with pytest.raises(ValidationFailed) as caught:
        assignment_submit(assignment=assignment, actor=annotator)
    assert caught.value.message == "1 required answer missing."
    assert [(m["question"], m["unit_key"]) for m in caught.value.details] == [("where", "s:0")]
    # Without a source document there is nothing to align to: the alignment is not asked.
    unsourced = factories.make_assignment(pool, factories.make_item(study, answer="Take 0.5 mg daily."), annotator)
    label_save(assignment=unsourced, question=pf, unit_key="item", value="no", base_version=0, actor=annotator)
    assert assignment_submit(assignment=unsourced, actor=annotator).status == AssignmentStatus.SUBMITTED


def test_a_skipped_or_withdrawn_item_cannot_be_submitted(setup, annotator, no_submit_receivers):
    assignment = setup["assignment"]
    save(setup, annotator, "pf", "item", "5")
    for status, message in (
        (AssignmentStatus.SKIPPED, "This item was skipped and cannot be submitted."),
        (AssignmentStatus.WITHDRAWN, WITHDRAWN_REFUSAL),
    ):
        Assignment.objects.filter(pk=assignment.pk).update(status=status)
        with pytest.raises(ValidationFailed) as caught:
            assignment_submit(assignment=assignment, actor=annotator)
        assert caught.value.message == message
        assert Assignment.objects.get(pk=assignment.pk).status == status


def test_submit_is_idempotent_and_sends_assignment_submitted_once(setup, annotator, submit_receivers):
    submit_receivers(record_submission)
    CALLS.clear()
    save(setup, annotator, "ib", "s:0", "no")
    save(setup, annotator, "ib", "s:1", "no")
    save(setup, annotator, "pf", "item", "5")
    first = assignment_submit(assignment=setup["assignment"], actor=annotator)
    second = assignment_submit(assignment=setup["assignment"], actor=annotator)
    assert first.status == second.status == AssignmentStatus.SUBMITTED
    assert first.submitted_at == second.submitted_at
    assert [{"sender": Assignment, "pool_id": setup["pool"].pk, "item_id": setup["item"].pk}] == CALLS
    with pytest.raises(ValidationFailed, match="submitted"):
        save(setup, annotator, "pf", "item", "1", base=1)


def test_a_failing_receiver_rolls_the_submission_back(setup, annotator, submit_receivers):
    submit_receivers(explode)
    setup["pool"].questions.set([setup["pf"]])
    save(setup, annotator, "pf", "item", "5")
    with pytest.raises(RuntimeError):
        assignment_submit(assignment=setup["assignment"], actor=annotator)
    setup["assignment"].refresh_from_db()
    assert setup["assignment"].status != AssignmentStatus.SUBMITTED


def test_skip_needs_a_reason_and_closes_the_item(setup, annotator):
    with pytest.raises(ValidationFailed):
        assignment_skip(assignment=setup["assignment"], actor=annotator, reason="  ")
    skipped = assignment_skip(assignment=setup["assignment"], actor=annotator, reason="outside my field")
    assert skipped.status == AssignmentStatus.SKIPPED and skipped.skip_reason == "outside my field"
    with pytest.raises(ValidationFailed):
        save(setup, annotator, "pf", "item", "4")


def test_active_time_is_clamped_to_sane_bounds(setup, annotator):
    assert assignment_time_record(assignment=setup["assignment"], actor=annotator, seconds=12.5) == 12.5
    assert (
        assignment_time_record(assignment=setup["assignment"], actor=annotator, seconds=10_000)
        == MAX_ACTIVE_SECONDS_PER_BEAT
    )
    assert assignment_time_record(assignment=setup["assignment"], actor=annotator, seconds=-50) == 0
    setup["assignment"].refresh_from_db()
    assert setup["assignment"].active_seconds == 12.5 + MAX_ACTIVE_SECONDS_PER_BEAT


def test_a_proposed_aspect_waits_for_a_second_person(setup, annotator):
    aspect = aspect_propose(
        assignment=setup["assignment"], actor=annotator, text="Mentions renal dosing", importance="must_have"
    )
    assert (aspect.origin, aspect.status, aspect.proposed_by) == (
        AspectOrigin.PROPOSED,
        AspectStatus.PROPOSED,
        annotator,
    )
    with pytest.raises(ValidationFailed):
        aspect_propose(assignment=setup["assignment"], actor=annotator, text="x", importance="essential")
    assert Aspect.objects.count() == 1


def test_skipping_refuses_a_missing_or_overlong_reason_and_a_closed_item_with_what_the_annotator_is_told(
    setup, annotator, no_submit_receivers
):
    assignment = setup["assignment"]
    with pytest.raises(ValidationFailed) as caught:
        assignment_skip(assignment=assignment, actor=annotator, reason=None)
    assert caught.value.message == "Say why you skip this item."
    with pytest.raises(ValidationFailed) as caught:
        assignment_skip(assignment=assignment, actor=annotator, reason="x" * (MAX_SKIP_REASON + 1))
    assert caught.value.message == f"The reason is longer than {MAX_SKIP_REASON} characters."
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    with pytest.raises(ValidationFailed) as caught:
        assignment_skip(assignment=assignment, actor=annotator, reason="outside my field")
    assert caught.value.message == "This item is already submitted."
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.WITHDRAWN)
    with pytest.raises(ValidationFailed) as caught:
        assignment_skip(assignment=assignment, actor=annotator, reason="outside my field")
    assert caught.value.message == WITHDRAWN_REFUSAL
    assignment.refresh_from_db()
    assert (assignment.status, assignment.skip_reason) == (AssignmentStatus.WITHDRAWN, "")


def test_a_skip_reason_of_the_full_length_is_kept_whole(setup, annotator):
    reason = "r" * MAX_SKIP_REASON
    skipped = assignment_skip(assignment=setup["assignment"], actor=annotator, reason=f"  {reason} ")
    assert skipped.skip_reason == reason
    assert Assignment.objects.get(pk=skipped.pk).skip_reason == reason


@pytest.mark.parametrize(
    ("seconds", "reason"), [("ten", "not a number"), (None, "absent"), (10**400, "too large"), (float("nan"), "NaN")]
)
def test_active_time_that_is_not_a_number_is_refused(setup, annotator, seconds, reason):
    with pytest.raises(ValidationFailed) as caught:
        assignment_time_record(assignment=setup["assignment"], actor=annotator, seconds=seconds)
    assert caught.value.message == "seconds must be a number", reason
    setup["assignment"].refresh_from_db()
    assert setup["assignment"].active_seconds == 0


def test_active_time_counts_only_on_this_open_assignment(setup, annotator, study, no_submit_receivers):
    assignment = setup["assignment"]
    other = factories.make_assignment(setup["pool"], factories.make_item(study), factories.make_user())
    assert assignment_time_record(assignment=assignment, actor=annotator, seconds=30) == 30
    other.refresh_from_db()
    assert other.active_seconds == 0, "another annotator's assignment got my time"
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    assert assignment_time_record(assignment=assignment, actor=annotator, seconds=20) == 0
    assignment.refresh_from_db()
    assert assignment.active_seconds == 30, "time was added to a submitted item"


def test_an_aspect_proposal_is_refused_with_what_the_annotator_is_told(setup, annotator):
    assignment = setup["assignment"]
    refusals = [
        ({"text": None, "importance": "must_have"}, "Describe the missing aspect."),
        ({"text": "   ", "importance": "must_have"}, "Describe the missing aspect."),
        (
            {"text": "x" * (MAX_ASPECT_TEXT + 1), "importance": "must_have"},
            f"The aspect is longer than {MAX_ASPECT_TEXT} characters.",
        ),
        (
            {"text": "Mentions renal dosing", "importance": "essential"},
            "Importance must be one of must_have, nice_to_have.",
        ),
    ]
    for kwargs, message in refusals:
        with pytest.raises(ValidationFailed) as caught:
            aspect_propose(assignment=assignment, actor=annotator, **kwargs)
        assert caught.value.message == message
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SKIPPED)
    assignment.refresh_from_db()
    with pytest.raises(ValidationFailed) as caught:
        aspect_propose(assignment=assignment, actor=annotator, text="Mentions renal dosing", importance="must_have")
    assert caught.value.message == "This item is closed; aspects can be proposed while it is open."
    assert not Aspect.objects.exists()


def test_a_proposed_aspect_keeps_its_importance_and_full_length_text(setup, annotator):
    text = "a" * MAX_ASPECT_TEXT
    aspect = aspect_propose(assignment=setup["assignment"], actor=annotator, text=text, importance="nice_to_have")
    aspect.refresh_from_db()
    assert (aspect.text, aspect.importance, aspect.item_id) == (text, "nice_to_have", setup["item"].pk)


def test_proposing_the_same_aspect_again_returns_mine_but_not_anothers_or_another_items(setup, annotator, study):
    assignment = setup["assignment"]
    mine = aspect_propose(assignment=assignment, actor=annotator, text="Mentions renal dosing", importance="must_have")
    again = aspect_propose(
        assignment=assignment, actor=annotator, text=" mentions RENAL dosing ", importance="must_have"
    )
    assert again.pk == mine.pk
    different = aspect_propose(
        assignment=assignment, actor=annotator, text="Mentions liver dosing", importance="must_have"
    )
    assert different.pk != mine.pk
    # The same words from a pool-mate on this item, or from me on another item, are proposals of their own.
    mate = factories.make_user("mate")
    factories.add_member(setup["pool"], mate)
    theirs = factories.make_assignment(setup["pool"], setup["item"], mate)
    from_mate = aspect_propose(assignment=theirs, actor=mate, text="Mentions renal dosing", importance="must_have")
    assert from_mate.pk != mine.pk and from_mate.proposed_by == mate
    elsewhere = factories.make_assignment(setup["pool"], factories.make_item(study), annotator)
    on_other_item = aspect_propose(
        assignment=elsewhere, actor=annotator, text="Mentions renal dosing", importance="must_have"
    )
    assert on_other_item.pk != mine.pk and on_other_item.item_id == elsewhere.item_id
    assert Aspect.objects.count() == 4


def _six_concurrent_saves(assignment, question, annotator, base_version: int) -> list[str]:
    """Six threads with their own connections save different values on one unit from the same base version
    at once; returns each one's outcome ("won" or "conflict")."""
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def worker(n: int) -> None:
        try:
            barrier.wait()
            label_save(
                assignment=assignment, question=question, unit_key="item", value=str(n + 2),
                base_version=base_version, actor=annotator,
            )
            outcomes.append("won")
        except Conflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_saves_on_one_version_never_both_win(study, annotator):
    """Runs real threads with their own connections; on PostgreSQL the row lock decides, on SQLite
    the IMMEDIATE transaction does. Either way exactly one save wins."""
    assignment, pf = factories.one_nominal_assignment(study, annotator)
    label_save(assignment=assignment, question=pf, unit_key="item", value="1", base_version=0, actor=annotator)
    outcomes = _six_concurrent_saves(assignment, pf, annotator, base_version=1)
    assert outcomes.count("won") == 1 and outcomes.count("conflict") == 5
    label = Label.objects.get()
    assert label.version == 2
    assert label.history.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_first_answers_to_one_unit_store_one_label_and_one_history_row(study, annotator):
    """Real threads with their own connections, each the first answer (base version 0) to the same unit: the
    lock and the unique constraint let exactly one win; the others get a 409 (a different value) — on
    PostgreSQL through the one-statement save, on SQLite through the locked save."""
    assignment, pf = factories.one_nominal_assignment(study, annotator)
    outcomes = _six_concurrent_saves(assignment, pf, annotator, base_version=0)
    assert sorted(outcomes) == ["conflict"] * 5 + ["won"]
    label = Label.objects.get()
    assert label.version == 1 and label.history.count() == 1


def test_submitting_the_last_assignment_of_an_item_hands_it_to_adjudication(study):
    """With adjudication's receivers of assignment_submitted, as the apps connect them when they load: two
    annotators disagree on one answer, so a case opens."""
    from adjudication.models import AdjudicationCase
    from annotation.services import pool_assign_items

    pf = factories.make_question(study, "pf")
    factories.make_item(study)
    pool = factories.make_pool(study, questions=[pf], overlap=2)
    first, second = factories.make_user(), factories.make_user()
    factories.add_member(pool, first)
    factories.add_member(pool, second)
    pool_assign_items(pool=pool)
    for user, value in ((first, "yes"), (second, "no")):
        assignment = pool.assignments.get(annotator=user)
        label_save(assignment=assignment, question=pf, unit_key="item", value=value, base_version=0, actor=user)
        assignment_submit(assignment=assignment, actor=user)
    assert AdjudicationCase.objects.filter(pool=pool).count() == 1


# --- Working on an item keeps it reserved -------------------------------------------------------------


# (question, unit, first value, second value, service): the plain question saved by label_save takes the
# one-statement save on PostgreSQL and the locked save on SQLite; the same through the page's save
# (label_save_in_unit), and a question that a condition involves, take the locked save on both.
RESERVING_SAVES = {
    "plain question": ("pf", "item", "3", "4", label_save),
    "plain question, from the page": ("pf", "item", "3", "4", label_save_in_unit),
    "question a condition involves": ("ib", "s:0", "yes", "no", label_save),
}


@pytest.mark.parametrize("case", RESERVING_SAVES)
def test_a_save_extends_a_reservation_about_to_lapse_and_leaves_a_distant_one_alone(setup, annotator, monkeypatch,
                                                                                   case):
    key, unit, first, second, service = RESERVING_SAVES[case]
    calls = {"at_once": [], "locked": 0}
    at_once, locked = statements.save_label_at_once, statements.lock_open_assignment

    def spy_at_once(**kwargs):
        calls["at_once"].append(at_once(**kwargs))
        return calls["at_once"][-1]

    def spy_locked(*args, **kwargs):
        calls["locked"] += 1
        return locked(*args, **kwargs)

    monkeypatch.setattr(statements, "save_label_at_once", spy_at_once)
    monkeypatch.setattr(statements, "lock_open_assignment", spy_locked)
    pool, assignment = setup["pool"], setup["assignment"]
    pool.reservation_minutes = 45
    pool.save()
    assignment.refresh_from_db()
    now = timezone.now().replace(microsecond=0)

    def saved(value, base, reserved_until):
        Assignment.objects.filter(pk=assignment.pk).update(reserved_until=reserved_until)
        service(assignment=assignment, question=setup[key], unit_key=unit, value=value, base_version=base,
                actor=annotator, now=now)
        return Assignment.objects.get(pk=assignment.pk).reserved_until

    assert saved(first, 0, now + timedelta(minutes=4)) == now + timedelta(minutes=45)  # about to lapse: extended
    assert saved(second, 1, now + timedelta(minutes=6)) == now + timedelta(minutes=6)  # not yet: untouched
    assert Label.objects.get(question=setup[key], unit_key=unit).version == 2
    one_statement = connection.vendor == "postgresql" and case == "plain question"
    assert (len(calls["at_once"]) == 2 and None not in calls["at_once"]) if one_statement else not calls["at_once"]
    assert calls["locked"] == (0 if one_statement else 2)
