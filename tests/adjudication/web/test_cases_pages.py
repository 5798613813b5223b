"""The adjudicator's queue and case page, and the REST endpoints for the same actions."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from adjudication.models import AdjudicationCase, GoldLabel
from adjudication.selectors import case_detail
from adjudication.services import item_disagreements_detect
from annotation.models import Aspect, AspectOrigin, AspectStatus
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
