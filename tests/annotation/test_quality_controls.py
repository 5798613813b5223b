"""Items of known answer in the queue (annotation.quality): the rate at which the queue serves them, their
blinding (nothing an annotator can reach tells a control item from an ordinary one), and the qualification
that a pool may require before any real item."""

from __future__ import annotations

import difflib
import io
import json
import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import quality
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlItem,
    ControlKind,
    QualificationAnswer,
    QualificationAttempt,
)
from annotation.services import assignment_reserve_next, assignment_submit, order_key_for, pool_assign_items
from concord.errors import ValidationFailed
from tests import factories

pytestmark = pytest.mark.django_db

SECRET = "CTRL-EXPLANATION-SECRET"


def _pool_with_controls(study, annotator, *, n_real: int, n_controls: int, control_rate: float, **extra):
    ok = factories.make_question(study, "ok", required=False)
    for n in range(n_real):
        factories.make_item(study, f"real-{n}")
    for n in range(n_controls):
        item = factories.make_item(study, f"ctl-{n}")
        quality.control_mark(
            study=study, item=item, kind=ControlKind.CONTROL, answers_raw={"ok": "no"}, explanation=SECRET, actor=None
        )
    pool = factories.make_pool(study, "p", questions=[ok], control_rate=control_rate, seed=7, **extra)
    factories.add_member(pool, annotator, "P1")
    pool_assign_items(pool=pool)
    return pool, ok


def _work_through(pool, annotator) -> list[bool]:
    """Take and submit every item of the queue; True where the item was a control item."""
    controls = quality.control_item_ids(pool.study_id)
    served = []
    while (assignment := assignment_reserve_next(pool=pool, annotator=annotator)) is not None:
        served.append(assignment.item_id in controls)
        assignment_submit(assignment=assignment, actor=annotator)
    return served


def test_controls_go_to_every_member_outside_the_overlap_and_are_served_at_the_pool_rate(
    study, annotator, no_submit_receivers
):
    pool, _ = _pool_with_controls(study, annotator, n_real=60, n_controls=30, control_rate=0.25)
    mine = Assignment.objects.filter(pool=pool, annotator=annotator)
    assert mine.count() == 90
    served = _work_through(pool, annotator)
    assert len(served) == 90
    # While both kinds remain (the first 60 positions hold at most 30 controls), what each position serves is the
    # position's own draw (a seeded hash of the pool, the annotator and the position), so it is reproducible and
    # independent of which items there are.
    expected = [
        quality.slot_kind(pool=pool, annotator_id=annotator.pk, position=n) == ControlKind.CONTROL for n in range(60)
    ]
    assert served[:60] == expected
    # And the draw serves controls at the pool's rate: over 10,000 positions the share is 0.25 (binomial sd 0.0043;
    # 0.02 is 4.6 sd, whatever ids the database gave the pool and the annotator — a count over 60 positions
    # depended on them and fell outside its bounds about once in fifty runs).
    share = sum(
        quality.slot_kind(pool=pool, annotator_id=annotator.pk, position=n) == ControlKind.CONTROL
        for n in range(10_000)
    ) / 10_000
    assert abs(share - 0.25) < 0.02, share


def test_known_answer_items_take_a_seeded_place_in_each_members_queue(study, annotator, no_submit_receivers):
    """Items of known answer are placed in each member's queue as real items are, by the hash of (seed, pool,
    member, item) (``services.order_key_for``): each member meets them in an order of their own, and a member
    who joins later is given them too."""
    pool, _ = _pool_with_controls(study, annotator, n_real=2, n_controls=4, control_rate=0.5)
    late = factories.make_user("late-joiner")
    factories.add_member(pool, late, "P2")
    pool_assign_items(pool=pool)
    rows = Assignment.objects.filter(pool=pool, item_id__in=quality.control_item_ids(study.pk))
    assert sorted(rows.values_list("annotator_id", flat=True)) == sorted([annotator.pk] * 4 + [late.pk] * 4)
    for row in rows:
        expected = order_key_for(seed=pool.seed, pool_id=pool.pk, annotator_id=row.annotator_id, item_id=row.item_id)
        assert row.order_key == expected


def test_a_pool_without_a_control_rate_never_serves_control_items(study, annotator, no_submit_receivers):
    pool, _ = _pool_with_controls(study, annotator, n_real=5, n_controls=3, control_rate=0)
    assert Assignment.objects.filter(pool=pool).count() == 5
    assert _work_through(pool, annotator) == [False] * 5


def test_qualification_items_are_never_in_a_queue(study, annotator, no_submit_receivers):
    ok = factories.make_question(study, "ok", required=False)
    q_item = factories.make_item(study, "qual-1")
    quality.control_mark(study=study, item=q_item, kind="qualification", answers_raw={"ok": "yes"}, explanation="",
                         actor=None)
    factories.make_item(study, "real-1")
    pool = factories.make_pool(study, "p", questions=[ok], control_rate=0.5, attention_rate=0.4)
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    assert list(Assignment.objects.filter(pool=pool).values_list("item__external_id", flat=True)) == ["real-1"]


def test_known_answers_are_checked_against_the_protocol(study):
    factories.make_question(study, "ok")
    factories.make_question(study, "span", scope="sentence")
    item = factories.make_item(study, "x")
    for raw, message in [
        ({}, "at least one"),
        ({"nope": "yes"}, "no question 'nope'"),
        ({"span": "yes"}, "not about the whole item"),
        ({"ok": "maybe"}, "'ok'"),
        ("yes", "object"),
    ]:
        with pytest.raises(ValidationFailed, match=message):
            quality.control_mark(study=study, item=item, kind="control", answers_raw=raw, explanation="", actor=None)
    with pytest.raises(ValidationFailed, match="kind"):
        quality.control_mark(study=study, item=item, kind="gold", answers_raw={"ok": "yes"}, explanation="", actor=None)


# --- Blinding: per endpoint, a control item reads exactly like an ordinary one --------------------------------


@pytest.fixture
def twin(study, annotator, no_submit_receivers):
    """Two items with the same content, one of them a control item (known answer, an explanation), both assigned
    to the annotator, in a pool that serves controls."""
    ok = factories.make_question(study, "ok", required=False)
    # Ids far from any other number on the pages, so that replacing them replaces nothing else.
    plain = factories.make_item(study, "twin-plain", answer="Same answer. Same text.", metadata={"m": 1}, id=7770001)
    control = factories.make_item(study, "twin-ctl", answer="Same answer. Same text.", metadata={"m": 1}, id=7770002)
    quality.control_mark(
        study=study, item=control, kind=ControlKind.CONTROL, answers_raw={"ok": "no"}, explanation=SECRET, actor=None
    )
    pool = factories.make_pool(study, "p", questions=[ok], control_rate=0.3)
    factories.add_member(pool, annotator, "P1")
    a_plain = factories.make_assignment(pool, plain, annotator, id=8880001, order_key=5)
    a_control = factories.make_assignment(pool, control, annotator, id=8880002, order_key=6)
    client = APIClient()
    client.force_login(annotator)
    return {"client": client, "plain": a_plain, "control": a_control, "pool": pool}


def _neutral(body: str, assignment: Assignment) -> str:
    """The body with what legitimately differs between the twins (their assignment and item ids, external ids,
    the per-item order) replaced."""
    body = body.replace(f"/{assignment.pk}/", "/ID/").replace(f'"{assignment.pk}"', '"ID"')
    body = re.sub(rf"\b{assignment.pk}\b", "ID", body)
    body = re.sub(rf"\b{assignment.item_id}\b", "ITEM", body)
    body = body.replace(assignment.item.external_id, "EXT")
    body = re.sub(r"csrfmiddlewaretoken\" value=\"[^\"]+\"", "CSRF", body)
    body = re.sub(r"\d{4}-\d\d-\d\d[T ][\d:.+Z-]+", "TIME", body)
    return re.sub(r'"order_key": ?\d+', '"order_key": 0', body)


ENDPOINTS = {
    "item page": lambda c, a: c.get(reverse("annotation:item", args=[a.pk])),
    "API assignment": lambda c, a: c.get(reverse("api-assignment", args=[a.pk])),
    "API labels": lambda c, a: c.get(reverse("api-labels", args=[a.pk])),
    "API save a label": lambda c, a: c.put(
        reverse("api-labels", args=[a.pk]), {"question": "ok", "unit_key": "item", "value": "yes", "base_version": 0},
        format="json",
    ),
    "API submit": lambda c, a: c.post(reverse("api-submit", args=[a.pk])),
    "item page after submitting": lambda c, a: c.get(reverse("annotation:item", args=[a.pk])),
}


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_a_control_item_reads_exactly_like_an_ordinary_one(twin, endpoint):
    client = twin["client"]
    # Each endpoint sees the twins in the same state: the endpoints before this one run on both, in turn.
    bodies = {}
    for previous in ENDPOINTS:
        for name in ("plain", "control"):
            response = ENDPOINTS[previous](client, twin[name])
            assert response.status_code in (200, 201), (previous, response.status_code)
            bodies[name] = response.content.decode()
        if previous == endpoint:
            break
    assert SECRET not in bodies["control"]
    assert "control" not in bodies["control"].replace("aria-controls", "").lower().replace("keyboard", "")
    diff = list(
        difflib.unified_diff(
            _neutral(bodies["plain"], twin["plain"]).splitlines(),
            _neutral(bodies["control"], twin["control"]).splitlines(), lineterm="", n=0,
        )
    )
    assert not diff, "\n".join(diff)


def test_lists_history_and_home_say_nothing_of_control_items(twin, annotator):
    client = twin["client"]
    for name in ("plain", "control"):
        client.post(reverse("api-submit", args=[twin[name].pk]))
    for url in (reverse("api-assignments"), reverse("annotation:history"), reverse("annotation:home")):
        body = client.get(url).content.decode()
        assert SECRET not in body
        assert "known answer" not in body.lower()
    listed = json.loads(client.get(reverse("api-assignments")).content)
    rows = listed["results"] if isinstance(listed, dict) else listed
    keys = {frozenset(r) for r in rows}
    assert len(keys) == 1, "every assignment has the same fields, control or not"


def test_the_next_item_api_answers_a_control_like_any_item(twin, annotator):
    client = twin["client"]
    seen = []
    for _ in range(2):
        response = client.post(reverse("api-pool-next", args=[twin["pool"].pk]))
        assert response.status_code == 200
        body = response.content.decode()
        assert SECRET not in body and "control" not in body.lower()
        seen.append(json.loads(body))
        client.post(reverse("api-submit", args=[seen[-1]["id"]]))
    assert set(seen[0]) == set(seen[1])


# --- Qualification ----------------------------------------------------------------------------------------


@pytest.fixture
def qualifying(study, annotator, no_submit_receivers):
    ok = factories.make_question(study, "ok", required=False)
    for n, known in enumerate(["yes", "no"]):
        item = factories.make_item(study, f"qual-{n}", question=f"Practice question {n}?")
        quality.control_mark(
            study=study, item=item, kind=ControlKind.QUALIFICATION, answers_raw={"ok": known},
            explanation=f"Because {n}.", actor=None,
        )
    real = factories.make_item(study, "real-0", question="A real question?")
    pool = factories.make_pool(
        study, "p", questions=[ok], qualification_required=True, qualification_pass_mark=1.0,
        qualification_max_attempts=2,
    )
    factories.add_member(pool, annotator, "P1")
    pool_assign_items(pool=pool)
    client = APIClient()
    client.force_login(annotator)
    return {"pool": pool, "client": client, "real": Assignment.objects.get(pool=pool, item=real)}


def _answer_all(client, pool, answers: list[str]) -> list[str]:
    pages = []
    client.post(reverse("annotation:qualification-start", args=[pool.pk]))
    for value in answers:
        page = client.get(reverse("annotation:qualification", args=[pool.pk])).content.decode()
        item_id = re.search(r'name="item" value="(\d+)"', page).group(1)
        url = reverse("annotation:qualification-answer", args=[pool.pk])
        response = client.post(url, {"item": item_id, "q-ok": value})
        assert response.status_code == 200
        pages.append(response.content.decode())
    return pages


def test_real_items_stay_closed_until_the_qualification_is_passed(qualifying, annotator):
    client, pool, real = qualifying["client"], qualifying["pool"], qualifying["real"]
    response = client.get(reverse("annotation:pool-continue", args=[pool.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("annotation:qualification", args=[pool.pk])
    for method, url, data in [
        ("get", reverse("annotation:item", args=[real.pk]), None),
        ("get", reverse("api-assignment", args=[real.pk]), None),
        ("get", reverse("api-labels", args=[real.pk]), None),
        ("put", reverse("api-labels", args=[real.pk]), {"question": "ok", "unit_key": "item", "value": "yes",
                                                         "base_version": 0}),
        ("post", reverse("annotation:submit", args=[real.pk]), None),
        ("post", reverse("api-pool-next", args=[pool.pk]), None),
    ]:
        response = getattr(client, method)(url, data, format="json") if data else getattr(client, method)(url)
        assert response.status_code == 403, (url, response.status_code)
        assert "qualification" in response.content.decode()
    assert not real.labels.exists()


def test_a_failed_attempt_shows_feedback_and_the_last_allowed_failure_blocks(qualifying, annotator):
    client, pool, real = qualifying["client"], qualifying["pool"], qualifying["real"]
    first = _answer_all(client, pool, ["yes", "yes"])  # the second is wrong: its known answer is "no"
    assert "Right" in first[0] and "Because 0." in first[0]
    assert "Not quite" in first[1] and "Because 1." in first[1] and 'class="known-answer">No<' in first[1]
    attempt = QualificationAttempt.objects.get(pool=pool, user=annotator, number=1)
    assert (attempt.n_items, attempt.n_correct, attempt.passed) == (2, 1, False)
    assert "1 attempt left" in first[1]
    _answer_all(client, pool, ["no", "no"])
    assert QualificationAttempt.objects.filter(pool=pool, user=annotator).count() == 2
    page = client.get(reverse("annotation:qualification", args=[pool.pk])).content.decode()
    assert 'id="qualification-blocked"' in page and "the most this pool allows" in page
    refused = client.post(reverse("annotation:qualification-start", args=[pool.pk]))
    assert refused.status_code == 400 and "all 2 attempts" in refused.content.decode()
    assert client.get(reverse("annotation:item", args=[real.pk])).status_code == 403
    assert QualificationAnswer.objects.filter(attempt__pool=pool).count() == 4


def test_passing_opens_the_real_items(qualifying, annotator):
    client, pool, real = qualifying["client"], qualifying["pool"], qualifying["real"]
    pages = _answer_all(client, pool, ["yes", "no"])
    assert 'id="qualification-passed"' in pages[-1]
    attempt = QualificationAttempt.objects.get(pool=pool, user=annotator)
    assert (attempt.n_correct, attempt.passed, attempt.finished_at is not None) == (2, True, True)
    response = client.get(reverse("annotation:pool-continue", args=[pool.pk]))
    assert response["Location"] == reverse("annotation:item", args=[real.pk])
    assert client.get(reverse("annotation:item", args=[real.pk])).status_code == 200
    again = client.post(reverse("annotation:qualification-start", args=[pool.pk]))
    assert again.status_code == 400


def test_an_answer_is_given_once_per_item_and_attempt(qualifying, annotator):
    client, pool = qualifying["client"], qualifying["pool"]
    client.post(reverse("annotation:qualification-start", args=[pool.pk]))
    page = client.get(reverse("annotation:qualification", args=[pool.pk])).content.decode()
    item_id = re.search(r'name="item" value="(\d+)"', page).group(1)
    url = reverse("annotation:qualification-answer", args=[pool.pk])
    assert client.post(url, {"item": item_id, "q-ok": "yes"}).status_code == 200
    assert client.post(url, {"item": item_id, "q-ok": "no"}).status_code == 400
    assert client.post(url, {"item": "999999", "q-ok": "no"}).status_code == 404
    assert client.post(url, {"item": "x", "q-ok": "no"}).status_code == 400
    assert client.post(url, {"item": str(qualifying["real"].item_id), "q-ok": "no"}).status_code == 404


def test_a_pool_without_qualification_says_so(study, annotator):
    pool = factories.make_pool(study, "p")
    factories.add_member(pool, annotator)
    client = APIClient()
    client.force_login(annotator)
    page = client.get(reverse("annotation:qualification", args=[pool.pk]))
    assert page.status_code == 200 and "asks for no qualification" in page.content.decode()
    assert client.post(reverse("annotation:qualification-start", args=[pool.pk])).status_code == 400


def test_control_marks_are_a_researchers_page(client, study, researcher, annotator):
    factories.make_question(study, "ok")
    factories.make_item(study, "x1")
    pool = factories.make_pool(study, "p")
    factories.add_member(pool, annotator)
    client.force_login(researcher)
    url = reverse("console:control_mark", args=[study.slug])
    response = client.post(url, {"external_id": "x1", "kind": "attention", "known-ok": "no", "explanation": "e"})
    assert response.status_code == 302
    control = ControlItem.objects.get(item__external_id="x1")
    assert (control.kind, control.answers) == ("attention", {"ok": "no"})
    bad = client.post(url, {"external_id": "x1", "kind": "control", "answers": '{"ok": "maybe"}'})
    assert bad.status_code == 400 and "&#x27;ok&#x27;" in bad.content.decode()
    missing = client.post(url, {"external_id": "nope", "kind": "control", "known-ok": "no"})
    assert missing.status_code == 400
    settings_url = reverse("console:quality_pool", args=[study.slug, pool.pk])
    assert client.post(settings_url, {"control_rate": "0.6", "attention_rate": "0.5"}).status_code == 400
    assert client.post(settings_url, {"control_rate": "abc"}).status_code == 400
    ok = client.post(settings_url, {"control_rate": "0.2", "attention_rate": "0.1", "flag_below": "0.7",
                                    "qualification_required": "on", "qualification_max_attempts": "3"})
    assert ok.status_code == 302
    pool.refresh_from_db()
    assert (pool.control_rate, pool.attention_rate, pool.flag_below, pool.qualification_required,
            pool.qualification_max_attempts) == (0.2, 0.1, 0.7, True, 3)
    assert Assignment.objects.filter(pool=pool, item=control.item, annotator=annotator).exists()
    client.force_login(annotator)
    assert client.get(reverse("console:quality", args=[study.slug])).status_code == 403


def test_unmarking_makes_an_item_ordinary(client, study, researcher):
    factories.make_question(study, "ok")
    item = factories.make_item(study, "x1")
    quality.control_mark(study=study, item=item, kind="control", answers_raw={"ok": "yes"}, explanation="", actor=None)
    client.force_login(researcher)
    response = client.post(reverse("console:control_unmark", args=[study.slug, item.external_id]))
    assert response.status_code == 302 and not ControlItem.objects.exists()
    assert client.post(reverse("console:control_unmark", args=[study.slug, "nope"])).status_code == 404


def test_answer_matching_uses_canonical_forms():
    assert quality.answer_matches("multilabel", ["b", "a"], ["a", "b"])
    assert quality.answer_matches("number", 2, 2.0)
    assert quality.answer_matches("text", " a  b ", "a b")
    assert not quality.answer_matches("binary", None, "yes")
    assert not quality.answer_matches("binary", "no", "yes")


def test_submitted_status_is_untouched_by_the_queue_split(study, annotator, no_submit_receivers):
    pool, _ = _pool_with_controls(study, annotator, n_real=2, n_controls=2, control_rate=0.5)
    _work_through(pool, annotator)
    assert set(Assignment.objects.filter(pool=pool).values_list("status", flat=True)) == {AssignmentStatus.SUBMITTED}


# --- The import field ---------------------------------------------------------------------------------------


def _import(study, researcher, records):
    from annotation.imports import items_import

    body = "\n".join(json.dumps(r) for r in records).encode()
    return items_import(study=study, file=io.BytesIO(body), filename="c.jsonl", actor=researcher)


def test_the_import_field_control_marks_items_of_known_answer(study, researcher):
    factories.make_question(study, "ok")
    factories.make_question(study, "tags", kind="multilabel", options=[
        {"value": "a", "label": "A", "key": "a"}, {"value": "b", "label": "B", "key": "b"}])
    _import(study, researcher, [
        {"id": "plain", "question": "q", "answer": "a."},
        {"id": "ctl", "question": "q", "answer": "a.", "control": {"answers": {"ok": "no", "tags": ["b", "a"]}}},
        {"id": "att", "question": "Choose 'No'.", "answer": "a.",
         "control": {"kind": "attention", "answers": {"ok": "no"}, "explanation": "It said No."}},
    ])
    got = {c.item.external_id: (c.kind, c.answers, c.explanation) for c in ControlItem.objects.select_related("item")}
    assert got == {
        "ctl": ("control", {"ok": "no", "tags": ["a", "b"]}, ""),  # normalised as a label would be
        "att": ("attention", {"ok": "no"}, "It said No."),
    }
    assert all("control" not in (c.item.metadata or {}) for c in ControlItem.objects.select_related("item"))


@pytest.mark.parametrize(
    ("control", "field", "reason"),
    [
        ("yes", "control", "must be an object"),
        ({"kind": "gold", "answers": {"ok": "no"}}, "control.kind", "must be one of"),
        ({"answers": {"ok": "maybe"}}, "control.answers", "'ok'"),
        ({"answers": {"nope": "no"}}, "control.answers", "no question 'nope'"),
        ({"answers": {}}, "control.answers", "at least one"),
        ({"answers": {"ok": "no"}, "why": 1}, "control", "unknown key"),
        ({"answers": {"ok": "no"}, "explanation": 5}, "control.explanation", "text"),
    ],
)
def test_a_bad_control_field_is_a_located_error_and_nothing_is_imported(study, researcher, control, field, reason):
    from annotation.imports import ImportRejected

    factories.make_question(study, "ok")
    with pytest.raises(ImportRejected) as caught:
        _import(study, researcher, [
            {"id": "fine", "question": "q", "answer": "a."},
            {"id": "bad", "question": "q", "answer": "a.", "control": control},
        ])
    errors = [e.as_dict() if hasattr(e, "as_dict") else e for e in caught.value.errors]
    assert any(field == (e["field"] if isinstance(e, dict) else e.field) for e in errors), errors
    assert reason in json.dumps(errors, default=str)
    assert not ControlItem.objects.exists() and not study.items.exists()


def test_attention_checks_are_served_at_their_own_rate(study, annotator, no_submit_receivers):
    ok = factories.make_question(study, "ok", required=False)
    for n in range(20):
        factories.make_item(study, f"real-{n}")
    attention = set()
    for n in range(10):
        item = factories.make_item(study, f"att-{n}", question="Choose 'No' for this item.")
        quality.control_mark(study=study, item=item, kind="attention", answers_raw={"ok": "no"}, explanation="",
                             actor=None)
        attention.add(item.pk)
    pool = factories.make_pool(study, "crowd", questions=[ok], attention_rate=0.3, seed=11)
    # The draws depend on the annotator's id, which differs from run to run: the first seed from 11 whose first 15
    # positions hold an attention check for this annotator, so that the comparison below is never vacuous.
    while not any(quality.slot_kind(pool=pool, annotator_id=annotator.pk, position=n) == ControlKind.ATTENTION
                  for n in range(15)):
        pool.seed += 1
    pool.save(update_fields=["seed"])
    factories.add_member(pool, annotator)
    pool_assign_items(pool=pool)
    served = []
    while (a := assignment_reserve_next(pool=pool, annotator=annotator)) is not None:
        served.append(a.item_id in attention)
        assignment_submit(assignment=a, actor=annotator)
    expected = [
        quality.slot_kind(pool=pool, annotator_id=annotator.pk, position=n) == ControlKind.ATTENTION for n in range(15)
    ]
    assert any(expected) and served[:15] == expected
    assert sum(served) == 10
