"""The label save's cases one by one, called as the API and the item page call it (annotation/labels/save.py):
what the saved label and the unit's labels returned hold, repeats and stale or forged versions, the refusals
of a closed or vanished assignment and of an invalid value, clearing a conditional answer, and the edge of
the reservation's extension."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.labels import label_save, label_save_in_unit
from annotation.labels.access import WITHDRAWN_REFUSAL
from annotation.models import Assignment, AssignmentStatus, Label, LabelHistory
from concord.errors import Conflict, NotFound, ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(study, annotator):
    item = factories.make_item(study, answer="Take 0.5 mg daily. I hope this helps!")
    ib = factories.make_question(study, "ib", scope="sentence", order=1)
    grounded = factories.make_question(
        study,
        "grounded",
        scope="sentence",
        kind="nominal",
        order=2,
        prompt="Grounded?",
        options=[{"value": v, "label": v, "key": str(n)} for n, v in enumerate(["supported", "unsupported"], 1)],
        condition={"question": "ib", "in": ["yes"]},
    )
    pf = factories.make_question(
        study,
        "pf",
        kind="ordinal",
        order=3,
        prompt="Faithfulness",
        options=[{"value": str(n), "label": str(n), "key": str(n)} for n in range(1, 6)],
    )
    pool = factories.make_pool(study, questions=[ib, grounded, pf], reservation_minutes=30)
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"assignment": assignment, "ib": ib, "grounded": grounded, "pf": pf, "pool": pool}


def _save(work, annotator, key, unit, value, base=0, now=None, service=label_save):
    return service(
        assignment=work["assignment"],
        question=work[key],
        unit_key=unit,
        value=value,
        base_version=base,
        actor=annotator,
        now=now,
    )


def test_the_saved_label_is_the_stored_one_at_each_version(work, annotator):
    now = timezone.now()
    first = _save(work, annotator, "pf", "item", "4", base=None, now=now)  # no base version: there was no label
    stored = Label.objects.get()
    assert (first.pk, first.value, first.version, first.updated_by_id, first.updated_at) == (
        stored.pk,
        "4",
        1,
        annotator.pk,
        now,
    )
    later = now + timedelta(minutes=3)
    second = _save(work, annotator, "pf", "item", "2", base=1, now=later)
    stored.refresh_from_db()
    assert (second.pk, second.value, second.version, second.updated_by_id, second.updated_at) == (
        stored.pk,
        "2",
        2,
        annotator.pk,
        later,
    )
    assert (stored.value, stored.version, stored.updated_at) == ("2", 2, later)


def test_a_save_without_a_time_is_stamped_now(work, annotator):
    before = timezone.now()
    label = _save(work, annotator, "pf", "item", "4")
    assert before <= label.updated_at <= timezone.now()
    assert Label.objects.get().updated_at == label.updated_at


def test_a_repeat_of_the_stored_value_at_its_version_adds_nothing(work, annotator):
    now = timezone.now()
    _save(work, annotator, "pf", "item", "4", now=now)
    again = _save(work, annotator, "pf", "item", "4", base=1, now=now + timedelta(minutes=1))
    assert (again.version, again.updated_at) == (1, now)
    assert LabelHistory.objects.count() == 1


def test_the_stored_value_sent_with_a_version_that_never_existed_is_a_conflict(work, annotator):
    _save(work, annotator, "pf", "item", "4")
    with pytest.raises(Conflict) as caught:
        _save(work, annotator, "pf", "item", "4", base=2)
    assert (caught.value.details["value"], caught.value.details["version"]) == ("4", 1)
    assert Label.objects.get().version == 1 and LabelHistory.objects.count() == 1


def test_a_version_seen_of_an_answer_that_does_not_exist_is_a_conflict(work, annotator):
    with pytest.raises(Conflict) as caught:
        _save(work, annotator, "pf", "item", "4", base=3)
    assert caught.value.message == "This answer does not exist at the version you saw."
    details = caught.value.details
    assert (details["value"], details["version"], details["your_value"], details["unit_key"]) == (None, 0, "4", "item")
    assert not Label.objects.exists()


def test_an_invalid_value_is_refused_naming_the_question_and_unit(work, annotator):
    with pytest.raises(ValidationFailed, match=r"^Faithfulness: ") as caught:
        _save(work, annotator, "pf", "item", "9")
    assert caught.value.details == {"question": "pf", "unit_key": "item"}


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (AssignmentStatus.SUBMITTED, "This item is submitted; its answers can no longer change."),
        (AssignmentStatus.SKIPPED, "This item was skipped; its answers can no longer change."),
        (AssignmentStatus.WITHDRAWN, WITHDRAWN_REFUSAL),
    ],
)
@pytest.mark.parametrize("service", [label_save, label_save_in_unit])
def test_a_closed_item_refuses_every_save_saying_why(work, annotator, status, message, service):
    Assignment.objects.filter(pk=work["assignment"].pk).update(status=status)
    for key, unit in (("pf", "item"), ("ib", "s:0")):
        with pytest.raises(ValidationFailed) as caught:
            _save(work, annotator, key, unit, "yes" if key == "ib" else "4", service=service)
        assert caught.value.message == message
    assert not Label.objects.exists()


def test_an_assignment_deleted_meanwhile_is_not_found(work, annotator):
    assignment = work["assignment"]
    Assignment.objects.filter(pk=assignment.pk).delete()
    for service in (label_save, label_save_in_unit):
        with pytest.raises(NotFound) as caught:
            _save(work, annotator, "pf", "item", "4", service=service)
        assert caught.value.message == "No such assignment."
    assert not Label.objects.exists()


def test_the_page_save_returns_the_unit_and_item_labels_as_they_are_after_it(work, annotator):
    now = timezone.now()
    _save(work, annotator, "pf", "item", "3", now=now - timedelta(minutes=2))
    _save(work, annotator, "ib", "s:1", "no", now=now - timedelta(minutes=2))
    _save(work, annotator, "ib", "s:0", "yes", now=now - timedelta(minutes=1))
    saved = _save(work, annotator, "grounded", "s:0", "supported", now=now, service=label_save_in_unit)
    got = {
        (q, u): (lb.pk, lb.value, lb.version, lb.updated_by_id, lb.updated_at)
        for (q, u), lb in saved.unit_labels.items()
    }
    expected = {
        (lb.question_id, lb.unit_key): (lb.pk, lb.value, lb.version, lb.updated_by_id, lb.updated_at)
        for lb in Label.objects.exclude(unit_key="s:1")
    }
    assert got == expected and len(got) == 3  # this unit's two labels and the item's, not sentence 1's
    assert saved.label.value == "supported" and saved.unit_labels[(work["grounded"].pk, "s:0")] is saved.label
    # Turning the condition off clears the dependent answer; the unit's labels say so.
    turned = _save(work, annotator, "ib", "s:0", "no", base=1, now=now, service=label_save_in_unit)
    cleared = turned.unit_labels[(work["grounded"].pk, "s:0")]
    assert (cleared.value, cleared.version) == (None, 2)
    assert turned.unit_labels[(work["ib"].pk, "s:0")].value == "no"


def test_a_cleared_conditional_answer_may_be_cleared_again_while_its_condition_is_off(work, annotator):
    _save(work, annotator, "ib", "s:0", "yes")
    _save(work, annotator, "grounded", "s:0", "supported")
    _save(work, annotator, "ib", "s:0", "no", base=1)
    cleared = _save(work, annotator, "grounded", "s:0", None, base=2)
    assert (cleared.value, cleared.version) == (None, 2)
    with pytest.raises(ValidationFailed) as caught:
        _save(work, annotator, "grounded", "s:0", "supported", base=2)
    assert caught.value.message == "Grounded?: not asked here given the other answers."


@pytest.mark.parametrize("key, unit, first", [("pf", "item", "4"), ("ib", "s:0", "yes")])
def test_a_reservation_exactly_five_minutes_from_its_end_is_left_alone_and_none_is_kept(
    work, annotator, key, unit, first
):
    assignment = work["assignment"]
    now = timezone.now().replace(microsecond=0)
    Assignment.objects.filter(pk=assignment.pk).update(reserved_until=now + timedelta(minutes=5))
    _save(work, annotator, key, unit, first, now=now)
    assert Assignment.objects.get(pk=assignment.pk).reserved_until == now + timedelta(minutes=5)
    Assignment.objects.filter(pk=assignment.pk).update(reserved_until=None)
    _save(work, annotator, key, unit, None, base=1, now=now)
    assert Assignment.objects.get(pk=assignment.pk).reserved_until is None
    Assignment.objects.filter(pk=assignment.pk).update(reserved_until=now + timedelta(minutes=5) - timedelta(seconds=1))
    _save(work, annotator, key, unit, first, base=2, now=now)
    assert Assignment.objects.get(pk=assignment.pk).reserved_until == now + timedelta(minutes=30)


def test_a_repeat_or_a_stale_save_answers_from_the_annotators_own_label_of_that_question_and_unit(
    work, annotator, study
):
    """Beside the label saved: the same question at another unit, another question at the same unit, and a
    colleague's label of the same question and unit (another assignment of the same item)."""
    colleague = factories.make_user()
    factories.add_member(work["pool"], colleague)
    theirs = factories.make_assignment(work["pool"], work["assignment"].item, colleague)
    label_save(assignment=theirs, question=work["ib"], unit_key="s:0", value="no", base_version=0, actor=colleague)
    _save(work, annotator, "ib", "s:1", "no")
    _save(work, annotator, "grounded", "s:0", None)
    mine = _save(work, annotator, "ib", "s:0", "yes")
    again = _save(work, annotator, "ib", "s:0", "yes", base=1)
    assert (again.pk, again.value, again.version) == (mine.pk, "yes", 1)
    with pytest.raises(Conflict) as caught:
        _save(work, annotator, "ib", "s:0", "no", base=0)
    assert caught.value.message == "This answer was changed since you loaded it."
    assert (caught.value.details["value"], caught.value.details["version"]) == ("yes", 1)
    assert caught.value.details["updated_by"] == "you"
    assert (caught.value.details["question"], caught.value.details["unit_key"]) == ("ib", "s:0")


def test_a_unit_the_item_lacks_and_a_question_the_pool_does_not_ask_are_refused_saying_so(work, annotator, study):
    with pytest.raises(ValidationFailed) as caught:
        _save(work, annotator, "ib", "s:7", "yes")
    assert caught.value.message == "There is no sentence 's:7' in this item."
    work["other"] = factories.make_question(study, "other")
    with pytest.raises(ValidationFailed) as caught:
        _save(work, annotator, "other", "item", "yes")
    assert caught.value.message == "Question 'other' is not asked in this pool."
    assert not Label.objects.exists()


def test_saving_the_gate_answer_again_keeps_the_dependent_answer(work, annotator):
    _save(work, annotator, "ib", "s:0", "yes")
    _save(work, annotator, "grounded", "s:0", "supported")
    again = _save(work, annotator, "ib", "s:0", "yes", base=1)
    assert again.version == 1
    grounded = Label.objects.get(question=work["grounded"], unit_key="s:0")
    assert (grounded.value, grounded.version) == ("supported", 1)


def test_turning_a_condition_off_clears_only_that_units_dependent_answer_of_this_annotator(work, annotator):
    colleague = factories.make_user()
    factories.add_member(work["pool"], colleague)
    theirs = factories.make_assignment(work["pool"], work["assignment"].item, colleague)
    for unit in ("s:0", "s:1"):
        _save(work, annotator, "ib", unit, "yes")
        _save(work, annotator, "grounded", unit, "supported")
    label_save(assignment=theirs, question=work["ib"], unit_key="s:0", value="yes", base_version=0, actor=colleague)
    label_save(
        assignment=theirs,
        question=work["grounded"],
        unit_key="s:0",
        value="unsupported",
        base_version=0,
        actor=colleague,
    )
    _save(work, annotator, "ib", "s:0", "no", base=1)
    grounded = {
        (lb.assignment_id, lb.unit_key): (lb.value, lb.version)
        for lb in Label.objects.filter(question=work["grounded"])
    }
    assert grounded == {
        (work["assignment"].pk, "s:0"): (None, 2),
        (work["assignment"].pk, "s:1"): ("supported", 1),
        (theirs.pk, "s:0"): ("unsupported", 1),
    }


def test_an_answer_to_a_question_no_longer_asked_does_not_disturb_a_conditional_save(work, annotator):
    _save(work, annotator, "pf", "item", "4")
    work["pool"].questions.remove(work["pf"])
    _save(work, annotator, "ib", "s:0", "yes")
    assert _save(work, annotator, "grounded", "s:0", "supported").value == "supported"
    _save(work, annotator, "ib", "s:0", "no", base=1)
    assert Label.objects.get(question=work["grounded"]).value is None


def test_the_reservation_extended_is_only_this_assignments(work, annotator, study):
    colleague = factories.make_user()
    factories.add_member(work["pool"], colleague)
    theirs = factories.make_assignment(work["pool"], work["assignment"].item, colleague)
    now = timezone.now().replace(microsecond=0)
    Assignment.objects.update(reserved_until=now + timedelta(minutes=1))
    _save(work, annotator, "ib", "s:0", "yes", now=now)  # a question a condition involves: the locked save
    assert Assignment.objects.get(pk=work["assignment"].pk).reserved_until == now + timedelta(minutes=30)
    assert Assignment.objects.get(pk=theirs.pk).reserved_until == now + timedelta(minutes=1)


# --- Writes that race (faults injected at the statements): what PostgreSQL's concurrency can produce ---------


def test_a_save_never_answers_from_a_stale_first_guess(work, annotator, monkeypatch):
    """On PostgreSQL the lock's statement may read the label as it was before the lock was granted (another
    save committed meanwhile). Here the lock reads the label one version behind the stored one: a repeat of
    the old value, or a change based on it, must be answered from the label as it is now (409), never from the
    guess."""
    from annotation.labels import statements

    _save(work, annotator, "pf", "item", "4")
    _save(work, annotator, "pf", "item", "5", base=1)
    lock = statements.lock_open_assignment

    def one_version_behind(*args, **kwargs):
        rows = lock(*args, **kwargs)
        return [(*row[:6], "4", 1, *row[8:]) if row[5] == "item" else row for row in rows]

    monkeypatch.setattr(statements, "lock_open_assignment", one_version_behind)
    for value, base in (("4", 1), ("3", 1), ("3", 0)):
        with pytest.raises(Conflict) as caught:
            _save(work, annotator, "pf", "item", value, base=base)
        assert (caught.value.details["value"], caught.value.details["version"]) == ("5", 2)
    stored = Label.objects.get()
    assert (stored.value, stored.version) == ("5", 2) and LabelHistory.objects.count() == 2


def test_a_change_the_database_did_not_write_is_refused_not_reported_saved(work, annotator, monkeypatch):
    """Should the conditional UPDATE ever match no row even under the lock, the locked save (the item page's)
    refuses with a 409 that carries the stored answer, rather than reporting a version it did not write."""
    from annotation.labels import statements

    _save(work, annotator, "pf", "item", "4")
    monkeypatch.setattr(statements, "update_label_and_history", lambda *args, **kwargs: False)
    with pytest.raises(Conflict) as caught:
        _save(work, annotator, "pf", "item", "2", base=1, service=label_save_in_unit)
    assert caught.value.message == "This answer was changed while saving."
    details = caught.value.details
    assert (details["question"], details["unit_key"], details["value"], details["version"]) == ("pf", "item", "4", 1)
    assert (details["your_value"], details["updated_by"]) == ("2", "you")
    assert (Label.objects.get().value, LabelHistory.objects.count()) == ("4", 1)


def test_a_sentence_alignment_points_into_the_source_and_an_item_alignment_into_the_answer(study, annotator):
    from annotation.models import Sentence

    item = factories.make_item(study, answer="One. Two.", source="A. B. C.")
    Sentence.objects.bulk_create(
        Sentence(item=item, part="source", index=i, text=t, start=0, end=1) for i, t in enumerate(["A.", "B.", "C."])
    )
    align = factories.make_question(study, "align", scope="sentence", kind="alignment", options=[])
    where = factories.make_question(study, "where", kind="alignment", options=[])
    pool = factories.make_pool(study, questions=[align, where])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)

    def save(question, unit, value):
        return label_save(
            assignment=assignment, question=question, unit_key=unit, value=value, base_version=0, actor=annotator
        )

    assert save(align, "s:0", [2]).value == [2]  # the source's third sentence
    with pytest.raises(ValidationFailed):
        save(where, "item", [2])  # the answer has two sentences
    assert save(where, "item", [1]).value == [1]


def test_a_first_answer_stored_meanwhile_is_answered_from_after_the_rollback(work, annotator, monkeypatch):
    """Two tabs give the first answer to the same unit: the second save's lock read no label (the first had not
    committed), so its insert meets the unique constraint. Nothing of that attempt is kept and the save runs
    once more, now reading the stored label: the same value is answered with it (no new version), another
    value is a 409 carrying it; the page still gets the unit's and the item's labels."""
    from annotation.labels import statements

    stored = {"pf": _save(work, annotator, "pf", "item", "4"), "ib": _save(work, annotator, "ib", "s:0", "yes")}
    lock, tries = statements.lock_open_assignment, []

    def before_the_other_tab_committed(*args, **kwargs):
        rows = lock(*args, **kwargs)
        tries.append(len(tries))
        if len(tries) > 1:  # only the first attempt's read predates the other tab's commit
            return rows
        unit = args[2]
        others = [row for row in rows if row[5] != unit]
        return others or [(*rows[0][:3], *(None,) * 7)]

    monkeypatch.setattr(statements, "lock_open_assignment", before_the_other_tab_committed)
    for key, unit, value in (("pf", "item", "4"), ("ib", "s:0", "yes")):
        tries.clear()
        saved = _save(work, annotator, key, unit, value, service=label_save_in_unit)
        assert len(tries) == 2
        assert (saved.label.pk, saved.label.value, saved.label.version) == (stored[key].pk, value, 1)
        assert {u: lb.value for (_, u), lb in saved.unit_labels.items()} == {"item": "4", unit: value}
    tries.clear()
    with pytest.raises(Conflict) as caught:
        _save(work, annotator, "ib", "s:0", "no", service=label_save_in_unit)
    assert len(tries) == 2 and (caught.value.details["value"], caught.value.details["version"]) == ("yes", 1)
    assert (Label.objects.count(), LabelHistory.objects.count()) == (2, 2)


def test_a_first_guess_showing_a_label_that_is_not_stored_is_not_answered_from(work, annotator, monkeypatch):
    """The lock's read is only a first guess: one showing a label the database does not hold (here injected)
    must not produce a 409 about it; the save reads the label afresh, finds none, and stores the first answer."""
    from annotation.labels import statements

    lock = statements.lock_open_assignment

    def with_a_phantom(*args, **kwargs):
        rows = lock(*args, **kwargs)
        phantom = (10**9, work["pf"].pk, "item", "1", 1, annotator.pk, timezone.now())
        return [(*rows[0][:3], *phantom)]

    monkeypatch.setattr(statements, "lock_open_assignment", with_a_phantom)
    saved = _save(work, annotator, "pf", "item", "4", service=label_save_in_unit)
    stored = Label.objects.get()
    assert (saved.label.pk, saved.label.value, saved.label.version) == (stored.pk, "4", 1)
    assert stored.value == "4" and LabelHistory.objects.count() == 1


def test_a_dependent_answer_changed_several_times_is_cleared_at_its_own_version(work, annotator):
    """Turning the gate off clears the dependent answer at the version it is at, not at the gate's."""
    _save(work, annotator, "ib", "s:0", "yes")
    _save(work, annotator, "grounded", "s:0", "supported")
    _save(work, annotator, "grounded", "s:0", "unsupported", base=1)
    _save(work, annotator, "grounded", "s:0", "supported", base=2)
    gate = _save(work, annotator, "ib", "s:0", "no", base=1)
    assert (gate.value, gate.version) == ("no", 2)
    grounded = Label.objects.get(question=work["grounded"], unit_key="s:0")
    assert (grounded.value, grounded.version) == (None, 4)
    history = LabelHistory.objects.filter(label=grounded).order_by("new_version")
    assert [(h.old_value, h.new_value, h.old_version) for h in history][-1] == ("supported", None, 3)


def test_the_labels_returned_are_stored_rows_of_this_assignment(work, annotator):
    """Every label a save hands back, and every label of the page's unit, is the stored row: its own id,
    assignment, question, unit, value and version (a label at version 3 among them)."""
    now = timezone.now()
    first = _save(work, annotator, "pf", "item", "3", now=now)
    second = _save(work, annotator, "pf", "item", "2", base=1, now=now)
    _save(work, annotator, "pf", "item", "1", base=2, now=now)
    _save(work, annotator, "ib", "s:0", "yes", now=now)
    inserted = _save(work, annotator, "ib", "s:1", "no", now=now, service=label_save_in_unit)
    changed = _save(work, annotator, "ib", "s:0", "no", base=1, now=now, service=label_save_in_unit)

    def row(label):
        return (label.pk, label.assignment_id, label.question_id, label.unit_key, label.value, label.version,
                label.updated_by_id, label.updated_at)

    stored = {(lb.question_id, lb.unit_key): row(lb) for lb in Label.objects.all()}
    assert {key: row(lb) for key, lb in changed.unit_labels.items()} == {
        key: stored[key] for key in ((work["pf"].pk, "item"), (work["ib"].pk, "s:0"))
    }
    assert stored[(work["pf"].pk, "item")][5] == 3
    assert row(changed.label) == stored[(work["ib"].pk, "s:0")]
    assert row(inserted.label) == stored[(work["ib"].pk, "s:1")]
    assert {(lb.pk, lb.assignment_id, lb.question_id, lb.unit_key) for lb in (first, second)} == {
        (stored[(work["pf"].pk, "item")][0], work["assignment"].pk, work["pf"].pk, "item")
    }


needs_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement save: PostgreSQL")


@needs_postgresql
def test_the_common_save_is_one_statement_even_in_a_pool_with_conditional_questions(
    work, annotator, study, django_assert_num_queries
):
    """A save of a question no condition involves (here beside a gate and its dependent question) is the one
    statement of the common case, for one option and for a list of options alike; the page's save of it is
    the lock and the write in their transaction, with no second read of the label."""
    tags = factories.make_question(study, "tags", kind="multilabel", options=[{"value": v} for v in ("a", "b")])
    work["pool"].questions.add(tags)
    work["tags"] = tags
    _save(work, annotator, "pf", "item", "4")  # reads the pool's questions once
    with django_assert_num_queries(1):
        assert _save(work, annotator, "pf", "item", "5", base=1).version == 2
    with django_assert_num_queries(1):
        assert _save(work, annotator, "tags", "item", ["b", "a"]).value == ["a", "b"]
    with django_assert_num_queries(1):
        assert _save(work, annotator, "tags", "item", ["b"], base=1).version == 2
    # savepoint, lock (with the labels), the update with its history row, release
    with django_assert_num_queries(4):
        assert _save(work, annotator, "pf", "item", "3", base=2, service=label_save_in_unit).label.version == 3
    # a repeat is answered from the label read again under the lock, never from the lock's first guess
    with django_assert_num_queries(4):
        assert _save(work, annotator, "pf", "item", "3", base=2, service=label_save_in_unit).label.version == 3
    _save(work, annotator, "ib", "s:0", "yes")
    _save(work, annotator, "grounded", "s:0", "supported")
    # savepoint, lock, the other answers, the gate's update, the dependent locked and cleared, release
    with django_assert_num_queries(7):
        _save(work, annotator, "ib", "s:0", "no", base=1, service=label_save_in_unit)


def test_the_page_save_stores_and_returns_the_answer_as_normalised(work, annotator, study):
    """The locked save (the item page's, and any save of a question a condition involves) stores the answer as
    normalised, not as sent: options of a multi-label answer in the protocol's order, text without its
    surrounding blanks."""
    tags = factories.make_question(
        study, "tags", kind="multilabel", options=[{"value": v} for v in ("dose", "timing", "drug")]
    )
    note = factories.make_question(study, "note", kind="text", options=[])
    work["pool"].questions.add(tags, note)
    work["tags"], work["note"] = tags, note
    saved = _save(work, annotator, "tags", "item", ["drug", "dose"], service=label_save_in_unit)
    assert saved.label.value == ["dose", "drug"] and Label.objects.get(question=tags).value == ["dose", "drug"]
    saved = _save(work, annotator, "note", "item", "  a rash  ", service=label_save_in_unit)
    assert saved.label.value == "a rash" and Label.objects.get(question=note).value == "a rash"
