"""Traps of the researcher console a new researcher fell into: an account made from the People page
that lands in no pool, forms on one page sharing element ids, the console link shown to people the
console refuses, and an imported pool whose k did not match its raters."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from annotation.console import services as svc
from annotation.console.selectors import item_page
from annotation.imports import items_import
from annotation.models import PoolMembership, Role
from annotation.templatetags.console_tags import shows_console
from tests import factories
from tests.annotation.console_helpers import fast_password_hashing, jsonl

pytestmark = pytest.mark.django_db
__all__ = ["fast_password_hashing"]


@pytest.fixture
def astrid(researcher):
    return svc.study_create(owner=researcher, name="ASTRID pilot", presets=["astrid"])


@pytest.fixture
def rita(client, researcher):
    client.force_login(researcher)
    return client


def _ids(html: str) -> list[str]:
    return re.findall(r'\sid="([^"]+)"', html)


def test_an_annotator_account_from_the_people_page_joins_the_only_pool_preselected(rita, astrid):
    pool = factories.make_pool(astrid, "PF", questions=list(astrid.questions.filter(key="helpful")))
    page = rita.get(reverse("console:people", args=[astrid.slug])).content.decode()
    assert re.search(rf'<option value="{pool.pk}" selected>PF</option>', page)
    response = rita.post(
        reverse("console:account_create", args=[astrid.slug]),
        {"username": "dr.kim", "email": "", "role": "annotator", "pool": pool.pk},
    )
    assert response.status_code == 201
    assert "They are in pool <strong>PF</strong>" in response.content.decode()
    assert PoolMembership.objects.filter(pool=pool, user__username="dr.kim", active=True).exists()


def test_an_annotator_account_without_a_pool_is_refused_when_the_study_has_pools(rita, astrid):
    factories.make_pool(astrid, "PF", questions=list(astrid.questions.filter(key="helpful")))
    factories.make_pool(astrid, "CF", questions=list(astrid.questions.filter(key="helpful")))
    response = rita.post(
        reverse("console:account_create", args=[astrid.slug]), {"username": "dr.kim", "email": "", "role": "annotator"}
    )
    assert response.status_code == 400
    assert "without one they get no items" in response.content.decode()
    assert not PoolMembership.objects.filter(user__username="dr.kim").exists()
    # An adjudicator needs no pool.
    response = rita.post(
        reverse("console:account_create", args=[astrid.slug]),
        {"username": "dr.adj", "email": "", "role": "adjudicator"},
    )
    assert response.status_code == 201


def test_an_annotator_in_no_pool_is_named_as_getting_no_items(rita, astrid):
    response = rita.post(
        reverse("console:account_create", args=[astrid.slug]), {"username": "dr.kim", "email": "", "role": "annotator"}
    )
    assert response.status_code == 201
    assert 'id="new-account-no-pool"' in response.content.decode()
    page = rita.get(reverse("console:people", args=[astrid.slug])).content.decode()
    assert "in no pool: gets no items" in page


@pytest.mark.parametrize("url", ["console:people", "console:pool"])
def test_no_two_elements_of_a_console_page_share_an_id(rita, astrid, url):
    pool = factories.make_pool(astrid, "PF", questions=list(astrid.questions.filter(key="helpful")))
    args = [astrid.slug] if url == "console:people" else [astrid.slug, pool.pk]
    html = rita.get(reverse(url, args=args)).content.decode()
    repeated = {i: n for i, n in Counter(_ids(html)).items() if n > 1}
    assert repeated == {}
    assert "id_username" not in _ids(html) and "id_email" not in _ids(html)
    # Each label still points at its own form's field.
    for target in re.findall(r'<label for="([^"]+)"', html):
        assert target in _ids(html), target


def test_the_console_link_is_shown_to_researchers_only(client, astrid, researcher, annotator, adjudicator):
    factories.grant(astrid, annotator, Role.ANNOTATOR)
    factories.grant(astrid, adjudicator, Role.ADJUDICATOR)
    for user, shown in ((annotator, False), (adjudicator, False), (researcher, True)):
        client.force_login(user)
        page = client.get(reverse("annotation:home")).content.decode()
        assert ("Researcher console" in page) is shown, user


def _grant_permission(holder, codename: str, app_label: str) -> None:
    content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model="study")
    permission, _ = Permission.objects.get_or_create(
        codename=codename, content_type=content_type, defaults={"name": f"{app_label} {codename}"}
    )
    holder.permissions.add(permission) if isinstance(holder, Group) else holder.user_permissions.add(permission)


@pytest.mark.parametrize(
    ("how", "shown"),
    [
        ("nothing", False),
        ("add_study directly", True),
        ("add_study through a group", True),
        ("another permission directly", False),
        ("another permission through a group", False),
        ("add_study of another app directly", False),
        ("add_study of another app through a group", False),
        ("a group without it", False),
        ("superuser", True),
        ("inactive superuser", False),
    ],
)
def test_the_console_link_follows_the_permission_to_create_studies(client, annotator, how, shown):
    # The header's test is one hand-written statement: each way in (and each near miss) is checked here.
    group = Group.objects.create(name="staff")
    if "group" in how:
        annotator.groups.add(group)
    holder = group if "through a group" in how else annotator
    if how.startswith("add_study of another app"):
        _grant_permission(holder, "add_study", "scoring")
    elif how.startswith("add_study"):
        _grant_permission(holder, "add_study", "annotation")
    elif how.startswith("another permission"):
        _grant_permission(holder, "change_study", "annotation")
    if "superuser" in how:
        annotator.is_superuser = True
        annotator.is_active = how == "superuser"
        annotator.save()
        client.force_login(annotator)
        assert shows_console(annotator) is shown
        return
    client.force_login(annotator)
    page = client.get(reverse("annotation:home")).content.decode()
    assert ("Researcher console" in page) is shown


def test_a_researcher_of_any_study_sees_the_console_link_and_an_annotator_role_does_not_count(
    astrid, annotator, adjudicator
):
    other = svc.study_create(owner=adjudicator, name="Other", presets=["astrid"])
    factories.grant(astrid, annotator, Role.ANNOTATOR)
    assert shows_console(annotator) is False
    del annotator._concord_shows_console
    factories.grant(other, annotator, Role.RESEARCHER)
    assert shows_console(annotator) is True


def test_an_imported_pool_rated_by_three_physicians_has_k_3_and_items_done_3_of_3(astrid):
    labels = [
        {"annotator": name, "question": "helpful", "unit": "item", "value": "somewhat_helpful"}
        for name in ("A", "B", "C")
    ]
    records = [
        {"id": f"q{n}", "question": "Dose?", "answer": "Half a milligram daily.", "labels": labels} for n in (1, 2)
    ]
    items_import(study=astrid, file=io.BytesIO(jsonl(*records)), filename="rated.jsonl")
    pool = astrid.pools.get(name="imported")
    assert pool.overlap == 3
    _, rows = item_page(astrid)
    assert [s.label for row in rows for s in row.statuses] == ["done 3/3", "done 3/3"]


def test_an_existing_pool_keeps_its_k_and_an_item_with_more_raters_never_reads_3_of_1(astrid):
    pool = factories.make_pool(astrid, "imported", questions=list(astrid.questions.filter(key="helpful")))
    labels = [
        {"annotator": name, "question": "helpful", "unit": "item", "value": "somewhat_helpful"}
        for name in ("A", "B", "C")
    ]
    items_import(
        study=astrid,
        file=io.BytesIO(jsonl({"id": "q1", "question": "Dose?", "answer": "Half.", "labels": labels})),
        filename="rated.jsonl",
    )
    pool.refresh_from_db()
    assert pool.overlap == 1
    _, rows = item_page(astrid)
    assert rows[0].statuses[0].label == "done 3/3"
