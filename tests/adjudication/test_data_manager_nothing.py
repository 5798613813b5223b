"""A bulk action of the data manager that would change nothing is refused before its confirmation, and
says why (it once showed a confirmation for 0 assignments and wrote an empty audit row)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import BulkAction
from annotation.models import Assignment, PoolItemExclusion
from tests.adjudication.test_data_manager import data, rita  # noqa: F401 - the fixtures

pytestmark = pytest.mark.django_db


def _review(client, study, **fields):
    return client.post(reverse("adjudication:data-bulk", args=[study.slug]), fields)


def _state():
    return (
        sorted(Assignment.objects.values_list("pk", "annotator_id", "status")),
        PoolItemExclusion.objects.count(),
        BulkAction.objects.count(),
    )


def test_reassigning_items_the_giver_has_no_open_work_on_says_why(rita, data):  # noqa: F811
    study, pool, items, kim, lee = data["study"], data["pool"], data["items"], data["kim"], data["lee"]
    before = _state()
    # kim's a-1 is submitted, d-4 was never assigned: nothing of kim's is open among them.
    response = _review(rita, study, action="reassign", target_pool=pool.pk, from_user=kim.pk, to_user=lee.pk,
                       item=[items["a"].pk, items["d"].pk])
    assert response.status_code == 400
    assert "nothing to reassign: P-A1 has no open assignment of pool PF among these 2 items; nothing was changed" in (
        response.content.decode()
    )
    assert _state() == before


def test_reassigning_to_a_member_who_has_every_item_says_so(rita, data):  # noqa: F811
    study, pool, items, kim, lee = data["study"], data["pool"], data["items"], data["kim"], data["lee"]
    Assignment.objects.create(pool=pool, item=items["b"], annotator=lee)
    before = _state()
    response = _review(rita, study, action="reassign", target_pool=pool.pk, from_user=kim.pk, to_user=lee.pk,
                       item=[items["b"].pk])
    assert response.status_code == 400
    assert "that P-A2 does not already have (1 they have)" in response.content.decode()
    assert _state() == before


def test_requeueing_items_without_a_skipped_assignment_says_why(rita, data):  # noqa: F811
    study, pool, items = data["study"], data["pool"], data["items"]
    before = _state()
    response = _review(rita, study, action="requeue", target_pool=pool.pk, item=[items["a"].pk, items["b"].pk])
    assert response.status_code == 400
    assert "nothing to re-queue: none of these 2 items has a skipped assignment in pool PF" in response.content.decode()
    assert _state() == before


def test_removing_items_already_removed_says_so_but_a_first_removal_without_open_work_is_kept(
    rita, data, researcher  # noqa: F811
):
    study, pool, items = data["study"], data["pool"], data["items"]
    # d-4 has no assignment at all: removing it still keeps the pool's top-up from assigning it.
    review = _review(rita, study, action="remove", target_pool=pool.pk, item=[items["d"].pk])
    assert review.status_code == 200 and "nothing to remove" not in review.content.decode()
    PoolItemExclusion.objects.create(pool=pool, item=items["d"], created_by=researcher)
    before = _state()
    again = _review(rita, study, action="remove", target_pool=pool.pk, item=[items["d"].pk])
    assert again.status_code == 400
    assert "nothing to remove: this item was already removed from pool PF; nothing was changed" in (
        again.content.decode()
    )
    assert _state() == before
