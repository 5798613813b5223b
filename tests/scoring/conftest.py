"""Fixtures for the scoring tests.

Backends and metrics section (charlie): the tiny NLI model built offline, the local LLM stub server and
the real packaged embedding model (loaded once per test session).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scoring.llm_stub import LLMStub

# --- Backends and metrics -------------------------------------------------------------------------

TINY_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "is", "are", "of", "and", "to", "in", "aspirin",
    "reduces", "fever", "pain", "headache", "ibuprofen", "metformin", "lowers", "blood", "glucose", "causes",
    "cancer", "helps", "children", "water", "sun", ".", ",", "?",
]


def build_tiny_nli_model(
    directory: Path,
    id2label: dict[int, str] | None = None,
    favour: str | None = None,
) -> Path:
    """A 2-layer BERT sequence classifier (hidden 32) with a WordLevel tokenizer, saved to ``directory``.

    ``favour`` names a label whose logit is made to dominate whatever the input (classifier weights zero,
    bias +8 on that label), so the tests know the model's answer; without it the weights are random.
    """
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    id2label = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
    vocab = {token: i for i, token in enumerate(TINY_VOCAB)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=128,
    )
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=128, num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    if favour is not None:
        index = next(i for i, name in id2label.items() if name.lower() == favour)
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.zero_()
            model.classifier.bias[index] = 8.0
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny NLI model whose answer is always entailment."""
    return build_tiny_nli_model(tmp_path_factory.mktemp("nli-entail"), favour="entailment")


@pytest.fixture(scope="session")
def tiny_nli_contradiction_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny NLI model with permuted, upper-case labels whose answer is always contradiction."""
    return build_tiny_nli_model(
        tmp_path_factory.mktemp("nli-contra"),
        id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        favour="contradiction",
    )


@pytest.fixture
def llm_stub(settings) -> Iterator[LLMStub]:
    # The stub listens on loopback, which the llm backend refuses unless an administrator allows it.
    settings.LLM_ALLOW_PRIVATE_ENDPOINTS = True
    stub = LLMStub().start()
    yield stub
    stub.stop()


@pytest.fixture(scope="session")
def embedding_backend():
    """The real packaged all-MiniLM-L6-v2 (seconds to load; the backend caches it per process)."""
    from scoring.backends import get_backend

    return get_backend("embedding")

