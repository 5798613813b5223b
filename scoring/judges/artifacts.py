"""A trained judge on disk: ``VAR_DIR/models/judges/<key>/`` holding ``judge.joblib`` (the logistic
pipelines, or the names of the cross-encoder directories saved next to it) and, for cross-encoders,
``final/`` and ``fold-<k>/``. Only directories this module wrote are loaded (the key is checked)."""

from __future__ import annotations

import re
import shutil
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from scoring.backends.embedding import get_embedding_backend
from scoring.judges.features import featurize, needs_encoder
from scoring.judges.training import PAIR_TASKS, Trained, cross_encoder_proba
from scoring.metrics.base import BackendUnavailable

_KEY = re.compile(r"^[0-9a-f]{32}$")
_LOCK = threading.Lock()
_LOADED: dict[str, LoadedJudge] = {}


def judges_root() -> Path:
    return Path(settings.VAR_DIR) / "models" / "judges"


def save(trained: Trained) -> str:
    """Write the judge and return its key (the directory name)."""
    import joblib

    key = uuid.uuid4().hex
    directory = judges_root() / key
    tmp = judges_root() / f".{key}.tmp"
    tmp.mkdir(parents=True)
    try:
        if trained.model_type == "cross-encoder":
            trained.final.save(str(tmp / "final"))
            for k, model in enumerate(trained.fold_models):
                model.save(str(tmp / f"fold-{k}"))
            final, folds = "final", [f"fold-{k}" for k in range(len(trained.fold_models))]
        else:
            final, folds = trained.final, trained.fold_models
        joblib.dump({"format": 1, "task": trained.task, "model_type": trained.model_type,
                     "feature_set": trained.feature_set, "embedding_identity": trained.embedding_identity,
                     "final": final, "folds": folds, "fold_of_group": trained.fold_of_group,
                     "data_hash": trained.data_hash}, tmp / "judge.joblib")
        tmp.replace(directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return key


def training_groups(key: str) -> set[str]:
    """The groups (item ids) a stored judge learned from: its fold assignment, read without loading a model."""
    import joblib

    if not _KEY.match(key or ""):
        raise ValueError(f"{key!r} is not a judge key")
    return set(joblib.load(judges_root() / key / "judge.joblib")["fold_of_group"])


class LoadedJudge:
    def __init__(self, directory: Path) -> None:
        import joblib

        artifact = joblib.load(directory / "judge.joblib")
        self.task: str = artifact["task"]
        self.model_type: str = artifact["model_type"]
        self.feature_set: str = artifact["feature_set"]
        self.embedding_identity: str = artifact["embedding_identity"]
        self.fold_of_group: dict[str, int] = artifact["fold_of_group"]
        self.data_hash: str = artifact["data_hash"]
        if self.model_type == "cross-encoder":
            from sentence_transformers import CrossEncoder

            def load(name: str) -> Any:
                return CrossEncoder(str(directory / name), device="cpu", local_files_only=True)

            self.final = load(artifact["final"])
            self.folds = [load(n) for n in artifact["folds"]]
        else:
            self.final, self.folds = artifact["final"], artifact["folds"]
        self.encoder: Any = None
        if self.model_type == "logistic" and needs_encoder(self.feature_set):
            self.encoder = get_embedding_backend()
            if self.encoder.identity != self.embedding_identity:
                raise BackendUnavailable(
                    f"learned backend: the judge was trained on {self.embedding_identity}, but this process has "
                    f"{self.encoder.identity}; retrain it"
                )

    def model_for(self, group: str | None) -> tuple[Any, str]:
        """The model that never saw ``group``'s labels (its fold's), else the final model."""
        if group is not None and group in self.fold_of_group:
            fold = self.fold_of_group[group]
            return self.folds[fold], f"fold {fold} (cross-fitted: never saw this item's labels)"
        return self.final, "final"

    def proba(self, model: Any, texts: list[str], evidence: list[str] | None) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        if self.task in PAIR_TASKS and evidence is None:
            raise ValueError("pair task without evidence")
        if self.model_type == "cross-encoder":
            return cross_encoder_proba(model, list(zip(texts, evidence or [], strict=True)))
        X = featurize(self.feature_set, self.encoder, texts, evidence)
        return np.asarray(model.predict_proba(X)[:, 1], dtype=float)


def load(key: str) -> LoadedJudge:
    if not _KEY.match(key or ""):
        raise ValueError(f"{key!r} is not a judge key")
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = LoadedJudge(judges_root() / key)
        return _LOADED[key]
