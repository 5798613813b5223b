"""Writes of the judge registry: training (from a study's gold or a labelled file), retiring, sharing.

Training is all or nothing: data that cannot be trained on (a malformed line, fewer than
``MIN_PER_CLASS`` examples of a class, a name in use) raises ``ValidationFailed`` / ``Conflict`` and
writes nothing. The artifact directory is written first and the registry row after; a row always
points at a complete artifact.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.access import get_study_for_researcher, require_researcher
from annotation.models import Study
from concord.errors import Conflict, NotFound, ValidationFailed
from concord.jobs import Progress, run_job
from concord.params import parse_int
from scoring import tasks
from scoring.backends.embedding import PACKAGED_MODEL, get_embedding_backend, resolve_model_dir
from scoring.judges import artifacts, gold
from scoring.judges.features import FEATURE_SETS, needs_encoder
from scoring.judges.selectors import judges_usable_by
from scoring.judges.training import (
    MODEL_TYPES,
    TASKS,
    Example,
    Trained,
    TrainingError,
    check_examples,
    compare,
    read_labelled_file,
)
from scoring.metrics import MetricError
from scoring.models import JudgeTrainJob, TrainedJudge

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
DEFAULT_OPTIONS: dict[str, Any] = {"folds": 5, "model_types": ["logistic"], "feature_sets": list(FEATURE_SETS),
                                   "epochs": 2}
MAX_FOLDS, MAX_EPOCHS = 10, 5


def clean_options(options: dict[str, Any] | None) -> dict[str, Any]:
    out = {**DEFAULT_OPTIONS, **(options or {})}
    unknown = set(out) - set(DEFAULT_OPTIONS)
    if unknown:
        raise ValidationFailed(f"unknown training options: {', '.join(sorted(unknown))}")
    out["folds"] = parse_int(out["folds"], name="folds", minimum=2, maximum=MAX_FOLDS)
    # Cross-encoder training is bounded.
    out["epochs"] = parse_int(out["epochs"], name="epochs", minimum=1, maximum=MAX_EPOCHS)
    for key, allowed in (("model_types", MODEL_TYPES), ("feature_sets", FEATURE_SETS)):
        values = out[key]
        if isinstance(values, str):
            values = [v for v in values.split(",") if v]
        if not isinstance(values, list) or not values or any(v not in allowed for v in values):
            raise ValidationFailed(f"{key} must be a non-empty list of {', '.join(allowed)}")
        out[key] = list(dict.fromkeys(values))
    return out


def _candidates(options: dict[str, Any], task: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for model_type in options["model_types"]:
        if model_type == "cross-encoder":
            out.append(("cross-encoder", "pair-text"))
        else:
            out.extend(("logistic", fs) for fs in options["feature_sets"])
    return out


def _check_name(name: str, owner: Study | None) -> str:
    name = (name or "").strip()
    if not NAME.match(name):
        raise ValidationFailed(
            "a judge name is 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    _refuse_name_in_use(name, owner)
    return name


def _refuse_name_in_use(name: str, owner: Study | None, *, but: int | None = None) -> None:
    """Refuse (409) a name that the owning study already uses: one of its own judges or of those shared with it
    (a run names its judge among these), or, without an owner, one of the judges without a study. Another
    study's judges never count, so the refusal tells nothing about them. ``but``: a judge that does not count."""
    in_use = judges_usable_by(owner.pk) if owner is not None else TrainedJudge.objects.filter(study__isnull=True)
    if in_use.filter(name=name).exclude(pk=but).exists():
        where = f"study {owner.slug!r}" if owner is not None else "the judges without a study"
        raise Conflict(f"a judge named {name!r} already exists in {where}; choose another name")


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValidationFailed(f"task must be one of {', '.join(TASKS)}, got {task!r}")


def _train(examples: list[Example], task: str, options: dict[str, Any], progress: Progress | None) -> Trained:
    candidates = _candidates(options, task)
    encoder = get_embedding_backend() if any(mt == "logistic" and needs_encoder(fs) for mt, fs in candidates) \
        else None
    try:
        base_dir = resolve_model_dir(PACKAGED_MODEL)[0] if any(mt == "cross-encoder" for mt, _ in candidates) \
            else None
        return compare(examples, task=task, candidates=candidates, folds=options["folds"], epochs=options["epochs"],
                       encoder=encoder, progress=progress, base_dir=base_dir)
    except TrainingError as exc:
        raise ValidationFailed(str(exc)) from None
    except MetricError as exc:  # the embedding model is unavailable
        raise ValidationFailed(str(exc)) from None


def _register(trained: Trained, *, name: str, owner: Study | None, actor: AbstractBaseUser | None,
              n_positive: int, n: int, source: dict[str, Any]) -> TrainedJudge:
    key = artifacts.save(trained)
    try:
        with transaction.atomic():
            if owner is not None:
                _lock_names(owner)
            _refuse_name_in_use(name, owner)
            return TrainedJudge.objects.create(
                name=name, study=owner, task=trained.task, data_hash=trained.data_hash,
                model_type=trained.model_type, feature_set=trained.feature_set,
                embedding_identity=trained.embedding_identity[:300], n=n, n_positive=n_positive,
                cv={**trained.evaluation.figures, "folds": trained.evaluation.folds}, comparison=trained.comparison,
                path=key, trained_by=actor, **source,
            )
    except IntegrityError:
        # A judge without a study registered with this name meanwhile (no study row to lock: the constraint
        # decides): the 409 of a name in use; any other broken constraint as it is.
        shutil.rmtree(artifacts.judges_root() / key, ignore_errors=True)
        _refuse_name_in_use(name, owner)
        raise
    except BaseException:
        shutil.rmtree(artifacts.judges_root() / key, ignore_errors=True)
        raise


def _lock_names(study: Study) -> None:
    """Serialise changes of the names a study uses (a judge registered for it, a judge shared with it) on its row,
    so that two of them cannot both find a name free."""
    Study.objects.select_for_update().filter(pk=study.pk).values_list("pk").first()


def judge_train_from_study(*, study: Study, question_key: str, task: str, name: str, actor: AbstractBaseUser | None,
                           positive: Iterable[str] = (), exclude: Iterable[str] = (),
                           options: dict[str, Any] | None = None, progress: Progress | None = None) -> TrainedJudge:
    _check_task(task)
    name = _check_name(name, study)
    opts = clean_options(options)
    positive, exclude = [str(p) for p in positive], [str(e) for e in exclude]
    if task == "kind" and not positive:
        positive = ["simplification"]  # the PlainFact sentence_kind question's values; recorded with the judge
    try:
        examples, _ = gold.examples_from_gold(study, question_key, task, positive=positive, exclude=exclude)
    except TrainingError as exc:
        raise ValidationFailed(str(exc)) from None
    trained = _train(examples, task, opts, progress)
    return _register(trained, name=name, owner=study, actor=actor, n=len(examples),
                     n_positive=sum(e.label for e in examples),
                     source={"source_kind": "study", "source_study": study, "source_question": question_key,
                             "source_positive": positive})


def judge_train_from_file(*, content: bytes, filename: str, task: str, name: str, actor: AbstractBaseUser | None,
                          owner: Study | None = None, options: dict[str, Any] | None = None,
                          progress: Progress | None = None) -> TrainedJudge:
    _check_task(task)
    name = _check_name(name, owner)
    opts = clean_options(options)
    try:
        examples = read_labelled_file(content, filename)
    except TrainingError as exc:
        raise ValidationFailed(str(exc)) from None
    trained = _train(examples, task, opts, progress)
    return _register(trained, name=name, owner=owner, actor=actor, n=len(examples),
                     n_positive=sum(e.label for e in examples),
                     source={"source_kind": "file", "source_file_name": filename[:255],
                             "source_file_sha256": hashlib.sha256(content).hexdigest()})


# --- The console's and API's training job ----------------------------------------------------------------


def judge_train_job_start(*, study: Study, question_key: str, task: str, name: str, actor: AbstractBaseUser,
                          positive: Iterable[str] = (), exclude: Iterable[str] = (),
                          options: dict[str, Any] | None = None) -> JudgeTrainJob:
    """Check what can be checked at once, record the job and send it to a worker after commit."""
    require_researcher(actor, study)
    _check_task(task)
    name = _check_name(name, study)
    opts = clean_options(options)
    try:
        examples, _ = gold.examples_from_gold(study, question_key, task, positive=list(positive),
                                              exclude=list(exclude))
        for model_type, feature_set in _candidates(opts, task):
            check_examples(examples, task, model_type, feature_set)
    except TrainingError as exc:
        raise ValidationFailed(str(exc)) from None
    with transaction.atomic():
        job = JudgeTrainJob.objects.create(
            study=study, name=name, question_key=question_key, task=task, requested_by=actor,
            positive=[str(p) for p in positive], options={**opts, "exclude": [str(e) for e in exclude]},
        )
        tasks.judge_train.delay_on_commit(job.pk)
    return job


def judge_train_job_run(*, job_id: int) -> JudgeTrainJob | None:
    def work(job: JudgeTrainJob, progress: Progress) -> dict[str, Any]:
        if job.judge_id is not None:  # a redelivery after the judge was registered: nothing to redo
            return {}
        options = dict(job.options)
        exclude = options.pop("exclude", [])
        judge = judge_train_from_study(study=job.study, question_key=job.question_key, task=job.task,
                                       name=job.name, actor=job.requested_by, positive=job.positive,
                                       exclude=exclude, options=options, progress=progress)
        JudgeTrainJob.objects.filter(pk=job.pk).update(judge=judge)
        return {"judge": judge}

    return run_job(JudgeTrainJob, job_id, work)


# --- Retiring and sharing --------------------------------------------------------------------------------


def _owned(judge: TrainedJudge, actor: AbstractBaseUser) -> Study:
    """The owning study, once ``actor`` is one of its researchers (only owners retire and share)."""
    if judge.study_id is None:
        raise NotFound("no such judge")
    study = judge.study
    assert study is not None
    require_researcher(actor, study)
    return study


def judge_retire(*, judge: TrainedJudge, actor: AbstractBaseUser) -> TrainedJudge:
    _owned(judge, actor)
    changed = TrainedJudge.objects.filter(pk=judge.pk, retired_at__isnull=True).update(
        retired_at=timezone.now(), retired_by=actor
    )
    if not changed:
        raise Conflict(f"the judge {judge.name!r} is already retired")
    judge.refresh_from_db()
    return judge


def judge_share(*, judge: TrainedJudge, target_slug: str, actor: AbstractBaseUser) -> Study:
    """Share an owned judge with another study the actor is also a researcher of (else 404)."""
    owner = _owned(judge, actor)
    target = get_study_for_researcher(actor, (target_slug or "").strip())
    if target.pk == owner.pk:
        raise ValidationFailed("a study already uses its own judges")
    with transaction.atomic():
        # A study names its judges among its own and those shared with it, so one name must mean one judge
        # there; the actor is a researcher of the target, whose judges they may see.
        _lock_names(target)
        _refuse_name_in_use(judge.name, target, but=judge.pk)
        judge.shared_with.add(target)
    return target
