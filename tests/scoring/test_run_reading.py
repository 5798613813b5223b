"""Scores a researcher can read: each answer sentence with its unit's judgement and evidence, the
distribution of a run's values with the mean and its confidence interval, two runs side by side with
their agreement, backends that cannot run shown (and refused) before a run is queued, a failed run
that says why, and the study's tabs on every scoring page.

The statistics are checked against published worked examples (cited at each test)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from annotation.models import Role
from scoring import services
from scoring.models import RunStatus, Score, ScoreRun
from scoring.summary import MIN_INTERVAL_ITEMS, distribution, mean_ci, mean_interval, paired_agreement
from tests import factories
from tests.scoring.runs_support import eager_celery

pytestmark = pytest.mark.django_db


# --- statistics against published examples --------------------------------------------------------


def test_the_mean_ci_is_students_t_interval_of_the_sleep_data():
    # Student (1908) / Cushny & Peebles sleep data, as in R's example(t.test) on `sleep` (paired):
    # differences 1.2 2.4 1.3 1.3 0.0 1.0 1.8 0.8 4.6 1.4, mean 1.58, 95% CI 0.7001142 to 2.4598858.
    mean, low, high = mean_ci([1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4])
    assert mean == pytest.approx(1.58)
    assert (low, high) == (pytest.approx(0.7001142, abs=1e-7), pytest.approx(2.4598858, abs=1e-7))


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_a_share_gets_wilsons_interval_of_newcombes_examples(successes, n, low, high):
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
    # methods", Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no continuity correction).
    values = [1.0] * successes + [0.0] * (n - successes)
    interval = mean_interval(values)
    assert interval.method == "Wilson score" and interval.mean == pytest.approx(successes / n)
    assert (interval.low, interval.high) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))
    dist = distribution(values)
    assert (dist.ci_low, dist.ci_high, dist.method) == (interval.low, interval.high, "Wilson score")


def test_the_mean_of_a_bounded_score_gets_a_logit_interval_inside_zero_and_one():
    # Skewed towards 0, few items: Student's t reaches below 0; the logit interval (delta method on the
    # logit of the mean, t quantile, mapped back) cannot.
    values = [0.0, 0.01, 0.02, 0.02, 0.05, 0.6]
    n, mean = len(values), sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    assert mean_ci(values)[1] < 0
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) / (mean * (1 - mean))
    centre = math.log(mean / (1 - mean))
    expected = (1 / (1 + math.exp(-(centre - half))), 1 / (1 + math.exp(-(centre + half))))
    interval = mean_interval(values)
    assert interval.method == "logit Student t" and interval.mean == pytest.approx(mean)
    assert (interval.low, interval.high) == (pytest.approx(expected[0]), pytest.approx(expected[1]))
    assert 0 < interval.low < mean < interval.high < 1
    assert mean_interval([0.4] * 6).low == mean_interval([0.4] * 6).high == pytest.approx(0.4)


@pytest.mark.parametrize(("a", "b", "n"), [(0.5, 4.0, 20), (5.0, 1.0, 8)])
def test_the_logit_interval_covers_the_mean_of_skewed_bounded_scores(a, b, n):
    """Simulated Beta(a, b) scores, 2,000 samples (fixed seed): the logit interval always stays in [0, 1]
    and covers the true mean a / (a + b) near 95 % of the time (about 94 % for these skewed small samples
    over 10,000 draws; the band allows four Monte Carlo standard errors), more often than Student's t."""
    rng = np.random.default_rng(7)
    truth, covered, covered_t = a / (a + b), 0, 0
    for _ in range(2000):
        values = rng.beta(a, b, n).tolist()
        interval = mean_interval(values)
        assert 0.0 <= interval.low <= interval.high <= 1.0
        covered += interval.low <= truth <= interval.high
        _, low, high = mean_ci(values)
        covered_t += low <= truth <= high
    assert 0.92 <= covered / 2000 <= 0.97
    assert covered > covered_t


def test_unbounded_values_keep_students_t_interval():
    values = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4]  # R's sleep differences, as above
    dist = distribution(values)
    assert dist.method == "Student t"
    assert (dist.ci_low, dist.ci_high) == (pytest.approx(0.7001142, abs=1e-7), pytest.approx(2.4598858, abs=1e-7))


def test_too_few_items_give_no_interval_and_say_so():
    dist = distribution([0.2, 1.0])  # two items: Student's t gave -2.4 to 3.9 for a metric bounded by 0 and 1
    assert dist.mean == pytest.approx(0.6) and dist.ci_low is None and dist.ci_high is None
    assert dist.reason == f"too few items for a confidence interval: 2, at least {MIN_INTERVAL_ITEMS} needed"
    assert distribution([0.2] * MIN_INTERVAL_ITEMS).ci_low is not None


def test_spearman_matches_the_iq_and_television_example():
    # Wikipedia, "Spearman's rank correlation coefficient", example: IQ vs hours of TV, ρ = −29/165.
    iq = [106, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    assert paired_agreement(iq, tv).spearman == pytest.approx(-29 / 165)


def test_pearson_matches_anscombes_quartet():
    # Anscombe (1973), "Graphs in statistical analysis", set I: r = 0.816.
    x = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
    y = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]
    assert paired_agreement(x, y).pearson == pytest.approx(0.816, abs=5e-4)


def test_kappa_matches_the_grant_proposals_example():
    # Wikipedia, "Cohen's kappa", first example: 50 proposals, 20 yes/yes, 15 no/no, 5 and 10 split: κ = 0.4.
    a = [1.0] * 20 + [0.0] * 15 + [1.0] * 5 + [0.0] * 10
    b = [1.0] * 20 + [0.0] * 15 + [0.0] * 5 + [1.0] * 10
    agreement = paired_agreement(a, b)
    assert agreement.binary and agreement.equal_share == pytest.approx(0.7)
    assert agreement.kappa == pytest.approx(0.4)


def test_undefined_statistics_stay_undefined():
    assert mean_ci([0.3]) is None
    assert distribution([]).mean is None and distribution([]).reason
    same = paired_agreement([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert same.pearson is None and same.kappa is None and same.reasons
    assert paired_agreement([0.5], [0.5]).reasons == ["fewer than two units scored by both runs"]


def test_the_histogram_counts_every_value_once():
    dist = distribution([0.0, 0.05, 0.5, 0.95, 1.0, 1.0])
    assert sum(b.count for b in dist.bins) == 6
    assert (dist.bins[0].count, dist.bins[5].count, dist.bins[9].count) == (2, 1, 3)


# --- the run page ---------------------------------------------------------------------------------


@pytest.fixture
def cf_runs(study, researcher, django_capture_on_commit_callbacks):
    """Two real cf runs (lexical, two thresholds) over two items with passages."""
    one = factories.make_item(study, "i-1", answer="Metformin is first-line for diabetes. Ask <b>your</b> doctor.")
    factories.make_chunk(one, 1, "Metformin is first-line for type 2 diabetes.")
    two = factories.make_item(study, "i-2", answer="Warfarin needs INR checks. Bananas are blue.")
    factories.make_chunk(two, 1, "Patients on warfarin need regular INR checks.")
    runs = []
    for threshold in (0.5, 0.9):
        with eager_celery(), django_capture_on_commit_callbacks(execute=True):
            run = services.score_run_start(
                study=study,
                metric="cf",
                backend="lexical",
                parameters={"support_threshold": threshold},
                actor=researcher,
            )
        run.refresh_from_db()
        assert run.status == RunStatus.DONE, run.error
        runs.append(run)
    return runs


def test_the_run_page_shows_each_sentence_with_its_judgement_and_the_study_tabs(client, researcher, cf_runs):
    run = cf_runs[0]
    client.force_login(researcher)
    page = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    assert 'class="console-tabs"' in page and 'aria-current="page">Scores</a>' in page
    assert "Item by item" in page
    assert "<td>Metformin is first-line for diabetes.</td>" in page
    assert "Ask &lt;b&gt;your&lt;/b&gt; doctor." in page
    assert ">grounded" in page and ">not grounded" in page
    assert "Mean " in page and '<svg class="histogram"' in page
    # Two items: no interval, and the page says why.
    assert "95% CI" not in page and "too few items for a confidence interval: 2" in page


def test_the_run_page_names_the_interval_it_shows(client, researcher, study):
    """Six items with a 0/1 value: the page shows Wilson's interval for 2 of 6 and says which it is."""
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", status=RunStatus.DONE, n_total=6, n_done=6
    )
    for i, value in enumerate([1.0, 1.0, 0.0, 0.0, 0.0, 0.0]):
        item = factories.make_item(study, f"w-{i}", answer="Go to A&E now.")
        Score.objects.create(run=run, item=item, unit_key="item", value=value, state="ok", details={})
    client.force_login(researcher)
    page = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    # statsmodels' Wilson interval for 2 of 6: 0.0968 to 0.7000.
    assert "Mean 0.333</strong>, 95% CI 0.097 to 0.700 (Wilson score), over 6 items." in page


def test_the_evidence_a_judgement_used_is_shown(client, researcher, study):
    item = factories.make_item(study, "e-1", answer="Take it daily.")
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="2", backend="embedding", status=RunStatus.DONE, n_total=1, n_done=1
    )
    Score.objects.create(run=run, item=item, unit_key="item", value=1.0, state="ok", details={})
    Score.objects.create(
        run=run,
        item=item,
        unit_key="s:0",
        value=1.0,
        state="ok",
        details={
            "index": 0,
            "text": "Take it daily.",
            "information_bearing": True,
            "grounded": True,
            "grounding_details": {"verdict": True, "score": 0.82, "best_index": 0, "best": "Take one tablet daily."},
        },
    )
    client.force_login(researcher)
    page = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    assert "<q>Take one tablet daily.</q>" in page


def test_two_runs_side_by_side_with_their_agreement(client, researcher, cf_runs):
    a, b = cf_runs
    client.force_login(researcher)
    run_page = client.get(reverse("scoring:run", args=[a.pk])).content.decode()
    assert f'<option value="{b.pk}">' in run_page
    page = client.get(reverse("scoring:run-compare", args=[a.pk]) + f"?with={b.pk}").content.decode()
    assert "Pearson" in page and "Spearman" in page
    assert "Over <strong>2</strong> items both runs scored" in page
    units = client.get(reverse("scoring:run-compare", args=[a.pk]) + f"?with={b.pk}&units=all").content.decode()
    assert "Same verdict" in units and "Cohen" in units


def test_a_run_of_another_study_cannot_be_compared(client, researcher, cf_runs):
    other_study = factories.make_study(owner=researcher)
    factories.grant(other_study, researcher, Role.RESEARCHER)
    foreign = ScoreRun.objects.create(study=other_study, metric="cf", metric_version="2", backend="lexical")
    client.force_login(researcher)
    url = reverse("scoring:run-compare", args=[cf_runs[0].pk])
    assert client.get(url + f"?with={foreign.pk}").status_code == 404
    assert client.get(url).status_code == 404


def test_annotators_cannot_compare_runs(client, annotator, study, cf_runs):
    """A run is named by its own id: an annotator of the study is told it does not exist (404), as a stranger."""
    factories.grant(study, annotator, Role.ANNOTATOR)
    client.force_login(annotator)
    url = reverse("scoring:run-compare", args=[cf_runs[0].pk]) + f"?with={cf_runs[1].pk}"
    assert client.get(url).status_code == 404


def test_unavailable_backends_are_shown_with_the_reason_and_refused_before_queueing(
    client, researcher, study, settings
):
    settings.NLI_MODEL_DIR = ""
    settings.LLM_BASE_URL = ""
    factories.make_item(study, "x1")
    client.force_login(researcher)
    page = client.get(reverse("scoring:runs", args=[study.slug])).content.decode()
    assert 'data-backend="nli"' in page and "set NLI_MODEL_DIR" in page
    assert "set LLM_BASE_URL and LLM_MODEL" in page
    assert '<option value="llm" disabled>llm (unavailable:' in page
    assert '<option value="lexical">lexical</option>' in page
    response = client.post(reverse("scoring:run-start", args=[study.slug]), {"metric": "cf", "cf__backend": "llm"})
    assert response.status_code == 400
    assert "The llm backend is not available here: no LLM endpoint configured" in response.content.decode()
    assert not ScoreRun.objects.exists()


def test_a_failed_run_says_why(client, researcher, study):
    run = ScoreRun.objects.create(
        study=study,
        metric="cf",
        metric_version="2",
        backend="nli",
        status=RunStatus.FAILED,
        error="nli backend: no model configured; set NLI_MODEL_DIR",
    )
    client.force_login(researcher)
    page = client.get(reverse("scoring:run", args=[run.pk])).content.decode()
    assert "The run failed before scoring any item:" in page and "set NLI_MODEL_DIR" in page
    assert "100% —" not in page and "of 0 items" not in page
