"""The cross-encoder model type: fine-tuned (bounded epochs, CPU) from a local model directory, compared
with the logistic candidates in cross-validation, saved, loaded and used by the learned backend. A tiny
BERT built offline stands in for the MiniLM weights."""

from __future__ import annotations

import pytest

from scoring.backends import get_backend
from scoring.judges import artifacts
from scoring.judges.training import compare, read_labelled_file
from scoring.models import TrainedJudge
from tests.scoring.conftest import build_tiny_nli_model
from tests.scoring.judge_support import labelled_jsonl

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_a_cross_encoder_is_compared_in_cv_saved_loaded_and_gives_probabilities(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    base = build_tiny_nli_model(tmp_path / "tiny", id2label={0: "score"})
    examples = read_labelled_file(labelled_jsonl(), "claims.jsonl")
    best = compare(examples, task="supports", candidates=[("cross-encoder", "pair-text"), ("logistic", "lexical")],
                   folds=3, epochs=1, base_dir=base)
    assert {(c["model_type"], c["feature_set"]) for c in best.comparison} == {
        ("cross-encoder", "pair-text"), ("logistic", "lexical")}
    assert best.comparison[0]["auc"] >= best.comparison[1]["auc"]  # the kept one is the best in CV
    ce = compare(examples, task="supports", candidates=[("cross-encoder", "pair-text")], folds=3, epochs=1,
                 base_dir=base)
    assert ce.model_type == "cross-encoder" and len(ce.fold_models) == 3
    key = artifacts.save(ce)
    loaded = artifacts.load(key)
    assert (tmp_path / "models" / "judges" / key / "fold-2").is_dir()
    TrainedJudge.objects.create(name="ce", task="supports", source_kind="file", data_hash=ce.data_hash,
                                model_type="cross-encoder", feature_set="pair-text", n=28, n_positive=14,
                                cv=ce.evaluation.figures, path=key)
    backend = get_backend("learned", model="ce")
    (judgement,) = backend.supports(["aspirin reduces fever"], ["aspirin reduces fever and pain"])
    assert 0.0 <= judgement.probability <= 1.0
    assert judgement.probability == pytest.approx(
        loaded.proba(loaded.final, ["aspirin reduces fever"], ["aspirin reduces fever and pain"])[0], abs=1e-6)


PAIRS = [("aspirin reduces fever", "aspirin reduces fever and pain"), ("aspirin raises fever", "aspirin reduces pain")]


def _fit_top_layer(tmp_path, **options):
    """A tiny BERT's top layer and head fine-tuned on PAIRS (eight times each, labels 0 and 1): the base model's
    directory, the fitted model and the cache of the frozen layer's states."""
    import numpy as np

    from scoring.judges.training import cross_encoder_fit

    base = build_tiny_nli_model(tmp_path / "tiny", id2label={0: "score"})
    cache: dict = {}
    model = cross_encoder_fit(PAIRS * 8, np.array([0, 1] * 8), base_dir=base, epochs=2, top_layers=1, lr=1e-2,
                              state_cache=cache, **options)
    return base, model, cache


def test_fine_tuning_only_the_top_layers_leaves_the_rest_as_the_base_and_caches_the_frozen_states(tmp_path):
    import numpy as np
    import torch

    from scoring.judges.training import cross_encoder_new, cross_encoder_proba, top_proba

    pairs = PAIRS
    base, model, cache = _fit_top_layer(tmp_path, weights=np.linspace(0.5, 1.5, 16))
    fresh = cross_encoder_new(base).model.state_dict()
    tuned = model.model.state_dict()
    for name, param in model.model.named_parameters():
        assert param.requires_grad == (not name.startswith(("bert.embeddings.", "bert.encoder.layer.0."))), name
    for name, value in tuned.items():
        same = torch.equal(value, fresh[name])
        if name.startswith(("bert.embeddings.", "bert.encoder.layer.0.")):
            assert same, name  # frozen: still the base model's
        elif name.startswith(("bert.encoder.layer.1.", "bert.pooler.")) and name.endswith("weight"):
            assert not same, name  # fine-tuned
    assert set(cache) == set(pairs)  # the frozen layers ran once per distinct pair
    assert top_proba(model, pairs, 1, max_length=128, state_cache=cache) == pytest.approx(
        cross_encoder_proba(model, pairs), abs=1e-5)  # the cached path scores as the model's own forward


def test_mean_pooling_heads_the_masked_mean_of_the_top_states_on_both_paths_and_leaves_the_pooler(tmp_path):
    import numpy as np
    import torch

    from scoring.judges.training import cross_encoder_fit, cross_encoder_new, cross_encoder_proba, top_proba

    pairs = PAIRS
    base, model, cache = _fit_top_layer(tmp_path, pooling="mean")
    fresh = cross_encoder_new(base).model.state_dict()
    tuned = model.model.state_dict()
    assert torch.equal(tuned["bert.pooler.dense.weight"], fresh["bert.pooler.dense.weight"])  # not on the path
    assert not torch.equal(tuned["classifier.weight"], fresh["classifier.weight"])
    cached = top_proba(model, pairs, 1, max_length=128, state_cache=cache, pooling="mean")
    full = cross_encoder_proba(model, pairs, pooling="mean")
    assert cached == pytest.approx(full, abs=1e-5)  # the cached path scores as the whole model does
    net, tokenizer = model.model, model.tokenizer
    expected = []
    with torch.no_grad():
        for a, b in pairs:  # one pair at a time: no padding; the head reads the mean of the top token states
            hidden = net.bert(**tokenizer(a, b, return_tensors="pt")).last_hidden_state[0]
            expected.append(float(torch.sigmoid(net.classifier(hidden.mean(dim=0)))))
    assert full == pytest.approx(expected, abs=1e-5)  # in a padded batch, padding is left out of the mean
    assert cross_encoder_proba(model, pairs) != pytest.approx(full, abs=1e-3)  # the pooler head differs
    with pytest.raises(Exception, match="pooling"):
        cross_encoder_fit(pairs, np.array([0, 1]), base_dir=base, epochs=1, pooling="max")
