"""The estimates page and its REST endpoint: researchers of the study only (403 for a lower role, 404 for a
stranger and for another study's ids), bad input answers 400 and never 500, and the figures are the analysis'."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from adjudication.models import GoldLabel, GoldSource, PoolSample
from annotation.models import AssignmentStatus, Label, Role
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

pytestmark = pytest.mark.django_db

SCORES = [0.9, 0.8, 0.3, 0.1, 0.7, 0.2]
GOLD = ["yes", "yes", "no", "no", None, None]  # items 4 and 5: the annotator's label is the majority


@pytest.fixture
def world(study, researcher, annotator, adjudicator):
    pf = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "clinicians", questions=[pf])
    factories.add_member(pool, annotator, pseudonym="A1")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    run = ScoreRun.objects.create(
        study=study, metric="cf", metric_version="1", backend="lexical", created_by=researcher, status=RunStatus.DONE
    )
    items = [factories.make_item(study, f"q{i}") for i in range(len(SCORES))]
    for item, score, gold in zip(items, SCORES, GOLD, strict=True):
        Score.objects.create(run=run, item=item, unit_key="item", value=score, state=ScoreState.OK)
        if gold is not None:
            GoldLabel.objects.create(
                pool=pool, item=item, unit_key="item", question=pf, value=gold, source=GoldSource.ADJUDICATED
            )
    for item, value in ((items[4], "yes"), (items[5], "no")):
        a = factories.make_assignment(
            pool, item, annotator, status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
        )
        Label.objects.create(
            assignment=a, question=pf, unit_key="item", value=value, version=1, updated_by=annotator,
            updated_at=timezone.now(),
        )  # fmt: skip
    return {"study": study, "pool": pool, "pf": pf, "run": run, "items": items}


def _page(study):
    return reverse("adjudication:report-estimates", args=[study.slug])


def _api(study):
    return reverse("adjudication-api-report-estimates", args=[study.slug])


def _query(world, **kw):
    q = {"pool": world["pool"].pk, "question": "pf", "run": world["run"].pk}
    q.update(kw)
    return q


def test_the_page_without_parameters_is_the_form_with_the_studys_choices(client, researcher, world):
    client.force_login(researcher)
    response = client.get(_page(world["study"]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "clinicians" in body and f"run #{world['run'].pk}: cf v1" in body and 'id="refusal"' not in body


def test_the_report_index_links_the_estimates(client, researcher, world):
    client.force_login(researcher)
    body = client.get(reverse("adjudication:report-index", args=[world["study"].slug])).content.decode()
    assert _page(world["study"]) in body


def test_a_fully_labelled_population_shows_the_exact_share_and_the_label_sources(client, researcher, world):
    client.force_login(researcher)
    response = client.get(_page(world["study"]), _query(world))
    assert response.status_code == 200
    report = response.context["report"]
    assert report["exact"] is True and report["exact_value"] == pytest.approx(3 / 6)
    assert report["label_sources"]["gold"] == 4 and report["label_sources"]["majority"] == 2
    body = response.content.decode()
    assert "Exact share over the population: 0.5000" in body and "4 from gold, 2 from the pool" in body


def test_a_partly_labelled_population_shows_the_refusal(client, researcher, world):
    GoldLabel.objects.filter(item=world["items"][0]).delete()
    client.force_login(researcher)
    response = client.get(_page(world["study"]), _query(world))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="refusal"' in body and "5 of the 6 items" in body and "no sampling design" in body


def test_the_api_answers_the_same_report_and_the_choices_without_parameters(researcher, world):
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.get(_api(world["study"]), _query(world, invert="true", alpha="0.1"))
    assert response.status_code == 200
    data = response.json()
    assert data["valid"] is True and data["exact"] is True and data["invert"] is True and data["alpha"] == 0.1
    assert data["estimates"][0]["method"] == "classical"
    assert data["metric_mean"] == pytest.approx(1 - sum(SCORES) / len(SCORES))
    choices = client.get(_api(world["study"])).json()["choices"]
    assert choices["pools"][0]["questions"][0]["key"] == "pf" and choices["runs"][0]["id"] == world["run"].pk


@pytest.mark.parametrize("who", ["annotator", "adjudicator"])
def test_a_role_below_researcher_is_refused_with_403(client, world, who, request):
    user = request.getfixturevalue(who)
    client.force_login(user)
    assert client.get(_page(world["study"]), _query(world)).status_code == 403
    api = APIClient()
    api.force_authenticate(user)
    response = api.get(_api(world["study"]), _query(world))
    assert response.status_code == 403 and set(response.json()) >= {"error", "detail"}


def test_a_stranger_gets_404_and_an_anonymous_visitor_is_sent_to_log_in(client, stranger, world):
    response = client.get(_page(world["study"]), _query(world))
    assert response.status_code == 302 and "login" in response["Location"]
    assert APIClient().get(_api(world["study"]), _query(world)).status_code in (401, 403)
    client.force_login(stranger)
    assert client.get(_page(world["study"]), _query(world)).status_code == 404
    api = APIClient()
    api.force_authenticate(stranger)
    assert api.get(_api(world["study"]), _query(world)).status_code == 404


def test_another_studys_run_pool_or_question_is_404(client, researcher, world):
    other = factories.make_study(slug="other-study")
    theirs = factories.make_question(other, "theirs")
    other_pool = factories.make_pool(other, "theirs", questions=[theirs])
    other_run = ScoreRun.objects.create(study=other, metric="cf", metric_version="1", backend="lexical")
    client.force_login(researcher)
    api = APIClient()
    api.force_authenticate(researcher)
    for change in ({"run": other_run.pk}, {"pool": other_pool.pk}, {"question": "theirs"}, {"run": 999999999}):
        assert client.get(_page(world["study"]), _query(world, **change)).status_code == 404, change
        response = api.get(_api(world["study"]), _query(world, **change))
        assert response.status_code == 404 and response.json()["error"], change


@pytest.mark.parametrize(
    "change",
    [
        {"positive": "maybe"},
        {"pool": "x"},
        {"pool": "²"},
        {"run": "٣"},
        {"run": "9" * 400},
        {"run": "9" * 5000},
        {"pool": "-1"},
        {"alpha": "1e400"},
        {"alpha": "٠.٠٥"},
        {"run": ""},
        {"half_width": "1e-2"},
        {"half_width": "0.9"},
        {"half_width": "٠.٠٥"},
    ],
)
def test_bad_input_answers_400_never_500(client, researcher, world, change):
    client.force_login(researcher)
    client.raise_request_exception = False
    assert client.get(_page(world["study"]), _query(world, **change)).status_code == 400
    api = APIClient()
    api.raise_request_exception = False
    api.force_authenticate(researcher)
    response = api.get(_api(world["study"]), _query(world, **change))
    assert response.status_code == 400 and set(response.json()) >= {"error", "detail"}


def test_the_endpoint_is_in_the_schema(researcher, world):
    client = APIClient()
    client.force_authenticate(researcher)
    schema = client.get(reverse("schema"), {"format": "json"}).json()
    path = "/api/adjudication/studies/{slug}/reports/estimates/"
    params = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
    assert {"pool", "question", "run", "positive", "invert", "alpha"} <= params


# --- drawing a pool's sample ----------------------------------------------------------------------------


def _sample_page(study, pool):
    return reverse("adjudication:report-estimates-sample", args=[study.slug, pool.pk])


def _sample_api(study, pool):
    return reverse("adjudication-api-report-estimates-sample", args=[study.slug, pool.pk])


def test_a_researcher_draws_a_fresh_pools_sample_on_the_page(client, researcher, world):
    fresh = factories.make_pool(world["study"], "fresh", questions=[world["pf"]])
    client.force_login(researcher)
    page = client.get(_page(world["study"])).content.decode()
    assert _sample_page(world["study"], fresh) in page  # a form for the fresh pool
    assert _sample_page(world["study"], world["pool"]) not in page  # the busy pool has handed out items
    data = {"run": world["run"].pk, "design": "uniform", "n": 3, "seed": 4}
    response = client.post(_sample_page(world["study"], fresh), data)
    assert response.status_code == 302 and response["Location"].endswith("#samples")
    sample = PoolSample.objects.get(pool=fresh)
    assert (sample.design, sample.n_drawn, sample.population, sample.seed) == ("uniform", 3, 6, 4)
    assert "uniform: 3 of 6 items" in client.get(_page(world["study"])).content.decode()
    again = client.post(_sample_page(world["study"], fresh), data)
    assert again.status_code == 409


def test_the_sample_api_reads_draws_and_refuses_in_the_one_shape(researcher, world):
    fresh = factories.make_pool(world["study"], "fresh", questions=[world["pf"]])
    api = APIClient()
    api.force_authenticate(researcher)
    assert api.get(_sample_api(world["study"], fresh)).json() == {"pool": fresh.pk, "sample": None}
    body = {"run": world["run"].pk, "design": "probability", "n": 2, "seed": 1, "floor": "0.2"}
    response = api.post(_sample_api(world["study"], fresh), body, format="json")
    assert response.status_code == 201
    sample = response.json()["sample"]
    assert sample["design"] == "probability" and sample["population"] == 6 and sample["floor"] == 0.2
    assert api.get(_sample_api(world["study"], fresh)).json()["sample"] == sample
    for path, data, status in (
        (_sample_api(world["study"], fresh), body, 409),  # never redrawn
        (_sample_api(world["study"], world["pool"]), {**body, "design": "uniform"}, 409),  # items handed out
        (_sample_api(world["study"], world["pool"]), {**body, "n": "٣"}, 400),
        (_sample_api(world["study"], world["pool"]), {**body, "n": 10**400}, 400),
        (_sample_api(world["study"], world["pool"]), {**body, "design": "stratified"}, 400),
    ):
        response = api.post(path, data, format="json")
        assert response.status_code == status and set(response.json()) >= {"error", "detail"}, (data, response)


def test_only_the_studys_researchers_may_draw_and_only_in_their_study(client, world, annotator, adjudicator, stranger):
    fresh = factories.make_pool(world["study"], "fresh", questions=[world["pf"]])
    data = {"run": world["run"].pk, "design": "uniform", "n": 2}
    for user, status in ((annotator, 403), (adjudicator, 403), (stranger, 404)):
        client.force_login(user)
        assert client.post(_sample_page(world["study"], fresh), data).status_code == status
        api = APIClient()
        api.force_authenticate(user)
        assert api.post(_sample_api(world["study"], fresh), data, format="json").status_code == status
        assert api.get(_sample_api(world["study"], fresh)).status_code == status
    client.logout()
    assert client.post(_sample_page(world["study"], fresh), data).status_code == 302
    other = factories.make_study(slug="elsewhere")
    their_pool = factories.make_pool(other, "theirs")
    their_run = ScoreRun.objects.create(study=other, metric="cf", metric_version="1", backend="lexical")
    researcher = world["study"].owner
    api = APIClient()
    api.force_authenticate(researcher)
    assert api.post(_sample_api(world["study"], their_pool), data, format="json").status_code == 404
    response = api.post(_sample_api(world["study"], fresh), {**data, "run": their_run.pk}, format="json")
    assert response.status_code == 404
    assert not PoolSample.objects.exists()


def test_the_page_shows_a_sampled_pools_progress_and_then_its_estimates(client, researcher, world):
    fresh = factories.make_pool(world["study"], "fresh", questions=[world["pf"]])
    client.force_login(researcher)
    client.post(_sample_page(world["study"], fresh), {"run": world["run"].pk, "design": "uniform", "n": 3, "seed": 2})
    query = _query(world, pool=fresh.pk)
    body = client.get(_page(world["study"]), query).content.decode()
    assert 'id="refusal"' in body and "3 of them in the population, 3 of those without a label yet" in body
    drawn = PoolSample.objects.get(pool=fresh).items.filter(drawn=True).values_list("item_id", flat=True)
    for n, item_id in enumerate(drawn):
        GoldLabel.objects.create(
            pool=fresh, item_id=item_id, unit_key="item", question=world["pf"], value="yes" if n else "no",
            source=GoldSource.ADJUDICATED,
        )  # fmt: skip
    response = client.get(_page(world["study"]), query)
    body = response.content.decode()
    assert 'id="refusal"' not in body and "ppi++ (headline)" in body and "Angelopoulos, Duchi &amp; Zrnic" in body
    assert [e["method"] for e in response.context["report"]["estimates"]] == ["ppi++", "ppi", "classical"]
    plan = response.context["report"]["plan"]
    assert plan["available"] is True and plan["n_labelled"] == 3 and plan["half_width"] == 0.05
    assert 'id="plan"' in body and "Planning: labels for a half-width of 0.05" in body
    api = APIClient()
    api.force_authenticate(researcher)
    assert plan["without_metric"] is None and "not reachable" in body
    steps = response.context["report"]["trajectory"]["steps"]
    assert [s["n"] for s in steps] == [3] and steps[0]["ppipp"]["point"] == pytest.approx(
        response.context["report"]["estimates"][0]["point"]
    )
    assert 'id="trajectory"' in body and "<svg" in body and response.context["plot"]["points"][0]["n"] == 3
    assert "<script" not in body.split('id="trajectory"')[1]  # 6 items: ±0.05 needs more
    data = api.get(_api(world["study"]), {**query, "half_width": "0.5"}).json()
    # Var(Y) = 2/9 from no, yes, yes: the classical half-width 1.96·√(2/9/n) ≤ 0.5 from n = 4 labels.
    assert data["plan"]["half_width"] == 0.5 and data["plan"]["without_metric"] == 4


# --- comparing two runs ---------------------------------------------------------------------------------

GOLD_B = ["no", "yes", "no", "no", "no", "no"]


def _second_system(world, researcher):
    """System b answers the same six questions (items b0..b5), scored by its own run, every answer in gold."""
    run_b = ScoreRun.objects.create(
        study=world["study"], metric="cf", metric_version="1", backend="lexical", created_by=researcher,
        status=RunStatus.DONE,
    )  # fmt: skip
    for i, (item, gold) in enumerate(zip(world["items"], GOLD_B, strict=True)):
        item.question = f"Question {i}?"
        item.save(update_fields=["question"])
        b = factories.make_item(world["study"], f"b{i}", question=f"Question {i}?", system="b")
        Score.objects.create(run=run_b, item=b, unit_key="item", value=0.5, state=ScoreState.OK)
        GoldLabel.objects.create(
            pool=world["pool"], item=b, unit_key="item", question=world["pf"], value=gold, source=GoldSource.ADJUDICATED
        )
    return run_b


def test_the_comparison_with_a_second_run_is_on_the_page_and_in_the_api(client, researcher, world):
    run_b = _second_system(world, researcher)
    client.force_login(researcher)
    response = client.get(_page(world["study"]), _query(world, compare=run_b.pk))
    assert response.status_code == 200
    comparison = response.context["report"]["comparison"]
    assert comparison["run"]["id"] == run_b.pk and comparison["n_pairs"] == 6 and comparison["exact"] is True
    assert comparison["exact_value"] == pytest.approx(3 / 6 - 1 / 6)
    body = response.content.decode()
    assert 'id="comparison"' in body and "Exact difference over the pairs: 0.3333" in body
    assert f'<option value="{run_b.pk}" selected>' in body
    api = APIClient()
    api.force_authenticate(researcher)
    data = api.get(_api(world["study"]), _query(world, compare=run_b.pk)).json()
    assert data["comparison"]["exact_value"] == pytest.approx(1 / 3) and data["comparison"]["valid"] is True
    assert "comparison" not in api.get(_api(world["study"]), _query(world)).json()


def test_a_comparison_run_of_another_study_is_404_and_a_bad_one_400(client, researcher, world):
    other = factories.make_study(slug="other-study")
    other_run = ScoreRun.objects.create(study=other, metric="cf", metric_version="1", backend="lexical")
    client.force_login(researcher)
    client.raise_request_exception = False
    api = APIClient()
    api.raise_request_exception = False
    api.force_authenticate(researcher)
    for change, status in (
        ({"compare": other_run.pk}, 404),
        ({"compare": "x"}, 400),
        ({"compare": "٣"}, 400),
        ({"compare": world["run"].pk}, 400),
    ):
        assert client.get(_page(world["study"]), _query(world, **change)).status_code == status, change
        response = api.get(_api(world["study"]), _query(world, **change))
        assert response.status_code == status and response.json()["error"], change
