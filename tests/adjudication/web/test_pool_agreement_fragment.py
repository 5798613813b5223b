"""The console's "agreement so far" of a pool: numbers from the agreement report, the far-below flag,
access (annotators 403, strangers and unknown pools 404), and the htmx fragment vs the full page."""

from __future__ import annotations

import re

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import timezone

from adjudication.analysis.agreement import agreement_report
from annotation.models import Assignment, AssignmentStatus, Label
from tests import factories

# 16 items, five annotators on a yes/no question. Four agree with each other on nearly everything;
# "contrarian" answers the opposite of the first annotator on every item.
GOOD = [
    "yes",
    "no",
    "yes",
    "yes",
    "no",
    "no",
    "yes",
    "no",
    "yes",
    "yes",
    "no",
    "yes",
    "no",
    "no",
    "yes",
    "no",
]
SLIPS = {("good2", 3), ("good3", 8), ("good4", 12)}  # a few honest disagreements among the four
NAMES = ["good1", "good2", "good3", "good4", "contrarian"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _flip(value: str) -> str:
    return "no" if value == "yes" else "yes"


def _answer(name: str, i: int) -> str:
    if name == "contrarian" or (name, i) in SLIPS:
        return _flip(GOOD[i])
    return GOOD[i]


@pytest.fixture
def pool_with_contrarian(study):
    pf = factories.make_question(study, "pf")
    free = factories.make_question(study, "why", kind="text", options=[], order=1)
    pool = factories.make_pool(study, "clinicians", questions=[pf, free], overlap=5)
    users = {}
    for n, name in enumerate(NAMES):
        users[name] = factories.make_user(name)
        factories.add_member(pool, users[name], pseudonym=f"P{n + 1}")
    now = timezone.now()
    labels = []
    for i in range(len(GOOD)):
        item = factories.make_item(study, f"i{i:02d}")
        for name, user in users.items():
            a = factories.make_assignment(pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=now)
            labels.append(
                Label(
                    assignment=a,
                    question=pf,
                    unit_key="item",
                    value=_answer(name, i),
                    version=1,
                    updated_by=user,
                    updated_at=now,
                )
            )
    Label.objects.bulk_create(labels)
    return {"pool": pool, "pf": pf, "users": users}


def _url(study, pool_id: int) -> str:
    return reverse("adjudication:pool_agreement_fragment", kwargs={"slug": study.slug, "pool_id": pool_id})


def test_researcher_sees_the_pools_agreement_and_the_contrarian_flagged(
    client, researcher, study, pool_with_contrarian
):
    pool, pf = pool_with_contrarian["pool"], pool_with_contrarian["pf"]
    client.force_login(researcher)
    response = client.get(_url(study, pool.pk), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    page = response.content.decode()
    expected = agreement_report(pool=pool, question=pf)
    for stat in ("percent_agreement", "fleiss_kappa", "krippendorff_alpha"):
        assert f"<strong>{floatformat(expected[stat]['value'], 3)}</strong>" in page
    assert f"agreeing pairs {floatformat(expected['percent_agreement']['mean_pairwise'], 3)}" in page
    assert f"n = {len(GOOD)} units rated by two or more annotators" in page
    flagged_rows = re.findall(r'<tr class="flagged">\s*<td>(\w+)', page)
    assert flagged_rows == ["contrarian"]
    assert "far below the others' agreement:</strong> upper 95% bound" in page
    assert "Far below the others' agreement:</strong>" in page  # the summary line above the tables
    # Each annotator's κ against the rest is the report's own figure.
    contrarian = next(r for r in expected["each_against_rest"] if r["rater"] == "P5")
    assert contrarian["outlier"] and floatformat(contrarian["value"], 3) in page
    # Only categorical questions get figures; the free-text one is not listed.
    assert "<h4>pf " in page and "<h4>why " not in page
    assert reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "pf"]) in page


def test_nobody_is_flagged_when_the_annotators_agree(client, researcher, study, pool_with_contrarian):
    pool = pool_with_contrarian["pool"]
    # The contrarian's work back to drafts: only submitted labels count.
    Assignment.objects.filter(annotator=pool_with_contrarian["users"]["contrarian"]).update(
        status=AssignmentStatus.STARTED
    )
    client.force_login(researcher)
    page = client.get(_url(study, pool.pk), HTTP_HX_REQUEST="true").content.decode()
    assert 'class="flagged"' not in page
    assert "far below the others' agreement:</strong> upper" not in page
    assert "4 annotators" in page


def test_htmx_request_gets_only_the_fragment_and_a_plain_request_the_page(
    client, researcher, study, pool_with_contrarian
):
    pool = pool_with_contrarian["pool"]
    client.force_login(researcher)
    fragment = client.get(_url(study, pool.pk), HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert "<html" not in body and "<!doctype" not in body.lower()
    assert f'id="pool-agreement-{pool.pk}"' in body
    assert "HX-Request" in fragment["Vary"]
    page = client.get(_url(study, pool.pk)).content.decode()
    assert page.lower().startswith("<!doctype") and "<h1>Agreement so far: clinicians</h1>" in page
    assert f'id="pool-agreement-{pool.pk}"' in page


def test_a_pool_without_submitted_labels_says_so(client, researcher, study):
    pool = factories.make_pool(study, "empty", questions=[factories.make_question(study, "pf")])
    client.force_login(researcher)
    page = client.get(_url(study, pool.pk), HTTP_HX_REQUEST="true").content.decode()
    assert "No submitted labels for this question in this pool." in page


def test_an_annotator_of_the_pool_is_refused(client, study, pool_with_contrarian):
    client.force_login(pool_with_contrarian["users"]["good1"])
    response = client.get(_url(study, pool_with_contrarian["pool"].pk), HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    assert "0." not in response.content.decode()


def test_a_stranger_and_an_unknown_or_foreign_pool_are_not_found(
    client, researcher, stranger, study, pool_with_contrarian
):
    client.force_login(stranger)
    assert client.get(_url(study, pool_with_contrarian["pool"].pk)).status_code == 404
    client.logout()
    anonymous = client.get(_url(study, pool_with_contrarian["pool"].pk))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    client.force_login(researcher)
    other = factories.make_pool(factories.make_study(slug="other-study"), "theirs")
    assert client.get(_url(study, other.pk), HTTP_HX_REQUEST="true").status_code == 404
    assert client.get(_url(study, 999999)).status_code == 404


def test_the_console_progress_page_loads_the_fragment_for_each_pool(client, researcher, study, pool_with_contrarian):
    pool = pool_with_contrarian["pool"]
    client.force_login(researcher)
    page = client.get(reverse("console:progress", args=[study.slug])).content.decode()
    assert f'<div hx-get="{_url(study, pool.pk)}" hx-trigger="load">' in page
    # The full reports stay linked next to the fragment.
    assert reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "pf"]) in page
