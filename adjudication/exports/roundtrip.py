"""Import a JSONL export (adjudication.exports.writers) into a new study: the round trip of a study.

The items, sentences, chunks and aspects go through annotation.imports (the one import service, all
or nothing, in batches); everything else rides along in the same transaction through its
``extra_writer`` callback: aspect status / origin / version, assignments, every label under its
pseudonymous annotator, every gold version with its provenance, cases, and scores with their runs.

Annotators become inactive accounts that cannot log in (the labels are theirs, not the importer's),
one per pool pseudonym. Adjudicators are kept by name (``GoldLabel.adjudicator_name``): an export may
come from another deployment, and an imported decision must not grant anybody a role here.

annotation.imports validates the records strictly and reads the file twice (scan, then write), so
the importer hands it a reduced record (its documented fields plus ``gold`` and ``scores``) and
keeps the full record in a bounded buffer until the callback has written it.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from adjudication.exports.records import FORMAT_VERSION
from adjudication.models import AdjudicationCase, ConsensusRule, GoldLabel
from annotation import imports, units
from annotation.models import (
    Aspect,
    Assignment,
    Item,
    Label,
    LabelHistory,
    Pool,
    PoolMembership,
    Question,
    Role,
    Study,
    StudyRole,
)
from concord.errors import Conflict, ValidationFailed
from scoring.models import Score, ScoreRun

BUFFER = 8 * imports.BATCH_SIZE


def _read_header(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as stream:
        first = stream.readline()
    try:
        header = json.loads(first)
    except ValueError:
        raise ValidationFailed(f"{path.name}: line 1 is not JSON; is this a Concord JSONL export?") from None
    if not isinstance(header, dict) or header.get("concord_export") != FORMAT_VERSION:
        raise ValidationFailed(
            f"{path.name}: line 1 is not a Concord export header (expected concord_export={FORMAT_VERSION})"
        )
    for key in ("study", "questions", "pools", "score_runs"):
        if key not in header:
            raise ValidationFailed(f"{path.name}: the export header lacks {key!r}")
    if header.get("filters"):
        raise ValidationFailed(
            f"{path.name}: this export is limited ({header['filters']}) and cannot rebuild a study; "
            "export the study without limits to move it"
        )
    return header


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


class _Importer:
    def __init__(self, *, study: Study, header: dict[str, Any], path: Path) -> None:
        self.study = study
        self.path = path
        self.now = timezone.now()
        self.buffer: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.questions: dict[str, Question] = {}
        for n, spec in enumerate(header["questions"]):
            fields = {
                k: spec[k]
                for k in (
                    "key",
                    "scope",
                    "kind",
                    "prompt",
                    "help_text",
                    "options",
                    "condition",
                    "required",
                    "min_value",
                    "max_value",
                )
                if k in spec
            }
            self.questions[spec["key"]] = Question.objects.create(study=study, order=spec.get("order", n), **fields)
        self.pools: dict[str, Pool] = {}
        self.members: dict[tuple[str, str], AbstractBaseUser] = {}
        self.person: dict[str, AbstractBaseUser] = {}
        User = get_user_model()
        for spec in header["pools"]:
            pool = Pool.objects.create(
                study=study,
                name=spec["name"],
                overlap=spec.get("overlap", 1),
                visibility=spec.get("visibility", "nothing"),
                seed=spec.get("seed", 0),
                reservation_minutes=spec.get("reservation_minutes", 30),
            )
            pool.questions.set([self.questions[k] for k in spec.get("questions", [])])
            for key in spec.get("majority_rule", []):
                ConsensusRule.objects.create(pool=pool, question=self.questions[key], majority=True)
            self.pools[pool.name] = pool
            for pseudonym in spec.get("members", []):
                base = f"imported-{study.pk}-{slugify(pool.name)}-{slugify(pseudonym)}"[:140] or f"imported-{study.pk}"
                username, n = base, 1
                while User.objects.filter(username=username).exists():
                    n += 1
                    username = f"{base}-{n}"
                user = User(username=username, is_active=False)
                user.set_unusable_password()
                user.save()
                StudyRole.objects.get_or_create(study=study, user=user, role=Role.ANNOTATOR)
                PoolMembership.objects.create(
                    pool=pool, study=study, user=user, independent=study.independent_pools, pseudonym=pseudonym
                )
                self.members[(pool.name, pseudonym)] = user
        for (_pool_name, pseudonym), user in sorted(self.members.items()):
            self.person.setdefault(pseudonym, user)
        self.runs: dict[str, Any] = {}
        for spec in header["score_runs"]:
            run = ScoreRun.objects.create(
                study=study,
                metric=spec["metric"],
                metric_version=spec["metric_version"],
                backend=spec["backend"],
                model_identity=spec.get("model_identity", ""),
                parameters=spec.get("parameters") or {},
                status=spec.get("status", "done"),
            )
            self.runs[spec["run"]] = run

    # -- the record source handed to annotation.imports --------------------------------------------

    def source(self) -> Iterator[tuple[int, Any]]:
        with open(self.path, encoding="utf-8") as stream:
            stream.readline()
            for number, line in enumerate(stream, start=2):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    yield number, imports.RowError("line", number, "", f"not valid JSON: {exc.msg}")
                    continue
                if not isinstance(record, dict):
                    yield number, imports.RowError("line", number, "", "a record must be a JSON object")
                    continue
                self.buffer[str(record.get("id", "")).strip()] = record
                while len(self.buffer) > BUFFER:
                    self.buffer.popitem(last=False)
                yield number, self._reduced(record)

    @staticmethod
    def _reduced(record: dict[str, Any]) -> dict[str, Any]:
        out = {
            k: record[k] for k in ("id", "question", "answer", "source", "scope", "system", "metadata") if k in record
        }
        out["contexts"] = [
            {"id": c.get("id", ""), "text": c.get("text"), "is_target": bool(c.get("is_target", False))}
            for c in record.get("contexts", [])
        ]
        out["aspects"] = [
            {"text": a.get("text"), "importance": a.get("importance", "must_have")} for a in record.get("aspects", [])
        ]
        # Always present, so the callback runs for every item (annotation.imports calls it when a
        # record has gold or scores).
        out["gold"] = list(record.get("gold", []))
        out["scores"] = list(record.get("scores", []))
        return out

    # -- the extra_writer callback -----------------------------------------------------------------

    def write(self, item: Item, raw: dict[str, Any]) -> None:
        record = self.buffer.pop(item.external_id, None)
        if record is None:
            raise ValidationFailed(
                f"item {item.external_id!r}: its record left the import buffer; nothing was imported"
            )
        where = f"item {item.external_id!r}"
        aspects = list(Aspect.objects.filter(item=item).order_by("pk"))
        if len(aspects) != len(record.get("aspects", [])):
            raise ValidationFailed(f"{where}: aspects were not created one per exported aspect")
        for aspect, spec in zip(aspects, record.get("aspects", []), strict=True):
            aspect.origin = spec.get("origin", aspect.origin)
            aspect.status = spec.get("status", aspect.status)
            aspect.version = spec.get("version", aspect.version)
            aspect.retired_in_version = spec.get("retired_in_version")
            aspect.proposed_by = self.person.get(spec.get("proposed_by")) if spec.get("proposed_by") else None
        Aspect.objects.bulk_update(aspects, ["origin", "status", "version", "retired_in_version", "proposed_by"])

        def unit(key: str) -> str:
            try:
                parsed = units.parse(key)
            except units.InvalidUnitKey:
                return key
            if parsed.kind != units.ASPECT:
                return key
            index = parsed.ref
            if index is None or not 0 <= index < len(aspects):
                raise ValidationFailed(f"{where}: unit {key} names no aspect")
            return units.aspect(aspects[index].pk)

        def member(pool: str, pseudonym: str) -> AbstractBaseUser:
            try:
                return self.members[(pool, pseudonym)]
            except KeyError:
                raise ValidationFailed(f"{where}: annotator {pseudonym!r} is not listed in pool {pool!r}") from None

        assignments: dict[tuple[str, str], Assignment] = {}
        for spec in record.get("assignments", []):
            assignments[(spec["pool"], spec["annotator"])] = Assignment(
                pool=self.pools[spec["pool"]],
                item=item,
                annotator=member(spec["pool"], spec["annotator"]),
                status=spec["status"],
                active_seconds=spec.get("active_seconds", 0.0),
                submitted_at=_when(spec.get("submitted_at")),
            )
        Assignment.objects.bulk_create(assignments.values())
        labels = []
        for spec in record.get("labels", []):
            assignment = assignments.get((spec["pool"], spec["annotator"]))
            if assignment is None:
                raise ValidationFailed(f"{where}: a label of {spec['annotator']!r} has no assignment")
            labels.append(
                Label(
                    assignment=assignment,
                    question=self.questions[spec["question"]],
                    unit_key=unit(spec["unit"]),
                    value=spec["value"],
                    version=spec.get("version", 1),
                    updated_by=assignment.annotator,
                    updated_at=self.now,
                )
            )
        Label.objects.bulk_create(labels)
        LabelHistory.objects.bulk_create(
            LabelHistory(
                label=lab,
                old_value=None,
                new_value=lab.value,
                old_version=None,
                new_version=lab.version,
                actor=lab.updated_by,
                at=self.now,
            )
            for lab in labels
        )
        cases = {}
        for spec in record.get("cases", []):
            cases[(spec["pool"], spec["question"], unit(spec["unit"]))] = AdjudicationCase(
                pool=self.pools[spec["pool"]],
                item=item,
                question=self.questions[spec["question"]],
                unit_key=unit(spec["unit"]),
                status=spec["status"],
            )
        AdjudicationCase.objects.bulk_create(cases.values())
        for case, spec in zip(cases.values(), record.get("cases", []), strict=True):
            case.opened_at = _when(spec.get("opened_at")) or self.now
        AdjudicationCase.objects.bulk_update(cases.values(), ["opened_at"])
        for case in cases.values():
            case.labels.add(
                *(
                    lab
                    for lab in labels
                    if lab.assignment.pool_id == case.pool_id
                    and lab.question_id == case.question_id
                    and lab.unit_key == case.unit_key
                )
            )
        gold = []
        for spec in raw.get("gold", []):
            key = (spec["pool"], spec["question"], unit(spec["unit"]))
            gold.append(
                GoldLabel(
                    pool=self.pools[spec["pool"]],
                    item=item,
                    question=self.questions[spec["question"]],
                    unit_key=key[2],
                    value=spec["value"],
                    version=spec["version"],
                    is_current=spec["is_current"],
                    source=spec["source"],
                    adjudicator_name=spec.get("adjudicator") or "",
                    rationale=spec.get("rationale", ""),
                    confidence=spec.get("confidence"),
                    guideline_gap=bool(spec.get("guideline_gap")),
                    case=cases.get(key) if spec.get("case_status") else None,
                )
            )
        GoldLabel.objects.bulk_create(gold)
        # auto_now_add stamped the import time; the decision's own time is the provenance.
        for row, spec in zip(gold, raw.get("gold", []), strict=True):
            row.created_at = _when(spec.get("created_at")) or self.now
        GoldLabel.objects.bulk_update(gold, ["created_at"])
        Score.objects.bulk_create(
            Score(
                run=self.runs[spec["run"]],
                item=item,
                unit_key=unit(spec["unit"]),
                value=spec["value"],
                state=spec["state"],
                details=spec.get("details") or {},
            )
            for spec in raw.get("scores", [])
        )


def study_import_export(*, path: Path, slug: str, owner: AbstractBaseUser, name: str = "") -> Study:
    """Create study ``slug`` from a JSONL export; all or nothing (one transaction)."""
    path = Path(path)
    header = _read_header(path)
    if Study.objects.filter(slug=slug).exists():
        raise Conflict(f"a study with slug {slug!r} already exists; the round trip creates a new one")
    spec = header["study"]
    with transaction.atomic():
        study = Study.objects.create(
            name=name or f"{spec['name']} (imported)",
            slug=slug,
            owner=owner,
            guidelines=spec.get("guidelines", ""),
            protocol_presets=spec.get("protocol_presets", []),
            blind_system=spec.get("blind_system", True),
            hidden_metadata_fields=spec.get("hidden_metadata_fields", []),
            visible_metadata_fields=spec.get("visible_metadata_fields", []),
            independent_pools=spec.get("independent_pools", True),
            show_scores_to_adjudicators=spec.get("show_scores_to_adjudicators", False),
            licence=spec.get("licence", ""),
        )
        StudyRole.objects.create(study=study, user=owner, role=Role.RESEARCHER)
        importer = _Importer(study=study, header=header, path=path)
        imports.records_import(
            study=study,
            source=importer.source,
            filename=path.name,
            actor=owner,
            where="line",
            adapter="concord-export",
            extra_writer=importer.write,
        )
    return study


def study_canonical(study: Study) -> dict[str, dict]:
    """Labels, gold, cases, aspects and scores of a study keyed by stable ids (item external id,
    pool name, pseudonym, question key, unit with aspects by position), never by database ids —
    so two studies can be compared after a round trip."""
    positions: dict[int, str] = {}
    aspects: dict[tuple, tuple] = {}
    for item in Item.objects.filter(study=study).prefetch_related("aspects"):
        for i, a in enumerate(sorted(item.aspects.all(), key=lambda a: a.pk)):
            positions[a.pk] = units.aspect(i)
            proposer = (
                PoolMembership.objects.filter(study=study, user_id=a.proposed_by_id)
                .order_by("pool__name")
                .values_list("pseudonym", flat=True)
                .first()
                if a.proposed_by_id
                else None
            )
            aspects[(item.external_id, i)] = (
                a.text,
                a.importance,
                a.origin,
                a.status,
                a.version,
                a.retired_in_version,
                proposer,
            )

    def unit(key: str) -> str:
        parsed = units.parse(key) if units.is_valid(key) else None
        if parsed is not None and parsed.kind == units.ASPECT and parsed.ref is not None:
            return positions.get(parsed.ref, key)
        return key

    pseudonym = {(m.pool_id, m.user_id): m.pseudonym for m in PoolMembership.objects.filter(study=study)}
    labels = {
        (
            lab.assignment.item.external_id,
            lab.assignment.pool.name,
            pseudonym[(lab.assignment.pool_id, lab.assignment.annotator_id)],
            lab.question.key,
            unit(lab.unit_key),
        ): (json.dumps(lab.value, sort_keys=True), lab.version)
        for lab in Label.objects.filter(assignment__pool__study=study).select_related(
            "assignment__item", "assignment__pool", "question"
        )
    }
    assignments = {
        (a.item.external_id, a.pool.name, pseudonym[(a.pool_id, a.annotator_id)]): (a.status, a.active_seconds)
        for a in Assignment.objects.filter(pool__study=study).select_related("item", "pool")
    }
    gold = {
        (g.item.external_id, g.pool.name, g.question.key, unit(g.unit_key), g.version): (
            json.dumps(g.value, sort_keys=True),
            g.is_current,
            g.source,
            g.adjudicator_name or (g.adjudicator.get_username() if g.adjudicator else ""),
            g.rationale,
            g.confidence,
            g.guideline_gap,
            g.case.status if g.case else None,
            g.created_at.isoformat(),
        )
        for g in GoldLabel.objects.filter(item__study=study).select_related(
            "item", "pool", "question", "adjudicator", "case"
        )
    }
    cases = {
        (c.item.external_id, c.pool.name, c.question.key, unit(c.unit_key)): (c.status, c.labels.count())
        for c in AdjudicationCase.objects.filter(item__study=study).select_related("item", "pool", "question")
    }
    scores = {
        (
            s.item.external_id,
            s.run.metric,
            s.run.metric_version,
            s.run.backend,
            s.run.model_identity,
            unit(s.unit_key),
        ): (
            s.value,
            s.state,
            json.dumps(s.details, sort_keys=True),
        )
        for s in Score.objects.filter(item__study=study).select_related("item", "run")
    }
    return {
        "aspects": aspects,
        "assignments": assignments,
        "labels": labels,
        "gold": gold,
        "cases": cases,
        "scores": scores,
    }
