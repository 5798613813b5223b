"""Human measures from labels.

Hand-worked values follow the definitions: ASTRID (arXiv 2501.08208, §3) CF = grounded
information-bearing sentences / information-bearing sentences, 1 when there are none; ICAT
(arXiv 2501.03545) coverage = covered aspects / expected aspects; ASTRID Context Relevance as the
share of retrieved chunks judged relevant.
"""

from __future__ import annotations

import pytest

from adjudication.models import AdjudicationCase
from adjudication.selectors import human_measure_raters, human_measure_values, human_measures_available
from adjudication.services import case_resolve, item_disagreements_detect
from adjudication.stats import measures
from annotation.models import Aspect
from concord.errors import NotFound
from tests import factories
from tests.adjudication.gold_helpers import pool_with_members, submit_labels, yes_no

# --- pure functions -------------------------------------------------------------------------------


def test_cf_counts_only_information_bearing_sentences():
    # 4 sentences: a greeting (not information-bearing), 2 supported, 1 unsupported → 2 / 3.
    result = measures.conversational_faithfulness(
        [("no", None), ("yes", "supported"), ("yes", "supported"), ("yes", "unsupported")]
    )
    assert result.value == pytest.approx(2 / 3)
    assert (result.numerator, result.denominator) == (2, 3)


def test_cf_is_one_for_an_answer_without_information_bearing_sentences():
    assert measures.conversational_faithfulness([("no", None), ("no", None)]).value == 1.0


def test_contradicted_sentences_are_not_grounded():
    assert measures.conversational_faithfulness([("yes", "contradicted"), ("yes", "supported")]).value == 0.5


def test_cf_is_undefined_when_a_sentence_is_unlabelled():
    result = measures.conversational_faithfulness([("yes", "supported"), (None, None)])
    assert result.value is None and "sentence 2" in result.reason
    assert measures.conversational_faithfulness([("yes", None)]).value is None


def test_aspect_coverage_counts_the_covered_answers():
    assert measures.aspect_coverage(["yes", "no", "yes", "yes"]).value == 0.75
    assert measures.aspect_coverage(["entailment", "neutral"], covered=("entailment",)).value == 0.5


def test_aspect_coverage_is_undefined_without_aspects_or_with_an_unanswered_one():
    assert measures.aspect_coverage([]).value is None
    assert measures.aspect_coverage(["yes", None]).value is None


def test_chunk_relevance_is_the_share_of_relevant_chunks():
    assert measures.chunk_relevance(["yes", "no", "no", "no", "yes"]).value == 0.4
    assert measures.chunk_relevance([]).reason == "no chunks to judge"


# --- per-item values for reports ------------------------------------------------------------------


@pytest.fixture
def astrid_pool(study, adjudicator):
    factories.grant(study, adjudicator, "adjudicator")
    ib = yes_no(study, "information_bearing", scope="sentence")
    grounded = factories.make_question(
        study,
        "grounded",
        scope="sentence",
        kind="nominal",
        options=[{"value": v, "label": v, "key": ""} for v in ("supported", "unsupported", "contradicted")],
    )
    relevant = yes_no(study, "context_relevant", scope="chunk")
    covered = yes_no(study, "aspect_covered", scope="aspect")
    pool, (a, b) = pool_with_members(study, [ib, grounded, relevant, covered], n=2)
    item = factories.make_item(study, "q-1", answer="Hello there! Take 0.5 mg daily. Avoid alcohol.")
    factories.make_chunk(item, 1)
    factories.make_chunk(item, 2, "Unrelated.")
    dose = Aspect.objects.create(item=item, text="Dose")
    alcohol = Aspect.objects.create(item=item, text="Alcohol")
    common = {
        ("information_bearing", "s:0"): "no",
        ("information_bearing", "s:1"): "yes",
        ("information_bearing", "s:2"): "yes",
        ("grounded", "s:1"): "supported",
        ("context_relevant", "c:1"): "yes",
        ("context_relevant", "c:2"): "no",
        ("aspect_covered", f"a:{dose.pk}"): "yes",
    }
    submit_labels(
        pool, item, a, {**common, ("grounded", "s:2"): "supported", ("aspect_covered", f"a:{alcohol.pk}"): "yes"}
    )
    submit_labels(
        pool, item, b, {**common, ("grounded", "s:2"): "unsupported", ("aspect_covered", f"a:{alcohol.pk}"): "no"}
    )
    item_disagreements_detect(pool_id=pool.pk, item_id=item.pk)
    return pool


def test_human_cf_per_annotator(astrid_pool):
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_cf", rater="P-A1").values == {"q-1": 1.0}
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_cf", rater="P-A2").values == {"q-1": 0.5}


def test_human_cf_from_gold_is_undefined_until_the_disagreement_is_adjudicated(astrid_pool, adjudicator):
    pending = human_measure_values(pool_id=astrid_pool.pk, measure="human_cf", rater="gold")
    assert pending.values == {} and "q-1" in pending.undefined
    case = AdjudicationCase.objects.get(question__key="grounded")
    case_resolve(case_id=case.pk, actor=adjudicator, value="unsupported")
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_cf", rater="gold").values == {"q-1": 0.5}


def test_human_aspect_coverage_and_chunk_relevance(astrid_pool):
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_aspect_coverage", rater="P-A1").values == {
        "q-1": 1.0
    }
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_aspect_coverage", rater="P-A2").values == {
        "q-1": 0.5
    }
    assert human_measure_values(pool_id=astrid_pool.pk, measure="human_chunk_relevance", rater="gold").values == {
        "q-1": 0.5
    }


def test_the_raters_and_measures_a_pool_offers(astrid_pool):
    assert human_measure_raters(pool_id=astrid_pool.pk) == ["P-A1", "P-A2", "gold"]
    assert human_measures_available(pool_id=astrid_pool.pk) == [
        "human_cf",
        "human_aspect_coverage",
        "human_chunk_relevance",
    ]


def test_an_unknown_rater_or_measure_is_not_found(astrid_pool):
    with pytest.raises(NotFound):
        human_measure_values(pool_id=astrid_pool.pk, measure="human_cf", rater="nobody")
    with pytest.raises(NotFound):
        human_measure_values(pool_id=astrid_pool.pk, measure="nonsense")


def test_researchers_read_measures_through_the_api_and_annotators_cannot(client, astrid_pool, researcher):
    client.force_login(researcher)
    url = f"/api/adjudication/pools/{astrid_pool.pk}/human-measures/human_cf/?rater=P-A2"
    assert client.get(url).json()["values"] == {"q-1": 0.5}
    member = astrid_pool.memberships.first().user
    client.force_login(member)
    assert client.get(url).status_code == 404  # a pool named by its id: not found
