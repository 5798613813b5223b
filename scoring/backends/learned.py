"""The ``learned`` backend: a logistic-regression classifier on embedding features, trained on gold labels.

Training data arrives as plain data (``adjudication`` reads the study's gold labels and calls
``train_learned_model``); this module never touches the database. A model is trained for one *task*:

- ``supports``: text = an answer sentence or claim, evidence = its context, label = grounded;
- ``informative``: text = an answer sentence, label = information-bearing;
- ``relevance``: text = a chunk, evidence = the question, label = relevant.

Features (all-MiniLM-L6-v2 through the ``embedding`` backend): for a single text, its embedding u; for a
text with evidence, [u·v, |u−v|, cos(u, v)] where v is the embedding of the evidence sentence most
similar to the text. Classifier: scikit-learn ``LogisticRegression`` (lbfgs, C=1, balanced class weights
so a rare positive class is not ignored). Quality is reported from stratified k-fold cross-validation
(shuffled, seed 0; k = min(folds, size of the smaller class)): accuracy at probability 0.5 and ROC AUC
over the pooled out-of-fold probabilities. The final model is refit on all the data.

Models are stored with joblib at ``VAR_DIR/models/learned/<study>/<question>/<data sha256>.joblib``;
``current`` in that folder names the latest training, so retraining on new gold replaces it without
losing the old file. ``get_learned_backend(study=, question=)`` loads the current model (once per
process per file) or raises ``BackendUnavailable`` when none has been trained.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from django.conf import settings

from scoring.backends.base import Backend, Judgement
from scoring.backends.embedding import EmbeddingBackend, get_embedding_backend
from scoring.backends.text import sentences_of
from scoring.metrics.base import BackendUnavailable, MetricError

TASKS = ("supports", "informative", "relevance")
PAIR_TASKS = ("supports", "relevance")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_LOCK = threading.Lock()
_LOADED: dict[str, LearnedBackend] = {}


@dataclass(frozen=True)
class TrainingReport:
    study: str
    question: str
    task: str
    n: int
    n_positive: int
    folds: int
    cv_accuracy: float
    cv_auc: float
    data_hash: str
    path: str
    embedding_identity: str
    trained_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def models_dir(study: str | int, question: str) -> Path:
    """Study and question are keys (a study id or slug, a question key), checked to be path-safe."""
    study, question = str(study), str(question)
    for part in (study, question):
        if not _SAFE.match(part or ""):
            raise MetricError(f"learned backend: {part!r} is not a safe study or question key")
    return Path(settings.VAR_DIR) / "models" / "learned" / study / question


def training_data_hash(task: str, texts: list[str], labels: list[bool], evidence: list[str] | None) -> str:
    payload = json.dumps({"task": task, "texts": texts, "labels": labels, "evidence": evidence}, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def featurize(embedding: EmbeddingBackend, texts: list[str], evidence: list[str] | None) -> np.ndarray:
    u = embedding.encode(texts)
    if evidence is None:
        return u
    v = np.zeros_like(u)
    for i, (text_vec, ev) in enumerate(zip(u, evidence, strict=True)):
        candidates = sentences_of([ev]) or [ev]
        vecs = embedding.encode(candidates)
        v[i] = vecs[int((vecs @ text_vec).argmax())]
    cos = (u * v).sum(axis=1, keepdims=True)
    return np.hstack([u * v, np.abs(u - v), cos])


def train_learned_model(
    *,
    study: str | int,
    question: str,
    task: str,
    texts: list[str],
    labels: list[bool],
    evidence: list[str] | None = None,
    folds: int = 5,
    embedding_model: str | None = None,
) -> TrainingReport:
    """Train, cross-validate, persist and make current a classifier for (study, question)."""
    import joblib
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    if task not in TASKS:
        raise MetricError(f"learned backend: task must be one of {', '.join(TASKS)}, got {task!r}")
    if (task in PAIR_TASKS) != (evidence is not None):
        raise MetricError(f"learned backend: task {task!r} {'needs' if task in PAIR_TASKS else 'takes no'} evidence")
    if len(texts) != len(labels) or (evidence is not None and len(evidence) != len(texts)):
        raise MetricError("learned backend: texts, labels and evidence must have the same length")
    y = np.array([bool(v) for v in labels], dtype=int)
    smaller = int(min(y.sum(), len(y) - y.sum()))
    if smaller < 2:
        raise MetricError(
            f"learned backend: need at least 2 examples of each class to cross-validate, got "
            f"{int(y.sum())} positive and {len(y) - int(y.sum())} negative"
        )
    k = min(folds, smaller)
    directory = models_dir(study, question)
    embedding = get_embedding_backend(embedding_model)
    X = featurize(embedding, list(texts), list(evidence) if evidence is not None else None)

    def make() -> LogisticRegression:
        return LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000)

    cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=0)
    oof = cross_val_predict(make(), X, y, cv=cv, method="predict_proba")[:, 1]
    classifier = make().fit(X, y)

    digest = training_data_hash(task, list(texts), [bool(v) for v in y], evidence)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{digest}.joblib"
    report = TrainingReport(
        study=str(study), question=question, task=task, n=len(y), n_positive=int(y.sum()), folds=k,
        cv_accuracy=float(accuracy_score(y, oof >= 0.5)), cv_auc=float(roc_auc_score(y, oof)),
        data_hash=digest, path=str(path), embedding_identity=embedding.identity,
        trained_at=datetime.now(UTC).isoformat(),
    )
    tmp = path.with_suffix(".tmp")
    joblib.dump({"classifier": classifier, "task": task, "embedding_model": embedding_model,
                 "report": report.as_dict()}, tmp)
    tmp.replace(path)
    current_tmp = directory / "current.tmp"
    current_tmp.write_text(digest)
    current_tmp.replace(directory / "current")
    with _LOCK:
        _LOADED.pop(str(path), None)
    return report


def get_learned_backend(
    *, study: str | int | None = None, question: str | None = None, data_hash: str | None = None
) -> LearnedBackend:
    if study is None or not question:
        raise BackendUnavailable(
            "learned backend: name the study and the question whose gold labels the model was trained on "
            "(options study=, question=)"
        )
    study = str(study)
    directory = models_dir(study, question)
    if data_hash is None:
        marker = directory / "current"
        if not marker.is_file():
            raise BackendUnavailable(
                f"learned backend: no model trained for study {study!r}, question {question!r}; "
                "train one from the study's gold labels first"
            )
        data_hash = marker.read_text().strip()
    if not re.fullmatch(r"[0-9a-f]{64}", data_hash):
        raise BackendUnavailable(f"learned backend: {data_hash!r} is not a training-data hash")
    path = directory / f"{data_hash}.joblib"
    if not path.is_file():
        raise BackendUnavailable(f"learned backend: model file {path} is missing")
    with _LOCK:
        if str(path) not in _LOADED:
            _LOADED[str(path)] = LearnedBackend(path)
        return _LOADED[str(path)]


class LearnedBackend(Backend):
    name = "learned"
    defaults: ClassVar[dict[str, float]] = {"probability": 0.5}

    def __init__(self, path: Path) -> None:
        import joblib

        # Only files this module wrote under VAR_DIR are loaded (the path is built from checked keys).
        artifact = joblib.load(path)
        self.classifier = artifact["classifier"]
        self.task: str = artifact["task"]
        self.report: dict[str, Any] = artifact["report"]
        self.embedding = get_embedding_backend(artifact["embedding_model"])
        if self.embedding.identity != self.report["embedding_identity"]:
            raise BackendUnavailable(
                f"learned backend: {path.name} was trained on {self.report['embedding_identity']}, but this process "
                f"has {self.embedding.identity}; retrain the model"
            )
        self.identity = (
            f"learned:{self.report['study']}/{self.report['question']}@{self.report['data_hash'][:12]} "
            f"task={self.task} logistic-regression on [{self.embedding.identity}] "
            f"cv_auc={self.report['cv_auc']:.3f} cv_accuracy={self.report['cv_accuracy']:.3f}"
        )

    def predict(self, texts: list[str], evidence: list[str] | None) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        return self.classifier.predict_proba(featurize(self.embedding, texts, evidence))[:, 1]

    def _judge(self, probs: np.ndarray, threshold: float | None) -> list[Judgement]:
        t = self.threshold("probability", threshold)
        return [Judgement(bool(p >= t), float(p), {"probability": float(p), "threshold": t}) for p in probs]

    def _require(self, task: str, what: str) -> None:
        if self.task != task:
            raise self._cannot(f"{what}: the current model for {self.report['study']}/{self.report['question']} "
                               f"was trained for {self.task!r}")

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        self._require("supports", "verify claims against evidence")
        context = " ".join(evidence)
        return self._judge(self.predict(claims, [context] * len(claims)), threshold)

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        self._require("informative", "classify information-bearing sentences")
        return self._judge(self.predict(sentences, None), threshold)

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        self._require("relevance", "judge passage relevance")
        return self._judge(self.predict(passages, [question] * len(passages)), threshold)
