"""The adjudicator's queue and case page, the REST endpoints for the same actions, and the reads behind them
(adjudication/selectors.py: access helpers, queue, case page, human measures; the module's mutation tests)."""

from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from adjudication import selectors
from adjudication.models import AdjudicationCase, ConsensusRule, ExportJob, GoldLabel
from adjudication.selectors import case_detail
from adjudication.services import item_disagreements_detect
from annotation.models import (
    Aspect,
    AspectOrigin,
    AspectStatus,
    Assignment,
    Label,
    LabelHistory,
    PoolMembership,
    Sentence,
)
from concord.errors import NotFound
from scoring.models import Score, ScoreRun
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no


@pytest.fixture
def case(study, adjudicator, annotator):
    factories.grant(study, adjudicator, "adjudicator")
    ib = yes_no(study, "information_bearing", scope="sentence")
    pool, (a, b) = pool_with_members(study, [ib], n=2)
    factories.add_member(pool, annotator, pseudonym="P-A9")
    item = factories.make_item(study, "q-1", answer="Take 0.5 mg daily. <b>Hello</b>!", system="gpt-secret")
    factories.make_chunk(item, 1, "The usual dose is 0.5 mg daily.")
    submit_labels(pool, item, a, {("information_bearing", "s:0"): "yes"}, active_seconds=42)
    submit_labels(pool, item, b, {("information_bearing", "s:0"): "no"}, active_seconds=17)
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    return AdjudicationCase.objects.get()


def _login(client, user):
    client.force_login(user)
    return client


def test_adjudicator_sees_the_open_case_in_the_queue(client, case, adjudicator):
    response = _login(client, adjudicator).get(reverse("adjudication:queue", args=[case.pool.study.slug]))
    assert response.status_code == 200
    assert reverse("adjudication:case", args=[case.pk]) in response.content.decode()


def test_annotator_is_refused_the_queue_and_the_case(client, case, annotator):
    _login(client, annotator)
    assert client.get(reverse("adjudication:queue", args=[case.pool.study.slug])).status_code == 403
    assert client.get(reverse("adjudication:case", args=[case.pk])).status_code == 404
    assert client.get(reverse("adjudication-api-case", args=[case.pk])).status_code == 404


def test_stranger_learns_nothing_about_the_case(client, case, stranger):
    _login(client, stranger)
    assert client.get(reverse("adjudication:queue", args=[case.pool.study.slug])).status_code == 404
    assert client.get(reverse("adjudication:case", args=[case.pk])).status_code == 404
    assert client.get(reverse("adjudication:case", args=[999999])).status_code == 404
    assert client.post(reverse("adjudication-api-case-decide", args=[case.pk]), {"value": "yes"}).status_code == 404


def test_case_page_shows_pseudonyms_time_on_task_and_the_sentence_highlighted(client, case, adjudicator):
    body = _login(client, adjudicator).get(reverse("adjudication:case", args=[case.pk])).content.decode()
    assert "P-A1" in body and "P-A2" in body
    assert "p-annotator-0" not in body  # usernames never appear
    assert "42 s" in body and "17 s" in body
    assert '<mark id="unit-mark">Take 0.5 mg daily.</mark>' in body
    assert "&lt;b&gt;Hello&lt;/b&gt;" in body  # item text is escaped
    assert "The usual dose is 0.5 mg daily." in body
    assert "adjudication/case.js" in body
    assert not re.search(r"<script(?![^>]*\bsrc=)", body), "no inline script"
    assert "style=" not in body


def test_annotators_are_shown_in_an_order_shuffled_per_case_and_stable_across_reloads(case):
    first = [a.pseudonym for a in case_detail(case=case).answers]
    assert first == [a.pseudonym for a in case_detail(case=case).answers]
    orders = set()
    for seed in range(12):
        AdjudicationCase.objects.filter(pk=case.pk).update(shuffle_seed=seed)
        case.refresh_from_db()
        orders.add(tuple(a.pseudonym for a in case_detail(case=case).answers))
    assert len(orders) == 2


def test_scores_are_shown_only_when_the_study_allows_it(client, case, adjudicator):
    run = ScoreRun.objects.create(study=case.pool.study, metric="cf", metric_version="1", backend="lexical")
    Score.objects.create(run=run, item=case.item, unit_key="s:0", value=0.73, state="ok")
    _login(client, adjudicator)
    url = reverse("adjudication:case", args=[case.pk])
    assert "0.730" not in client.get(url).content.decode()
    assert "scores" not in client.get(reverse("adjudication-api-case", args=[case.pk])).json()
    type(case.pool.study).objects.filter(pk=case.pool.study_id).update(show_scores_to_adjudicators=True)
    assert "0.730" in client.get(url).content.decode()
    assert client.get(reverse("adjudication-api-case", args=[case.pk])).json()["scores"][0]["value"] == 0.73


def test_htmx_decision_saves_gold_and_answers_the_fragment_with_the_history(client, case, adjudicator):
    response = _login(client, adjudicator).post(
        reverse("adjudication:case", args=[case.pk]),
        {
            "value": "yes",
            "rationale": "States a dose.",
            "confidence": "4",
            "guideline_gap": "1",
            "expected_version": "0",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="decision">')
    assert "States a dose." in body and "(current)" in body
    gold = GoldLabel.objects.get()
    assert (gold.value, gold.source, gold.confidence, gold.guideline_gap, gold.adjudicator) == (
        "yes",
        "adjudicated",
        4,
        True,
        adjudicator,
    )
    assert response["Vary"].count("HX-Request") == 1


def test_a_stale_decision_from_the_page_is_a_409_and_keeps_the_first(client, case, adjudicator):
    _login(client, adjudicator)
    url = reverse("adjudication:case", args=[case.pk])
    client.post(url, {"value": "yes", "expected_version": "0"}, HTTP_HX_REQUEST="true")
    response = client.post(url, {"value": "no", "expected_version": "0"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    assert list(GoldLabel.objects.values_list("value", flat=True)) == ["yes"]


def test_saving_moves_to_the_next_open_case_and_says_what_was_saved(client, case, adjudicator):
    """The last open case stays on its page as decided (a revision needs its reason); with another open
    case, the save opens it and says so."""
    study = case.pool.study
    other_item = factories.make_item(study, "q-2", answer="Stop the drug. Bye!")
    a, b = (m.user for m in case.pool.memberships.order_by("pk")[:2])  # the two who disagreed on the first case
    submit_labels(case.pool, other_item, a, {("information_bearing", "s:0"): "yes"})
    submit_labels(case.pool, other_item, b, {("information_bearing", "s:0"): "no"})
    item_disagreements_detect(pool_id=case.pool.pk, item_id=other_item.pk)
    other = AdjudicationCase.objects.get(item=other_item)
    _login(client, adjudicator)
    first = client.post(
        reverse("adjudication:case", args=[case.pk]), {"value": "yes", "expected_version": "0"}, HTTP_HX_REQUEST="true"
    )
    assert first.status_code == 200 and first["HX-Redirect"] == reverse("adjudication:case", args=[other.pk])
    page = client.get(first["HX-Redirect"]).content.decode()
    assert f"Case #{case.pk} decided: gold version 1 saved. This is the next open case." in page
    # The last open case: the page stays, says it was saved and that nothing is left, and turns into a revision.
    last = client.post(
        reverse("adjudication:case", args=[other.pk]), {"value": "no", "expected_version": "0"}, HTTP_HX_REQUEST="true"
    )
    body = last.content.decode()
    assert last.status_code == 200 and "HX-Redirect" not in last
    assert "Decision saved as gold version 1. No open case is left in this study." in body
    assert 'name="revise_reason"' in body and "Revise decision" in body
    # Pressing save again on the decided case writes nothing and says why.
    again = client.post(
        reverse("adjudication:case", args=[other.pk]), {"value": "yes", "expected_version": "1"}, HTTP_HX_REQUEST="true"
    )
    assert again.status_code == 409 and "revise it and say why" in again.content.decode()
    assert GoldLabel.objects.filter(item=other_item).count() == 1
    revised = client.post(
        reverse("adjudication:case", args=[other.pk]),
        {"value": "yes", "expected_version": "1", "revise_reason": "the chunk says stop"},
        HTTP_HX_REQUEST="true",
    )
    assert revised.status_code == 200
    current = GoldLabel.objects.get(item=other_item, is_current=True)
    assert (current.version, current.value, current.rationale) == (2, "yes", "Revision: the chunk says stop")


def test_unresolved_from_the_page(client, case, adjudicator):
    _login(client, adjudicator).post(
        reverse("adjudication:case", args=[case.pk]),
        {"unresolved": "1", "rationale": "unclear"},
        HTTP_HX_REQUEST="true",
    )
    assert GoldLabel.objects.get().source == "unresolved"


def test_the_api_decides_with_the_same_service_and_returns_the_new_version(client, case, adjudicator):
    _login(client, adjudicator)
    url = reverse("adjudication-api-case-decide", args=[case.pk])
    first = client.post(url, {"value": "no", "confidence": 3, "expected_version": 0}, content_type="application/json")
    assert first.status_code == 201 and first.json()["version"] == 1
    again = client.post(url, {"value": "yes", "expected_version": 1}, content_type="application/json")
    assert again.status_code == 409 and again.json()["details"] == {"field": "revise_reason"}
    second = client.post(
        url, {"value": "yes", "expected_version": 1, "revise_reason": "misread the passage"},
        content_type="application/json",
    )
    assert second.status_code == 201 and second.json()["version"] == 2
    stale = client.post(
        url, {"value": "no", "expected_version": 1, "revise_reason": "x"}, content_type="application/json"
    )
    assert stale.status_code == 409
    detail = client.get(reverse("adjudication-api-case", args=[case.pk])).json()
    assert [g["version"] for g in detail["gold_history"]] == [2, 1]
    assert {a["annotator"] for a in detail["answers"]} == {"P-A1", "P-A2"}


def test_a_second_person_accepts_a_proposed_aspect_on_the_case_page(client, case, adjudicator, annotator):
    Aspect.objects.create(item=case.item, text="Dose", version=1)
    proposed = Aspect.objects.create(
        item=case.item,
        text="Kidney function",
        origin=AspectOrigin.PROPOSED,
        status=AspectStatus.PROPOSED,
        proposed_by=annotator,
    )
    _login(client, adjudicator)
    assert "Kidney function" in client.get(reverse("adjudication:case", args=[case.pk])).content.decode()
    response = client.post(
        reverse("adjudication:aspect-decide", args=[proposed.pk]), {"decision": "accept"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    proposed.refresh_from_db()
    assert (proposed.status, proposed.version, proposed.decided_by) == ("accepted", 2, adjudicator)


def test_the_proposer_cannot_accept_through_the_api(client, case, annotator):
    factories.grant(case.pool.study, annotator, "adjudicator")
    proposed = Aspect.objects.create(
        item=case.item,
        text="Mine",
        origin=AspectOrigin.PROPOSED,
        status=AspectStatus.PROPOSED,
        proposed_by=annotator,
        decided_at=None,
        created_at=timezone.now(),
    )
    response = _login(client, annotator).post(
        reverse("adjudication-api-aspect-decide", args=[proposed.pk]),
        {"decision": "accept"},
        content_type="application/json",
    )
    assert response.status_code == 403


# --- The reads behind these pages (adjudication/selectors.py), one by one --------------------------------------
# Each rule below is one the pages depend on: who may fetch an object by its id, which cases and aspects a study's
# queue lists and in which order, and what the case page shows (only this pool's submitted answers, under this
# pool's pseudonyms). The human measures (D's reports) read the same labels, so they are pinned here too.


def _no_such(fetch, user, pk, what):
    with pytest.raises(NotFound) as raised:
        fetch(user, pk)
    assert raised.value.message == f"no such {what}"


def test_a_case_or_aspect_is_fetched_for_its_studys_adjudicators_and_researchers_only(
    case, adjudicator, annotator, researcher, stranger, django_assert_num_queries
):
    study = case.pool.study
    for user in (adjudicator, researcher):
        with django_assert_num_queries(2):  # the case with its pool, study, item and question; the user's roles
            got = selectors.get_case_for_adjudicator(user, case.pk)
            seen = (got.pool.study.slug, got.item.external_id, got.question.key)
            assert seen == (study.slug, "q-1", "information_bearing")
        assert got == case
    other_study = factories.make_study()
    other_adjudicator = factories.make_user("adjudicator-elsewhere")
    factories.grant(other_study, other_adjudicator, "adjudicator")
    for user in (annotator, stranger, other_adjudicator):  # a member without the role, a stranger, another study's
        _no_such(selectors.get_case_for_adjudicator, user, case.pk, "case")
    _no_such(selectors.get_case_for_adjudicator, adjudicator, case.pk + 1000, "case")

    aspect = Aspect.objects.create(item=case.item, text="Dose")
    for user in (adjudicator, researcher):
        with django_assert_num_queries(2):
            got = selectors.get_aspect_for_adjudicator(user, aspect.pk)
            assert (got.item.study.slug, got.text) == (study.slug, "Dose")
    for user in (annotator, stranger, other_adjudicator):
        _no_such(selectors.get_aspect_for_adjudicator, user, aspect.pk, "aspect")
    _no_such(selectors.get_aspect_for_adjudicator, adjudicator, aspect.pk + 1000, "aspect")


def test_a_pool_or_an_export_is_fetched_for_its_studys_researchers_only(
    case, adjudicator, annotator, researcher, stranger, django_assert_num_queries
):
    study = case.pool.study
    job = ExportJob.objects.create(study=study, format="jsonl")
    with django_assert_num_queries(2):
        assert selectors.get_pool_for_researcher(researcher, case.pool.pk).study.slug == study.slug
    with django_assert_num_queries(2):
        assert selectors.get_export_for_researcher(researcher, job.pk).study.slug == study.slug
    for user in (adjudicator, annotator, stranger):
        _no_such(selectors.get_pool_for_researcher, user, case.pool.pk, "pool")
        _no_such(selectors.get_export_for_researcher, user, job.pk, "export")
    _no_such(selectors.get_pool_for_researcher, researcher, case.pool.pk + 1000, "pool")
    _no_such(selectors.get_export_for_researcher, researcher, job.pk + 1000, "export")


def test_consensus_rules_list_each_pool_by_name_with_its_questions_majority_flags(
    study, researcher, django_assert_num_queries
):
    q1, q2 = yes_no(study, "q1"), yes_no(study, "q2")
    zed = factories.make_pool(study, "Zed", questions=[q1, q2])
    alpha = factories.make_pool(study, "Alpha", questions=[q1])
    ConsensusRule.objects.create(pool=zed, question=q2, majority=True)
    ConsensusRule.objects.create(pool=alpha, question=q1, majority=False)
    elsewhere = factories.make_study()
    factories.make_pool(elsewhere, "Other", questions=[yes_no(elsewhere, "q1")])
    with django_assert_num_queries(3):  # the majority rules, the pools, their questions
        rules = selectors.consensus_rules(study=study)
        assert [(r["pool"].name, sorted((q.key, m) for q, m in r["questions"])) for r in rules] == [
            ("Alpha", [("q1", False)]),
            ("Zed", [("q1", False), ("q2", True)]),
        ]


def _also_member(pool, user, pseudonym):
    """``user`` joins a second pool of the study (the study's pools made not independent, as they must be)."""
    type(pool.study).objects.filter(pk=pool.study_id).update(independent_pools=False)
    PoolMembership.objects.filter(study=pool.study_id).update(independent=False)
    PoolMembership.objects.create(pool=pool, study=pool.study, user=user, independent=False, pseudonym=pseudonym)


def _label(assignment, question, unit_key, value):
    return Label.objects.create(
        assignment=assignment, question=question, unit_key=unit_key, value=value,
        updated_by=assignment.annotator, updated_at=timezone.now(),
    )


def _open_case(pool, item, question, unit_key="item", *, status="open", opened_minutes_ago=0):
    case = AdjudicationCase.objects.create(pool=pool, item=item, question=question, unit_key=unit_key, status=status)
    AdjudicationCase.objects.filter(pk=case.pk).update(opened_at=timezone.now() - timedelta(minutes=opened_minutes_ago))
    return case


def test_the_queue_lists_this_studys_cases_of_a_status_oldest_first_with_their_labels(
    case, study, django_assert_num_queries
):
    q = case.question
    later = _open_case(case.pool, factories.make_item(study, "q-2"), q, opened_minutes_ago=0)
    older = _open_case(case.pool, factories.make_item(study, "q-3"), q, opened_minutes_ago=120)
    resolved = _open_case(case.pool, factories.make_item(study, "q-4"), q, status="resolved", opened_minutes_ago=60)
    AdjudicationCase.objects.filter(pk=case.pk).update(opened_at=timezone.now() - timedelta(minutes=30))
    elsewhere = factories.make_study()
    stray_pool = factories.make_pool(elsewhere, questions=[yes_no(elsewhere, "ib")])
    _open_case(stray_pool, factories.make_item(elsewhere, "x-1"), stray_pool.questions.get(), opened_minutes_ago=500)
    with django_assert_num_queries(1):  # with each case's pool, item and question
        queue = list(selectors.case_queue(study=study))
        assert {(c.pool.name, c.question.key) for c in queue} == {("P", "information_bearing")}
        assert [c.item.external_id for c in queue] == ["q-3", "q-1", "q-2"]
    assert [c.pk for c in queue] == [older.pk, case.pk, later.pk]
    assert [c.n_labels for c in queue] == [0, 2, 0]  # the case links the two disagreeing labels
    assert [c.pk for c in selectors.case_queue(study=study, status="resolved")] == [resolved.pk]
    assert [c.pk for c in selectors.case_queue(study=study, status="")] == [older.pk, resolved.pk, case.pk, later.pk]
    # Cases opened at the same instant come in the order they were created.
    same = timezone.now()
    AdjudicationCase.objects.filter(pool__study=study).update(opened_at=same)
    assert [c.pk for c in selectors.case_queue(study=study, status="")] == sorted(
        [older.pk, resolved.pk, case.pk, later.pk]
    )
    assert selectors.case_counts(study=study) == {"open": 3, "resolved": 1, "unresolved": 0, "withdrawn": 0}
    assert selectors.case_counts(study=elsewhere) == {"open": 1, "resolved": 0, "unresolved": 0, "withdrawn": 0}


def test_the_next_open_case_is_the_oldest_other_open_case_of_this_study(case, study):
    q = case.question
    assert selectors.case_next_open(study=study, after_case_id=case.pk) is None
    a = _open_case(case.pool, factories.make_item(study, "q-2"), q, opened_minutes_ago=10)
    b = _open_case(case.pool, factories.make_item(study, "q-3"), q, opened_minutes_ago=20)
    _open_case(case.pool, factories.make_item(study, "q-4"), q, status="resolved", opened_minutes_ago=90)
    elsewhere = factories.make_study()
    stray_pool = factories.make_pool(elsewhere, questions=[yes_no(elsewhere, "ib")])
    _open_case(stray_pool, factories.make_item(elsewhere, "x-1"), stray_pool.questions.get(), opened_minutes_ago=99)
    AdjudicationCase.objects.filter(pk=case.pk).update(opened_at=timezone.now() - timedelta(minutes=30))
    assert selectors.case_next_open(study=study, after_case_id=case.pk) == b
    assert selectors.case_next_open(study=study, after_case_id=b.pk) == case
    AdjudicationCase.objects.filter(pool__study=study).update(opened_at=timezone.now())
    assert selectors.case_next_open(study=study, after_case_id=case.pk) == min(a, b, key=lambda c: c.pk)


def test_proposed_aspects_are_this_studys_proposals_oldest_first(case, study, annotator, django_assert_num_queries):
    item = case.item
    Aspect.objects.create(item=item, text="Accepted")
    Aspect.objects.create(item=item, text="Rejected", status=AspectStatus.REJECTED)
    Aspect.objects.create(item=item, text="New", status=AspectStatus.PROPOSED, proposed_by=annotator)
    old = Aspect.objects.create(item=item, text="Old", status=AspectStatus.PROPOSED, proposed_by=annotator)
    Aspect.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=1))
    elsewhere = factories.make_study()
    Aspect.objects.create(item=factories.make_item(elsewhere, "x"), text="Stray", status=AspectStatus.PROPOSED)
    with django_assert_num_queries(1):  # with each aspect's item and proposer
        proposed = [
            (a.text, a.item.external_id, a.proposed_by.username) for a in selectors.proposed_aspects(study=study)
        ]
    assert proposed == [("Old", "q-1", annotator.username), ("New", "q-1", annotator.username)]
    Aspect.objects.filter(item__study=study).update(created_at=timezone.now())
    assert [a.text for a in selectors.proposed_aspects(study=study)] == ["New", "Old"]  # a tie: by id


def _unit(item, key, aspects=()):
    return selectors._unit_context(item, key, list(Sentence.objects.filter(item=item)), list(aspects))


def test_the_case_page_names_and_marks_the_unit_in_question(study):
    item = factories.make_item(study, "u", answer="First one. Second one.", source="Src A. Src B.")
    Sentence.objects.create(item=item, part="source", index=0, text="Src A.", start=0, end=6)
    Sentence.objects.create(item=item, part="source", index=1, text="Src B.", start=7, end=13)
    aspect = Aspect.objects.create(item=item, text="Dose")
    answer = "First one. Second one."
    assert _unit(item, "item") == selectors.UnitContext("item", "the answer as a whole", answer_before=answer)
    assert _unit(item, "bogus") == selectors.UnitContext("item", "bogus", answer_before=answer)
    assert _unit(item, "s:1") == selectors.UnitContext("sentence", "sentence 2", "First one. ", "Second one.", "")
    assert _unit(item, "s:0") == selectors.UnitContext("sentence", "sentence 1", "", "First one.", " Second one.")
    assert _unit(item, "s:7") == selectors.UnitContext(
        "sentence", "answer sentence 7 (no longer present)", answer_before=answer
    )
    assert _unit(item, "src:1") == selectors.UnitContext(
        "source", "source sentence 2", answer_before=answer, source_before="Src A. ", source_marked="Src B."
    )
    assert _unit(item, "src:0") == selectors.UnitContext(
        "source", "source sentence 1", answer_before=answer, source_marked="Src A.", source_after=" Src B."
    )
    assert _unit(item, "src:5") == selectors.UnitContext(
        "sentence", "source sentence 5 (no longer present)", answer_before=answer
    )
    assert _unit(item, "c:3") == selectors.UnitContext(
        "chunk", "retrieved chunk 3", answer_before=answer, chunk_rank=3
    )
    assert _unit(item, f"a:{aspect.pk}", [aspect]) == selectors.UnitContext(
        "aspect", "expected aspect", answer_before=answer, aspect=aspect
    )
    assert _unit(item, f"a:{aspect.pk + 1}", [aspect]).aspect is None


def test_the_case_page_shows_only_this_pools_submitted_answers_to_this_unit_under_this_pools_pseudonyms(
    case, study, annotator
):
    """Blinding: labels of the same item in another pool, of another unit or question, or of an assignment not
    submitted never reach the adjudicator, and nobody appears under a username or another pool's pseudonym."""
    pool, item = case.pool, case.item
    ib = case.question
    other_q = yes_no(study, "other", scope="sentence")
    pool.questions.add(other_q)
    a, b = (m.user for m in pool.memberships.order_by("pk")[:2])
    # The same annotators in another pool, under other pseudonyms, answering the same item and question.
    other_pool = factories.make_pool(study, "Other pool", questions=[ib])
    _also_member(other_pool, a, "OTHER-1")
    submit_labels(other_pool, item, a, {("information_bearing", "s:0"): "maybe-elsewhere"})
    # This pool's third member has only started (unsubmitted answers stay private).
    submit_labels(pool, item, annotator, {("information_bearing", "s:0"): "draft"}, status="started")
    Label.objects.filter(assignment__pool=pool, assignment__annotator=a).update(value="yes")
    # Another unit and another question of this item in this pool.
    assignment_a = Assignment.objects.get(pool=pool, item=item, annotator=a)
    _label(assignment_a, ib, "s:1", "other-unit")
    _label(assignment_a, other_q, "s:0", "other-q")
    # The same annotator's answer to the same unit and question of another item of this pool.
    submit_labels(pool, factories.make_item(study, "q-other"), a, {("information_bearing", "s:0"): "other-item"})
    # A member who submitted without answering this unit, and one whose membership is gone.
    quiet = factories.make_user("quiet")
    factories.add_member(pool, quiet, pseudonym="P-Q")
    submit_labels(pool, item, quiet, {}, active_seconds=2.6)
    gone = factories.make_user("gone")
    submit_labels(pool, item, gone, {("information_bearing", "s:0"): "no"}, active_seconds=1.4)
    detail = selectors.case_detail(case=case)
    by_name = {x.pseudonym: x for x in detail.answers}
    assert set(by_name) == {"P-A1", "P-A2", "P-Q", "unknown annotator"}
    assert (by_name["P-A1"].value, by_name["P-A1"].display, by_name["P-A1"].answered) == ("yes", "Yes", True)
    assert (by_name["P-A2"].value, by_name["P-A2"].display, by_name["P-A1"].active_seconds) == ("no", "No", 42)
    assert by_name["P-A2"].active_seconds == 17
    assert (by_name["P-Q"].value, by_name["P-Q"].answered, by_name["P-Q"].active_seconds) == (None, False, 3)
    assert by_name["P-Q"].display == "no answer (not asked or left empty)"
    assert (by_name["unknown annotator"].value, by_name["unknown annotator"].active_seconds) == ("no", 1)
    # The order is this pool's submitted assignments by id, shuffled with the case's seed.
    expected = [
        {a.pk: "P-A1", b.pk: "P-A2", quiet.pk: "P-Q"}.get(x.annotator_id, "unknown annotator")
        for x in Assignment.objects.filter(pool=pool, item=item, status="submitted").order_by("pk")
    ]
    random.Random(case.shuffle_seed).shuffle(expected)
    assert [x.pseudonym for x in detail.answers] == expected
    assert (detail.item, detail.question, detail.unit.kind, detail.unit.description) == (
        item, ib, "sentence", "sentence 1"
    )


def test_the_case_page_lists_this_units_gold_history_newest_first_and_the_items_aspects_and_chunks(
    case, study, adjudicator, annotator, django_assert_num_queries
):
    pool, item, q = case.pool, case.item, case.question
    assert (selectors.case_detail(case=case).current_gold, selectors.case_detail(case=case).current_version) == (
        None, 0
    )
    common = {"pool": pool, "item": item, "question": q, "source": "adjudicated"}
    GoldLabel.objects.create(**common, unit_key="s:0", value="no", version=1, is_current=False, adjudicator=adjudicator)
    GoldLabel.objects.create(**common, unit_key="s:0", value="yes", version=2, is_current=True)
    GoldLabel.objects.create(**common, unit_key="s:1", value="no", version=5)  # another unit
    other_pool = factories.make_pool(study, "Other", questions=[q])
    GoldLabel.objects.create(**{**common, "pool": other_pool}, unit_key="s:0", value="no", version=9)
    other_item = factories.make_item(study, "q-9")
    GoldLabel.objects.create(**{**common, "item": other_item}, unit_key="s:0", value="no", version=8)
    other_q = yes_no(study, "other-q", scope="sentence")
    GoldLabel.objects.create(**{**common, "question": other_q}, unit_key="s:0", value="no", version=7)
    factories.make_chunk(other_item, 1, "Another item's passage.")
    Aspect.objects.create(item=other_item, text="Another item's aspect")
    Aspect.objects.create(item=other_item, text="Another item's proposal", status=AspectStatus.PROPOSED)
    factories.make_chunk(item, 2, "Second passage.")
    accepted = Aspect.objects.create(item=item, text="Dose")
    proposed = Aspect.objects.create(item=item, text="Kidney", status=AspectStatus.PROPOSED, proposed_by=annotator)
    Aspect.objects.create(item=item, text="No", status=AspectStatus.REJECTED)
    case = selectors.get_case_for_adjudicator(adjudicator, case.pk)  # as the page fetches it
    # Sentences, chunks, aspects with their proposers, pseudonyms, labels, assignments, gold with its adjudicators.
    with django_assert_num_queries(7):
        detail = selectors.case_detail(case=case)
        assert [(g.version, g.value, g.adjudicator) for g in detail.gold_history] == [
            (2, "yes", None), (1, "no", adjudicator)
        ]
        assert [a.proposed_by for a in detail.proposed] == [annotator]
    assert (detail.current_gold.version, detail.current_version) == (2, 2)
    assert [(c.rank, c.text) for c in detail.chunks] == [(1, "The usual dose is 0.5 mg daily."), (2, "Second passage.")]
    assert (detail.aspects, detail.proposed) == ([accepted], [proposed])
    assert (detail.scores, detail.scores_shown) == ([], False)


def test_the_case_page_shows_the_scores_of_this_unit_and_of_the_item_by_metric(
    case, study, django_assert_num_queries
):
    type(study).objects.filter(pk=study.pk).update(show_scores_to_adjudicators=True)
    item = case.item
    zeta = ScoreRun.objects.create(study=study, metric="zeta", metric_version="1", backend="lexical")
    alpha = ScoreRun.objects.create(study=study, metric="alpha", metric_version="1", backend="lexical")
    Score.objects.create(run=zeta, item=item, unit_key="s:0", value=0.1, state="ok")
    Score.objects.create(run=alpha, item=item, unit_key="s:0", value=0.2, state="ok")
    Score.objects.create(run=alpha, item=item, unit_key="item", value=0.3, state="ok")
    Score.objects.create(run=alpha, item=item, unit_key="s:1", value=0.4, state="ok")  # another unit
    Score.objects.create(run=alpha, item=factories.make_item(study, "q-2"), unit_key="s:0", value=0.5, state="ok")
    case = AdjudicationCase.objects.select_related("pool__study", "item", "question").get(pk=case.pk)
    with django_assert_num_queries(8):  # the seven of the page, and the scores with their runs
        detail = selectors.case_detail(case=case)
        assert detail.scores_shown is True
        assert [(s.run.metric, s.unit_key, s.value) for s in detail.scores] == [
            ("alpha", "item", 0.3), ("alpha", "s:0", 0.2), ("zeta", "s:0", 0.1)
        ]


# --- Human measures (D's reports) --------------------------------------------------------------------------------


@pytest.fixture
def measured(study):
    """A pool answering every question the human measures read (ASTRID's CF questions, ICAT's aspect_covered,
    ASTRID's context_relevant), two submitted annotators, and a second item and pool to keep out."""
    ib = yes_no(study, "information_bearing", scope="sentence")
    grounded = factories.make_question(
        study, "grounded", scope="sentence", kind="nominal",
        options=[{"value": v, "label": v, "key": ""} for v in ("supported", "unsupported", "contradicted")],
    )
    relevant = yes_no(study, "context_relevant", scope="chunk")
    covered = yes_no(study, "aspect_covered", scope="aspect")
    pool, (a, b) = pool_with_members(study, [ib, grounded, relevant, covered], n=2, name="M")
    item = factories.make_item(study, "m-1", answer="Hello there! Take 0.5 mg daily. Avoid alcohol.")
    for index in range(2):  # source sentences are not units of CF
        Sentence.objects.create(item=item, part="source", index=index, text="Source.", start=0, end=7)
    factories.make_chunk(item, 1)
    factories.make_chunk(item, 2, "Unrelated.")
    factories.make_chunk(item, 3, "Also relevant.")
    dose = Aspect.objects.create(item=item, text="Dose")
    alcohol = Aspect.objects.create(item=item, text="Alcohol")
    Aspect.objects.create(item=item, text="Retired", retired_in_version=2)
    Aspect.objects.create(item=item, text="Proposed", status=AspectStatus.PROPOSED)
    answers = {
        ("information_bearing", "s:0"): "no",
        ("information_bearing", "s:1"): "yes",
        ("information_bearing", "s:2"): "yes",
        ("grounded", "s:1"): "supported",
        ("grounded", "s:2"): "supported",
        ("context_relevant", "c:1"): "yes",
        ("context_relevant", "c:2"): "no",
        ("context_relevant", "c:3"): "yes",
        ("aspect_covered", f"a:{dose.pk}"): "yes",
        ("aspect_covered", f"a:{alcohol.pk}"): "yes",
    }
    submit_labels(pool, item, a, answers)
    submit_labels(
        pool, item, b,
        {**answers, ("grounded", "s:2"): "unsupported", ("context_relevant", "c:3"): "no",
         ("aspect_covered", f"a:{alcohol.pk}"): "no"},
    )
    return {"pool": pool, "item": item, "a": a, "b": b, "dose": dose, "alcohol": alcohol,
            "questions": {"ib": ib, "grounded": grounded, "relevant": relevant, "covered": covered}}


def _values(pool, measure, rater):
    result = selectors.human_measure_values(pool_id=pool.pk, measure=measure, rater=rater)
    assert (result.measure, result.rater) == (measure, rater)
    return result.values, result.undefined


def test_human_measures_per_annotator_read_only_their_submitted_labels_in_this_pool(study, measured):
    pool, item, a = measured["pool"], measured["item"], measured["a"]
    assert _values(pool, "human_cf", "M-A1") == ({"m-1": 1.0}, {})
    assert _values(pool, "human_cf", "M-A2") == ({"m-1": 0.5}, {})
    assert _values(pool, "human_aspect_coverage", "M-A1") == ({"m-1": 1.0}, {})  # retired and proposed left out
    assert _values(pool, "human_aspect_coverage", "M-A2") == ({"m-1": 0.5}, {})
    assert _values(pool, "human_chunk_relevance", "M-A1") == ({"m-1": pytest.approx(2 / 3)}, {})
    assert _values(pool, "human_chunk_relevance", "M-A2") == ({"m-1": pytest.approx(1 / 3)}, {})
    # The same annotator in another pool, on the same item, answering otherwise: not read here.
    other = factories.make_pool(study, "Other", questions=list(measured["questions"].values()))
    _also_member(other, a, "O-1")
    submit_labels(other, item, a, {("grounded", "s:1"): "contradicted", ("context_relevant", "c:1"): "no"})
    submit_labels(other, factories.make_item(study, "m-3"), a, {("information_bearing", "s:0"): "no"})
    # An item only the other annotator of this pool judged.
    submit_labels(pool, factories.make_item(study, "m-4"), measured["b"], {("context_relevant", "c:1"): "yes"})
    # A second item of this pool that the annotator has only started: neither judged nor defined.
    started = factories.make_item(study, "m-2", answer="One. Two.")
    submit_labels(pool, started, a, {("information_bearing", "s:0"): "yes"}, status="started")
    assert _values(pool, "human_cf", "M-A1") == ({"m-1": 1.0}, {})
    assert _values(pool, "human_chunk_relevance", "M-A1") == ({"m-1": pytest.approx(2 / 3)}, {})
    assert _values(other, "human_cf", "O-1")[1] == {
        "m-1": "sentence 1 has no information-bearing answer",
        "m-3": "sentence 2 has no information-bearing answer",
    }


def test_an_item_with_a_unit_left_unanswered_is_undefined_with_the_reason(study, measured):
    pool, a = measured["pool"], measured["a"]
    for gone in (
        Label.objects.filter(assignment__annotator=a, question__key="grounded", unit_key="s:2"),
        Label.objects.filter(assignment__annotator=a, question__key="aspect_covered", unit_key__in=[
            f"a:{measured['dose'].pk}"]),
        Label.objects.filter(assignment__annotator=a, question__key="context_relevant", unit_key="c:2"),
    ):
        LabelHistory.objects.filter(label__in=gone).delete()
        gone.delete()
    values, undefined = _values(pool, "human_cf", "M-A1")
    assert values == {} and undefined == {"m-1": "information-bearing sentence 3 has no grounded answer"}
    assert _values(pool, "human_aspect_coverage", "M-A1") == ({}, {"m-1": "aspect 1 has no answer"})
    assert _values(pool, "human_chunk_relevance", "M-A1") == ({}, {"m-1": "chunk 2 has no answer"})


def test_human_measures_from_gold_read_this_pools_current_gold_only(study, measured, adjudicator):
    pool, item, q = measured["pool"], measured["item"], measured["questions"]
    assert _values(pool, "human_chunk_relevance", "gold") == ({}, {})  # no gold yet: nothing judged

    def gold(question, unit, value, *, version=1, current=True, in_pool=pool):
        GoldLabel.objects.create(pool=in_pool, item=item, question=question, unit_key=unit, value=value,
                                 source="adjudicated", version=version, is_current=current)

    for rank, value in ((1, "yes"), (2, "yes"), (3, "no")):
        gold(q["relevant"], f"c:{rank}", value)
    gold(q["relevant"], "c:3", "yes", version=0, current=False)  # an older version
    other = factories.make_pool(study, "Other", questions=list(q.values()))
    gold(q["relevant"], "c:3", "yes", version=2, in_pool=other)
    assert _values(pool, "human_chunk_relevance", "gold") == ({"m-1": pytest.approx(2 / 3)}, {})
    # An item whose only gold is no longer current (withdrawn), and one with gold of another question only: neither
    # has gold for this measure.
    withdrawn = factories.make_item(study, "m-5")
    factories.make_chunk(withdrawn, 1)
    GoldLabel.objects.create(pool=pool, item=withdrawn, question=q["relevant"], unit_key="c:1", value="yes",
                             source="adjudicated", version=1, is_current=False)
    elsewhere = factories.make_item(study, "m-6")
    factories.make_chunk(elsewhere, 1)
    GoldLabel.objects.create(pool=pool, item=elsewhere, question=q["covered"], unit_key="a:1", value="yes",
                             source="adjudicated")
    assert _values(pool, "human_chunk_relevance", "gold") == ({"m-1": pytest.approx(2 / 3)}, {})
    gold(q["ib"], "s:0", "no")
    gold(q["ib"], "s:1", "yes")
    gold(q["grounded"], "s:1", "contradicted")
    values, undefined = _values(pool, "human_cf", "gold")
    assert values == {} and undefined == {"m-1": "sentence 3 has no information-bearing answer"}
    gold(q["ib"], "s:2", "no")
    assert _values(pool, "human_cf", "gold") == ({"m-1": 0.0}, {})


def test_aspect_coverage_prefers_icat_then_k_qa_and_chunk_relevance_astrid_then_pubhealthbench(study):
    entail = factories.make_question(
        study, "aspect_entailment", scope="aspect", kind="nominal",
        options=[{"value": v, "label": v, "key": ""} for v in ("entailment", "neutral", "contradiction")],
    )
    supports = yes_no(study, "supports_answer", scope="chunk")
    pool, (a,) = pool_with_members(study, [entail, supports], n=1, name="K")
    item = factories.make_item(study, "k-1")
    factories.make_chunk(item, 1)
    factories.make_chunk(item, 2, "Other.")
    one, two = Aspect.objects.create(item=item, text="One"), Aspect.objects.create(item=item, text="Two")
    submit_labels(pool, item, a, {
        ("aspect_entailment", f"a:{one.pk}"): "entailment", ("aspect_entailment", f"a:{two.pk}"): "neutral",
        ("supports_answer", "c:1"): "yes", ("supports_answer", "c:2"): "no",
    })
    assert selectors.human_measures_available(pool_id=pool.pk) == ["human_aspect_coverage", "human_chunk_relevance"]
    assert _values(pool, "human_aspect_coverage", "K-A1") == ({"k-1": 0.5}, {})  # entailment counts, not "yes"
    assert _values(pool, "human_chunk_relevance", "K-A1") == ({"k-1": 0.5}, {})
    with pytest.raises(NotFound) as raised:
        selectors.human_measure_values(pool_id=pool.pk, measure="human_cf", rater="K-A1")
    assert raised.value.message == "pool 'K' does not answer information_bearing, grounded"
    # With ICAT's question too, coverage reads it rather than K-QA's.
    covered = yes_no(study, "aspect_covered", scope="aspect")
    pool.questions.add(covered)
    assignment = Assignment.objects.get(pool=pool, annotator=a)
    _label(assignment, covered, f"a:{one.pk}", "no")
    _label(assignment, covered, f"a:{two.pk}", "no")
    assert _values(pool, "human_aspect_coverage", "K-A1") == ({"k-1": 0.0}, {})


def test_which_measures_and_raters_a_pool_offers(study, measured):
    pool = measured["pool"]
    assert selectors.human_measures_available(pool_id=pool.pk) == [
        "human_cf", "human_aspect_coverage", "human_chunk_relevance"
    ]
    assert selectors.human_measure_raters(pool_id=pool.pk) == ["M-A1", "M-A2", "gold"]
    half = factories.make_pool(study, "Half", questions=[measured["questions"]["ib"]])
    factories.add_member(half, factories.make_user("zz"), pseudonym="Z")
    factories.add_member(half, factories.make_user("bb"), pseudonym="B")
    assert selectors.human_measures_available(pool_id=half.pk) == []  # CF needs both of its questions
    questions = measured["questions"]
    both = factories.make_pool(study, "Both", questions=[questions["ib"], questions["grounded"]])
    assert selectors.human_measures_available(pool_id=both.pk) == ["human_cf"]
    assert selectors.human_measure_raters(pool_id=half.pk) == ["B", "Z", "gold"]
    with pytest.raises(NotFound) as raised:
        selectors.human_measure_values(pool_id=half.pk, measure="human_chunk_relevance")
    assert raised.value.message == "pool 'Half' answers none of context_relevant, supports_answer"
    with pytest.raises(NotFound) as raised:
        selectors.human_measure_values(pool_id=half.pk, measure="human_aspect_coverage")
    assert raised.value.message == "pool 'Half' answers none of aspect_covered, aspect_entailment"
    with pytest.raises(NotFound) as raised:
        selectors.human_measure_values(pool_id=pool.pk, measure="human_cf", rater="Z")  # another pool's member
    assert raised.value.message == "no annotator 'Z' in pool 'M'"
    with pytest.raises(NotFound) as raised:
        selectors.human_measure_values(pool_id=pool.pk, measure="cf")
    assert raised.value.message == (
        "unknown human measure 'cf'; choose from human_cf, human_aspect_coverage, human_chunk_relevance"
    )


def test_a_case_on_an_aspect_names_that_aspect(case):
    aspect = Aspect.objects.create(item=case.item, text="Dose")
    aspect_case = _open_case(case.pool, case.item, case.question, f"a:{aspect.pk}")
    unit = selectors.case_detail(case=aspect_case).unit
    assert (unit.kind, unit.description, unit.aspect) == ("aspect", "expected aspect", aspect)
