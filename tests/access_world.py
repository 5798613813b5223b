"""A study filled with one real object of every type that a route names, for the access tests.

``build_world`` makes a study with a researcher (its owner), an adjudicator, two annotators in one pool
(the first owns the assignment; the pool has a stopping rule, so its plan and the validation study's
plan have a precision target, and allows reopening), an item with a chunk, a second item whose
assignment the annotator submitted and reopened (a row of their history), an aspect proposal, an
adjudication case, two score runs (one to compare with), a knowledge base, an export, a validation
study, a report job, an analysis job, an import job, a data manager's bulk action, a trained judge and
its training job, and an invitation to the study's annotator role bound to the annotator (only they may
see or answer it). ``fill`` turns a route pattern into a path naming those objects.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver
from django.utils import timezone

from adjudication.models import AdjudicationCase, BulkAction, BulkActionKind, ExportJob, ReportJob, ValidationStudy
from annotation.models import Aspect, AssignmentReopening, AssignmentStatus, ImportJob, Role, StudyInvitation
from concord.jobs import JobStatus
from scoring.models import JudgeTrainJob, KnowledgeBase, ScoreRun, TrainedJudge
from tests import factories

PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")


def routes(patterns: list, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def param_names(route: str) -> list[str]:
    return [m.group("name") for m in PARAM.finditer(route)]


def build_world(slug: str, tag: str) -> dict[str, Any]:
    researcher = factories.make_user(f"{tag}-researcher")
    study = factories.make_study(owner=researcher, slug=slug)
    adjudicator = factories.make_user(f"{tag}-adjudicator")
    factories.grant(study, adjudicator, Role.ADJUDICATOR)
    question = factories.make_question(study, "pf")
    item = factories.make_item(study, f"{tag}-item")
    factories.make_chunk(item)
    pool = factories.make_pool(
        study, f"{tag}-pool", questions=[question], stop_at_half_width=0.1, reopen_allowed=True
    )
    annotator = factories.make_user(f"{tag}-annotator")
    mate = factories.make_user(f"{tag}-mate")
    membership = factories.add_member(pool, annotator)
    factories.add_member(pool, mate)
    assignment = factories.make_assignment(pool, item, annotator)
    # A second item the annotator submitted and then reopened: a row of their history (/history/).
    done_item = factories.make_item(study, f"{tag}-item-2")
    factories.make_chunk(done_item)
    submitted_at = timezone.now() - timezone.timedelta(hours=1)
    reopened = factories.make_assignment(
        pool, done_item, annotator, status=AssignmentStatus.STARTED, submitted_at=submitted_at, reopened_count=1
    )
    AssignmentReopening.objects.create(
        assignment=reopened, actor=annotator, submitted_at=submitted_at, at=timezone.now()
    )
    aspect = Aspect.objects.create(
        item=item, text="the dose", origin="proposed", status="proposed", proposed_by=annotator
    )
    case = AdjudicationCase.objects.create(pool=pool, item=item, unit_key="item", question=question)
    run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", created_by=researcher, status="done"
    )
    kb = KnowledgeBase.objects.create(study=study, name=f"{tag}-kb")
    export = ExportJob.objects.create(study=study, format="jsonl", requested_by=researcher)
    validation = ValidationStudy.objects.create(
        study=study, name=f"{tag}-validation", template="astrid", metric_run=run, target_pool=pool,
        target_question=question, created_by=researcher,
    )
    report_job = ReportJob.objects.create(
        study=study, kind="agreement", params_hash=f"{tag}-params", requested_by=researcher
    )
    analysis_job = ReportJob.objects.create(
        study=study, kind="raters", params_hash=f"{tag}-raters", requested_by=researcher
    )
    import_job = ImportJob.objects.create(study=study, filename="items.jsonl", stored_name="x", requested_by=researcher)
    other_run = ScoreRun.objects.create(
        study=study, metric="ra", metric_version="1", backend="lexical", created_by=researcher, status="done"
    )
    bulk_action = BulkAction.objects.create(
        study=study, actor=researcher, action=BulkActionKind.REQUEUE, pool=pool, item_ids=[item.external_id],
        n_items=1, n_assignments=0,
    )
    judge = TrainedJudge.objects.create(
        name=f"{tag}-judge", study=study, task="supports", source_kind="study", source_study=study,
        source_question=question.key, source_positive=["yes"], data_hash="0" * 64, model_type="logistic",
        feature_set="lexical", n=10, n_positive=5, cv={"auc": 0.5}, path=f"judges/{tag}-judge", trained_by=researcher,
    )
    judge_job = JudgeTrainJob.objects.create(
        study=study, name=f"{tag}-judge", question_key=question.key, task="supports", positive=["yes"],
        status=JobStatus.DONE, judge=judge, requested_by=researcher,
    )
    # Accepting it changes nothing the other routes depend on: the annotator already holds the role.
    now = timezone.now()
    invitation = StudyInvitation.objects.create(
        study=study, role=Role.ANNOTATOR, invited=annotator.username, user=annotator, invited_by=researcher,
        updated_by=researcher, created_at=now, expires_at=now + timezone.timedelta(days=1),
    )
    return {
        "study": study, "researcher": researcher, "adjudicator": adjudicator, "annotator": annotator, "mate": mate,
        "question": question, "item": item, "pool": pool, "membership": membership, "assignment": assignment,
        "aspect": aspect, "case": case, "run": run, "kb": kb, "export": export, "validation": validation,
        "report_job": report_job, "analysis_job": analysis_job, "import_job": import_job,
        "reopened": reopened, "other_run": other_run, "bulk_action": bulk_action, "judge": judge,
        "judge_job": judge_job, "invitation": invitation,
    }


# The object each parameter names, by route prefix for the ambiguous ``pk``.
_PK_BY_PREFIX = (
    ("assignments/", "assignment"), ("api/assignments/", "assignment"),
    ("adjudication/cases/", "case"), ("api/adjudication/cases/", "case"),
    ("adjudication/aspects/", "aspect"), ("api/adjudication/aspects/", "aspect"),
    ("adjudication/pools/", "pool"), ("api/adjudication/pools/", "pool"),
    ("adjudication/exports/", "export"), ("api/adjudication/exports/", "export"),
    ("adjudication/validation/", "validation"), ("api/adjudication/validation-studies/", "validation"),
)  # fmt: skip


def object_of(route: str, name: str) -> str:
    """Which world object the parameter ``name`` of ``route`` names."""
    if name == "pk":
        for prefix, key in sorted(_PK_BY_PREFIX, key=lambda p: -len(p[0])):
            if route.startswith(prefix):
                return key
        raise AssertionError(f"no object known for <pk> of {route}")
    if name == "job_id":
        if "/judges/jobs/" in route:
            return "judge_job"
        if "analysis-jobs" in route:
            return "analysis_job"
        if "reports/jobs" in route:
            return "report_job"
        if "imports" in route:
            return "import_job"
        return "export"
    known = {
        "pool_id": "pool", "run_id": "run", "kb_id": "kb", "membership_id": "membership", "slug": "study",
        "external_id": "item", "key": "question", "question": "question",
        "judge_id": "judge", "invitation_id": "invitation",
    }  # fmt: skip
    if name in known:
        return known[name]
    raise AssertionError(f"no object known for <{name}> of {route}")


def fill(route: str, world: dict[str, Any], missing: str | None = None) -> str:
    """The path of ``route`` naming ``world``'s objects (``missing``: that parameter names no object)."""

    def value(match: re.Match) -> str:
        name = match.group("name")
        if name == "fmt":
            return "json" if route.startswith("adjudication/validation/") else "csv"
        if name == "slug" and route.startswith("help/"):
            return "import-format"  # a help page (docs/import-format.md), not a study
        if name == "name" and "/items/examples/" in route:
            return "astrid.jsonl"  # the import format page's example files: a name from a fixed list
        if name == "measure":
            return "human_cf"
        if name == "provider":
            return "hospital"  # a single sign-on provider's name (none is configured here: 404; tests/test_sso.py)
        if name == "uidb64":
            return "MQ"
        if name == "token":
            return "x-y"
        if name == missing:
            return "999999999" if match.group("conv") == "int" else "no-such-thing"
        key = object_of(route, name)
        obj = world[key]
        if key == "study":
            return obj.slug
        if key == "item":
            return obj.external_id
        if key == "question":
            return obj.key
        return str(obj.pk)

    path = "/" + PARAM.sub(value, route)
    if route.endswith("/compare/"):  # a run side by side with another run of its study, named in the query
        path += f"?with={world['other_run'].pk}"
    return path
