"""The learned backend: cross-validated logistic regression on embedding features, persisted per study."""

from __future__ import annotations

import pytest

from scoring.backends import get_backend
from scoring.backends.base import BackendCapabilityError
from scoring.backends.learned import train_learned_model
from scoring.metrics import BackendUnavailable, MetricError

INFORMATIVE = [
    "Metformin lowers blood glucose.", "Ibuprofen can irritate the stomach lining.",
    "Take amoxicillin three times a day for a week.", "High blood pressure raises the risk of stroke.",
    "Vitamin D is made in the skin in sunlight.", "Insulin is injected under the skin.",
    "Statins reduce LDL cholesterol.", "Paracetamol overdose damages the liver.",
]
CONVERSATIONAL = [
    "Hello there!", "Thanks so much for asking.", "I hope this helps.", "Take care of yourself.",
    "Let me know if you have other questions.", "Good morning!", "You're welcome.", "Sorry to hear that.",
]


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_training_reports_cross_validated_quality_and_persists_under_var_dir(var_dir, embedding_backend):
    report = train_learned_model(study="demo", question="information_bearing", task="informative",
                                 texts=INFORMATIVE + CONVERSATIONAL, labels=[True] * 8 + [False] * 8, folds=4)
    assert (report.n, report.n_positive, report.folds) == (16, 8, 4)
    assert report.cv_auc > 0.9 and report.cv_accuracy > 0.8
    assert report.path.startswith(str(var_dir / "models" / "learned" / "demo" / "information_bearing"))
    assert report.path.endswith(f"{report.data_hash}.joblib")

    backend = get_backend("learned", study="demo", question="information_bearing")
    assert f"@{report.data_hash[:12]}" in backend.identity
    greeting, fact = backend.informative(["Hi, thank you!", "Aspirin thins the blood."])
    assert (greeting.verdict, fact.verdict) == (False, True)
    with pytest.raises(BackendCapabilityError, match="trained for 'informative'"):
        backend.supports(["x"], ["y"])


def test_retraining_on_new_gold_makes_the_new_model_current(var_dir, embedding_backend):
    first = train_learned_model(study="demo", question="ib", task="informative",
                                texts=INFORMATIVE + CONVERSATIONAL, labels=[True] * 8 + [False] * 8, folds=3)
    second = train_learned_model(study="demo", question="ib", task="informative",
                                 texts=INFORMATIVE[:6] + CONVERSATIONAL[:6], labels=[True] * 6 + [False] * 6, folds=3)
    assert first.data_hash != second.data_hash
    assert get_backend("learned", study="demo", question="ib").report["data_hash"] == second.data_hash
    assert get_backend("learned", study="demo", question="ib", data_hash=first.data_hash).report["n"] == 16


def test_pair_task_classifies_claims_against_evidence(var_dir, embedding_backend):
    evidence = "Metformin lowers blood glucose. Statins reduce LDL cholesterol. Insulin is injected under the skin."
    texts = ["Metformin reduces blood sugar.", "Statins lower LDL.", "Insulin is given by injection.",
             "Metformin cures cancer.", "Statins cause blindness.", "Insulin is taken as eye drops."]
    report = train_learned_model(study="demo", question="grounded", task="supports", texts=texts,
                                 labels=[True, True, True, False, False, False], evidence=[evidence] * 6, folds=3)
    assert 0.0 <= report.cv_auc <= 1.0
    backend = get_backend("learned", study="demo", question="grounded")
    assert len(backend.supports(["Metformin lowers glucose."], [evidence])) == 1


def test_without_a_trained_model_the_backend_is_unavailable(var_dir):
    with pytest.raises(BackendUnavailable, match="no model trained"):
        get_backend("learned", study="demo", question="never")


def test_training_needs_both_classes(var_dir):
    with pytest.raises(MetricError, match="at least 2 examples of each class"):
        train_learned_model(study="demo", question="q", task="informative", texts=["a", "b", "c"],
                            labels=[True, True, False])


def test_unsafe_keys_are_refused(var_dir):
    with pytest.raises(MetricError, match="safe"):
        get_backend("learned", study="../etc", question="q")


def test_the_learned_backend_needs_a_question_and_accepts_a_numeric_study_id(var_dir):
    with pytest.raises(BackendUnavailable, match="name the study and the question"):
        get_backend("learned", study=7)
    with pytest.raises(BackendUnavailable, match="no model trained for study '7'"):
        get_backend("learned", study=7, question="grounded")
