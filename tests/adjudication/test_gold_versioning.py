"""Gold labels are versioned; nothing is deleted; decisions carry provenance."""

from __future__ import annotations

import pytest

from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.services import aspect_decide, case_resolve, gold_set, item_disagreements_detect
from annotation.models import Aspect, AspectOrigin, AspectStatus
from concord.errors import Conflict, Forbidden, ValidationFailed
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no


@pytest.fixture
def case(study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    q = yes_no(study, "pf")
    pool, (a, b) = pool_with_members(study, [q], n=2)
    item = factories.make_item(study, "q1")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    return AdjudicationCase.objects.get()


def test_a_decision_records_value_rationale_confidence_and_gap_flag(case, adjudicator):
    gold = case_resolve(
        case_id=case.pk,
        actor=adjudicator,
        value="yes",
        rationale="Chunk 1 states the dose.",
        confidence=4,
        guideline_gap=True,
        expected_version=0,
    )
    assert (gold.value, gold.source, gold.adjudicator, gold.rationale, gold.confidence, gold.guideline_gap) == (
        "yes",
        "adjudicated",
        adjudicator,
        "Chunk 1 states the dose.",
        4,
        True,
    )
    case.refresh_from_db()
    assert case.status == "resolved"


def test_re_adjudication_is_a_revision_with_its_reason_that_appends_a_version_and_keeps_the_old_one(
    case, adjudicator
):
    case_resolve(case_id=case.pk, actor=adjudicator, value="yes", expected_version=0)
    case_resolve(
        case_id=case.pk, actor=adjudicator, value="no", rationale="re-read", expected_version=1,
        revise_reason="the second chunk contradicts the dose",
    )
    versions = list(GoldLabel.objects.order_by("version").values_list("version", "value", "is_current", "rationale"))
    assert versions == [
        (1, "yes", False, ""),
        (2, "no", True, "Revision: the second chunk contradicts the dose\nre-read"),
    ]


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_second_decision_without_a_revision_reason_is_refused_and_writes_nothing(case, adjudicator, reason):
    """A repeated save (the keys pressed again on a decided case) once wrote another gold version unseen."""
    case_resolve(case_id=case.pk, actor=adjudicator, value="yes", expected_version=0)
    with pytest.raises(Conflict, match="already decided: to change its gold, revise it and say why") as refused:
        case_resolve(case_id=case.pk, actor=adjudicator, value="no", expected_version=1, revise_reason=reason)
    assert refused.value.details == {"field": "revise_reason"}
    with pytest.raises(Conflict, match="already decided"):
        case_resolve(case_id=case.pk, actor=adjudicator, unresolved=True, expected_version=1)
    assert list(GoldLabel.objects.values_list("version", "value")) == [(1, "yes")]


def test_an_unresolved_case_is_decided_too_and_takes_a_value_only_as_a_revision(case, adjudicator):
    case_resolve(case_id=case.pk, actor=adjudicator, unresolved=True, rationale="ambiguous")
    with pytest.raises(Conflict, match="already decided"):
        case_resolve(case_id=case.pk, actor=adjudicator, value="yes")
    gold = case_resolve(case_id=case.pk, actor=adjudicator, value="yes", revise_reason="the guideline now says yes")
    assert (gold.version, gold.value, gold.source) == (2, "yes", "adjudicated")


def test_a_decision_based_on_a_stale_version_is_a_conflict_and_writes_nothing(case, adjudicator):
    case_resolve(case_id=case.pk, actor=adjudicator, value="yes", expected_version=0)
    with pytest.raises(Conflict) as stale:
        case_resolve(case_id=case.pk, actor=adjudicator, value="no", expected_version=0, revise_reason="re-read")
    assert "already decided" not in stale.value.message
    assert GoldLabel.objects.count() == 1


def test_unresolved_is_recorded_as_gold_without_a_value(case, adjudicator):
    gold = case_resolve(
        case_id=case.pk, actor=adjudicator, unresolved=True, rationale="guideline silent", guideline_gap=True
    )
    assert (gold.value, gold.source, gold.guideline_gap) == (None, "unresolved", True)
    case.refresh_from_db()
    assert case.status == "unresolved"


def test_a_value_outside_the_options_is_refused(case, adjudicator):
    with pytest.raises(ValidationFailed):
        case_resolve(case_id=case.pk, actor=adjudicator, value="maybe")
    with pytest.raises(ValidationFailed):
        case_resolve(case_id=case.pk, actor=adjudicator, value=None)
    assert not GoldLabel.objects.exists()


def test_confidence_is_from_one_to_five(case, adjudicator):
    with pytest.raises(ValidationFailed):
        case_resolve(case_id=case.pk, actor=adjudicator, value="yes", confidence=9)


def test_an_annotator_cannot_decide_a_case(case):
    annotator = case.labels.first().assignment.annotator
    with pytest.raises(Forbidden):
        case_resolve(case_id=case.pk, actor=annotator, value="yes")


def test_exactly_one_gold_version_is_current_after_many_writes(case):
    for i in range(4):
        gold_set(
            pool_id=case.pool_id,
            item_id=case.item_id,
            unit_key="item",
            question_id=case.question_id,
            value="yes" if i % 2 else "no",
            source="adjudicated",
        )
    assert GoldLabel.objects.filter(is_current=True).count() == 1
    assert GoldLabel.objects.get(is_current=True).version == 4


# --- proposed aspects -----------------------------------------------------------------------------


@pytest.fixture
def proposed(study, annotator):
    item = factories.make_item(study, "with-aspects")
    Aspect.objects.create(item=item, text="Dose", version=1)
    Aspect.objects.create(item=item, text="Timing", version=2)
    return Aspect.objects.create(
        item=item,
        text="Renal adjustment",
        origin=AspectOrigin.PROPOSED,
        status=AspectStatus.PROPOSED,
        proposed_by=annotator,
    )


def test_accepting_a_proposed_aspect_adds_it_at_the_next_aspect_set_version(proposed, study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    aspect = aspect_decide(aspect_id=proposed.pk, actor=adjudicator, accept=True)
    assert (aspect.status, aspect.version, aspect.decided_by) == ("accepted", 3, adjudicator)
    assert Aspect.objects.filter(item=proposed.item).count() == 3
    assert list(Aspect.objects.in_version(2).filter(item=proposed.item).values_list("text", flat=True)) == [
        "Dose",
        "Timing",
    ]


def test_rejecting_keeps_the_aspect_marked_rejected(proposed, study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    aspect = aspect_decide(aspect_id=proposed.pk, actor=adjudicator, accept=False)
    assert aspect.status == "rejected"
    assert Aspect.objects.filter(pk=proposed.pk).exists()


def test_the_proposer_cannot_accept_their_own_aspect(proposed, study, annotator):
    factories.grant(study, annotator, "adjudicator")
    with pytest.raises(Forbidden, match="second person"):
        aspect_decide(aspect_id=proposed.pk, actor=annotator, accept=True)


def test_a_decided_aspect_cannot_be_decided_again(proposed, study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    aspect_decide(aspect_id=proposed.pk, actor=adjudicator, accept=True)
    with pytest.raises(Conflict):
        aspect_decide(aspect_id=proposed.pk, actor=adjudicator, accept=False)
