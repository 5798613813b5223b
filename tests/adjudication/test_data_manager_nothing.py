"""A bulk action of the data manager that would change nothing is refused before its confirmation, and
says why (it once showed a confirmation for 0 assignments and wrote an empty audit row)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.models import BulkAction
from annotation.models import Assignment, PoolItemExclusion
from tests import factories
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


def test_the_refusals_read_whole_for_one_item_and_for_several(rita, data):  # noqa: F811
    """The full sentences a researcher reads: singular and plural, both parts of the reassign reason, and the
    closing "nothing was changed" of each refusal."""
    study, pool, items, kim, lee = data["study"], data["pool"], data["items"], data["kim"], data["lee"]
    one = _review(rita, study, action="reassign", target_pool=pool.pk, from_user=kim.pk, to_user=lee.pk,
                  item=[items["d"].pk])
    assert one.status_code == 400
    assert "nothing to reassign: P-A1 has no open assignment of pool PF among these 1 item; nothing was changed" in (
        one.content.decode()
    )
    Assignment.objects.create(pool=pool, item=items["b"], annotator=lee)
    both = _review(rita, study, action="reassign", target_pool=pool.pk, from_user=kim.pk, to_user=lee.pk,
                   item=[items["b"].pk])
    assert both.status_code == 400
    assert (
        "nothing to reassign: P-A1 has no open assignment of pool PF among these 1 item that P-A2 does not already "
        "have (1 they have); nothing was changed"
    ) in both.content.decode()
    requeue = _review(rita, study, action="requeue", target_pool=pool.pk, item=[items["a"].pk])
    assert requeue.status_code == 400
    assert (
        "nothing to re-queue: none of these 1 item has a skipped assignment in pool PF; nothing was changed"
    ) in requeue.content.decode()


def test_removing_several_items_already_removed_says_so_in_the_plural(rita, data, researcher):  # noqa: F811
    study, pool, items = data["study"], data["pool"], data["items"]
    for key in ("a", "d"):
        PoolItemExclusion.objects.create(pool=pool, item=items[key], created_by=researcher)
    before = _state()
    again = _review(rita, study, action="remove", target_pool=pool.pk, item=[items["a"].pk, items["d"].pk])
    assert again.status_code == 400
    assert "nothing to remove: these 2 items were already removed from pool PF; nothing was changed" in (
        again.content.decode()
    )
    assert _state() == before


def test_an_item_removed_from_another_pool_can_still_be_removed_from_this_one(rita, data, researcher):  # noqa: F811
    """Only this pool's exclusions make a removal a no-op: d-4 taken out of another pool of the study is still
    in this one, and removing it here is planned, not refused."""
    study, pool, items = data["study"], data["pool"], data["items"]
    other = factories.make_pool(study, "Other", questions=list(pool.questions.all()), overlap=1)
    PoolItemExclusion.objects.create(pool=other, item=items["d"], created_by=researcher)
    review = _review(rita, study, action="remove", target_pool=pool.pk, item=[items["d"].pk])
    assert review.status_code == 200, review.content
    assert "nothing to remove" not in review.content.decode()
