"""Agreement and metric-vs-human reports read from the database: services, pages, downloads, API, jobs."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import JSONField, Value
from django.urls import reverse
from django.utils import timezone

from adjudication import report_jobs
from adjudication.analysis import loading
from adjudication.analysis.agreement import agreement_report
from adjudication.analysis.loading import metric_source_get, metric_sources, ratings_load
from adjudication.analysis.rendering import AGREEMENT_CSV_HEADER, agreement_csv
from adjudication.analysis.validity import ValidityParams, validity_pairs, validity_params_parse, validity_report
from adjudication.models import GoldLabel, GoldSource, ReportJob, ReportJobKind, ReportJobStatus
from adjudication.report_jobs import (
    ANALYSIS,
    PLANNING,
    REPORT,
    agreement_report_with_bootstrap,
    job_params_parse,
    job_request,
    job_run,
)
from adjudication.stats import agreement as ag
from adjudication.stats import validity as va
from annotation.models import AssignmentStatus, Label
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

HARM = [
    {"value": "none", "label": "None", "key": "1"},
    {"value": "slight", "label": "Slight", "key": "2"},
    {"value": "severe", "label": "Severe", "key": "3"},
]

# Twelve items rated by three annotators on "pf" (yes/no). Rows are items, columns annotators A1..A3.
PF = [
    ["yes", "yes", "yes"],
    ["yes", "yes", "no"],
    ["no", "no", "no"],
    ["no", "no", "no"],
    ["yes", "yes", "yes"],
    ["yes", "no", "yes"],
    ["no", "no", "yes"],
    ["yes", "yes", "yes"],
    ["no", "no", "no"],
    ["yes", "yes", None],
    ["no", None, None],
    ["yes", "yes", "yes"],
]
HARM_RATINGS = [
    ["none", "none", "slight"],
    ["slight", "slight", "slight"],
    ["severe", "severe", "slight"],
    ["none", "none", "none"],
    ["slight", "none", "slight"],
    ["severe", "severe", "severe"],
    ["none", "slight", "none"],
    ["none", "none", "none"],
    ["slight", "slight", "severe"],
    ["none", "none", None],
    ["none", None, None],
    ["severe", "severe", "severe"],
]
METRIC = [0.9, 0.7, 0.2, 0.1, 0.8, 0.6, 0.4, 0.95, 0.3, 0.65, 0.15, 0.85]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Accounts here never log in with a password (force_login); hashing would dominate the run time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _label(assignment, question, value, unit_key="item"):
    return Label(
        assignment=assignment,
        question=question,
        unit_key=unit_key,
        value=value,
        version=1,
        updated_by=assignment.annotator,
        updated_at=timezone.now(),
    )


@pytest.fixture
def fixture_study(study, researcher):
    """A study with one pool of three annotators who rated 12 items on a binary and an ordinal question."""
    pf = factories.make_question(study, "pf")
    harm = factories.make_question(study, "harm", kind="ordinal", options=HARM, order=1)
    pool = factories.make_pool(study, "clinicians", questions=[pf, harm], overlap=3)
    members = [factories.make_user(f"clin{i}") for i in range(3)]
    for i, user in enumerate(members):
        factories.add_member(pool, user, pseudonym=f"A{i + 1}")
    items = [factories.make_item(study, f"q{i:02d}") for i in range(12)]
    labels = []
    for i, item in enumerate(items):
        for j, user in enumerate(members):
            if PF[i][j] is None:
                continue
            a = factories.make_assignment(
                pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            labels += [_label(a, pf, PF[i][j]), _label(a, harm, HARM_RATINGS[i][j])]
    # A draft (not submitted) assignment must not count.
    draft_user = factories.make_user("late")
    factories.add_member(pool, draft_user, pseudonym="A4")
    draft = factories.make_assignment(pool, items[0], draft_user)
    labels.append(_label(draft, pf, "no"))
    Label.objects.bulk_create(labels)
    return {"study": study, "pool": pool, "pf": pf, "harm": harm, "items": items, "members": members}


@pytest.fixture
def score_run(fixture_study, researcher):
    study = fixture_study["study"]
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", status=RunStatus.DONE, created_by=researcher
    )
    Score.objects.bulk_create(
        [
            Score(run=run, item=item, unit_key="item", value=v, state=ScoreState.OK)
            for item, v in zip(fixture_study["items"], METRIC, strict=True)
        ]
        + []
    )
    Score.objects.filter(run=run, item=fixture_study["items"][11]).update(state=ScoreState.UNDETERMINED, value=None)
    return run


def _codes(rows, scale):
    return ag.codes_from_values(rows, scale)


# --- services ------------------------------------------------------------------------------------


def test_agreement_report_matches_the_pure_statistics_on_the_same_ratings(fixture_study):
    rep = agreement_report(pool=fixture_study["pool"], question=fixture_study["pf"])
    codes = _codes(PF, ["yes", "no"])
    assert rep["n_units"] == 12 and rep["n_raters"] == 3 and rep["n_excluded_units"] == 1
    assert rep["raters"] == ["A1", "A2", "A3"]
    assert rep["fleiss_kappa"]["value"] == pytest.approx(ag.fleiss_kappa(codes, 2).value)
    assert rep["fleiss_kappa"]["n_units"] == 10 and rep["fleiss_kappa"]["n_excluded_units"] == 2
    assert rep["krippendorff_alpha"]["value"] == pytest.approx(ag.krippendorff_alpha(codes, "nominal", 2).value)
    # 8 of the 11 units rated at least twice agree completely (rows 0,2,3,4,7,8,9,11).
    assert rep["percent_agreement"]["value"] == pytest.approx(8 / 11)


def test_ordinal_questions_use_the_declared_order_and_linear_weights(fixture_study):
    rep = agreement_report(pool=fixture_study["pool"], question=fixture_study["harm"])
    codes = _codes(HARM_RATINGS, ["none", "slight", "severe"])
    assert rep["level"] == "ordinal" and rep["weights"] == "linear"
    assert rep["krippendorff_alpha"]["value"] == pytest.approx(ag.krippendorff_alpha(codes, "ordinal", 3).value)
    pair = rep["cohen_kappa_pairs"][0]
    assert pair["value"] == pytest.approx(ag.cohen_kappa(codes[:, 0], codes[:, 1], 3, "linear").value)


def test_a_stored_value_off_the_scale_is_excluded_and_counted(fixture_study):
    label = Label.objects.filter(question=fixture_study["pf"], assignment__status=AssignmentStatus.SUBMITTED).first()
    Label.objects.filter(pk=label.pk).update(value="maybe")
    rep = agreement_report(pool=fixture_study["pool"], question=fixture_study["pf"])
    assert rep["n_off_scale_ratings"] == 1


def test_a_cleared_answer_is_no_rating_neither_on_nor_off_the_scale(fixture_study):
    # A cleared answer is stored as JSON null (or SQL NULL): the unit counts as not rated by that annotator.
    pool, pf = fixture_study["pool"], fixture_study["pf"]
    labels = list(
        Label.objects.filter(question=pf, assignment__status=AssignmentStatus.SUBMITTED).order_by(
            "assignment__item__external_id", "assignment__annotator__username"
        )
    )
    Label.objects.filter(pk=labels[0].pk).update(value=Value(None, output_field=JSONField()))  # item 0, A1
    Label.objects.filter(pk=labels[4].pk).update(value=None)  # item 1, A2 (SQL NULL)
    assert Label.objects.filter(pk=labels[0].pk, value__isnull=True).count() == 0  # JSON null, not SQL NULL
    rows = [list(r) for r in PF]
    rows[0][0] = rows[1][1] = None
    codes = _codes(rows, ["yes", "no"])
    rep = agreement_report(pool=pool, question=pf)
    assert rep["n_off_scale_ratings"] == 0 and rep["n_units"] == 12
    assert rep["percent_agreement"] == ag.percent_agreement(codes, counts=ag.category_counts(codes, 2)).as_dict()
    by_columns = ag.percent_agreement(codes).as_dict()  # the same shares, the mean summed in another order
    assert rep["percent_agreement"]["value"] == by_columns["value"]
    assert rep["percent_agreement"]["mean_pairwise"] == pytest.approx(by_columns["mean_pairwise"], rel=1e-14)
    assert rep["fleiss_kappa"] == ag.fleiss_kappa(codes, 2).as_dict()
    ratings = ratings_load(pool=pool, question=pf)
    np.testing.assert_array_equal(ratings.codes, codes)


@pytest.mark.parametrize(
    "stored",
    [
        [1, 1.0, 1.5, True, "true", "1", None, ["a", "b"], {"x": 1}, "tab\there", "line\nbreak", "1e3", 1e3],
        [1, 1.0, 2, 10, 0.5],  # numbers only: 1 and 1.0 stay two values, as stored
        [True, False, True],
        [None, None],
    ],
)
def test_the_labels_postgresql_writes_as_text_are_read_back_value_by_value_as_stored(stored):
    # The lines _LABELS_AS_TEXT builds: item id, unit key, annotator id, "v" + the jsonb text (tabs and
    # newlines in it escaped, as json.dumps writes them).
    lines = [f"{100 + i}\ts:{i % 3}\t{7 + i % 2}\tv{json.dumps(v)}" for i, v in enumerate(stored)]
    rows = loading._label_rows_from_text("\n".join(lines))
    kept = [(100 + i, f"s:{i % 3}", 7 + i % 2, v) for i, v in enumerate(stored) if v is not None]
    got = [
        (int(item), rows.keys[key], int(rater), rows.values[value])
        for item, key, rater, value in zip(rows.items, rows.key_codes, rows.raters, rows.value_codes, strict=True)
    ]
    assert [repr(g) for g in got] == [repr(k) for k in kept]  # repr: 1, 1.0 and True are equal in Python


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the parallel read is PostgreSQL's")
def test_the_parallel_read_leaves_the_planner_settings_of_the_callers_transaction_as_they_were(fixture_study):
    settings_sql = "SELECT current_setting('parallel_tuple_cost'), current_setting('parallel_setup_cost')"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL parallel_tuple_cost = 0.5")
        cursor.execute(settings_sql)
        before = cursor.fetchone()
        ratings = ratings_load(pool=fixture_study["pool"], question=fixture_study["pf"])
        cursor.execute(settings_sql)
        after = cursor.fetchone()
    assert ratings.codes.shape == (12, 3)
    assert after == before and before[0] == "0.5" and before[1] != "0"


def test_a_pool_whose_every_answer_was_cleared_has_an_empty_report(fixture_study):
    pool, pf = fixture_study["pool"], fixture_study["pf"]
    Label.objects.filter(question=pf).update(value=Value(None, output_field=JSONField()))
    rep = agreement_report(pool=pool, question=pf)
    assert rep["empty"] and rep["n_units"] == 0 and rep["n_off_scale_ratings"] == 0


def test_units_are_ordered_by_item_then_unit_key_and_raters_by_user(study):
    question = factories.make_question(study, "claim", scope="sentence")
    pool = factories.make_pool(study, "sentences", questions=[question], overlap=2)
    users = [factories.make_user(f"sent{i}") for i in range(2)]
    for i, user in enumerate(users):
        factories.add_member(pool, user, pseudonym=f"S{i + 1}")
    items = [factories.make_item(study, f"s{i}") for i in range(2)]
    assignments = {
        (item.pk, user.pk): factories.make_assignment(
            pool, item, user, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
        )
        for item in items
        for user in users
    }
    # Written in an order that is neither the items' nor the keys' ("s:10" sorts before "s:2" as text).
    written = [
        (items[1], users[1], "s:2", "no"),
        (items[0], users[0], "s:10", "yes"),
        (items[1], users[0], "s:0", "yes"),
        (items[0], users[1], "s:2", "yes"),
        (items[0], users[1], "s:10", "no"),
        (items[1], users[0], "s:2", "no"),
    ]
    Label.objects.bulk_create(
        _label(assignments[(item.pk, user.pk)], question, value, unit_key=key) for item, user, key, value in written
    )
    ratings = ratings_load(pool=pool, question=question)
    a, b = sorted(item.pk for item in items)
    assert ratings.units == [(a, "s:10"), (a, "s:2"), (b, "s:0"), (b, "s:2")]
    assert ratings.rater_ids == sorted(user.pk for user in users)
    column = {user.pk: ratings.rater_ids.index(user.pk) for user in users}
    expected = np.full((4, 2), np.nan)
    for item, user, key, value in written:
        expected[ratings.units.index((item.pk, key)), column[user.pk]] = ["yes", "no"].index(value)
    np.testing.assert_array_equal(ratings.codes, expected)


def test_validity_report_aligns_scores_and_the_majority_on_the_same_units(fixture_study, score_run):
    vp = validity_params_parse(
        study=fixture_study["study"],
        query={"source": f"run:{score_run.pk}", "pool": fixture_study["pool"].pk, "question": "pf"},
    )
    assert vp.target == "majority" and vp.positive == "yes"  # no gold yet; first option is positive
    rep = validity_report(study=fixture_study["study"], params=vp)
    # Majority of PF per row (ties excluded: row 10 has one rating only → its own value).
    majority = [1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0]  # item 11 is undetermined in the run
    expected = va.roc_auc(np.array(METRIC[:11]), np.array(majority, float))
    assert rep["n_units_both"] == 11 and rep["n_metric_not_ok"] == 1
    assert rep["auc"]["value"] == pytest.approx(expected.value)
    assert rep["auc"]["ci95"] == pytest.approx(list(expected.ci95))
    assert rep["human_ceiling"]["fleiss_kappa"]["value"] == pytest.approx(
        ag.fleiss_kappa(_codes(PF, ["yes", "no"]), 2).value
    )
    assert rep["roc"]["fpr"][0] == 0.0


GOLD_PF = ["yes", "yes", "no", "no", "yes", "no", "no", "yes", "no", "yes", "no", "yes"]


def test_gold_is_the_default_target_only_when_it_covers_every_unit(fixture_study, score_run):
    pool, pf, study = fixture_study["pool"], fixture_study["pf"], fixture_study["study"]
    query = {"source": f"run:{score_run.pk}", "pool": pool.pk, "question": "pf"}
    for item, value in zip(fixture_study["items"][:6], GOLD_PF[:6], strict=True):
        GoldLabel.objects.create(
            pool=pool, item=item, unit_key="item", question=pf, value=value, source=GoldSource.UNANIMOUS
        )
    # Partial gold (typically the unanimous units) would keep only the easy units: majority instead.
    assert validity_params_parse(study=study, query=query).target == "majority"
    explicit = validity_report(
        study=study, params=validity_params_parse(study=study, query={**query, "target": "gold"})
    )
    assert explicit["n_units_both"] == 6
    assert explicit["auc"]["value"] == pytest.approx(
        va.roc_auc(np.array(METRIC[:6]), np.array([1, 1, 0, 0, 1, 0], float)).value
    )
    for item, value in zip(fixture_study["items"][6:], GOLD_PF[6:], strict=True):
        GoldLabel.objects.create(
            pool=pool, item=item, unit_key="item", question=pf, value=value, source=GoldSource.ADJUDICATED
        )
    assert validity_params_parse(study=study, query=query).target == "gold"


def test_gold_on_units_nobody_labelled_does_not_make_gold_the_default(fixture_study, score_run):
    """Every labelled unit needs its gold: as many gold labels as labelled units, some of them on items nobody
    labelled (imported gold), leave a labelled unit without gold, so the majority stays the default."""
    pool, pf, study = fixture_study["pool"], fixture_study["pf"], fixture_study["study"]
    query = {"source": f"run:{score_run.pk}", "pool": pool.pk, "question": "pf"}
    for item, value in zip(fixture_study["items"][1:], GOLD_PF[1:], strict=True):
        GoldLabel.objects.create(pool=pool, item=item, unit_key="item", question=pf, value=value,
                                 source=GoldSource.ADJUDICATED)
    elsewhere = factories.make_item(study, "never-labelled")
    GoldLabel.objects.create(pool=pool, item=elsewhere, unit_key="item", question=pf, value="yes",
                             source=GoldSource.ADJUDICATED)
    assert validity_params_parse(study=study, query=query).target == "majority"
    # Unresolved gold is no gold; current gold on the missing item makes gold the default.
    first = fixture_study["items"][0]
    GoldLabel.objects.create(
        pool=pool, item=first, unit_key="item", question=pf, value="", source=GoldSource.UNRESOLVED
    )
    assert validity_params_parse(study=study, query=query).target == "majority"
    GoldLabel.objects.filter(pool=pool, item=first).update(is_current=False)
    GoldLabel.objects.create(pool=pool, item=first, unit_key="item", question=pf, value="yes", version=2,
                             source=GoldSource.ADJUDICATED)
    assert validity_params_parse(study=study, query=query).target == "gold"
    # Gold of another question or a unit key nobody labelled covers nothing.
    GoldLabel.objects.filter(pool=pool, item=first, is_current=True).update(unit_key="s:0")
    assert validity_params_parse(study=study, query=query).target == "majority"


def test_an_ordinal_positive_class_means_that_option_or_worse(fixture_study, score_run):
    vp = ValidityParams(
        source=f"run:{score_run.pk}",
        pool_id=fixture_study["pool"].pk,
        question="harm",
        target="rater:A1",
        positive="slight",
    )
    rep = validity_report(study=fixture_study["study"], params=vp)
    a1 = [r[0] for r in HARM_RATINGS[:11]]
    assert rep["n_pos"] == sum(v in ("slight", "severe") for v in a1)


def test_a_metric_source_list_includes_every_score_run(fixture_study, score_run):
    keys = [s.key for s in metric_sources(fixture_study["study"])]
    assert f"run:{score_run.pk}" in keys
    pairs = validity_pairs(study=fixture_study["study"])
    assert {(p["source"].key, p["question"].key) for p in pairs} >= {
        (f"run:{score_run.pk}", "pf"),
        (f"run:{score_run.pk}", "harm"),
    }


def test_agreement_csv_has_one_row_per_statistic(fixture_study):
    rep = agreement_report(pool=fixture_study["pool"], question=fixture_study["harm"])
    rows = list(csv.reader(io.StringIO(agreement_csv(rep))))
    assert rows[0] == AGREEMENT_CSV_HEADER
    stats = [r[0] for r in rows[1:]]
    assert stats.count("cohen_kappa_pair") == 3 and stats.count("cohen_kappa_vs_rest") == 3
    assert stats.count("fleiss_kappa_one_vs_rest") == 3


# --- pages and access ----------------------------------------------------------------------------


def _agreement_url(fx, key="pf"):
    return reverse("adjudication:report-agreement", args=[fx["study"].slug, fx["pool"].pk, key])


def test_researcher_sees_the_agreement_page_with_the_matrix_and_outlier_table(
    client, researcher, fixture_study, django_assert_max_num_queries
):
    client.force_login(researcher)
    # The ratings are read as count tables: the pool's annotators and its items' id bounds first, then each range
    # (on PostgreSQL with its planner settings set and put back around it).
    with django_assert_max_num_queries(27):
        response = client.get(_agreement_url(fixture_study))
    assert response.status_code == 200
    body = response.content.decode()
    kappa = ag.fleiss_kappa(_codes(PF, ["yes", "no"]), 2).value
    assert f"{kappa:.3f}" in body
    assert "Annotator × annotator" in body and "Each annotator against the rest" in body
    # Pseudonyms as whole words: a page's random CSRF token may contain "A4" inside it.
    assert re.search(r"\bA1\b", body)
    assert not re.search(r"\bA4\b", body)  # the draft annotator's label does not count


def test_annotator_is_refused_and_stranger_learns_nothing(client, annotator, stranger, fixture_study):
    factories.add_member(fixture_study["pool"], annotator, pseudonym="A9")
    urls = [
        reverse("adjudication:report-index", args=[fixture_study["study"].slug]),
        _agreement_url(fixture_study),
        reverse(
            "adjudication:report-agreement-download",
            args=[fixture_study["study"].slug, fixture_study["pool"].pk, "pf", "csv"],
        ),
        reverse(
            "adjudication-api-report-agreement", args=[fixture_study["study"].slug, fixture_study["pool"].pk, "pf"]
        ),
    ]
    client.force_login(annotator)
    assert [client.get(u).status_code for u in urls] == [403, 403, 403, 403]
    client.force_login(stranger)
    assert [client.get(u).status_code for u in urls] == [404, 404, 404, 404]


def test_anonymous_visitors_are_sent_to_log_in(client, fixture_study):
    response = client.get(_agreement_url(fixture_study))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_unknown_pool_or_question_is_not_found(client, researcher, fixture_study):
    client.force_login(researcher)
    study = fixture_study["study"]
    assert client.get(reverse("adjudication:report-agreement", args=[study.slug, 999999, "pf"])).status_code == 404
    assert client.get(_agreement_url(fixture_study, "nope")).status_code == 404


def test_index_lists_pools_questions_and_metric_pairs(client, researcher, fixture_study, score_run):
    client.force_login(researcher)
    body = client.get(reverse("adjudication:report-index", args=[fixture_study["study"].slug])).content.decode()
    assert "clinicians" in body and "harm" in body and f"run #{score_run.pk}" in body


def test_validity_page_renders_the_roc_svg_and_the_ceiling(client, researcher, fixture_study, score_run):
    client.force_login(researcher)
    url = reverse("adjudication:report-validity", args=[fixture_study["study"].slug])
    response = client.get(url, {"source": f"run:{score_run.pk}", "pool": fixture_study["pool"].pk, "question": "pf"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<polyline points=" in body and "own agreement (the ceiling)" in body
    assert "optimistic" in body  # the Youden warning


def test_validity_with_an_unknown_source_is_not_found(client, researcher, fixture_study):
    client.force_login(researcher)
    url = reverse("adjudication:report-validity", args=[fixture_study["study"].slug])
    assert (
        client.get(url, {"source": "run:999999", "pool": fixture_study["pool"].pk, "question": "pf"}).status_code == 404
    )


def test_downloads_carry_the_same_numbers_as_the_api(client, researcher, fixture_study):
    client.force_login(researcher)
    args = [fixture_study["study"].slug, fixture_study["pool"].pk, "pf"]
    data = json.loads(client.get(reverse("adjudication:report-agreement-download", args=[*args, "json"])).content)
    api = client.get(reverse("adjudication-api-report-agreement", args=args)).json()
    assert data["fleiss_kappa"] == api["fleiss_kappa"]
    csv_response = client.get(reverse("adjudication:report-agreement-download", args=[*args, "csv"]))
    assert csv_response["Content-Type"].startswith("text/csv")
    assert "attachment" in csv_response["Content-Disposition"]
    assert client.get(reverse("adjudication:report-agreement-download", args=[*args, "xlsx"])).status_code == 404


def test_validity_api_answers_the_documented_keys(client, researcher, fixture_study, score_run):
    client.force_login(researcher)
    response = client.get(
        reverse("adjudication-api-report-validity", args=[fixture_study["study"].slug]),
        {"source": f"run:{score_run.pk}", "pool": fixture_study["pool"].pk, "question": "pf"},
    )
    assert response.status_code == 200
    body = response.json()
    assert {"n", "n_pos", "n_neg", "auc", "pearson", "spearman", "kendall", "human_ceiling"} <= set(body)


# --- bootstrap jobs ------------------------------------------------------------------------------


def test_bootstrap_job_is_queued_once_and_its_intervals_reach_the_page(client, researcher, fixture_study):
    client.force_login(researcher)
    study = fixture_study["study"]
    start = reverse("adjudication:report-job-start", args=[study.slug])
    form = {"kind": "agreement", "pool": fixture_study["pool"].pk, "question": "pf", "n_boot": 200, "seed": 5}
    first = client.post(start, form, HTTP_HX_REQUEST="true")
    again = client.post(start, form, HTTP_HX_REQUEST="true")
    assert first.status_code == again.status_code == 200
    assert ReportJob.objects.filter(study=study).count() == 1
    job = ReportJob.objects.get(study=study)
    assert job.status == ReportJobStatus.QUEUED

    job_run(job_id=job.pk)  # what the worker's task does
    job.refresh_from_db()
    assert job.status == ReportJobStatus.DONE and job.n_done == job.n_total == 400
    poll = client.get(reverse("adjudication:report-job", args=[study.slug, job.pk]), HTTP_HX_REQUEST="true")
    assert poll["HX-Refresh"] == "true"
    page = client.get(_agreement_url(fixture_study), {"n_boot": 200, "seed": 5}).content.decode()
    ci = job.result["fleiss_kappa"]["ci95"]
    assert f"[{ci[0]:.3f}, {ci[1]:.3f}]" in page


def test_bootstrap_intervals_are_not_shown_once_the_labels_changed(researcher, fixture_study):
    study = fixture_study["study"]
    kind, params = job_params_parse(
        study=study,
        family=REPORT,
        data={"kind": "agreement", "pool": fixture_study["pool"].pk, "question": "pf", "n_boot": "200", "seed": "1"},
    )
    job = job_request(study=study, family=REPORT, kind=kind, params=params, user=researcher)
    job_run(job_id=job.pk)
    view_params = {"pool": fixture_study["pool"].pk, "question": "pf", "weights": None, "n_boot": 200, "seed": 1}
    rep, _ = agreement_report_with_bootstrap(study=study, params=view_params)
    assert rep["bootstrap_status"] == "done"
    label = Label.objects.filter(question=fixture_study["pf"]).first()
    Label.objects.filter(pk=label.pk).update(value="no", updated_at=timezone.now())
    rep, _ = agreement_report_with_bootstrap(study=study, params=view_params)
    assert rep["bootstrap_status"] == "not requested" and "ci95" not in rep["fleiss_kappa"]


def test_bootstrap_request_with_a_bad_size_is_refused(client, researcher, fixture_study):
    client.force_login(researcher)
    start = reverse("adjudication:report-job-start", args=[fixture_study["study"].slug])
    response = client.post(
        start, {"kind": "agreement", "pool": fixture_study["pool"].pk, "question": "pf", "n_boot": 5}
    )
    assert response.status_code == 400
    assert not ReportJob.objects.exists()


def test_api_starts_a_validity_job_and_reports_its_progress(client, researcher, fixture_study, score_run):
    client.force_login(researcher)
    study = fixture_study["study"]
    response = client.post(
        reverse("adjudication-api-report-job-start", args=[study.slug]),
        {
            "kind": "validity",
            "source": f"run:{score_run.pk}",
            "pool": fixture_study["pool"].pk,
            "question": "pf",
            "n_boot": 300,
            "seed": 2,
        },
        content_type="application/json",
    )
    assert response.status_code == 202
    job_id = response.json()["id"]
    job_run(job_id=job_id)
    body = client.get(reverse("adjudication-api-report-job", args=[study.slug, job_id])).json()
    assert body["status"] == "done" and body["progress"] == 1.0
    assert len(body["result"]["auc"]["ci95_bootstrap"]) == 2
    # The humans' ceiling beside it carries its bootstrap interval too, in the same job.
    assert len(body["result"]["human_ceiling"]["fleiss_kappa"]["ci95"]) == 2
    assert body["n_done"] == body["n_total"] == 900


def test_starting_a_bootstrap_enqueues_the_task_once_after_commit(
    researcher, fixture_study, monkeypatch, django_capture_on_commit_callbacks
):
    from adjudication.tasks import reports as report_tasks

    sent = []
    monkeypatch.setattr(report_tasks.report_job_run, "delay", lambda job_id: sent.append(job_id))
    study = fixture_study["study"]
    data = {"kind": "agreement", "pool": fixture_study["pool"].pk, "question": "harm", "n_boot": "150", "seed": "0"}
    kind, params = job_params_parse(study=study, family=REPORT, data=data)
    with django_capture_on_commit_callbacks(execute=True):
        job = job_request(study=study, family=REPORT, kind=kind, params=params, user=researcher)
    with django_capture_on_commit_callbacks(execute=True):
        again = job_request(study=study, family=REPORT, kind=kind, params=params, user=researcher)
    assert sent == [job.pk] and again.pk == job.pk


def test_every_report_job_kind_is_in_the_one_registry_under_its_family():
    """Bootstraps, analyses and planning simulations are one family of jobs: one registry, one task."""
    assert set(report_jobs.KINDS) == set(ReportJobKind.values)
    assert report_jobs.family_kinds(REPORT) == (ReportJobKind.AGREEMENT, ReportJobKind.VALIDITY)
    assert report_jobs.family_kinds(ANALYSIS) == (ReportJobKind.RATERS, ReportJobKind.OUTCOME)
    assert report_jobs.family_kinds(PLANNING) == (ReportJobKind.PLANNING,)


def test_each_job_route_starts_only_the_kinds_of_its_family(client, researcher, fixture_study):
    client.force_login(researcher)
    slug = fixture_study["study"].slug
    body = {"pool": fixture_study["pool"].pk, "question": "pf", "n_boot": 200, "seed": 1}
    for route, kind, expected in (
        ("adjudication-api-report-job-start", "raters", "kind must be agreement or validity"),
        ("adjudication-api-report-job-start", "planning", "kind must be agreement or validity"),
        ("adjudication-api-analysis-job-start", "agreement", "kind must be raters or outcome"),
        ("adjudication-api-analysis-job-start", "planning", "kind must be raters or outcome"),
    ):
        response = client.post(reverse(route, args=[slug]), {**body, "kind": kind}, content_type="application/json")
        assert response.status_code == 400 and response.json()["detail"] == expected, (route, kind)
    page = client.post(reverse("adjudication:analysis-job-start", args=[slug]), {**body, "kind": "validity"})
    assert page.status_code == 400
    assert not ReportJob.objects.exists()


def test_the_analysis_job_route_answers_its_own_kinds_and_the_report_route_any_job_of_the_study(
    client, researcher, fixture_study
):
    """As before the two families became one: reports/jobs/<id>/ answers any job of the study, the
    analysis route only model-as-rater and outcome jobs (404 otherwise)."""
    study = fixture_study["study"]
    bootstrap = ReportJob.objects.create(study=study, kind="agreement", params_hash="a", requested_by=researcher)
    analysis = ReportJob.objects.create(study=study, kind="raters", params_hash="r", requested_by=researcher)
    client.force_login(researcher)
    for job in (bootstrap, analysis):
        assert client.get(reverse("adjudication-api-report-job", args=[study.slug, job.pk])).status_code == 200
    assert client.get(reverse("adjudication-api-analysis-job", args=[study.slug, analysis.pk])).status_code == 200
    missing = client.get(reverse("adjudication-api-analysis-job", args=[study.slug, bootstrap.pk]))
    assert missing.status_code == 404 and missing.json()["detail"] == "no such analysis job"
    fragment = client.get(reverse("adjudication:report-job", args=[study.slug, bootstrap.pk]), HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert 'id="report-job"' in body and "hx-trigger=\"every 2s\"" in body
    assert f'hx-get="{reverse("adjudication:report-job", args=[study.slug, bootstrap.pk])}"' in body


def test_two_metrics_are_compared_with_the_paired_delong_test(client, researcher, fixture_study, score_run):
    other = ScoreRun.objects.create(
        study=fixture_study["study"], metric="rf", metric_version="1", backend="lexical", status=RunStatus.DONE
    )
    noisy = [0.2, 0.9, 0.4, 0.3, 0.5, 0.1, 0.8, 0.6, 0.7, 0.2, 0.3, 0.9]
    Score.objects.bulk_create(
        Score(run=other, item=item, unit_key="item", value=v, state=ScoreState.OK)
        for item, v in zip(fixture_study["items"], noisy, strict=True)
    )
    query = {
        "source": f"run:{score_run.pk}",
        "pool": fixture_study["pool"].pk,
        "question": "pf",
        "compare": f"run:{other.pk}",
    }
    rep = validity_report(
        study=fixture_study["study"], params=validity_params_parse(study=fixture_study["study"], query=query)
    )
    majority = np.array([1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0], float)
    expected = va.delong_paired(np.array(METRIC[:11]), np.array(noisy[:11]), majority)
    assert rep["comparison"]["n_units"] == 11
    assert rep["comparison"]["delong_paired"]["diff"] == pytest.approx(expected.value)
    assert rep["comparison"]["delong_paired"]["p_value"] == pytest.approx(expected.extra["p_value"])
    client.force_login(researcher)
    page = client.get(reverse("adjudication:report-validity", args=[fixture_study["study"].slug]), query)
    assert page.status_code == 200 and "Paired comparison with" in page.content.decode()


def test_a_number_question_is_rated_at_the_interval_level(study, fixture_study):
    score = factories.make_question(study, "score", kind="number", options=[], order=2)
    pool = factories.make_pool(study, "raters", questions=[score])
    users = [factories.make_user(f"num{i}") for i in range(2)]
    for i, u in enumerate(users):
        factories.add_member(pool, u, pseudonym=f"N{i + 1}")
    values = [(1.0, 1.5), (2.0, 2.0), (3.5, 3.0), (4.0, 5.0), (2.5, None)]
    labels = []
    for item, pair in zip(fixture_study["items"], values, strict=False):
        for u, v in zip(users, pair, strict=True):
            if v is not None:
                a = factories.make_assignment(pool, item, u, status=AssignmentStatus.SUBMITTED)
                labels.append(_label(a, score, v))
    Label.objects.bulk_create(labels)
    rep = agreement_report(pool=pool, question=score)
    codes = np.array([[1.0, 1.5], [2.0, 2.0], [3.5, 3.0], [4.0, 5.0], [2.5, np.nan]])
    assert rep["level"] == "interval" and rep["n_excluded_units"] == 1
    assert rep["krippendorff_alpha"]["value"] == pytest.approx(ag.krippendorff_alpha(codes, "interval").value)
    assert rep["fleiss_kappa"]["value"] is None and rep["cohen_kappa_pairs"] == []


def test_a_human_measure_from_one_pool_is_a_metric_against_another_pools_question(monkeypatch, study, fixture_study):
    # Pool "coverage" judges aspects (ICAT's aspect_covered); its annotator's per-item coverage is a
    # metric source against the clinicians' item-level "pf" — never against its own pool.
    from annotation.models import Aspect

    covered = factories.make_question(study, "aspect_covered", scope="aspect", order=3)
    pool = factories.make_pool(study, "coverage", questions=[covered])
    user = factories.make_user("cov1")
    factories.add_member(pool, user, pseudonym="C1")
    labels, expected = [], {}
    for n, item in enumerate(fixture_study["items"][:8]):
        aspects = [Aspect.objects.create(item=item, text=f"aspect {k}") for k in range(2)]
        a = factories.make_assignment(pool, item, user, status=AssignmentStatus.SUBMITTED)
        answers = ["yes", "yes" if n % 2 else "no"]
        labels += [_label(a, covered, v, unit_key=f"a:{asp.pk}") for asp, v in zip(aspects, answers, strict=True)]
        expected[item.pk] = answers.count("yes") / 2
    Label.objects.bulk_create(labels)
    key = f"measure:{pool.pk}:human_aspect_coverage:C1"
    pairs = validity_pairs(study=study)
    assert (key, "pf", fixture_study["pool"].pk) in {(p["source"].key, p["question"].key, p["pool"].pk) for p in pairs}
    assert not any(p["source"].key == key and p["pool"].pk == pool.pk for p in pairs)
    source = metric_source_get(study=study, key=key)
    assert source.load().as_dict() == {(item_id, "item"): v for item_id, v in expected.items()}
    rep = validity_report(
        study=study,
        params=ValidityParams(source=key, pool_id=fixture_study["pool"].pk, question="pf", target="rater:A1"),
    )
    assert rep["n_units_both"] == 8 and rep["source"]["origin"] == "human_measure"
    # Read a range of items at a time (two item ids a range here), as the report reads it: the same values, and
    # the same sizes counted range by range; an item without a value (an unanswered aspect) counts as not usable.
    Label.objects.filter(assignment__item=fixture_study["items"][6], value="no").delete()
    whole = source.load()
    assert whole.n_not_ok == 1 and len(whole) == 7
    ids = sorted(item.pk for item in fixture_study["items"])
    from adjudication.analysis import loading

    monkeypatch.setattr(loading, "_MEASURE_ITEMS", 2)
    source = metric_source_get(study=study, key=key)
    assert source.sizes() == (7, 1)
    ranged: dict = {}
    for low in range(ids[0], ids[-1] + 1, 3):
        part = source.load_items(low, low + 3)
        assert all(low <= item < low + 3 for item, _ in part.as_dict())
        ranged |= part.as_dict()
    assert ranged == whole.as_dict()


def test_a_multilabel_question_is_rated_option_by_option(client, researcher, study, fixture_study):
    roles = [{"value": v, "label": v, "key": str(i)} for i, v in enumerate(["background", "definition", "example"])]
    role = factories.make_question(study, "role", kind="multilabel", options=roles, order=4)
    pool = factories.make_pool(study, "roles", questions=[role])
    users = [factories.make_user(f"role{i}") for i in range(2)]
    for i, u in enumerate(users):
        factories.add_member(pool, u, pseudonym=f"R{i + 1}")
    answers = [
        (["background"], ["background"]),
        (["definition", "example"], ["definition"]),
        ([], ["example"]),
        (["background", "example"], ["background", "example"]),
        (["nonsense"], ["example"]),
    ]
    labels = []
    for item, pair in zip(fixture_study["items"], answers, strict=False):
        for u, v in zip(users, pair, strict=True):
            labels.append(_label(factories.make_assignment(pool, item, u, status=AssignmentStatus.SUBMITTED), role, v))
    Label.objects.bulk_create(labels)
    rep = agreement_report(pool=pool, question=role)
    assert rep["multilabel"] and rep["n_off_scale_ratings"] == 1  # "nonsense" is not an option
    assert [o["option"] for o in rep["per_option"]] == ["background", "definition", "example"]
    example = rep["per_option"][2]
    # Units 0-3 rated by both: example selected (0,0), (1,0), (0,1), (1,1) → percent agreement 2/4.
    assert example["n_units"] == 5 and example["n_excluded_units"] == 1
    assert example["percent_agreement"]["n_units"] == 4
    assert example["percent_agreement"]["value"] == pytest.approx(0.5)
    codes = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], float)
    assert example["cohen_kappa"]["value"] == pytest.approx(ag.cohen_kappa(codes[:, 0], codes[:, 1], 2).value)
    client.force_login(researcher)
    page = client.get(reverse("adjudication:report-agreement", args=[study.slug, pool.pk, "role"]))
    assert page.status_code == 200 and "Option “example”" in page.content.decode()
    index = client.get(reverse("adjudication:report-index", args=[study.slug])).content.decode()
    assert "Fleiss&#x27; κ per option" in index or "Fleiss' κ per option" in index


def test_without_htmx_starting_a_bootstrap_returns_to_the_report(client, researcher, fixture_study):
    client.force_login(researcher)
    study = fixture_study["study"]
    response = client.post(
        reverse("adjudication:report-job-start", args=[study.slug]),
        {"kind": "agreement", "pool": fixture_study["pool"].pk, "question": "pf", "n_boot": 300, "seed": 4},
    )
    assert response.status_code == 302
    assert response["Location"] == _agreement_url(fixture_study) + "?n_boot=300&seed=4"
