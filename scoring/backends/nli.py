"""The ``nli`` backend: any transformers sequence-classification NLI model from a local directory.

The directory comes from the ``model_dir`` option or ``settings.NLI_MODEL_DIR``; nothing is downloaded. The
``max_length`` option (default 512) bounds the tokens of a premise–hypothesis pair.
The label mapping is read from the model's ``config.id2label``: each label must name entailment,
neutral or contradiction (case-insensitive, prefixes such as "ENTAILMENT" or "contradictory" accepted)
and entailment must be present, otherwise the model is refused with a message listing its labels —
``LABEL_0``-style configs cannot be interpreted safely.

Judgements (probabilities are the softmax over the model's labels; default thresholds in ``defaults``):

- ``supports``: premise = each evidence passage on its own, hypothesis = the claim; a passage supports the
  claim when P(entailment) ≥ ``support`` (0.5), and contradicts it when the model's most probable label is
  contradiction or when ``scoring.metrics.contradiction`` finds a mismatch between the claim and the passage
  sentence sharing most of its content words (the verdict is then False). Premises longer than
  ``max_length`` tokens are truncated from the end (the hypothesis is kept whole). The claim's judgement is the
  best single passage's (``best_passage``, reported as ``evidence_passage``).
- ``covers``: premise = the claims joined, hypothesis = the aspect; covered when P(entailment) ≥ ``coverage`` (0.5).
- ``sentence_kinds``: premise = the source, hypothesis = the sentence; entailed (≥ ``simplification``,
  0.5) → source simplification, else elaborative explanation.
- ``statements``: as for ``lexical`` (every stored sentence; with ``drop_conversational`` the rule-filtered
  ones, split into clause-level claims).
- Relevance, refusal detection, information-bearing classification and the rubric are not NLI tasks:
  they raise ``BackendCapabilityError``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from django.conf import settings

from scoring.backends.base import (
    AVAILABLE,
    Availability,
    Backend,
    BackendDescriptor,
    Judgement,
    Option,
    Statements,
    apply_contradiction,
    best_passage,
    register,
)
from scoring.backends.embedding import weights_digest
from scoring.backends.lexical import rule_statements, sentence_statements
from scoring.backends.text import sentences_of
from scoring.metrics.base import BackendUnavailable

NLI_LABELS = ("entailment", "neutral", "contradiction")
_LOCK = threading.Lock()
_BACKENDS: dict[tuple[str, int], NLIBackend] = {}


def map_labels(id2label: dict[int, str]) -> dict[str, int]:
    """{"entailment": i, ...} from a config's id2label; BackendUnavailable when a label doesn't map."""
    mapping: dict[str, int] = {}
    for index, label in id2label.items():
        norm = str(label).strip().lower()
        name = next((n for n in NLI_LABELS if norm.startswith(n[:7])), None)
        if name is None or name in mapping:
            # The labels are the model file's content: named by position only, never echoed.
            raise BackendUnavailable(
                "nli backend: cannot map the model's labels onto entailment / neutral / contradiction (label "
                f"{int(index)} of {len(id2label)} does not map); set id2label in the model's config.json"
            )
        mapping[name] = int(index)
    if "entailment" not in mapping:
        raise BackendUnavailable(f"nli backend: none of the model's {len(id2label)} labels is an entailment label")
    return mapping


def get_nli_backend(model_dir: str | None = None, max_length: int = 512) -> NLIBackend:
    directory = model_dir or settings.NLI_MODEL_DIR
    if not directory:
        raise BackendUnavailable(
            "nli backend: no model configured; set NLI_MODEL_DIR to a local directory holding a transformers "
            "sequence-classification NLI model"
        )
    path = Path(directory)
    if not (path / "config.json").is_file():
        raise BackendUnavailable(f"nli backend: {path} is not a transformers model directory (no config.json)")
    key = (str(path.resolve()), int(max_length))
    with _LOCK:
        if key not in _BACKENDS:
            _BACKENDS[key] = NLIBackend(path, max_length=int(max_length))
        return _BACKENDS[key]


class NLIBackend(Backend):
    name = "nli"
    defaults: ClassVar[dict[str, float]] = {"support": 0.5, "coverage": 0.5, "simplification": 0.5}
    batch_size = 16

    def __init__(self, path: Path, *, max_length: int = 512) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        try:
            config = AutoConfig.from_pretrained(str(path), local_files_only=True)
        except Exception as exc:  # an unreadable config means no usable model
            raise BackendUnavailable(f"nli backend: cannot read the config in {path}: {exc}") from exc
        self.labels = map_labels(config.id2label)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
        except Exception as exc:
            raise BackendUnavailable(f"nli backend: cannot load the model in {path}: {exc}") from exc
        self.device = settings.NLI_DEVICE  # the administrator's choice; no fallback to another device
        try:
            self.model.to(self.device)
        except Exception as exc:  # no such device here (no CUDA build, no GPU, a wrong index)
            raise BackendUnavailable(f"nli backend: cannot put the model on {self.device} (NLI_DEVICE): {exc}") from exc
        self.model.eval()
        self._torch = torch
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self.path = path
        label_text = ",".join(f"{i}={n}" for n, i in sorted(self.labels.items(), key=lambda kv: kv[1]))
        self.identity = f"nli:{path} ({config.model_type}) sha256:{weights_digest(path)} labels={label_text}"

    def probabilities(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        """Softmax over the model's labels, one row per (premise, hypothesis) pair."""
        rows = []
        for start in range(0, len(premises), self.batch_size):
            enc = self.tokenizer(
                premises[start : start + self.batch_size],
                hypotheses[start : start + self.batch_size],
                truncation="only_first",
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            )
            enc = {key: value.to(self.device) for key, value in enc.items()}
            with self._torch.no_grad():
                logits = self.model(**enc).logits
            rows.append(self._torch.softmax(logits, dim=-1).cpu().numpy())
        n_labels = len(self.model.config.id2label)
        return np.vstack(rows) if rows else np.zeros((0, n_labels))

    def _label_probs(self, row: np.ndarray) -> dict[str, float]:
        return {name: round(float(row[i]), 6) for name, i in self.labels.items()}

    def _entailment(self, premises: list[str], hypotheses: list[str]) -> tuple[np.ndarray, np.ndarray]:
        probs = self.probabilities(premises, hypotheses)
        return probs[:, self.labels["entailment"]], probs

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("support", threshold)
        passages = [e for e in evidence if e.strip()]
        if not passages:
            return [Judgement(False, 0.0, {"threshold": t, "reason": "no evidence"}, probability=0.0) for _ in claims]
        premises = [p for _ in claims for p in passages]
        hypotheses = [c for c in claims for _ in passages]
        ent, probs = self._entailment(premises, hypotheses)
        sentences = [sentences_of([p]) for p in passages]
        out = []
        for i in range(len(claims)):
            per_passage = []
            for k, passage_sentences in enumerate(sentences):
                p = float(ent[i * len(passages) + k])
                label_probs = self._label_probs(probs[i * len(passages) + k])
                # The model's own contradiction: the passage's most probable label is contradiction.
                label = None
                if (p < t and "contradiction" in label_probs
                        and label_probs["contradiction"] == max(label_probs.values())):
                    label = "contradicted"
                judgement = Judgement(p >= t, p, {
                    "measure": "P(entailment) by the passage", "threshold": t, "probabilities": label_probs},
                    label=label, probability=p)
                per_passage.append(apply_contradiction(judgement, claims[i], passage_sentences))
            out.append(best_passage(per_passage, passages))
        return out

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("coverage", threshold)
        if not claims:
            return [Judgement(False, 0.0, {"threshold": t, "reason": "no claims"}) for _ in aspects]
        premise = " ".join(claims)
        ent, probs = self._entailment([premise] * len(aspects), aspects)
        return [
            Judgement(bool(p >= t), float(p), {"measure": "P(entailment) of aspect by the claims", "threshold": t,
                                              "probabilities": self._label_probs(row)})
            for p, row in zip(ent, probs, strict=True)
        ]

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        t = self.threshold("simplification", threshold)
        premise = " ".join(source_sentences)
        ent, probs = self._entailment([premise] * len(sentences), sentences)
        return [
            Judgement(bool(p >= t), float(p), {"kind": "simplification" if p >= t else "elaboration",
                                              "measure": "P(entailment) by the source", "threshold": t,
                                              "probabilities": self._label_probs(row)})
            for p, row in zip(ent, probs, strict=True)
        ]

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        return rule_statements(sentences) if drop_conversational else sentence_statements(sentences)


def _availability(options: Mapping[str, Any], study_id: int | None) -> Availability:
    """A model directory is configured (the ``model_dir`` option, else ``NLI_MODEL_DIR``) and holds a
    transformers config; the model itself is loaded (and may still fail) on the worker."""
    directory = options.get("model_dir") or settings.NLI_MODEL_DIR
    if not directory:
        return Availability(False, "no NLI model configured: set NLI_MODEL_DIR to a local model directory")
    if not (Path(directory) / "config.json").is_file():
        where = "model_dir" if options.get("model_dir") else "NLI_MODEL_DIR"
        return Availability(False, f"{where} {directory} holds no transformers model (no config.json)")
    return AVAILABLE


# Small batches: a (premise, hypothesis) pair takes a forward pass each, so items take long, and small tasks
# keep retries, leases and the spread over workers fine-grained.
DESCRIPTOR = register(BackendDescriptor(
    name="nli",
    queue="scoring-cpu",
    batch_size=16,
    build=get_nli_backend,
    check=_availability,
    settings=("NLI_MODEL_DIR", "NLI_DEVICE"),
    model_settings=("NLI_MODEL_DIR",),
    options={
        "model_dir": Option("text", max_length=1000, model_setting="NLI_MODEL_DIR"),
        "max_length": Option("integer", bounds=(16, 4096)),
    },
))
