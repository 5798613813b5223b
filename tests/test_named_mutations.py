"""Tests that kill four mutations the suite once let survive, each checked in a copy of the code:

1. ``get_assignment_for_annotator`` without ``for_annotator(user)``: a pool-mate's assignment would
   answer 200 with their labels (pages and API);
2. calibration labels without the pool filter: another pool's labels would show (then under an unknown
   pseudonym, which is now an error as well);
3. the assignment top-up without its distinct-annotator check: an item would go twice to one person;
4. the top-up counting a departed member's open assignments toward k: the item would stay short.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.labels import label_save
from annotation.models import Assignment, AssignmentStatus, PoolMembership, Visibility
from annotation.services import assignment_submit, pool_assign_items
from annotation.workspace import _calibration_labels
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _quiet(settings, no_submit_receivers):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_a_pool_mate_cannot_open_or_write_anothers_assignment(client, study, annotator):
    pf = factories.make_question(study, "pf", kind="text")
    item = factories.make_item(study)
    pool = factories.make_pool(study, questions=[pf])
    mate = factories.make_user("mate")
    factories.add_member(pool, annotator)
    factories.add_member(pool, mate)
    theirs = factories.make_assignment(pool, item, annotator)
    label_save(assignment=theirs, question=pf, unit_key="item", value="THEIR-ANSWER", base_version=0, actor=annotator)
    api = APIClient()
    api.force_authenticate(mate)
    for response in (
        api.get(reverse("api-assignment", args=[theirs.pk])),
        api.get(reverse("api-labels", args=[theirs.pk])),
        api.put(
            reverse("api-labels", args=[theirs.pk]),
            {"question": "pf", "unit_key": "item", "value": "x", "base_version": 1},
            format="json",
        ),
        api.post(reverse("api-submit", args=[theirs.pk])),
    ):
        assert response.status_code == 404
        assert b"THEIR-ANSWER" not in response.content
    client.force_login(mate)
    page = client.get(reverse("annotation:item", args=[theirs.pk]))
    assert page.status_code == 404 and b"THEIR-ANSWER" not in page.content


def test_calibration_shows_only_the_own_pools_labels(client, study, annotator):
    pf = factories.make_question(study, "pf", kind="text")
    item = factories.make_item(study)
    calibration = factories.make_pool(study, "calibration", questions=[pf], visibility=Visibility.AFTER_SUBMIT)
    other_pool = factories.make_pool(study, "other", questions=[pf])
    stranger = factories.make_user("other-pool-member")
    colleague = factories.make_user("colleague")
    factories.add_member(calibration, annotator, "P-ME")
    factories.add_member(calibration, colleague, "P-COLLEAGUE")
    factories.add_member(other_pool, stranger, "P-OTHER")
    mine = factories.make_assignment(calibration, item, annotator)
    colleagues = factories.make_assignment(calibration, item, colleague)
    foreign = factories.make_assignment(other_pool, item, stranger)
    label_save(assignment=colleagues, question=pf, unit_key="item", value="SAME-POOL", base_version=0, actor=colleague)
    label_save(assignment=foreign, question=pf, unit_key="item", value="OTHER-POOL", base_version=0, actor=stranger)
    label_save(assignment=mine, question=pf, unit_key="item", value="MINE", base_version=0, actor=annotator)
    assignment_submit(assignment=mine, actor=annotator)
    shown = _calibration_labels(mine)
    assert [(o.pseudonym, o.value) for o in shown] == [("P-COLLEAGUE", "SAME-POOL")]
    client.force_login(annotator)
    body = client.get(reverse("annotation:item", args=[mine.pk])).content.decode()
    assert "SAME-POOL" in body and "OTHER-POOL" not in body and "P-OTHER" not in body


def test_a_label_without_a_membership_in_the_pool_is_an_error_not_a_question_mark(study, annotator):
    pf = factories.make_question(study, "pf", kind="text")
    item = factories.make_item(study)
    pool = factories.make_pool(study, questions=[pf], visibility=Visibility.AFTER_SUBMIT)
    ghost = factories.make_user("ghost")
    factories.add_member(pool, annotator)
    factories.add_member(pool, ghost)
    mine = factories.make_assignment(pool, item, annotator)
    theirs = factories.make_assignment(pool, item, ghost)
    label_save(assignment=theirs, question=pf, unit_key="item", value="x", base_version=0, actor=ghost)
    PoolMembership.objects.filter(user=ghost).delete()  # a broken invariant, only reachable by hand
    with pytest.raises(RuntimeError, match="no membership"):
        _calibration_labels(mine)


def _three_members(study, k=2):
    pf = factories.make_question(study, "pf", kind="text")
    pool = factories.make_pool(study, questions=[pf], overlap=k)
    users = [factories.make_user(f"m{i}") for i in range(3)]
    for user in users:
        factories.add_member(pool, user)
    return pool, users


def test_the_top_up_never_gives_an_item_twice_to_one_person(study):
    pool, (leaver, stays, busy) = _three_members(study)
    item = factories.make_item(study, "shared")
    factories.make_assignment(pool, item, leaver, status=AssignmentStatus.STARTED)
    factories.make_assignment(pool, item, stays)
    for n in range(3):  # the third member is the most loaded, so load alone would pick ``stays`` again
        factories.make_assignment(pool, factories.make_item(study, f"other-{n}"), busy)
    PoolMembership.objects.filter(pool=pool, user=leaver).update(active=False)
    pool_assign_items(pool=pool, items=[item])
    holders = list(Assignment.objects.filter(pool=pool, item=item).values_list("annotator_id", flat=True))
    assert sorted(holders) == sorted([leaver.pk, stays.pk, busy.pk])


def test_a_departed_members_open_assignment_does_not_count_toward_k(study):
    pool, (leaver, stays, third) = _three_members(study)
    item = factories.make_item(study, "shared")
    factories.make_assignment(pool, item, leaver, status=AssignmentStatus.STARTED)
    factories.make_assignment(pool, item, stays)
    PoolMembership.objects.filter(pool=pool, user=leaver).update(active=False)
    assert pool_assign_items(pool=pool, items=[item]) == 1
    active_or_done = Assignment.objects.filter(pool=pool, item=item).exclude(annotator=leaver)
    assert active_or_done.count() == pool.overlap
    assert active_or_done.filter(annotator=third).exists()


def test_a_departed_members_submitted_assignment_still_counts_toward_k(study):
    pool, (leaver, stays, _third) = _three_members(study)
    item = factories.make_item(study, "shared")
    factories.make_assignment(pool, item, leaver, status=AssignmentStatus.SUBMITTED)
    factories.make_assignment(pool, item, stays)
    PoolMembership.objects.filter(pool=pool, user=leaver).update(active=False)
    assert pool_assign_items(pool=pool, items=[item]) == 0
