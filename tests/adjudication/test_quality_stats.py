"""Per-annotator quality statistics (adjudication.stats.quality, adjudication.analysis.quality), checked against
published worked examples and hand computations written out below; the reports' options to include items of
known answer and to leave flagged annotators out; the page and the API's access rules."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from adjudication.analysis.agreement import agreement_report
from adjudication.analysis.quality import drift_plot, flagged_annotators, pool_quality
from adjudication.stats import quality as qs
from annotation import quality
from annotation.models import AssignmentStatus, ControlKind, Label
from tests import factories

# --- Pure statistics -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "lower", "upper"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no continuity
        # correction): the four worked examples.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_intervals_reproduce_newcombes_worked_examples(k, n, lower, upper):
    s = qs.share(k, n)
    assert s.share == pytest.approx(k / n)
    assert s.lower == pytest.approx(lower, abs=5e-5)
    assert s.upper == pytest.approx(upper, abs=5e-5)


def test_wilson_interval_by_hand_for_three_of_four():
    # p = 3/4, n = 4, z = 1.959964 (z^2 = 3.841459):
    #   centre     = (p + z^2/(2n)) / (1 + z^2/n) = (0.75 + 0.480182) / 1.960365 = 0.627528
    #   half width = z * sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n)
    #              = 1.959964 * sqrt(0.046875 + 0.060021) / 1.960365 = 1.959964 * 0.326950 / 1.960365 = 0.326883
    #   interval   = [0.300645, 0.954411]
    s = qs.share(3, 4)
    assert (s.lower, s.upper) == (pytest.approx(0.300645, abs=1e-5), pytest.approx(0.954411, abs=1e-5))


def test_share_of_nothing_has_no_interval_and_bad_counts_are_refused():
    assert qs.share(0, 0) == qs.Share(0, 0, None, None, None)
    with pytest.raises(ValueError):
        qs.share(3, 2)


def test_consensus_agreement_leaves_the_annotator_out_of_the_consensus():
    # Three annotators, three units (the hand computation of the pool test below):
    #        A    B    C
    #   u1  yes  yes  yes
    #   u2  yes  yes  no
    #   u3  no   yes  no
    # A: u1 others (yes, yes) -> yes, agrees; u2 others (yes, no) split; u3 others (yes, no) split -> 1 of 1.
    # B: u1 others (yes, yes) -> agrees; u2 others (yes, no) split; u3 others (no, no) -> no, B said yes -> 1 of 2.
    # C: u1 agrees; u2 others (yes, yes) -> yes, C said no; u3 others (no, yes) split -> 1 of 2.
    units = {
        "u1": {"A": "yes", "B": "yes", "C": "yes"},
        "u2": {"A": "yes", "B": "yes", "C": "no"},
        "u3": {"A": "no", "B": "yes", "C": "no"},
    }
    assert (qs.consensus_agreement(units, "A").k, qs.consensus_agreement(units, "A").n) == (1, 1)
    assert (qs.consensus_agreement(units, "B").k, qs.consensus_agreement(units, "B").n) == (1, 2)
    assert (qs.consensus_agreement(units, "C").k, qs.consensus_agreement(units, "C").n) == (1, 2)
    # Including one's own label would make u2 a 2-1 majority "yes" for C to disagree with, and u3 a majority
    # "no" for A to agree with: A would be 2 of 2, not 1 of 1.
    assert qs.consensus_agreement(units, "A").share == 1.0 and qs.consensus_agreement(units, "A").n == 1
    # A strict majority of others: three others split 2-1 is a consensus.
    four = {"u": {"A": "x", "B": "x", "C": "x", "D": "y"}}
    assert qs.consensus_agreement(four, "D").n == 1 and qs.consensus_agreement(four, "D").k == 0


def test_windows_and_time_by_hand():
    # Judgements T T F T F: windows of 2 -> [T T] 2/2, [F T] 1/2, [F] 0/1.
    w = qs.windows([True, True, False, True, False], 2)
    assert [(x["first"], x["last"], x["k"], x["n"]) for x in w] == [(1, 2, 2, 2), (3, 4, 1, 2), (5, 5, 0, 1)]
    # 10, 20, 30, 40: median 25, mean 25, quartiles (numpy linear) 17.5 and 32.5.
    t = qs.time_summary([10, 20, 30, 40])
    assert (t["n"], t["median"], t["mean"], t["q1"], t["q3"]) == (4, 25.0, 25.0, 17.5, 32.5)
    assert qs.time_summary([])["median"] is None


# --- A pool, end to end ---------------------------------------------------------------------------------------


def _label(assignment, question, value, when):
    Label.objects.create(
        assignment=assignment, question=question, unit_key="item", value=value, updated_by=assignment.annotator,
        updated_at=when,
    )


@pytest.fixture
def scored_pool(study):
    """Three annotators A, B, C on four control items (known answer "no"), one attention check (known "no"),
    and three real items, with these submitted answers (in this order of submission):

        control items c1..c4:  A  no  no  no  no    -> 4 of 4
                               B  no  no  yes no    -> 3 of 4   (drift, windows of 2: 2/2 then 1/2)
                               C  yes yes yes no    -> 1 of 4
        attention item t1:     A no (pass), B no (pass), C yes (fail)
        real items r1..r3:     the table of test_consensus_agreement_leaves_the_annotator_out_of_the_consensus
    """
    ok = factories.make_question(study, "ok")
    pool = factories.make_pool(study, "quality", questions=[ok], flag_below=0.5, overlap=3)
    people = {name: factories.make_user(f"qa-{name.lower()}") for name in "ABC"}
    for name, user in people.items():
        factories.add_member(pool, user, f"P-{name}")
    controls = []
    for n in range(4):
        item = factories.make_item(study, f"c{n + 1}")
        quality.control_mark(study=study, item=item, kind="control", answers_raw={"ok": "no"}, explanation="",
                             actor=None)
        controls.append(item)
    attention = factories.make_item(study, "t1", question="Choose 'No' for this item.")
    quality.control_mark(study=study, item=attention, kind=ControlKind.ATTENTION, answers_raw={"ok": "no"},
                         explanation="", actor=None)
    real = [factories.make_item(study, f"r{n + 1}") for n in range(3)]
    answers = {
        "A": (["no", "no", "no", "no"], "no", ["yes", "yes", "no"]),
        "B": (["no", "no", "yes", "no"], "no", ["yes", "yes", "yes"]),
        "C": (["yes", "yes", "yes", "no"], "yes", ["yes", "no", "no"]),
    }
    start = timezone.now() - timedelta(days=1)
    for name, (on_controls, on_attention, on_real) in answers.items():
        user = people[name]
        seconds = iter([10, 20, 30, 40, 50, 60, 70, 80])
        sequence = [
            *zip(controls, on_controls, strict=True), (attention, on_attention), *zip(real, on_real, strict=True)
        ]
        for step, (item, value) in enumerate(sequence, start=1):
            when = start + timedelta(minutes=step)
            a = factories.make_assignment(pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=when,
                                          started_at=when, active_seconds=next(seconds))
            _label(a, ok, value, when)
    return {"pool": pool, "ok": ok, "people": people}


@pytest.mark.django_db
def test_pool_quality_reproduces_the_hand_computation(scored_pool):
    report = pool_quality(pool=scored_pool["pool"], window=2)
    rows = {r["pseudonym"]: r for r in report["annotators"]}
    acc = {name: (rows[name]["control_accuracy"]["k"], rows[name]["control_accuracy"]["n"]) for name in rows}
    assert acc == {"P-A": (4, 4), "P-B": (3, 4), "P-C": (1, 4)}
    assert rows["P-B"]["control_accuracy"]["lower"] == pytest.approx(0.300645, abs=1e-5)  # the hand-worked 3/4
    att = {name: (rows[name]["attention"]["k"], rows[name]["attention"]["n"]) for name in rows}
    assert att == {"P-A": (1, 1), "P-B": (1, 1), "P-C": (0, 1)}
    cons = {name: (rows[name]["consensus_agreement"]["k"], rows[name]["consensus_agreement"]["n"]) for name in rows}
    assert cons == {"P-A": (1, 1), "P-B": (1, 2), "P-C": (1, 2)}
    # Active seconds 10, 20, ..., 80 on eight submitted items each: median 45, mean 45.
    assert rows["P-A"]["time_per_item"] == {"n": 8, "median": 45.0, "mean": 45.0, "q1": 27.5, "q3": 62.5}
    assert [(w["k"], w["n"]) for w in rows["P-B"]["drift"]] == [(2, 2), (1, 2)]
    # flag_below 0.5: C is at 1/4 = 25% on controls and 0/1 on attention checks; A and B are not flagged.
    assert report["flagged"] == ["P-C"]
    assert len(rows["P-C"]["flag_reasons"]) == 2 and rows["P-B"]["flagged"] is False
    assert flagged_annotators(pool=scored_pool["pool"]) == [(scored_pool["people"]["C"].pk, "P-C")]
    plot = drift_plot(rows["P-B"]["drift"])
    # y runs from the top (share 1) to the bottom (share 0) of the inner area: 2/2 at the top, 1/2 half way.
    assert plot["points"][0]["point"] == plot["top"]
    assert plot["points"][1]["point"] == pytest.approx((plot["top"] + plot["bottom"]) / 2, abs=0.1)


@pytest.mark.django_db
def test_without_a_threshold_nobody_is_flagged(scored_pool):
    pool = scored_pool["pool"]
    pool.flag_below = None
    pool.save()
    assert pool_quality(pool=pool)["flagged"] == [] and flagged_annotators(pool=pool) == []


@pytest.mark.django_db
def test_agreement_leaves_items_of_known_answer_out_unless_asked_and_says_whom_it_leaves_out(scored_pool):
    pool, ok = scored_pool["pool"], scored_pool["ok"]
    default = agreement_report(pool=pool, question=ok)
    assert default["n_units"] == 3  # the real items only
    assert default["quality"]["controls_included"] is False
    assert default["quality"]["n_control_ratings_excluded"] == 15  # 5 items of known answer x 3 annotators
    included = agreement_report(pool=pool, question=ok, include_controls=True)
    assert included["n_units"] == 8 and included["quality"]["n_control_ratings_excluded"] == 0
    without = agreement_report(pool=pool, question=ok, exclude_flagged=True)
    assert without["raters"] == ["P-A", "P-B"]
    assert without["quality"]["excluded_annotators"] == ["P-C"]
    assert without["quality"]["n_flagged_ratings_excluded"] == 3
    # By hand, A and B on r1..r3: (yes, yes), (yes, yes), (no, yes): 2 of 3 units agree.
    assert without["percent_agreement"]["value"] == pytest.approx(2 / 3)


@pytest.mark.django_db
def test_the_report_pages_state_the_options(client, scored_pool, researcher, study):
    client.force_login(researcher)
    pool = scored_pool["pool"]
    url = reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "ok"])
    page = client.get(url).content.decode()
    assert "Items of known answer are left out (15 ratings)" in page and "Every annotator is included" in page
    page = client.get(url, {"controls": "include", "flagged": "exclude"}).content.decode()
    assert "Items of known answer are included" in page
    assert "Flagged annotators are left out: P-C" in page
    assert client.get(url, {"controls": "maybe"}).status_code == 400
    assert client.get(url, {"flagged": "drop"}).status_code == 400


@pytest.mark.django_db
def test_quality_page_and_api_for_researchers_only(scored_pool, researcher, study, annotator, stranger, adjudicator):
    pool = scored_pool["pool"]
    factories.grant(study, annotator, "annotator")
    factories.grant(study, adjudicator, "adjudicator")
    other = factories.make_study(slug="other-study")
    other_pool = factories.make_pool(other, "x")
    page = reverse("adjudication:quality-pool", args=[study.slug, pool.pk])
    api = reverse("adjudication-api-quality-pool", args=[study.slug, pool.pk])
    client = APIClient()
    client.force_login(researcher)
    body = client.get(page).content.decode()
    assert "<svg" in body and "P-C" in body and "flagged" in body
    data = client.get(api).json()
    assert [r["pseudonym"] for r in data["annotators"]] == ["P-A", "P-B", "P-C"]
    assert all("user_id" not in r for r in data["annotators"])
    assert client.get(api, {"window": "1"}).status_code == 400
    assert client.get(reverse("adjudication:quality-pool", args=[study.slug, other_pool.pk])).status_code == 404
    assert client.get(reverse("adjudication-api-quality-pool", args=[study.slug, other_pool.pk])).status_code == 404
    csv = client.get(reverse("adjudication:quality-download", args=[study.slug, pool.pk, "csv"]))
    assert csv.status_code == 200 and "P-C,True,1,4" in csv.content.decode()
    for user, status in [(annotator, 403), (adjudicator, 403), (stranger, 404)]:
        client.force_login(user)
        assert client.get(page).status_code == status, user
        assert client.get(api).status_code == status, user


@pytest.mark.django_db
def test_the_bootstrap_job_of_an_agreement_report_keeps_its_quality_options(scored_pool, study):
    from adjudication import report_jobs

    pool = scored_pool["pool"]
    params = report_jobs._agreement_parse(
        study, {"pool": str(pool.pk), "question": "ok", "controls": "include", "flagged": "exclude", "n_boot": "100"}
    )
    assert params["include_controls"] is True and params["exclude_flagged"] is True
    plain = report_jobs._agreement_parse(study, {"pool": str(pool.pk), "question": "ok", "n_boot": "100"})
    assert "include_controls" not in plain and "exclude_flagged" not in plain  # existing keys are unchanged
    report, _ = report_jobs.agreement_report_with_bootstrap(study=study, params=params)
    assert report["n_units"] == 8 and report["quality"]["excluded_annotators"] == ["P-C"]
