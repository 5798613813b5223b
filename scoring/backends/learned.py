"""The ``learned`` backend: judges trained on labelled examples (a study's gold or a labelled file).

Judges live in the registry (``scoring.models.TrainedJudge``; trained by ``scoring.judges``) and are
named in the backend options, one per judgement:

- ``model``: a judge of any task, used for that task's judgement;
- ``supports_model``, ``informative_model``, ``relevance_model``, ``kind_model``: a judge for exactly that
  judgement (``kind_model``: PlainQAFact's sentence kind, simplification vs elaboration, trained from the gold
  of the study's ``sentence_kind`` question, task ``kind``; PlainQAFact's kind decision then has its own
  signal instead of the verifier's).

A judgement for which no judge is named raises ``BackendCapabilityError`` naming the option to set
(e.g. CF with ``information_bearing=rules`` needs only a supports judge), so one run never mixes
sources silently: the run's identity lists each judgement's judge and how it is applied.

Inside a score run, ``study`` is always the run's study (``scoring.services`` sets it; a run's options
cannot): only the study's own judges and those shared with it are found. Without ``study`` (the
``score`` command, run by the operator) any judge in the registry may be named.

How a judge is applied: on the study whose gold it was trained on it is *cross-fitted* — each item
that was a training example is judged by the fold model that held that item out (``for_item``), and
other items by the final model, and the run also records each other item's value under every fold model
(``cross_fit``: the K values cross-prediction-powered estimates need, in the item score's details under
``cross_fit``; the run's value stays the final model's); anywhere else it is a *transfer* from its source (the study and
question, or the file's hash). Every judgement carries ``probability``, the judge's P(verdict True),
and the default threshold is 0.5.

ICAT's coverage (``covers``) is judged by the supports judge with the grounded claims as the evidence and
the aspect as the claim; no separate coverage judge exists.

Statements are not learned, as for the lexical and embedding backends: RF's are every stored sentence (the
whole answer, as RAGAS), ICAT's claims the clause-level claims of the sentences that pass the conversational
rule set (``scoring.metrics.claims``); their extraction details say so.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

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
from scoring.backends.lexical import rule_statements, sentence_statements
from scoring.backends.text import sentences_of
from scoring.judges import artifacts
from scoring.judges.selectors import judge_for_scoring, judges_usable_by
from scoring.metrics.base import BackendUnavailable

SLOT_OPTIONS = {"supports_model": "supports", "informative_model": "informative", "relevance_model": "relevance",
                "kind_model": "kind"}
JUDGE_OPTIONS = ("model", *SLOT_OPTIONS)


@dataclass
class Slot:
    name: str
    judge_id: int
    loaded: artifacts.LoadedJudge
    cross_fitted: bool
    source: str
    cv_auc: float

    @property
    def mode(self) -> str:
        return "cross-fitted on its own training study" if self.cross_fitted else f"transfer from {self.source}"


def get_learned_backend(*, study: int | str | None = None, model: str | None = None,
                        supports_model: str | None = None, informative_model: str | None = None,
                        relevance_model: str | None = None, kind_model: str | None = None,
                        **other: Any) -> LearnedBackend:
    if other:
        raise BackendUnavailable(
            f"learned backend: unknown option(s) {', '.join(sorted(other))}; it takes model, supports_model, "
            "informative_model, relevance_model, kind_model"
        )
    study_id = int(study) if study is not None else None
    names: dict[str, str] = {}
    judges = {}
    for option, value in (("model", model), ("supports_model", supports_model),
                          ("informative_model", informative_model), ("relevance_model", relevance_model),
                          ("kind_model", kind_model)):
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise BackendUnavailable(f"learned backend: option {option} must name a trained judge")
        judge = judge_for_scoring(value, study_id=study_id)
        task = SLOT_OPTIONS.get(option, judge.task)
        if judge.task != task:
            raise BackendUnavailable(f"learned backend: {option}={value!r} names a {judge.task!r} judge")
        if task in names and names[task] != value:
            raise BackendUnavailable(f"learned backend: two judges named for {task!r}: {names[task]!r} and {value!r}")
        names[task] = value
        judges[task] = judge
    if not judges:
        raise BackendUnavailable(
            "learned backend: name a trained judge (option model=NAME, or supports_model= / informative_model= / "
            "relevance_model= / kind_model=); the study's registry page lists them"
        )
    slots = {}
    for task, judge in judges.items():
        try:
            loaded = artifacts.load(judge.path)
        except (OSError, ValueError, KeyError) as exc:
            raise BackendUnavailable(f"learned backend: the judge {judge.name!r} cannot be loaded: {exc}") from None
        cross = study_id is not None and judge.source_kind == "study" and judge.source_study_id == study_id
        slots[task] = Slot(judge.name, judge.pk, loaded, cross, judge.source_label, float(judge.cv.get("auc", "nan")))
    return LearnedBackend(slots)


@dataclass
class CrossFit:
    """One item's cross-fitting (``LearnedBackend.cross_fit``): the folds that held it out of the judges it
    trained, or one backend per fold model to score it with (``reason`` when there can be none)."""

    held_out: dict[str, int]
    views: list[LearnedBackend]
    reason: str = ""


class LearnedBackend(Backend):
    name = "learned"
    defaults: ClassVar[dict[str, float]] = {"probability": 0.5}

    def __init__(self, slots: dict[str, Slot]) -> None:
        self.slots = slots
        self.group: str | None = None
        self.fold: int | None = None  # a fold view (``cross_fit``): cross-fitted judges use this fold's model
        self.identity = "learned: " + "; ".join(
            f"{task}={s.name} ({s.loaded.model_type}/{s.loaded.feature_set}@{s.loaded.data_hash[:12]}, "
            f"cv_auc={s.cv_auc:.3f}, {s.mode})"
            for task, s in sorted(slots.items())
        )

    def for_item(self, item_id: int) -> LearnedBackend:
        """This backend for one item of the run's study: cross-fitted judges use the fold model that
        never saw that item's labels (the hook ``scoring.services`` calls per item)."""
        view = copy.copy(self)
        view.group = str(item_id)
        return view

    def cross_fit(self, item_id: int) -> CrossFit | None:
        """What cross-prediction needs of one item of the run's study (the hook ``scoring.services`` calls per
        item, after scoring it with ``for_item``); None when no judge is cross-fitted (a transfer, or the
        ``score`` command), so other runs pay nothing.

        An item that trained a cross-fitted judge (``held_out``: each such judge's fold that held it out) keeps
        its held-out value, its only prediction that never saw its labels. Any other item gets one backend per
        fold (``views``): view j judges with every cross-fitted judge's fold-j model, so the run can record the
        item's value under each of the K fold models (``ppi.cross_ppi_mean``'s grid). No view is given when the
        cross-fitted judges have different numbers of folds (there is no one K)."""
        cross = {task: s for task, s in self.slots.items() if s.cross_fitted}
        if not cross:
            return None
        group = str(item_id)
        held_out = {task: s.loaded.fold_of_group[group] for task, s in cross.items() if group in s.loaded.fold_of_group}
        if held_out:
            return CrossFit(held_out=held_out, views=[])
        counts = {len(s.loaded.folds) for s in cross.values()}
        if len(counts) != 1:
            return CrossFit(held_out={}, views=[], reason="the cross-fitted judges have different numbers of folds")
        views = []
        for fold in range(counts.pop()):
            view = copy.copy(self)
            view.group, view.fold = group, fold
            views.append(view)
        return CrossFit(held_out={}, views=views)

    def _slot(self, task: str, what: str, option: str) -> Slot:
        slot = self.slots.get(task)
        if slot is None:
            raise self._cannot(f"{what}: no {task!r} judge is named (backend option {option}=NAME)")
        return slot

    def _judge(self, slot: Slot, texts: list[str], evidence: list[str] | None,
               threshold: float | None) -> list[Judgement]:
        if not texts:
            return []
        if slot.cross_fitted and self.fold is not None:
            model = slot.loaded.folds[self.fold]
            which = f"fold {self.fold} (cross-prediction: one of the K fold models)"
        else:
            model, which = slot.loaded.model_for(self.group if slot.cross_fitted else None)
        probs = slot.loaded.proba(model, texts, evidence)
        t = self.threshold("probability", threshold)
        extra: dict[str, Any] = {"judge": slot.name, "model": which, "application": slot.mode, "threshold": t}
        return [Judgement(bool(p >= t), float(p), {**extra}, probability=float(p)) for p in np.asarray(probs)]

    def supports(self, claims: list[str], evidence: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """The judge's probability for the claim against each evidence passage on its own, then the mismatch
        check every backend applies (``apply_contradiction``) against that passage's sentences: a negation,
        number, dose, frequency, unit, drug, body-part or polarity mismatch makes that passage contradict the claim
        (probability 0), whatever the judge said. The claim's judgement is the best single passage's
        (``best_passage``): passages are never joined into one context, so facts spread over several passages
        do not ground a claim that none supports."""
        slot = self._slot("supports", "verify claims against evidence", "supports_model")
        passages = [e for e in evidence if e.strip()]
        judged = self._judge(slot, [c for c in claims for _ in passages], passages * len(claims), threshold)
        sentences = [sentences_of([p]) for p in passages]
        out = []
        for i, claim in enumerate(claims):
            block = judged[i * len(passages):(i + 1) * len(passages)]
            out.append(best_passage([apply_contradiction(j, claim, ss)
                                     for j, ss in zip(block, sentences, strict=True)], passages))
        return out

    def covers(self, aspects: list[str], claims: list[str], *, threshold: float | None = None) -> list[Judgement]:
        """ICAT coverage by the supports judge: do the grounded claims, taken together as the evidence, support
        the aspect? (the direction an NLI model's coverage takes: premise = the claims, hypothesis = the aspect).
        No covers judge is trained separately; the details and the run identity name the supports judge."""
        slot = self._slot("supports", "match claims to aspects (coverage is judged by the supports judge)",
                          "supports_model")
        if not claims:
            return [Judgement(False, 0.0, {"judge": slot.name, "reason": "no claims"}, probability=0.0)
                    for _ in aspects]
        judged = self._judge(slot, aspects, [" ".join(claims)] * len(aspects), threshold)
        for j in judged:
            j.details["applied_as"] = "coverage: do the grounded claims support the aspect"
        return judged

    def informative(
        self, sentences: list[str], *, question: str = "", threshold: float | None = None
    ) -> list[Judgement]:
        slot = self._slot("informative", "classify information-bearing sentences", "informative_model")
        return self._judge(slot, sentences, None, threshold)

    def relevance(self, question: str, passages: list[str], *, threshold: float | None = None) -> list[Judgement]:
        slot = self._slot("relevance", "judge passage relevance", "relevance_model")
        return self._judge(slot, passages, [question] * len(passages), threshold)

    def sentence_kinds(
        self, sentences: list[str], source_sentences: list[str], *, threshold: float | None = None
    ) -> list[Judgement]:
        """PlainQAFact's sentence kind by a trained ``kind`` judge (P(simplification) of the sentence against the
        whole source): a signal of its own, not the verifier's similarity, so a simplification is not
        supported merely because it was close enough to the source to be called one."""
        slot = self._slot("kind", "classify sentences as simplification or elaboration", "kind_model")
        judged = self._judge(slot, sentences, [" ".join(source_sentences)] * len(sentences), threshold)
        for j in judged:
            j.details["kind"] = "simplification" if j.verdict else "elaboration"
            j.details["signal"] = f"trained kind judge {slot.name!r}"
        return judged

    def statements(
        self, question: str, answer: str, sentences: list[str], *, drop_conversational: bool = False
    ) -> Statements:
        """Not learned, as for the lexical and embedding backends (the details say so): every stored sentence
        (RF, as RAGAS takes statements from the whole answer) or, with ``drop_conversational``, the clause-level
        claims of those that pass the conversational rule set (ICAT's claims); only their support is judged by a
        trained judge."""
        return rule_statements(sentences) if drop_conversational else sentence_statements(sentences)


def _availability(options: Mapping[str, Any], study_id: int | None) -> Availability:
    """Every judge the options name is one the study may use (its own or shared with it: ``judge_for_scoring``);
    with none named, the study may use at least one judge that is not retired. No judge is loaded."""
    named = [str(options[key]) for key in JUDGE_OPTIONS if key in options]
    for name in named:
        try:
            judge_for_scoring(name, study_id=study_id)
        except BackendUnavailable as exc:
            return Availability(False, str(exc).removeprefix("learned backend: "))
    if named or study_id is None:  # None: the operator's command line, where any judge may be named
        return AVAILABLE
    if judges_usable_by(study_id).filter(retired_at__isnull=True).exists():
        return AVAILABLE
    return Availability(False, "no trained judge available to this study yet (train one from its gold labels on "
                               "the judges page, or have one shared with it)")


# A judge classifies embedding features (EMBEDDING_MODEL on EMBEDDING_DEVICE) with a model stored under VAR_DIR;
# an item's features come from one encoder call per batch, as for the embedding backend.
DESCRIPTOR = register(BackendDescriptor(
    name="learned",
    queue="scoring-cpu",
    batch_size=256,
    build=get_learned_backend,
    check=_availability,
    settings=("EMBEDDING_MODEL", "EMBEDDING_DEVICE", "VAR_DIR"),
    options={
        "study": Option("study"),
        **{key: Option("text", max_length=100) for key in JUDGE_OPTIONS},
    },
))
