"""The nli backend against tiny models built offline by the tests (tests/scoring/conftest.py)."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.backends import get_backend
from scoring.backends.base import BackendCapabilityError
from scoring.backends.nli import map_labels
from scoring.metrics import BackendUnavailable, ChunkInput, ItemInput, get_metric
from tests.scoring.conftest import build_tiny_nli_model


def test_label_mapping_is_read_from_the_config_case_insensitively():
    assert map_labels({0: "CONTRADICTION", 1: "Neutral", 2: "entailment"}) == {
        "contradiction": 0, "neutral": 1, "entailment": 2}


@pytest.mark.parametrize("labels", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, {0: "neutral", 1: "contradiction"}])
def test_a_model_whose_labels_do_not_map_is_refused(labels):
    with pytest.raises(BackendUnavailable, match="entailment"):
        map_labels(labels)


def test_a_saved_model_with_generic_labels_is_refused_when_loaded(tmp_path):
    directory = build_tiny_nli_model(tmp_path / "generic", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(BackendUnavailable, match="cannot map the model's labels"):
        get_backend("nli", model_dir=str(directory))


def test_probabilities_are_a_distribution_and_the_model_is_loaded_once(tiny_nli_dir):
    backend = get_backend("nli", model_dir=str(tiny_nli_dir))
    assert get_backend("nli", model_dir=str(tiny_nli_dir)) is backend
    probs = backend.probabilities(["aspirin reduces fever ."] * 2, ["aspirin helps .", "the sun is water ."])
    assert probs.shape == (2, 3)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert "labels=0=entailment,1=neutral,2=contradiction" in backend.identity
    assert "sha256:" in backend.identity


def test_entailing_model_supports_claims_and_records_label_probabilities(tiny_nli_dir):
    backend = get_backend("nli", model_dir=str(tiny_nli_dir))
    (j,) = backend.supports(["aspirin reduces fever ."], ["aspirin reduces pain .", "metformin lowers blood glucose ."])
    assert j.verdict is True and j.score > 0.99
    assert set(j.details["probabilities"]) == {"entailment", "neutral", "contradiction"}
    # The model's P(entailment) of the best passage is the judgement's probability (for mean_probability).
    assert j.probability == j.score == pytest.approx(j.details["probabilities"]["entailment"])


def test_icat_with_nli_takes_the_mean_entailment_probability_as_factuality(tiny_nli_dir):
    backend = get_backend("nli", model_dir=str(tiny_nli_dir))
    item = ItemInput(id="x", question="q", answer="", sentences=["aspirin reduces fever ."],
                     contexts=[ChunkInput(rank=1, text="aspirin reduces pain .")])
    spec = get_metric("icat")
    (claim,) = backend.supports(["aspirin reduces fever ."], ["aspirin reduces pain ."])
    unit = spec.score(item, backend, spec.resolve_params({"aggregate": "mean_probability"}))[0]
    assert unit.details["factuality"] == pytest.approx(claim.probability)


def test_permuted_labels_are_honoured(tiny_nli_contradiction_dir):
    # Labels {0: CONTRADICTION, 1: NEUTRAL, 2: ENTAILMENT}, logits favour index 0 = contradiction:
    # a model read with the default order would wrongly call this entailment.
    backend = get_backend("nli", model_dir=str(tiny_nli_contradiction_dir))
    (j,) = backend.supports(["aspirin causes cancer ."], ["aspirin reduces fever ."])
    assert j.verdict is False
    assert j.details["probabilities"]["contradiction"] > 0.99


def test_cf_with_nli_grounds_information_bearing_sentences_chosen_by_the_rule_set(tiny_nli_contradiction_dir):
    item = ItemInput(id="i", question="q", answer="", sentences=["Aspirin reduces fever.", "Thanks for asking!"],
                     contexts=[ChunkInput(rank=1, text="aspirin reduces fever .")])
    cf = get_metric("cf")
    backend = get_backend("nli", model_dir=str(tiny_nli_contradiction_dir))
    with pytest.raises(BackendCapabilityError):
        cf.score(item, backend, cf.resolve_params({}))
    scores = cf.score(item, backend, cf.resolve_params({"information_bearing": "rules"}))
    assert (scores[0].value, scores[0].details["information_bearing"]) == (0.0, 1)


def test_nli_without_a_configured_directory_is_unavailable(settings):
    settings.NLI_MODEL_DIR = None
    with pytest.raises(BackendUnavailable, match="set NLI_MODEL_DIR"):
        get_backend("nli")
