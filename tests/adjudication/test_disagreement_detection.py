"""Disagreement detection as assignments are submitted."""

from __future__ import annotations

import pytest

from adjudication.consensus import canonical, consensus
from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.services import consensus_rule_set, item_disagreements_detect
from annotation.models import AssignmentStatus
from concord.errors import ValidationFailed
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

# --- pure rules -----------------------------------------------------------------------------------


def test_unanimous_answers_agree():
    assert consensus(["yes", "yes", "yes"], kind="binary").outcome == "unanimous"


def test_majority_only_counts_when_the_rule_allows_it_and_three_annotators_answered():
    assert consensus(["yes", "yes", "no"], kind="binary").outcome == "disagreement"
    result = consensus(["yes", "yes", "no"], kind="binary", majority=True)
    assert (result.outcome, result.value, result.support, result.n) == ("majority", "yes", 2, 3)
    assert consensus(["yes", "no"], kind="binary", majority=True).outcome == "disagreement"


def test_a_tie_is_never_a_majority():
    assert consensus(["a", "a", "b", "b"], kind="nominal", majority=True).outcome == "disagreement"


def test_multilabel_answers_agree_by_exact_set_equality():
    assert consensus([["background", "example"], ["example", "background"]], kind="multilabel").outcome == "unanimous"
    assert consensus([["background", "example"], ["background"]], kind="multilabel").outcome == "disagreement"
    assert consensus([[], []], kind="multilabel").outcome == "unanimous"


def test_alignment_answers_agree_by_exact_set_equality():
    assert canonical("alignment", [2, 0, 2]) == canonical("alignment", [0, 2])
    assert consensus([[0, 2], [2]], kind="alignment").outcome == "disagreement"


def test_text_answers_agree_after_whitespace_normalisation_only():
    assert consensus(["Missing dose  advice", " Missing dose advice"], kind="text").outcome == "unanimous"
    assert consensus(["missing dose advice", "Missing dose advice"], kind="text").outcome == "disagreement"


def test_numbers_agree_as_floats():
    assert consensus([2, 2.0], kind="number").outcome == "unanimous"


def test_a_missing_answer_disagrees_with_a_given_one_and_nobody_answering_is_empty():
    assert consensus(["yes", None], kind="binary").outcome == "disagreement"
    assert consensus([None, None], kind="binary").outcome == "empty"


def test_a_missing_answer_is_never_a_majority():
    assert consensus([None, None, "yes"], kind="binary", majority=True).outcome == "disagreement"


# --- detection in the database -------------------------------------------------------------------


@pytest.fixture
def setup(study):
    pf = yes_no(study, "pf")
    ib = yes_no(study, "information_bearing", scope="sentence")
    pool, members = pool_with_members(study, [pf, ib], n=2)
    item = factories.make_item(study, "q1", answer="Take 0.5 mg daily. Hello!")
    return pool, members, item


def test_nothing_happens_until_every_assignment_is_submitted(setup):
    pool, (a, b), item = setup
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"}, status=AssignmentStatus.STARTED)
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).ready is False
    assert not AdjudicationCase.objects.exists() and not GoldLabel.objects.exists()


def test_unanimous_units_become_gold_and_disagreements_open_one_case_each(setup):
    pool, (a, b), item = setup
    submit_labels(
        pool,
        item,
        a,
        {("pf", "item"): "yes", ("information_bearing", "s:0"): "yes", ("information_bearing", "s:1"): "no"},
    )
    submit_labels(
        pool,
        item,
        b,
        {("pf", "item"): "no", ("information_bearing", "s:0"): "yes", ("information_bearing", "s:1"): "no"},
    )
    result = item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    assert (result.ready, result.gold_written, result.cases_opened) == (True, 2, 1)
    gold = {(g.question.key, g.unit_key): (g.value, g.source) for g in GoldLabel.objects.select_related("question")}
    assert gold == {
        ("information_bearing", "s:0"): ("yes", "unanimous"),
        ("information_bearing", "s:1"): ("no", "unanimous"),
    }
    case = AdjudicationCase.objects.get()
    assert (case.question.key, case.unit_key, case.status) == ("pf", "item", "open")
    assert case.labels.count() == 2


def test_detecting_twice_writes_nothing_new(setup):
    pool, (a, b), item = setup
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    again = item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    assert (again.gold_written, again.cases_opened) == (0, 0)
    assert AdjudicationCase.objects.count() == 1


def test_skipped_assignments_do_not_hold_detection_back(setup):
    pool, (a, b), item = setup
    c = factories.make_user("late-annotator")
    factories.add_member(pool, c, pseudonym="P-A3")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "yes"})
    submit_labels(pool, item, c, {}, status=AssignmentStatus.SKIPPED)
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).gold_written == 1


def test_a_single_annotator_makes_no_gold(study):
    q = yes_no(study)
    pool, (a,) = pool_with_members(study, [q], n=1)
    item = factories.make_item(study)
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).ready is False


def test_majority_rule_makes_majority_gold_for_that_question_only(study, researcher):
    pf = yes_no(study, "pf")
    other = yes_no(study, "other")
    pool, (a, b, c) = pool_with_members(study, [pf, other], n=3)
    consensus_rule_set(pool_id=pool.pk, question_id=pf.pk, majority=True, actor=researcher)
    item = factories.make_item(study)
    for user, v in ((a, "yes"), (b, "yes"), (c, "no")):
        submit_labels(pool, item, user, {("pf", "item"): v, ("other", "item"): v})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    gold = GoldLabel.objects.get()
    assert (gold.question.key, gold.value, gold.source) == ("pf", "yes", "majority")
    assert AdjudicationCase.objects.get().question.key == "other"


def test_majority_rule_is_refused_below_three_annotators(study, researcher):
    pf = yes_no(study)
    pool, _ = pool_with_members(study, [pf], n=2)
    with pytest.raises(ValidationFailed, match="at least three"):
        consensus_rule_set(pool_id=pool.pk, question_id=pf.pk, majority=True, actor=researcher)


def test_adjudicated_gold_is_never_replaced_by_detection(setup, adjudicator):
    from adjudication.services import case_resolve

    pool, (a, b), item = setup
    factories.grant(pool.study, adjudicator, "adjudicator")
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    case = AdjudicationCase.objects.get()
    case_resolve(case_id=case.pk, actor=adjudicator, value="no", rationale="context says no")
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    assert list(GoldLabel.objects.values_list("value", "source", "version")) == [("no", "adjudicated", 1)]


def test_submitting_through_the_workspace_runs_detection(setup):
    """adjudication's receiver of assignment_submitted runs inside assignment_submit."""
    from annotation.services import assignment_submit

    pool, (a, b), item = setup
    pool.questions.set([pool.questions.get(key="pf")])
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    open_one = submit_labels(pool, item, b, {("pf", "item"): "yes"}, status=AssignmentStatus.STARTED)
    assignment_submit(assignment=open_one, actor=b)
    assert GoldLabel.objects.get().source == "unanimous"


# --- the researcher sets the rule ---------------------------------------------------------------------


def test_a_researcher_allows_a_majority_from_the_queue_page_and_the_api(client, study, researcher):
    from django.urls import reverse

    from adjudication.models import ConsensusRule

    pf = yes_no(study, "pf")
    pool, _ = pool_with_members(study, [pf], n=3)
    client.force_login(researcher)
    page = client.get(reverse("adjudication:queue", args=[study.slug])).content.decode()
    assert "Allow majority" in page
    client.post(reverse("adjudication:consensus-rule", args=[pool.pk]), {"question": pf.pk, "majority": "1"})
    assert ConsensusRule.objects.get(pool=pool, question=pf).majority is True
    response = client.post(
        reverse("adjudication-api-consensus-rule", args=[pool.pk]),
        {"question": "pf", "majority": False},
        content_type="application/json",
    )
    assert response.json() == {"pool": "P", "question": "pf", "majority": False}


def test_an_adjudicator_cannot_change_the_rule(client, study, adjudicator):
    from django.urls import reverse

    factories.grant(study, adjudicator, "adjudicator")
    pf = yes_no(study, "pf")
    pool, _ = pool_with_members(study, [pf], n=3)
    client.force_login(adjudicator)
    response = client.post(
        reverse("adjudication-api-consensus-rule", args=[pool.pk]),
        {"question": "pf", "majority": True},
        content_type="application/json",
    )
    assert response.status_code == 404  # a pool named by its id: not found


# --- an item reopened after its disagreement opened a case ---------------------------------------


def test_a_reopened_item_holds_its_case_until_resubmitted_then_agreement_withdraws_it(setup, study):
    from adjudication.models import CaseStatus
    from adjudication.selectors import case_queue
    from adjudication.services import case_resolve
    from annotation.models import Label, Role
    from concord.errors import Conflict

    pool, (a, b), item = setup
    first = submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).cases_opened == 1
    case = AdjudicationCase.objects.get()
    adjudicator = factories.make_user("adj-reopen")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)

    # The annotator reopens the item: deciding now would judge answers that are being changed.
    first.status = AssignmentStatus.STARTED
    first.save(update_fields=["status"])
    with pytest.raises(Conflict, match="an annotator is working on this item"):
        case_resolve(case_id=case.pk, actor=adjudicator, value="yes")
    assert not GoldLabel.objects.exists()

    # They change their answer to agree and submit again: the disagreement, and the case, are gone.
    Label.objects.filter(assignment=first).update(value="no")
    first.status = AssignmentStatus.SUBMITTED
    first.save(update_fields=["status"])
    detection = item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    assert (detection.cases_withdrawn, detection.gold_written) == (1, 1)
    case.refresh_from_db()
    assert case.status == CaseStatus.WITHDRAWN
    assert GoldLabel.objects.get(is_current=True).source == "unanimous"
    assert not case_queue(study=study).filter(pk=case.pk).exists()
    with pytest.raises(Conflict, match="withdrawn"):
        case_resolve(case_id=case.pk, actor=adjudicator, value="yes")
    assert item_disagreements_detect(pool_id=pool.pk, item_id=item.pk).cases_withdrawn == 0  # idempotent


def test_a_case_still_disagreeing_after_a_reopening_stays_open(setup):
    pool, (a, b), item = setup
    submit_labels(pool, item, a, {("pf", "item"): "yes"})
    submit_labels(pool, item, b, {("pf", "item"): "no"})
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    detection = item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    assert (detection.cases_opened, detection.cases_withdrawn) == (0, 0)
    assert AdjudicationCase.objects.get().status == "open"
