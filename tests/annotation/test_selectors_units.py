"""What the annotator's reads give back (annotation/selectors.py): a unit redrawn alone after a save, the page
reloading when an item-level answer governs questions of other units, the pool's progress, the labels of an
assignment in the order the page lists them, and my history's order and length."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils import timezone

from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Exposure,
    Importance,
    Item,
    Label,
    PoolMembership,
    Sentence,
)
from annotation.selectors import (
    REOPEN_AFTER_SEEING_OTHERS,
    REOPEN_NOT_ALLOWED,
    PoolProgress,
    UnitRow,
    annotator_assignments,
    annotator_history,
    annotator_queue,
    assignment_labels,
    get_assignment_and_unit,
    get_assignment_for_annotator,
    get_pool_for_annotator,
    has_dependents_in_other_scopes,
    pool_progress,
)
from concord.errors import NotFound
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Factories give every user a password; the production hasher would dominate these tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def mine(study, annotator):
    """My assignment of an item with two answer sentences, source sentences numbered past them, a passage and
    aspects (a retired one and a proposed one before the accepted one)."""
    item = factories.make_item(study, "mine", answer="Mine first. Mine second.")
    for index in range(3):
        Sentence.objects.create(item=item, part="source", index=index, text=f"SOURCE {index}", start=0, end=5)
    factories.make_chunk(item, 3, "My passage", document_id="doc-mine")
    retired = Aspect.objects.create(item=item, text="Retired", status=AspectStatus.ACCEPTED, retired_in_version=1)
    proposed = Aspect.objects.create(item=item, text="Proposed", status=AspectStatus.PROPOSED)
    accepted = Aspect.objects.create(
        item=item, text="My aspect", status=AspectStatus.ACCEPTED, importance=Importance.NICE_TO_HAVE
    )
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    assignment = factories.make_assignment(pool, item, annotator)
    return {"assignment": assignment, "retired": retired, "proposed": proposed, "accepted": accepted}


def unit(annotator, assignment, key):
    return get_assignment_and_unit(annotator, assignment.pk, key)[1]


def test_the_redrawn_item_unit_is_the_item_itself(annotator, mine):
    assert unit(annotator, mine["assignment"], "item") == UnitRow(key="item", kind="item", number=0)


def test_a_redrawn_sentence_is_this_answer_sentence_numbered_from_one(annotator, mine):
    assignment = mine["assignment"]
    assert unit(annotator, assignment, "s:0") == UnitRow(key="s:0", kind="sentence", number=1, text="Mine first.")
    assert unit(annotator, assignment, "s:1") == UnitRow(key="s:1", kind="sentence", number=2, text="Mine second.")
    assert unit(annotator, assignment, "s:2") is None, "the source's third sentence is not an answer sentence"
    assert unit(annotator, assignment, "src:0") is None, "source sentences are never labelled units"
    assert unit(annotator, assignment, "nonsense") is None


def test_a_redrawn_passage_shows_its_rank_text_and_document_unless_blind(study, annotator, mine):
    assignment = mine["assignment"]
    study.blind_system = False
    study.save()
    assert unit(annotator, assignment, "c:3") == UnitRow(
        key="c:3", kind="chunk", number=3, text="My passage", extra={"document_id": "doc-mine"}
    )
    study.blind_system = True
    study.save()
    assert unit(annotator, assignment, "c:3") == UnitRow(key="c:3", kind="chunk", number=3, text="My passage")


def test_a_redrawn_aspect_is_numbered_among_the_live_accepted_ones_with_its_importance(annotator, mine):
    assignment, accepted = mine["assignment"], mine["accepted"]
    assert unit(annotator, assignment, f"a:{accepted.pk}") == UnitRow(
        key=f"a:{accepted.pk}",
        kind="aspect",
        number=1,
        text="My aspect",
        extra={"importance": Importance.NICE_TO_HAVE.label},
    )
    assert unit(annotator, assignment, f"a:{mine['retired'].pk}") is None, "a retired aspect is no unit"
    assert unit(annotator, assignment, f"a:{mine['proposed'].pk}") is None, "nor is a proposed one"


HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def governed(study, annotator):
    """An item-level question governing a sentence question, and another item-level one governing only an
    item-level question."""
    refused = factories.make_question(study, "refused", order=1)
    why = factories.make_question(
        study, "why", scope="sentence", order=2, condition={"question": "refused", "in": ["yes"]}
    )
    tone = factories.make_question(study, "tone", order=3)
    detail = factories.make_question(study, "detail", order=4, condition={"question": "tone", "in": ["yes"]})
    pool = factories.make_pool(study, questions=[refused, why, tone, detail])
    factories.add_member(pool, annotator)
    return factories.make_assignment(pool, factories.make_item(study), annotator)


def save(client, assignment, question, value):
    data = {"question": question, "unit_key": "item", "base_version": 0, "value": value}
    return client.post(reverse("annotation:label-save", args=[assignment.pk]), data, **HX)


def test_an_item_answer_governing_another_scope_reloads_the_page(client, annotator, governed):
    client.force_login(annotator)
    response = save(client, governed, "refused", "yes")
    assert response.status_code == 200 and response.headers.get("HX-Refresh") == "true"


def test_an_item_answer_governing_only_item_questions_redraws_the_unit(client, annotator, governed):
    client.force_login(annotator)
    response = save(client, governed, "tone", "yes")
    assert response.status_code == 200 and "HX-Refresh" not in response.headers


def test_pool_progress_counts_my_items_in_this_pool_not_the_withdrawn(study, annotator):
    pool, elsewhere = factories.make_pool(study), factories.make_pool(study)
    for status in (
        AssignmentStatus.ASSIGNED,
        AssignmentStatus.SUBMITTED,
        AssignmentStatus.SUBMITTED,
        AssignmentStatus.SKIPPED,
        AssignmentStatus.WITHDRAWN,
    ):
        factories.make_assignment(pool, factories.make_item(study), annotator, status=status)
    factories.make_assignment(elsewhere, factories.make_item(study), annotator, status=AssignmentStatus.SUBMITTED)
    progress = pool_progress(pool=pool, user=annotator)
    assert progress.pool == pool
    assert (progress.assigned, progress.submitted, progress.skipped, progress.remaining) == (4, 2, 1, 1)


def test_pool_progress_of_an_annotator_who_has_submitted_and_skipped_nothing_yet_is_zero_not_missing(study, annotator):
    # Counted by status in the database: a status nobody holds is absent from the counts, and reads 0.
    pool = factories.make_pool(study)
    for _ in range(3):
        factories.make_assignment(pool, factories.make_item(study), annotator, status=AssignmentStatus.ASSIGNED)
    progress = pool_progress(pool=pool, user=annotator)
    assert (progress.assigned, progress.submitted, progress.skipped, progress.remaining) == (3, 0, 0, 3)
    assert pool_progress(pool=factories.make_pool(study), user=annotator).assigned == 0


def test_an_assignments_labels_come_in_question_order_then_unit_with_question_and_author(
    study, annotator, django_assert_num_queries
):
    # Created in an order (and with ids) that differs from the page's order at every level.
    late = factories.make_question(study, "late", scope="sentence", order=2)
    tie_b = factories.make_question(study, "tie_b", scope="sentence", order=1)
    tie_a = factories.make_question(study, "tie_a", scope="sentence", order=1)
    pool = factories.make_pool(study, questions=[late, tie_a, tie_b])
    assignment = factories.make_assignment(pool, factories.make_item(study), annotator)
    for question, key in ((late, "s:0"), (tie_a, "s:0"), (tie_b, "s:1"), (tie_b, "s:0")):
        Label.objects.create(
            assignment=assignment,
            question=question,
            unit_key=key,
            value="yes",
            updated_by=annotator,
            updated_at=timezone.now(),
        )
    with django_assert_num_queries(1):
        listed = [
            (lb.question.key, lb.unit_key, lb.updated_by.username) for lb in assignment_labels(assignment=assignment)
        ]
    who = annotator.username
    assert listed == [("tie_b", "s:0", who), ("tie_b", "s:1", who), ("tie_a", "s:0", who), ("late", "s:0", who)]


def test_my_history_is_most_recently_submitted_first(study, annotator):
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    now = timezone.now()
    first_made = factories.make_assignment(
        pool, factories.make_item(study), annotator, status=AssignmentStatus.SUBMITTED, submitted_at=now
    )
    second_made = factories.make_assignment(
        pool,
        factories.make_item(study),
        annotator,
        status=AssignmentStatus.SUBMITTED,
        submitted_at=now - timedelta(hours=1),
    )
    assert [row.assignment for row in annotator_history(user=annotator)] == [first_made, second_made]


def test_my_history_lists_at_most_500_items(study, annotator):
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    items = Item.objects.bulk_create(
        Item(study=study, external_id=f"bulk-{n}", question="What dose?", answer="Take it.") for n in range(501)
    )
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(pool=pool, item=item, annotator=annotator, status=AssignmentStatus.SUBMITTED, submitted_at=now)
        for item in items
    )
    assert len(annotator_history(user=annotator)) == 500


def test_my_history_breaks_a_tie_of_submission_times_by_the_newer_assignment(study, annotator):
    pool = factories.make_pool(study)
    factories.add_member(pool, annotator)
    now = timezone.now()
    made = [
        factories.make_assignment(
            pool, factories.make_item(study), annotator, status=AssignmentStatus.SUBMITTED, submitted_at=now
        )
        for _ in range(3)
    ]
    assert [row.assignment for row in annotator_history(user=annotator)] == made[::-1]


def test_my_history_says_which_items_i_may_reopen_in_two_queries(study, annotator, django_assert_num_queries):
    """Reopening is refused where the pool forbids it, or where I (not a colleague) saw others' answers on that
    item in that pool (not merely opened it); the rows carry their pool, study and item without a query each."""
    colleague = factories.make_user("colleague")
    # One membership per study: the pool that forbids reopening is another study's.
    lenient = factories.make_pool(study, "lenient", reopen_allowed=True)
    strict = factories.make_pool(factories.make_study(name="Strict study"), "strict")
    for pool in (strict, lenient):
        factories.add_member(pool, annotator)
    now = timezone.now()
    _forbidden, seen, unseen = (
        factories.make_assignment(
            pool,
            factories.make_item(pool.study, name),
            annotator,
            status=AssignmentStatus.SUBMITTED,
            submitted_at=now - timedelta(minutes=n),
        )
        for n, (pool, name) in enumerate(((strict, "forbidden"), (lenient, "seen"), (lenient, "unseen")))
    )
    shown = {"kind": "calibration", "showed_other_labels": True}
    Exposure.objects.create(user=annotator, pool=lenient, item=seen.item, **shown)
    Exposure.objects.create(user=colleague, pool=lenient, item=unseen.item, **shown)
    Exposure.objects.create(user=annotator, pool=lenient, item=unseen.item, kind="item_page")  # nothing of others
    with django_assert_num_queries(2):
        listed = [
            (row.assignment.item.external_id, row.assignment.pool.study.name, row.reopen_refusal, row.can_reopen)
            for row in annotator_history(user=annotator)
        ]
    assert listed == [
        ("forbidden", "Strict study", REOPEN_NOT_ALLOWED, False),
        ("seen", study.name, REOPEN_AFTER_SEEING_OTHERS, False),
        ("unseen", study.name, None, True),
    ]


# --- Access helpers, queue and progress ----------------------------------------------------------------------


def _refused(fetch, message):
    with pytest.raises(NotFound) as raised:
        fetch()
    assert raised.value.message == message


def test_my_assignment_comes_with_its_pool_study_and_item_when_asked_in_one_query(
    study, annotator, mine, django_assert_num_queries
):
    pk = mine["assignment"].pk
    with django_assert_num_queries(1):
        got = get_assignment_for_annotator(annotator, pk, with_item=True)
        assert (got.pk, got.pool.study.slug, got.item.external_id) == (pk, study.slug, "mine")
    with django_assert_num_queries(1):
        got = get_assignment_for_annotator(annotator, pk)
        assert (got.pk, got.pool.study.slug) == (pk, study.slug)
    with django_assert_num_queries(2):
        assert get_assignment_for_annotator(annotator, pk).item.external_id == "mine"  # fetched when used
    with django_assert_num_queries(1):
        assignment, row = get_assignment_and_unit(annotator, pk, "s:0")
        assert (assignment.pool.study.slug, row.text) == (study.slug, "Mine first.")
    with django_assert_num_queries(1):
        assignment, row = get_assignment_and_unit(annotator, pk, "item")
        assert (assignment.pool.study.slug, row.kind) == (study.slug, "item")


def test_anything_but_my_own_assignment_in_a_pool_i_am_active_in_is_no_such_assignment(study, annotator, mine):
    pk = mine["assignment"].pk
    colleague = factories.make_user("colleague")
    factories.add_member(mine["assignment"].pool, colleague)
    _refused(lambda: get_assignment_for_annotator(AnonymousUser(), pk), "No such assignment.")
    _refused(lambda: get_assignment_for_annotator(colleague, pk), "No such assignment.")
    _refused(lambda: get_assignment_and_unit(colleague, pk, "s:0"), "No such assignment.")
    _refused(lambda: get_assignment_for_annotator(annotator, pk + 1000), "No such assignment.")
    _refused(lambda: get_assignment_and_unit(annotator, pk + 1000, "item"), "No such assignment.")
    PoolMembership.objects.filter(user=annotator).update(active=False)
    _refused(lambda: get_assignment_for_annotator(annotator, pk), "No such assignment.")
    _refused(lambda: get_assignment_and_unit(annotator, pk, "item"), "No such assignment.")


def test_a_pool_is_mine_only_while_i_am_an_active_member(study, annotator, django_assert_num_queries):
    pool, other = factories.make_pool(study, "mine"), factories.make_pool(study, "not mine")
    factories.add_member(pool, annotator)
    factories.add_member(other, factories.make_user("someone"))
    with django_assert_num_queries(1):
        assert get_pool_for_annotator(annotator, pool.pk).study.slug == study.slug
    _refused(lambda: get_pool_for_annotator(annotator, other.pk), "No such pool.")
    _refused(lambda: get_pool_for_annotator(annotator, pool.pk + 1000), "No such pool.")
    PoolMembership.objects.filter(user=annotator).update(active=False)
    _refused(lambda: get_pool_for_annotator(annotator, pool.pk), "No such pool.")


def test_an_answer_governs_other_scopes_only_through_a_condition_on_it_in_another_scope(study):
    gate = factories.make_question(study, "gate")
    same_scope = factories.make_question(study, "same", condition={"question": "gate", "in": ["yes"]})
    pool = factories.make_pool(study, questions=[gate, same_scope])
    assert has_dependents_in_other_scopes(pool, gate) is False
    other_gate = factories.make_question(study, "other-gate")
    sentence = factories.make_question(
        study, "why", scope="sentence", condition={"question": "other-gate", "in": ["yes"]}
    )
    pool.questions.add(other_gate, sentence, factories.make_question(study, "plain", scope="chunk"))
    assert has_dependents_in_other_scopes(pool, gate) is False
    assert has_dependents_in_other_scopes(pool, other_gate) is True


def test_my_queue_lists_my_active_pools_by_study_then_pool_name_with_my_counts(
    study, annotator, researcher, django_assert_num_queries
):
    later_study = factories.make_study(owner=researcher, name="Zz study", independent_pools=False)
    type(study).objects.filter(pk=study.pk).update(name="Aa study", independent_pools=False)
    study.refresh_from_db()
    beta, alpha = factories.make_pool(study, "beta"), factories.make_pool(study, "alpha")
    far = factories.make_pool(later_study, "aardvark")
    left = factories.make_pool(later_study, "left")
    for pool in (beta, alpha, far, left):
        factories.add_member(pool, annotator)
    PoolMembership.objects.filter(pool=left).update(active=False)
    colleague = factories.make_user("colleague")
    factories.add_member(alpha, colleague)
    for status in ("assigned", "submitted", "submitted", "skipped", "withdrawn", "started"):
        factories.make_assignment(alpha, factories.make_item(study), annotator, status=status)
    factories.make_assignment(alpha, factories.make_item(study), colleague, status="submitted")
    factories.make_assignment(alpha, factories.make_item(study), colleague, status="skipped")  # theirs, not mine
    factories.make_assignment(beta, factories.make_item(study), annotator, status="skipped")
    with django_assert_num_queries(1):  # however many pools and studies: the studies come with their pools
        queue = annotator_queue(user=annotator)
        names = [(q.study.name, [p.pool.name for p in q.pools]) for q in queue]
    assert names == [
        ("Aa study", ["alpha", "beta"]),
        ("Zz study", ["aardvark"]),
    ]
    counts = [(p.assigned, p.submitted, p.skipped, p.done, p.remaining, p.percent) for q in queue for p in q.pools]
    assert counts == [(5, 2, 1, 2, 2, 60), (1, 0, 1, 0, 0, 100), (0, 0, 0, 0, 0, 0)]


def test_progress_rounds_to_the_nearest_percent(study):
    pool = factories.make_pool(study)
    assert PoolProgress(pool=pool, assigned=3, submitted=1, skipped=0).percent == 33
    assert PoolProgress(pool=pool, assigned=3, submitted=2, skipped=0).percent == 67
    assert PoolProgress(pool=pool, assigned=8, submitted=1, skipped=2).percent == 38
    assert PoolProgress(pool=pool, assigned=8, submitted=1, skipped=2).remaining == 5


def test_my_assignments_for_the_api_are_mine_in_active_pools_by_pool_then_order(
    study, annotator, django_assert_num_queries
):
    type(study).objects.filter(pk=study.pk).update(independent_pools=False)
    study.refresh_from_db()
    second, first = factories.make_pool(study, "second"), factories.make_pool(study, "first")
    left = factories.make_pool(study, "left")
    for pool in (second, first, left):
        factories.add_member(pool, annotator)
    PoolMembership.objects.filter(pool=left).update(active=False)
    made = {}
    for pool, order_keys in ((second, (5, 1)), (first, (9, 2, 2))):
        for key in order_keys:
            made.setdefault(pool.name, []).append(
                factories.make_assignment(pool, factories.make_item(study), annotator, order_key=key)
            )
    factories.make_assignment(left, factories.make_item(study), annotator)
    colleague = factories.make_user("colleague")
    factories.add_member(first, colleague)
    factories.make_assignment(first, factories.make_item(study), colleague)
    with django_assert_num_queries(1):
        listed = [(a.pool.name, a.order_key, a.pk) for a in annotator_assignments(user=annotator)]
    by_pool = sorted([*made["second"], *made["first"]], key=lambda a: (a.pool_id, a.order_key, a.pk))
    assert listed == [(a.pool.name, a.order_key, a.pk) for a in by_pool]
    assert [x[0] for x in listed] == ["second", "second", "first", "first", "first"]  # by pool id, not name
