"""Comparing runs of one metric: McNemar and paired DeLong on worked examples, cost per item, the page."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from adjudication.analysis import model_comparison
from adjudication.stats import rater_stats
from adjudication.stats import validity as va
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests.adjudication.analysis.test_raters import MODEL, fast_password_hashing, rated  # noqa: F401


def test_mcnemar_reproduces_agrestis_presidential_approval_example():
    # Agresti (2007), An Introduction to Categorical Data Analysis, 2nd ed., §8.1.1, Table 8.1:
    # approval of the President's performance in two surveys a month apart, 1600 people:
    # 794 approve/approve, 150 approve/disapprove, 86 disapprove/approve, 570 disapprove/disapprove.
    # z = (86 − 150)/√(86 + 150) = −4.17, z² = 17.36 (chi-squared, df 1), P < 0.001.
    out = rater_stats.mcnemar_paired(np.array([[794, 150], [86, 570]]))
    assert out["chi2"] == pytest.approx(17.36, abs=0.005)
    assert out["p_chi2"] == pytest.approx(stats.chi2.sf(4096 / 236, 1))
    assert out["p_exact"] == pytest.approx(stats.binomtest(86, 236, 0.5).pvalue)
    assert out["chi2_corrected"] == pytest.approx(63**2 / 236)


def test_mcnemar_without_discordant_pairs_is_undefined():
    assert rater_stats.mcnemar_paired(np.array([[5, 0], [0, 3]]))["value"] is None


def test_paired_delong_matches_the_components_worked_by_hand():
    # DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44:837–845, eqs. (3)–(6), worked by hand on
    # two positives and two negatives. a: positives 0.9, 0.6, negatives 0.7, 0.2 → AUC 3/4,
    # V10 = (1, 1/2), V01 = (1/2, 1). b: positives 0.8, 0.3, negatives 0.5, 0.4 → AUC 1/2,
    # V10 = (1, 0), V01 = (1/2, 1/2). S10 = [[1/8, 1/4], [1/4, 1/2]], S01 = [[1/8, 0], [0, 0]];
    # var(a − b) = (1/8 + 1/2 − 1/2)/2 + (1/8)/2 = 1/8, z = (1/4)/√(1/8) = 0.7071.
    y = np.array([1, 1, 0, 0])
    est = va.delong_paired(np.array([0.9, 0.6, 0.7, 0.2]), np.array([0.8, 0.3, 0.5, 0.4]), y)
    assert est.value == pytest.approx(0.25)
    assert est.extra["z"] == pytest.approx(1 / math.sqrt(2))
    assert est.extra["p_value"] == pytest.approx(0.4795, abs=5e-5)


def test_cost_summary_leaves_tokens_undefined_when_no_answer_reported_usage():
    out = rater_stats.cost_summary([{"seconds": 1.0, "requests": 1}, {"seconds": 3.0, "requests": 2}])
    assert out["seconds"]["mean"] == 2.0 and out["requests"]["total"] == 3.0
    assert out["prompt_tokens"] is None and out["tokens_note"]
    out = rater_stats.cost_summary(
        [{"seconds": 1, "requests": 1, "prompt_tokens": 100, "completion_tokens": 10, "answers_with_usage": 1}]
    )
    assert out["prompt_tokens"]["mean"] == 100.0


@pytest.fixture
def two_runs(rated, researcher):  # noqa: F811 (the fixture imported above)
    other = ScoreRun.objects.create(
        study=rated["study"],
        metric="ra",
        metric_version="1.0",
        backend="llm",
        model_identity="llm:stub",
        status=RunStatus.DONE,
        created_by=researcher,
    )
    values = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]  # agrees with clinician A's yes/no on 5 of 6 items
    Score.objects.bulk_create(
        [
            Score(
                run=other,
                item=item,
                unit_key="item",
                value=values[i],
                state=ScoreState.OK,
                details={
                    "cost": {
                        "seconds": 0.5,
                        "requests": 1,
                        "prompt_tokens": 200,
                        "completion_tokens": 20,
                        "answers_with_usage": 1,
                    }
                },
            )
            for i, item in enumerate(rated["items"])
        ]
    )
    return {**rated, "other": other}


def test_comparison_table_has_mcnemar_delong_and_cost_per_run(two_runs):
    query = {
        "runs": f"{two_runs['run'].pk},{two_runs['other'].pk}",
        "pool": two_runs["pool"].pk,
        "question": "pf",
        "target": "rater:A",
    }
    params = model_comparison.comparison_params_parse(study=two_runs["study"], query=query)
    report = model_comparison.comparison_report(study=two_runs["study"], params=params)
    first, second = report["runs"]
    assert first["accuracy"]["value"] == pytest.approx(4 / 6) and second["accuracy"]["value"] == pytest.approx(5 / 6)
    assert first["cost"]["seconds"]["mean"] == pytest.approx(0.01)
    assert second["cost"]["prompt_tokens"]["mean"] == 200.0
    pair = report["pairs"][0]
    # Right/wrong per item: run 1 = (1,0,1,1,1,0), run 2 = (1,1,1,0,1,1) → a only 1, b only 2.
    assert pair["mcnemar"]["table"] == [[3, 1], [2, 0]]
    assert pair["mcnemar"]["p_exact"] == pytest.approx(1.0)
    expected = va.delong_paired(np.array(MODEL), np.array([1.0, 1, 0, 1, 1, 0]), np.array([1, 1, 0, 0, 1, 0]))
    assert pair["delong"]["value"] == pytest.approx(expected.value)


def test_runs_of_different_metrics_are_not_compared(two_runs):
    from concord.errors import ValidationFailed

    two_runs["other"].metric = "cf"
    two_runs["other"].save()
    with pytest.raises(ValidationFailed, match="one metric"):
        model_comparison.comparison_params_parse(
            study=two_runs["study"],
            query={
                "runs": f"{two_runs['run'].pk},{two_runs['other'].pk}",
                "pool": two_runs["pool"].pk,
                "question": "pf",
            },
        )


def test_comparison_page_renders_the_chart_and_is_researcher_only(client, two_runs, researcher, stranger):
    slug = two_runs["study"].slug
    query = f"?runs={two_runs['run'].pk}&runs={two_runs['other'].pk}&pool={two_runs['pool'].pk}&question=pf"
    client.force_login(researcher)
    page = client.get(reverse("adjudication:comparison", args=[slug]) + query)
    assert page.status_code == 200 and b"<svg" in page.content and b"McNemar" in page.content
    assert client.get(reverse("adjudication:comparison-download", args=[slug, "csv"]) + query).status_code == 200
    assert client.get(reverse("adjudication-api-comparison", args=[slug]) + query).json()["pairs"]
    client.force_login(stranger)
    assert client.get(reverse("adjudication:comparison", args=[slug]) + query).status_code == 404


def test_llm_backend_counts_requests_and_reported_tokens():
    import httpx

    from scoring.backends.llm import LLMBackend

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": '{"behaviour": "answer"}'}}],
                "usage": {"prompt_tokens": 120, "completion_tokens": 7},
            },
        )

    backend = LLMBackend(
        base_url="http://judge.test/v1", model="stub", samples=2, transport=httpx.MockTransport(answer)
    )
    backend.behaviour("What dose?", "Take 0.5 mg.")
    assert backend.usage == {"requests": 2, "prompt_tokens": 240, "completion_tokens": 14, "answers_with_usage": 2,
                             "cached_answers": 0}


def test_a_scoring_run_records_seconds_per_item_for_the_comparison(study, researcher):
    from scoring import services
    from tests import factories

    items = [factories.make_item(study, f"c{i}", scope_class="in_scope") for i in range(3)]
    run = services.score_run_start(study=study, metric="ra", backend="lexical", parameters={}, actor=researcher)
    for batch in services.score_run_fan_out(run_id=run.pk):
        services.score_batch_process(batch_id=batch, worker="test")
    costs = [s.details["cost"] for s in Score.objects.filter(run=run, item__in=items)]
    assert len(costs) == 3 and all(c["seconds"] >= 0 for c in costs)
    assert "requests" not in costs[0]  # the lexical backend makes no requests and counts none
