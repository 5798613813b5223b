"""The learned backend: trained judges named by registry name, one per judgement, with probabilities."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from scoring.backends import get_backend
from scoring.backends.base import BackendCapabilityError
from scoring.judges import services
from scoring.metrics import BackendUnavailable
from tests.factories import make_study
from tests.scoring.judge_support import FACTS, labelled_jsonl

pytestmark = pytest.mark.django_db

LEXICAL = {"feature_sets": ["lexical"], "folds": 3}


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.fixture
def judge():
    return services.judge_train_from_file(content=labelled_jsonl(), filename="claims.jsonl", task="supports",
                                          name="claims", actor=None, options=LEXICAL)


def test_a_judge_named_by_model_judges_support_with_a_probability(judge):
    backend = get_backend("learned", model="claims")
    yes, no = backend.supports(["Metformin lowers blood glucose."],
                               ["Metformin lowers blood glucose in type 2 diabetes."]) + backend.supports(
        ["Penguins live in the south."], ["Metformin lowers blood glucose in type 2 diabetes."])
    assert yes.verdict is True and no.verdict is False
    assert 0.5 <= yes.probability <= 1 and 0 <= no.probability < 0.5
    assert yes.details["judge"] == "claims" and yes.details["model"] == "final"
    assert "transfer from file claims.jsonl" in backend.identity and "supports=claims" in backend.identity


def test_a_judgement_without_a_named_judge_is_refused_naming_the_option(judge):
    backend = get_backend("learned", model="claims")
    with pytest.raises(BackendCapabilityError, match=r"no 'informative' judge is named .*informative_model"):
        backend.informative(["Hello!"])


def test_a_judge_of_another_task_cannot_fill_a_slot(judge):
    with pytest.raises(BackendUnavailable, match="informative_model='claims' names a 'supports' judge"):
        get_backend("learned", informative_model="claims")


def test_without_a_judge_or_with_an_unknown_option_the_backend_is_unavailable(judge):
    with pytest.raises(BackendUnavailable, match="name a trained judge"):
        get_backend("learned")
    with pytest.raises(BackendUnavailable, match=r"unknown option.*question"):
        get_backend("learned", model="claims", question="grounded")
    with pytest.raises(BackendUnavailable, match="no trained judge named 'nope'"):
        get_backend("learned", model="nope")


def test_a_study_finds_only_its_own_and_shared_judges(judge):
    owner_study = make_study()
    judge.study = owner_study
    judge.save()
    other = make_study()
    with pytest.raises(BackendUnavailable, match="no trained judge named 'claims' is available to this study"):
        get_backend("learned", model="claims", study=other.pk)
    assert get_backend("learned", model="claims", study=owner_study.pk).slots["supports"].name == "claims"
    judge.shared_with.add(other)
    assert get_backend("learned", model="claims", study=other.pk).slots["supports"].cross_fitted is False


def test_a_retired_judge_is_unavailable(judge):
    judge.retired_at = timezone.now()
    judge.save()
    with pytest.raises(BackendUnavailable, match="retired"):
        get_backend("learned", model="claims")


def test_judgements_are_combined_per_judgement_and_the_identity_names_each(judge):
    sentences = [fact for fact, _ in FACTS[:12]] + [
        "Hello there!", "Thanks so much for asking.", "I hope this helps.", "Take care of yourself.",
        "Let me know if you have other questions.", "Good morning!", "You're welcome.", "Sorry to hear that.",
        "Have a lovely day.", "Great question!", "Happy to help.", "See you soon."]
    content = "\n".join(json.dumps({"text": s, "label": int(i < 12)}) for i, s in enumerate(sentences)).encode()
    services.judge_train_from_file(content=content, filename="info.jsonl", task="informative", name="info",
                                   actor=None, options=LEXICAL)
    backend = get_backend("learned", supports_model="claims", informative_model="info")
    assert "informative=info (logistic/lexical" in backend.identity and "supports=claims (logistic/lexical" \
        in backend.identity
    fact, greeting = backend.informative(["Statins lower cholesterol in adults.", "Thanks, take care!"])
    assert fact.verdict is True and greeting.verdict is False and greeting.details["judge"] == "info"
    with pytest.raises(BackendUnavailable, match="supports_model='info' names a 'informative' judge"):
        get_backend("learned", model="claims", supports_model="info")


def test_icat_with_a_learned_judge_gives_a_continuous_factuality_and_judges_coverage_by_the_supports_judge(judge):
    from scoring.metrics import ITEM, AspectInput, ChunkInput, ItemInput, get_metric

    backend = get_backend("learned", model="claims")
    grounded, unrelated = FACTS[0][0], "Penguins live mostly in the southern hemisphere."
    evidence = f"{FACTS[0][0]} {FACTS[0][1]}."
    item = ItemInput(id="x", question="q", answer="", sentences=[grounded, unrelated],
                     contexts=[ChunkInput(rank=1, text=evidence)],
                     aspects=[AspectInput(ref=1, text=grounded), AspectInput(ref=2, text="Chess was played in India.")])
    spec = get_metric("icat")
    claims = backend.supports([grounded, unrelated], [evidence])
    assert [j.verdict for j in claims] == [True, False]
    counted, *aspects = spec.score(item, backend, spec.resolve_params({}))
    continuous = spec.score(item, backend, spec.resolve_params({"aggregate": "mean_probability"}))[0]
    assert counted.unit == ITEM and counted.details["factuality"] == pytest.approx(0.5)
    # Hand-worked: the mean of the two claims' support probabilities, not the share above 0.5.
    assert continuous.details["factuality"] == pytest.approx((claims[0].probability + claims[1].probability) / 2)
    # Coverage: the supports judge with the grounded claim as evidence — the aspect it copies is covered,
    # the unrelated one is not; each unit names the judge and how it was applied.
    assert [a.value for a in aspects] == [1.0, 0.0]
    assert aspects[0].details["judge"] == "claims" and "coverage" in aspects[0].details["applied_as"]
    assert 0.0 <= aspects[1].details["probability"] < 0.5


def test_rf_with_a_learned_judge_takes_its_statements_from_the_whole_answer_as_ragas(judge):
    # The example: a greeting, empathy and a sign-off are statements for RF (RAGAS) but not claims
    # for CF/ICAT; the learned backend judges support only, it must not narrow RF's statements.
    from scoring.metrics import ChunkInput, ItemInput, get_metric

    answer = ["Hello!", "I'm sorry to hear that.", "Use the eye drops four times a day.",
              "Paracetamol is fine for pain.", "Let me know if you have more questions."]
    backend = get_backend("learned", model="claims")
    assert backend.statements("q", " ".join(answer), answer).texts == answer
    assert backend.statements("q", " ".join(answer), answer, drop_conversational=True).texts == answer[2:4]
    item = ItemInput(id="x", question="q", answer=" ".join(answer), sentences=answer,
                     contexts=[ChunkInput(rank=1, text="Use the eye drops four times a day.")])
    spec = get_metric("rf")
    (unit,) = spec.score(item, backend, spec.resolve_params({}))
    assert unit.details["n_statements"] == 5


def test_a_learned_judge_is_held_to_the_contradiction_check_like_every_backend(judge):
    # The worked example: against "Use the eye drops four times a day.", the negated claim shares
    # every word with its evidence, so a judge trained on overlap calls it supported; the mismatch check
    # that every backend applies makes it contradicted, with probability 0 for the continuous aggregates.
    backend = get_backend("learned", model="claims")
    evidence = "Use the eye drops four times a day."
    negated, same = backend.supports(["Do not use the eye drops four times a day.", evidence], [evidence])
    assert negated.details["contradiction"]["verdict_before"] is True
    assert (negated.verdict, negated.label, negated.probability) == (False, "contradicted", 0.0)
    assert negated.details["contradiction"]["mismatches"][0]["kind"] == "negation"
    assert (same.verdict, same.label) == (True, "supported") and same.probability > 0.5
