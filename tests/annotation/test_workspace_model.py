"""The item page's model (annotation/workspace.py) read directly: which units, numbers, options, answers,
targets and extras an annotator is shown, what the preview and a unit's redraw show, and whose labels a
calibration pool shows. The pages draw exactly these objects; the view tests check the HTML around them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import units
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Item,
    Label,
    PoolMembership,
    Sentence,
    Visibility,
)
from annotation.selectors import UnitRow
from annotation.workspace import assignment_workspace, blinded_metadata, preview_workspace, unit_redraw
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(study, annotator):
    """An item with two answer sentences, two source sentences, two chunks and aspects in every state, and a
    pool asking questions of every scope (one conditional, two alignments)."""
    q = {
        "ib": factories.make_question(study, "ib", scope="sentence", order=1),
        "grounded": factories.make_question(
            study, "grounded", scope="sentence", order=2, condition={"question": "ib", "in": ["yes"]}
        ),
        "align": factories.make_question(study, "align", scope="sentence", kind="alignment", order=3, options=[]),
        "rel": factories.make_question(study, "rel", scope="chunk", order=4),
        "covered": factories.make_question(study, "covered", scope="aspect", order=5),
        "pf": factories.make_question(
            study,
            "pf",
            kind="ordinal",
            order=6,
            options=[{"value": 1, "label": "Poor", "key": "p"}, {"value": 2}, {"value": 3, "label": "Good"}],
        ),
        "tags": factories.make_question(
            study,
            "tags",
            kind="multilabel",
            order=7,
            required=False,
            options=[{"value": "a", "label": "A"}, {"value": "b", "label": "B"}, {"value": "c", "label": "C"}],
        ),
        "where": factories.make_question(study, "where", kind="alignment", order=8, options=[]),
    }
    item = factories.make_item(
        study,
        "i1",
        answer="Take 0.5 mg daily. Stop if a rash appears.",
        source="Dose is 0.5 mg. Rash: stop.",
        system="SYSTEM-NAME",
        metadata={"shown": "S", "hidden": "H", "secret": "X"},
    )
    Sentence.objects.bulk_create(
        Sentence(item=item, part="source", index=i, text=t, start=0, end=1)
        for i, t in reversed(list(enumerate(["Dose is 0.5 mg.", "Rash: stop."])))  # stored out of order
    )
    # Another item's sentences are never this item's targets.
    other_item = factories.make_item(study, "i2", answer="Other answer. Second one. Third one.")
    Sentence.objects.create(item=other_item, part="source", index=0, text="Other source.", start=0, end=1)
    factories.make_chunk(item, 2, "Second passage.")
    factories.make_chunk(item, 1, "First passage.", document_id="DOC-1")
    other = factories.make_user()
    aspects = {
        "first": Aspect.objects.create(item=item, text="First aspect", importance="nice_to_have"),
        "retired": Aspect.objects.create(item=item, text="Retired aspect", version=1, retired_in_version=2),
        "rejected": Aspect.objects.create(item=item, text="Rejected aspect", status=AspectStatus.REJECTED),
        "mine": Aspect.objects.create(
            item=item, text="My proposal", status=AspectStatus.PROPOSED, origin="proposed", proposed_by=annotator
        ),
        "theirs": Aspect.objects.create(
            item=item, text="Their proposal", status=AspectStatus.PROPOSED, origin="proposed", proposed_by=other
        ),
        "mine_rejected": Aspect.objects.create(
            item=item,
            text="My rejected proposal",
            status=AspectStatus.REJECTED,
            origin="proposed",
            proposed_by=annotator,
        ),
        "mine_retired": Aspect.objects.create(
            item=item, text="My retired aspect", origin="proposed", proposed_by=annotator, retired_in_version=2
        ),
        "second": Aspect.objects.create(item=item, text="Second aspect"),
    }
    pool = factories.make_pool(study, questions=list(q.values()))
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"q": q, "item": item, "pool": pool, "assignment": assignment, "aspects": aspects}


def _label(page, annotator, key, unit, value, version=1, assignment=None):
    return Label.objects.create(
        assignment=assignment or page["assignment"],
        question=page["q"][key],
        unit_key=unit,
        value=value,
        version=version,
        updated_by=annotator,
        updated_at=timezone.now(),
    )


def _workspace(page, annotator):
    assignment = Assignment.objects.get(pk=page["assignment"].pk)  # the item not loaded: the build reads it
    return assignment_workspace(assignment=assignment, user=annotator)


def _keys(states):
    return [s.question.key for s in states]


def test_the_units_their_numbers_texts_and_questions_in_page_order(page, annotator):
    ws = _workspace(page, annotator)
    assert [(u.key, u.kind, u.number, u.text) for u in ws.sentences] == [
        ("s:0", "sentence", 1, "Take 0.5 mg daily."),
        ("s:1", "sentence", 2, "Stop if a rash appears."),
    ]
    assert [(u.key, u.kind, u.number, u.text) for u in ws.chunks] == [
        ("c:1", "chunk", 1, "First passage."),
        ("c:2", "chunk", 2, "Second passage."),
    ]
    a = page["aspects"]
    # Accepted and not retired, numbered from 1 in creation order; the importance in words.
    assert [(u.key, u.kind, u.number, u.text, u.extra) for u in ws.aspects] == [
        (f"a:{a['first'].pk}", "aspect", 1, "First aspect", {"importance": "Nice to have"}),
        (f"a:{a['second'].pk}", "aspect", 2, "Second aspect", {"importance": "Must have"}),
    ]
    # Only the annotator's own pending proposals (neither someone else's nor a rejected one).
    assert [p.text for p in ws.own_proposals] == ["My proposal"]
    assert (ws.item_unit.key, ws.item_unit.kind, ws.item_unit.number, ws.item_unit.text) == ("item", "item", 0, "")
    assert [_keys(u.questions) for u in ws.sentences] == [["ib", "grounded", "align"]] * 2
    assert [_keys(u.questions) for u in ws.chunks] == [["rel"]] * 2
    assert [_keys(u.questions) for u in ws.aspects] == [["covered"]] * 2
    assert _keys(ws.item_unit.questions) == ["pf", "tags", "where"]
    assert [u.key for u in ws.units] == ["s:0", "s:1", "c:1", "c:2", *[u.key for u in ws.aspects], "item"]
    assert ws.unit("c:2") is ws.chunks[1] and ws.unit("item") is ws.item_unit and ws.unit("s:7") is None
    assert (ws.sentences[1].dom_id, ws.item_unit.questions[0].dom_id) == ("unit-s-1", "q-pf-item")
    assert ws.source_sentences == [(0, "Dose is 0.5 mg."), (1, "Rash: stop.")]
    assert (ws.item_question, ws.answer, ws.source) == (
        "What dose?",
        "Take 0.5 mg daily. Stop if a rash appears.",
        "Dose is 0.5 mg. Rash: stop.",
    )
    assert ws.progress.assigned == 1 and ws.others == [] and not ws.showed_other_labels and not ws.preview


def test_options_answers_versions_and_alignment_targets(page, annotator):
    _label(page, annotator, "pf", "item", 2, version=3)
    _label(page, annotator, "tags", "item", ["a", "c"])
    _label(page, annotator, "ib", "s:1", None, version=2)  # an answer cleared: shown unanswered
    ws = _workspace(page, annotator)
    pf, tags, where = ws.item_unit.questions
    assert [(o.value, o.label, o.key, o.checked) for o in pf.options] == [
        ("1", "Poor", "p", False),
        ("2", "2", "", True),
        ("3", "Good", "", False),
    ]
    assert (pf.value, pf.version, pf.display, pf.answered, pf.list_values) == (2, 3, "2", True, [])
    assert pf.updated_at == Label.objects.get(question=page["q"]["pf"]).updated_at
    assert [o.checked for o in tags.options] == [True, False, True]
    assert (tags.list_values, tags.display) == (["a", "c"], "A, C")
    ib = ws.unit("s:1").questions[0]
    assert (ib.value, ib.version, ib.answered, ib.updated_at is not None) == (None, 2, False, True)
    assert [o.checked for o in ib.options] == [False, False]
    fresh = ws.unit("s:0").questions[0]
    assert (fresh.version, fresh.updated_at, fresh.answered) == (0, None, False)
    # An answer sentence aligns to source sentences; an item question to the answer's sentences.
    assert ws.unit("s:0").questions[2].targets == [(0, "Dose is 0.5 mg."), (1, "Rash: stop.")]
    assert where.targets == [(0, "Take 0.5 mg daily."), (1, "Stop if a rash appears.")]
    assert pf.targets == [] and fresh.targets == []


def test_a_conditional_question_applies_once_its_condition_holds_and_completeness_follows(page, annotator):
    ws = _workspace(page, annotator)
    s0 = ws.unit("s:0")
    assert [q.applicable for q in s0.questions] == [True, False, True]
    assert not s0.complete
    _label(page, annotator, "ib", "s:0", "yes")
    _label(page, annotator, "align", "s:0", [0])
    ws = _workspace(page, annotator)
    s0, s1 = ws.unit("s:0"), ws.unit("s:1")
    assert [q.applicable for q in s0.questions] == [True, True, True]
    assert not s0.complete  # grounded now asked and unanswered
    assert [q.applicable for q in s1.questions] == [True, False, True]
    _label(page, annotator, "grounded", "s:0", "no")
    assert _workspace(page, annotator).unit("s:0").complete
    # An optional question left unanswered does not keep a unit incomplete; a required one does.
    _label(page, annotator, "pf", "item", 1)
    _label(page, annotator, "where", "item", [1])
    assert _workspace(page, annotator).item_unit.complete


def test_blinding_the_system_the_document_ids_and_the_metadata(page, annotator, study):
    study.visible_metadata_fields = ["secret", "shown", "absent", "hidden"]
    study.hidden_metadata_fields = ["hidden"]
    study.save()
    ws = _workspace(page, annotator)
    assert (ws.system, ws.showed_system) == (None, False)
    assert [c.extra for c in ws.chunks] == [{}, {}]
    assert ws.metadata == {"secret": "X", "shown": "S"} and ws.metadata_keys == ["secret", "shown"]
    study.blind_system = False
    study.save()
    page["pool"].refresh_from_db()
    ws = _workspace(page, annotator)
    assert (ws.system, ws.showed_system) == ("SYSTEM-NAME", True)
    assert [c.extra for c in ws.chunks] == [{"document_id": "DOC-1"}, {}]


def test_blinded_metadata_without_lists_or_metadata_shows_nothing(study):
    study.visible_metadata_fields = None
    assert blinded_metadata(study, {"a": 1}) == {}
    study.visible_metadata_fields, study.hidden_metadata_fields = ["a"], None
    assert blinded_metadata(study, {"a": 1, "b": 2}) == {"a": 1}
    assert blinded_metadata(study, None) == {}


def test_a_pool_without_sentence_or_item_questions_draws_no_sentence_questions_and_no_item_unit(page, annotator):
    page["pool"].questions.set([page["q"]["rel"]])
    ws = _workspace(page, annotator)
    assert [u.questions for u in ws.sentences] == [[], []]  # the sentences are still shown, without questions
    assert ws.item_unit is None and ws.unit("item") is None
    assert [u.key for u in ws.units] == ["s:0", "s:1", "c:1", "c:2", *[u.key for u in ws.aspects]]


def test_the_page_is_open_while_the_assignment_is(page, annotator):
    for status, is_open in [
        (AssignmentStatus.ASSIGNED, True),
        (AssignmentStatus.STARTED, True),
        (AssignmentStatus.SUBMITTED, False),
        (AssignmentStatus.SKIPPED, False),
        (AssignmentStatus.WITHDRAWN, False),
    ]:
        Assignment.objects.filter(pk=page["assignment"].pk).update(status=status)
        assert _workspace(page, annotator).is_open is is_open, status


def test_the_preview_is_the_first_page_an_annotator_sees_without_answers(page, annotator, researcher, study):
    _label(page, annotator, "pf", "item", 2)
    item = Item.objects.get(pk=page["item"].pk)
    ws = preview_workspace(study=study, item=item, user=researcher, pool=page["pool"])
    assert ws.preview and not ws.is_open
    assert [q.value for u in ws.units for q in u.questions] == [None] * sum(len(u.questions) for u in ws.units)
    assert ws.own_proposals == [] and [u.text for u in ws.aspects] == ["First aspect", "Second aspect"]
    assert (ws.progress.assigned, ws.others) == (0, [])
    # The page's progress line reads "0 of 0 done" (nothing is the researcher's to do), and the unsaved, closed
    # assignment behind the page is this item's in this pool, for this viewer, never a saved row.
    p = ws.progress
    assert (p.pool, p.assigned, p.submitted, p.skipped, p.done, p.remaining) == (page["pool"], 0, 0, 0, 0, 0)
    a = ws.assignment
    assert (a.pk, a.pool, a.item, a.annotator_id, a.status) == (
        0, page["pool"], item, researcher.pk, AssignmentStatus.SUBMITTED
    )
    # Without a pool: every question of the study, in protocol order (order, then id).
    extra = factories.make_question(study, "extra", order=6)
    ws = preview_workspace(study=study, item=item, user=researcher)
    assert _keys(ws.item_unit.questions) == ["pf", "extra", "tags", "where"]
    assert ws.pool.name == "every question of the study"
    assert ws.pool.pk == 0 and ws.pool.study == study and ws.assignment.status == AssignmentStatus.SUBMITTED
    assert extra.pk > page["q"]["pf"].pk


def _row(key, kind, number, text="", extra=None):
    return UnitRow(key=key, kind=kind, number=number, text=text, extra=extra or {})


def test_a_unit_redraw_is_the_unit_as_the_page_draws_it(page, annotator):
    _label(page, annotator, "ib", "s:1", "yes", version=2)
    labels = {(lb.question_id, lb.unit_key): lb for lb in Label.objects.all()}
    ws = _workspace(page, annotator)
    assignment = Assignment.objects.get(pk=page["assignment"].pk)
    row_extra = {"importance": "Must have"}
    unit_page, unit = unit_redraw(
        assignment=assignment, row=_row("s:1", "sentence", 2, "Stop.", row_extra), labels=labels
    )
    assert unit_page.is_open and unit_page.assignment == assignment
    assert (unit.key, unit.kind, unit.number, unit.text) == ("s:1", "sentence", 2, "Stop.")
    assert unit.extra == row_extra and unit.extra is not row_extra
    drawn = [(q.question.key, q.value, q.version, q.applicable, q.targets) for q in unit.questions]
    assert drawn == [(q.question.key, q.value, q.version, q.applicable, q.targets) for q in ws.unit("s:1").questions]
    assert drawn[1][3] is True and drawn[2][4] == [(0, "Dose is 0.5 mg."), (1, "Rash: stop.")]
    _, item_unit = unit_redraw(assignment=assignment, row=_row("item", "item", 0), labels=labels)
    assert _keys(item_unit.questions) == ["pf", "tags", "where"]
    assert item_unit.questions[2].targets == [(0, "Take 0.5 mg daily."), (1, "Stop if a rash appears.")]
    _, chunk = unit_redraw(assignment=assignment, row=_row("c:1", "chunk", 1), labels=labels)
    assert _keys(chunk.questions) == ["rel"] and chunk.questions[0].targets == []
    Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.SUBMITTED)
    assignment.refresh_from_db()
    assert not unit_redraw(assignment=assignment, row=_row("c:1", "chunk", 1), labels=labels)[0].is_open
    assignment.status = AssignmentStatus.STARTED
    assert unit_redraw(assignment=assignment, row=_row("c:1", "chunk", 1), labels=labels)[0].is_open


def test_a_unit_redraw_of_a_sentence_without_sentence_questions_has_none(page, annotator):
    page["pool"].questions.set([page["q"]["rel"], page["q"]["pf"]])
    assignment = Assignment.objects.get(pk=page["assignment"].pk)
    _, unit = unit_redraw(assignment=assignment, row=_row("s:0", "sentence", 1), labels={})
    assert unit.questions == []


@pytest.fixture
def calibration(study, annotator):
    pf = factories.make_question(study, "pf", kind="text", order=2)
    ib = factories.make_question(study, "ib", scope="sentence", order=1)
    item = factories.make_item(study, "c1")
    pool = factories.make_pool(study, questions=[pf, ib], visibility=Visibility.AFTER_SUBMIT)
    factories.add_member(pool, annotator, pseudonym="P-ME")
    mine = factories.make_assignment(pool, item, annotator, status=AssignmentStatus.SUBMITTED)
    people = {}
    for name in ("bea", "cal", "dee"):
        people[name] = factories.make_user(name)
        factories.add_member(pool, people[name], pseudonym=f"P-{name.upper()}")
    # Assignments made in the reverse order of the people: ids in neither order alone give the page's order.
    assignments = {name: factories.make_assignment(pool, item, people[name]) for name in reversed(list(people))}
    return {"pf": pf, "ib": ib, "item": item, "pool": pool, "mine": mine, "people": people, "assignments": assignments}


def _calibration_label(calibration, name, question, unit, value):
    user = calibration["people"][name]
    return Label.objects.create(
        assignment=calibration["assignments"][name],
        question=calibration[question],
        unit_key=unit,
        value=value,
        updated_by=user,
        updated_at=timezone.now(),
    )


def test_a_calibration_pool_shows_others_labels_by_pseudonym_in_question_and_unit_order(calibration, annotator):
    c = calibration
    _calibration_label(c, "cal", "pf", "item", "CAL-PF")
    _calibration_label(c, "bea", "pf", "item", "BEA-PF")
    _calibration_label(c, "bea", "ib", "s:1", "yes")
    _calibration_label(c, "cal", "ib", "s:0", "no")
    _calibration_label(c, "dee", "pf", "item", None)  # cleared: not an answer to show
    Label.objects.create(
        assignment=c["mine"],
        question=c["pf"],
        unit_key="item",
        value="MINE",
        updated_by=annotator,
        updated_at=timezone.now(),
    )
    # Another pool's label on the same item, by someone of this pool, is never shown.
    elsewhere = factories.make_pool(c["pool"].study, questions=[c["pf"]])
    away = factories.make_assignment(elsewhere, c["item"], c["people"]["bea"])
    Label.objects.create(
        assignment=away,
        question=c["pf"],
        unit_key="item",
        value="OTHER-POOL",
        updated_by=c["people"]["bea"],
        updated_at=timezone.now(),
    )
    # Nor a label of the same pool on another item.
    other_item = factories.make_assignment(c["pool"], factories.make_item(c["pool"].study, "c2"), c["people"]["bea"])
    Label.objects.create(
        assignment=other_item,
        question=c["pf"],
        unit_key="item",
        value="OTHER-ITEM",
        updated_by=c["people"]["bea"],
        updated_at=timezone.now(),
    )
    ws = assignment_workspace(assignment=Assignment.objects.get(pk=c["mine"].pk), user=annotator)
    shown = [(o.pseudonym, o.question_key, o.unit_key, o.value) for o in ws.others]
    first, second = sorted([("P-BEA", "BEA-PF"), ("P-CAL", "CAL-PF")], key=lambda p: c["people"][p[0][2:].lower()].pk)
    assert shown == [
        ("P-CAL", "ib", "s:0", "no"),
        ("P-BEA", "ib", "s:1", "yes"),
        (first[0], "pf", "item", first[1]),
        (second[0], "pf", "item", second[1]),
    ]
    assert ws.showed_other_labels


def test_calibration_labels_leave_out_withdrawn_work_and_wait_for_the_submit(calibration, annotator):
    c = calibration
    _calibration_label(c, "bea", "pf", "item", "BEA-PF")
    _calibration_label(c, "cal", "pf", "item", "CAL-PF")
    Assignment.objects.filter(pk=c["assignments"]["cal"].pk).update(status=AssignmentStatus.WITHDRAWN)
    ws = assignment_workspace(assignment=Assignment.objects.get(pk=c["mine"].pk), user=annotator)
    assert [o.value for o in ws.others] == ["BEA-PF"]
    Assignment.objects.filter(pk=c["mine"].pk).update(status=AssignmentStatus.STARTED)
    assert assignment_workspace(assignment=Assignment.objects.get(pk=c["mine"].pk), user=annotator).others == []
    Assignment.objects.filter(pk=c["mine"].pk).update(status=AssignmentStatus.SUBMITTED)
    c["pool"].visibility = Visibility.NOTHING
    c["pool"].save()
    assert assignment_workspace(assignment=Assignment.objects.get(pk=c["mine"].pk), user=annotator).others == []


def test_a_calibration_label_of_someone_without_a_membership_is_an_error(calibration, annotator):
    c = calibration
    _calibration_label(c, "bea", "pf", "item", "BEA-PF")
    PoolMembership.objects.filter(user=c["people"]["bea"]).delete()
    with pytest.raises(RuntimeError, match=f"user {c['people']['bea'].pk} has no membership in pool {c['pool'].pk}"):
        assignment_workspace(assignment=Assignment.objects.get(pk=c["mine"].pk), user=annotator)


def test_labels_of_the_item_unit_decide_conditions_of_item_questions_at_every_unit(study, annotator):
    gate = factories.make_question(study, "gate", order=1)
    per_sentence = factories.make_question(
        study, "per", scope="sentence", order=2, condition={"question": "gate", "in": ["yes"]}
    )
    item = factories.make_item(study)
    pool = factories.make_pool(study, questions=[gate, per_sentence])
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    Label.objects.create(
        assignment=assignment,
        question=gate,
        unit_key=units.ITEM,
        value="yes",
        updated_by=annotator,
        updated_at=timezone.now() - timedelta(minutes=1),
    )
    ws = assignment_workspace(assignment=assignment, user=annotator)
    assert [u.questions[0].applicable for u in ws.sentences] == [True, True]


def test_a_unit_redraw_gives_an_alignment_its_targets_when_it_is_the_only_question(page, annotator):
    page["pool"].questions.set([page["q"]["align"]])
    assignment = Assignment.objects.get(pk=page["assignment"].pk)
    _, unit = unit_redraw(assignment=assignment, row=_row("s:0", "sentence", 1), labels={})
    assert [q.targets for q in unit.questions] == [[(0, "Dose is 0.5 mg."), (1, "Rash: stop.")]]
    page["pool"].questions.set([page["q"]["where"]])
    assignment = Assignment.objects.get(pk=page["assignment"].pk)
    _, unit = unit_redraw(assignment=assignment, row=_row("item", "item", 0), labels={})
    assert [q.targets for q in unit.questions] == [[(0, "Take 0.5 mg daily."), (1, "Stop if a rash appears.")]]
