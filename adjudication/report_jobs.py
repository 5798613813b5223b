"""Report jobs: every slow report a person waits for runs as a ``ReportJob`` in a worker — one family, one
registry of kinds, one task.

``KINDS`` names each kind with its *family* (the routes that start and poll it), how a request's parameters
are read (``parse``: 400 naming the field, 404 for another study's pool or run), how they are keyed on a
fingerprint of the data they read (``key``: :func:`adjudication.analysis.loading.data_version`), and its
computation (``compute``, over :mod:`adjudication.analysis`):

* family ``report`` (``reports/jobs/``) — agreement and validity bootstrap intervals;
* family ``analysis`` (``reports/analysis-jobs/``) — model-as-rater bootstraps, outcome cross-validations;
* family ``planning`` — planning simulations (a pool's plan, a validation study's plan and precision over
  time, a plan from expected figures), started by the planning pages and API themselves
  (:func:`planning_job`), under a bound on how many run at once.

A job is keyed on (study, a hash of its kind and keyed parameters), so a result computed before labels,
gold or scores changed is never shown as the current one, and asking twice (or a redelivered task) never
duplicates work. :func:`job_start` queues ``adjudication.tasks.reports.report_job_run`` on commit; the task
calls :func:`job_run`, which runs the kind's computation through ``concord.jobs.run_job`` (claim, throttled
progress, done or failed). The ``*_current`` helpers answer a page or the API with the finished job's
result for exactly these parameters, else with point estimates. Pages show a job through one fragment
(``adjudication.web.jobs``).

Planning jobs are a cache that is never stale: each is keyed on its inputs and, where it reads data, on a
fingerprint of that data, so a plan is computed once and then served from its job. :func:`planning_job`
finds or queues one; at most ``PLANNING_MAX_RUNNING_PER_STUDY`` per study and ``PLANNING_MAX_RUNNING`` on the
site are queued or running at once, and a further one is refused (429).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from adjudication import tasks
from adjudication.analysis import outcomes, planning, raters
from adjudication.analysis.access import get_pool_for_report, get_question_for_report
from adjudication.analysis.agreement import agreement_params_parse, agreement_report
from adjudication.analysis.loading import data_version, metric_source_get
from adjudication.analysis.params import bootstrap_params, id_param
from adjudication.analysis.validity import ValidityParams, validity_params_parse, validity_report
from adjudication.models import ReportJob, ReportJobKind, ReportJobStatus, ValidationStudy
from annotation.models import Item, Pool, Study
from concord.errors import NotFound, TooManyRequests, ValidationFailed
from concord.jobs import Progress, run_job
from scoring.models import ScoreRun

# The families: which routes start and poll a kind (docs above).
REPORT = "report"
ANALYSIS = "analysis"
PLANNING = "planning"


def params_hash(kind: str, params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps({"kind": kind, **params}, sort_keys=True).encode()).hexdigest()[:40]


# --- lifecycle -----------------------------------------------------------------------------------------


def job_start(*, study: Study, kind: str, params: dict[str, Any], user: AbstractBaseUser) -> ReportJob:
    """Queue the job for these (already keyed) parameters, or return the one that already has (or is
    computing) this result; a failed job is queued again."""
    key = params_hash(kind, params)
    with transaction.atomic():
        job, created = ReportJob.objects.select_for_update().get_or_create(
            study=study, params_hash=key, defaults={"kind": kind, "params": params, "requested_by": user}
        )
        if not created and job.status != ReportJobStatus.FAILED:
            return job
        if not created:
            job.status, job.error, job.n_done, job.result = ReportJobStatus.QUEUED, "", 0, None
            job.requested_by = user
            job.save(update_fields=["status", "error", "n_done", "result", "requested_by"])
        tasks.reports.report_job_run.delay_on_commit(job.pk)
    return job


def job_run(*, job_id: int) -> None:
    """Compute a queued job, writing progress as it goes; the result replaces, never appends."""

    def work(job: ReportJob, progress: Progress) -> dict[str, Any]:
        return {"result": KINDS[job.kind].compute(job, progress)}

    run_job(ReportJob, job_id, work)


def job_get(*, study: Study, job_id: int, kinds: tuple[str, ...] = (), what: str = "report job") -> ReportJob:
    """The study's job (of one of ``kinds`` when given); 404 for another study's or an unknown job."""
    jobs = ReportJob.objects.filter(study=study, pk=job_id)
    job = (jobs.filter(kind__in=list(kinds)) if kinds else jobs).first()
    if job is None:
        raise NotFound(f"no such {what}")
    return job


def job_as_dict(job: ReportJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "params": job.params,
        "n_done": job.n_done,
        "n_total": job.n_total,
        "progress": job.progress,
        "error": job.error or None,
        "result": job.result,
    }


def _latest(*, study: Study, kind: str, keyed: dict[str, Any]) -> ReportJob | None:
    """The job for exactly these parameters (bootstrap size and seed included), if one was asked for."""
    return ReportJob.objects.filter(study=study, params_hash=params_hash(kind, keyed)).first()


def _current(job: ReportJob | None, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    if job is not None and job.status == ReportJobStatus.DONE and job.result:
        return {**job.result, "bootstrap_status": "done"}
    return {**compute(), "bootstrap_status": job.status if job else "not requested"}


# --- the kinds: how a request is read and keyed, and how a worker computes it ----------------------------


def _agreement_parse(study: Study, data: Any) -> dict[str, Any]:
    n_boot, seed = bootstrap_params(data.get("n_boot"), data.get("seed"))
    pool = get_pool_for_report(study, id_param(data.get("pool"), "pool must be a pool id"))
    question = get_question_for_report(pool, (data.get("question") or "").strip())
    return agreement_params_parse(pool_id=pool.pk, question=question.key, query=data) | {
        "n_boot": n_boot, "seed": seed
    }


def _agreement_key(study: Study, params: dict[str, Any]) -> dict[str, Any]:
    pool = get_pool_for_report(study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    return {**params, "data_version": data_version(pool=pool, question=question)}


def _validity_parse(study: Study, data: Any) -> dict[str, Any]:
    n_boot, seed = bootstrap_params(data.get("n_boot"), data.get("seed"))
    return {**validity_params_parse(study=study, query=data).as_dict(), "n_boot": n_boot, "seed": seed}


def _validity_key(study: Study, params: dict[str, Any]) -> dict[str, Any]:
    metric_source_get(study=study, key=params["source"])
    pool = get_pool_for_report(study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    return {**params, "data_version": data_version(pool=pool, question=question, source=params["source"])}


def _raters_parse(study: Study, data: Any) -> dict[str, Any]:
    n_boot, seed = bootstrap_params(data.get("n_boot"), data.get("seed"))
    return rater_job_params(raters.rater_params_parse(study=study, query=data), n_boot, seed)


def _raters_key(study: Study, params: dict[str, Any]) -> dict[str, Any]:
    pool = get_pool_for_report(study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    return {**params, "data_version": data_version(pool=pool, question=question, source=f"run:{params['run']}")}


def _outcome_parse(study: Study, data: Any) -> dict[str, Any]:
    return outcomes.outcome_params_parse(study=study, query=data).as_dict()


def _outcome_key(study: Study, params: dict[str, Any]) -> dict[str, Any]:
    """The labels' fingerprint, and the newest score run and the item count (the features come from them)."""
    pool = get_pool_for_report(study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    version = data_version(pool=pool, question=question, source=None)
    latest = ScoreRun.objects.filter(study=study).order_by("-id").values_list("pk", "finished_at").first()
    items = Item.objects.filter(study=study).count()
    return {**params, "data_version": hashlib.sha256(f"{version}|{latest}|{items}".encode()).hexdigest()[:16]}


def _agreement_result(job: ReportJob, progress: Progress) -> dict[str, Any]:
    params = job.params
    pool = get_pool_for_report(job.study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    return agreement_report(
        pool=pool,
        question=question,
        weights=params.get("weights"),
        n_boot=int(params["n_boot"]),
        seed=int(params["seed"]),
        progress=progress,
        include_controls=bool(params.get("include_controls")),
        exclude_flagged=bool(params.get("exclude_flagged")),
    )


def _validity_result(job: ReportJob, progress: Progress) -> dict[str, Any]:
    params = job.params
    vp = ValidityParams(
        source=params["source"],
        pool_id=int(params["pool"]),
        question=params["question"],
        target=params.get("target") or "gold",
        positive=params.get("positive"),
        compare=params.get("compare"),
        include_controls=bool(params.get("include_controls")),
        exclude_flagged=bool(params.get("exclude_flagged")),
    )
    return validity_report(
        study=job.study, params=vp, n_boot=int(params["n_boot"]), seed=int(params["seed"]), progress=progress
    )


def _raters_result(job: ReportJob, progress: Progress) -> dict[str, Any]:
    return raters.rater_report(
        study=job.study,
        params=rater_params_from_job(job.params),
        n_boot=int(job.params["n_boot"]),
        seed=int(job.params["seed"]),
        progress=progress,
    )


def _outcome_result(job: ReportJob, progress: Progress) -> dict[str, Any]:
    return outcomes.outcome_report(study=job.study, params=outcome_params_from_job(job.params), progress=progress)


def _planning_result(job: ReportJob, progress: Progress) -> dict[str, Any]:
    params = job.params
    what = params["what"]
    if what == "figures":
        return planning.plan_compute(params["inputs"], progress=progress)
    if what == "pool":
        pool = Pool.objects.get(pk=int(params["pool"]), study=job.study)
        return planning.pool_plan(pool=pool, half_width=float(params["half_width"]), progress=progress)
    vs = ValidationStudy.objects.select_related("target_pool", "target_question", "metric_run").get(
        pk=int(params["validation"]), study=job.study
    )
    return planning.validation_monitoring(vs=vs, half_width=float(params["half_width"]), progress=progress)


Parse = Callable[[Study, Any], dict[str, Any]]
Key = Callable[[Study, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class JobKind:
    """One kind of report job. ``parse`` reads a request's parameters (refusing what cannot make a job);
    ``key`` adds the fingerprint of the data they read, checking again that the study's pool, question and
    source exist; ``compute`` is what the worker runs. Planning jobs are started by their own service
    (:func:`planning_job`), so they have neither."""

    family: str
    compute: Callable[[ReportJob, Progress], dict[str, Any]]
    parse: Parse | None = None
    key: Key | None = None


KINDS: dict[str, JobKind] = {
    ReportJobKind.AGREEMENT: JobKind(REPORT, _agreement_result, _agreement_parse, _agreement_key),
    ReportJobKind.VALIDITY: JobKind(REPORT, _validity_result, _validity_parse, _validity_key),
    ReportJobKind.RATERS: JobKind(ANALYSIS, _raters_result, _raters_parse, _raters_key),
    ReportJobKind.OUTCOME: JobKind(ANALYSIS, _outcome_result, _outcome_parse, _outcome_key),
    ReportJobKind.PLANNING: JobKind(PLANNING, _planning_result),
}


def family_kinds(family: str) -> tuple[str, ...]:
    return tuple(kind for kind, spec in KINDS.items() if spec.family == family)


def _requested(family: str, kind: str) -> tuple[Parse, Key]:
    """How a request to the routes of ``family`` reads and keys a job of ``kind``; 400 for another kind."""
    spec = KINDS.get(kind)
    if spec is None or spec.family != family or spec.parse is None or spec.key is None:
        kinds = [k for k in family_kinds(family) if KINDS[k].parse is not None]
        raise ValidationFailed(f"kind must be {' or '.join(kinds)}")
    return spec.parse, spec.key


# --- starting a job from a request, and the finished result a page shows -------------------------------


def job_params_parse(*, study: Study, family: str, data: Any) -> tuple[str, dict[str, Any]]:
    """The kind and the keyed parameters of a request to start a job of ``family`` (400 naming the field)."""
    kind = (data.get("kind") or "").strip()
    parse, key = _requested(family, kind)
    return kind, key(study, parse(study, data))


def job_request(
    *, study: Study, family: str, kind: str, params: dict[str, Any], user: AbstractBaseUser
) -> ReportJob:
    """Queue a job of ``family`` for these parameters, keyed on the current data, or return the job that
    already has (or is computing) this result. Keyed on (study, parameters, data version)."""
    _, key = _requested(family, kind)
    return job_start(study=study, kind=kind, params=key(study, params), user=user)


def job_latest(*, study: Study, family: str, kind: str, params: dict[str, Any]) -> ReportJob | None:
    """The job for exactly these parameters on the current data, if one was asked for."""
    _, key = _requested(family, kind)
    return _latest(study=study, kind=kind, keyed=key(study, params))


def agreement_report_with_bootstrap(*, study: Study, params: dict[str, Any]) -> tuple[dict[str, Any], ReportJob | None]:
    """Point estimates, or the finished bootstrap for exactly these parameters and the current data."""
    pool = get_pool_for_report(study, int(params["pool"]))
    question = get_question_for_report(pool, params["question"])
    keyed = {**params, "data_version": data_version(pool=pool, question=question)}
    job = _latest(study=study, kind=ReportJobKind.AGREEMENT, keyed=keyed)
    return _current(
        job,
        lambda: agreement_report(
            pool=pool, question=question, weights=params.get("weights"),
            include_controls=bool(params.get("include_controls")), exclude_flagged=bool(params.get("exclude_flagged")),
        ),
    ), job


def validity_report_with_bootstrap(
    *, study: Study, params: ValidityParams, n_boot: int, seed: int
) -> tuple[dict[str, Any], ReportJob | None]:
    pool = get_pool_for_report(study, params.pool_id)
    question = get_question_for_report(pool, params.question)
    keyed = {
        **params.as_dict(),
        "n_boot": n_boot,
        "seed": seed,
        "data_version": data_version(pool=pool, question=question, source=params.source),
    }
    job = _latest(study=study, kind=ReportJobKind.VALIDITY, keyed=keyed)
    return _current(job, lambda: validity_report(study=study, params=params)), job


def rater_params_from_job(params: dict[str, Any]) -> raters.RaterParams:
    return raters.RaterParams(
        run_id=int(params["run"]),
        pool_id=int(params["pool"]),
        question=params["question"],
        field=params["field"],
        threshold=params.get("threshold"),
        mapping=dict(params.get("mapping") or {}),
        target=params["target"],
    )


def outcome_params_from_job(params: dict[str, Any]) -> outcomes.OutcomeParams:
    return outcomes.OutcomeParams(
        pool_id=int(params["pool"]),
        question=params["question"],
        features=list(params["features"]),
        target=params["target"],
        models=list(params["models"]),
        n_splits=int(params["n_splits"]),
        n_repeats=int(params["n_repeats"]),
        seed=int(params["seed"]),
        n_boot=int(params["n_boot"]),
        subgroup=params.get("subgroup"),
        positive=params.get("positive"),
    )


def rater_job_params(params: raters.RaterParams, n_boot: int, seed: int) -> dict[str, Any]:
    return {**params.as_dict(), "n_boot": n_boot, "seed": seed}


def rater_report_current(*, study: Study, query: Any) -> tuple[dict[str, Any], ReportJob | None, dict[str, Any]]:
    """Point estimates, or the finished bootstrap for these parameters on the current data."""
    params = raters.rater_params_parse(study=study, query=query)
    n_boot, seed = bootstrap_params(query.get("n_boot"), query.get("seed"))
    job_params = rater_job_params(params, n_boot, seed)
    job = job_latest(study=study, family=ANALYSIS, kind=ReportJobKind.RATERS, params=job_params)
    return _current(job, lambda: raters.rater_report(study=study, params=params)), job, job_params


def outcome_current(*, study: Study, query: Any) -> tuple[outcomes.OutcomeParams, ReportJob | None]:
    params = outcomes.outcome_params_parse(study=study, query=query)
    return params, job_latest(study=study, family=ANALYSIS, kind=ReportJobKind.OUTCOME, params=params.as_dict())


# --- planning simulations --------------------------------------------------------------------------------

# The PostgreSQL advisory lock that serialises starting planning jobs, so that two requests cannot both see
# room under the bound and both start one ("plan" in ASCII).
_PLANNING_LOCK_KEY = 0x706C616E


def _planning_lock() -> None:
    """Inside the transaction: PostgreSQL's advisory lock; SQLite's transactions are IMMEDIATE
    (settings.DATABASES), so the transaction already holds the database's write lock."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_PLANNING_LOCK_KEY])


def _planning_stale(job: ReportJob, now: Any) -> bool:
    """Queued or running longer than the stale limit (its worker died), or failed that long ago: computed again."""
    return job.created_at < now - timedelta(seconds=settings.PLANNING_JOB_STALE_SECONDS)


def planning_job(*, study: Study, params: dict[str, Any], user: AbstractBaseUser) -> ReportJob:
    """The planning job for these parameters: the finished one, the one computing it, or a new one queued.

    A failed job is returned as it is (its reason shown), and computed again only once it is stale. A new
    or stale job is queued only while fewer than ``PLANNING_MAX_RUNNING_PER_STUDY`` planning jobs are
    queued or running for the study and fewer than ``PLANNING_MAX_RUNNING`` on the site; otherwise
    ``TooManyRequests`` (429) says so and nothing is queued."""
    key = params_hash(ReportJobKind.PLANNING, params)
    found = ReportJob.objects.filter(study=study, params_hash=key).first()
    now = timezone.now()
    if found is not None and (found.status == ReportJobStatus.DONE or not _planning_stale(found, now)):
        return found
    with transaction.atomic():
        _planning_lock()
        job = ReportJob.objects.select_for_update().filter(study=study, params_hash=key).first()
        if job is not None and (job.status == ReportJobStatus.DONE or not _planning_stale(job, now)):
            return job
        active = ReportJob.objects.filter(
            kind=ReportJobKind.PLANNING,
            status__in=[ReportJobStatus.QUEUED, ReportJobStatus.RUNNING],
            created_at__gte=now - timedelta(seconds=settings.PLANNING_JOB_STALE_SECONDS),
        )
        per_study, site = settings.PLANNING_MAX_RUNNING_PER_STUDY, settings.PLANNING_MAX_RUNNING
        if active.filter(study=study).count() >= per_study:
            raise TooManyRequests(
                f"{per_study} planning simulations are already running for this study; "
                "try again when one of them has finished"
            )
        if active.count() >= site:
            raise TooManyRequests(
                f"{site} planning simulations are already running on this site; try again in a minute"
            )
        if job is None:
            job = ReportJob.objects.create(
                study=study, kind=ReportJobKind.PLANNING, params=params, params_hash=key, requested_by=user
            )
        else:
            ReportJob.objects.filter(pk=job.pk).update(
                status=ReportJobStatus.QUEUED, error="", n_done=0, n_total=0, result=None, requested_by=user,
                created_at=now, started_at=None, finished_at=None,
            )
            job.refresh_from_db()
        tasks.reports.report_job_run.delay_on_commit(job.pk)
    return job


def figures_plan_job(*, study: Study, data: Any, user: AbstractBaseUser) -> ReportJob:
    """A plan from expected figures (the API): inputs checked now (400), the simulation in a worker."""
    inputs = planning.plan_inputs(data)
    return planning_job(study=study, params={"what": "figures", "inputs": inputs}, user=user)


def pool_plan_job(*, pool: Pool, half_width: float, user: AbstractBaseUser) -> ReportJob:
    params = {
        "what": "pool",
        "pool": pool.pk,
        "half_width": half_width,
        "design": planning.pool_design(pool),
    }
    return planning_job(study=pool.study, params=params, user=user)


def validation_plan_job(*, vs: ValidationStudy, half_width: float, user: AbstractBaseUser) -> ReportJob:
    params = {
        "what": "validation",
        "validation": vs.pk,
        "half_width": half_width,
        "data_version": planning.validation_data_version(vs),
    }
    return planning_job(study=vs.study, params=params, user=user)
