"""Domain writes of adjudication: disagreement detection, gold versions, consensus rules, aspect decisions.
(Export jobs are written by adjudication.exports.services, validation studies by adjudication.validation.services.)

Every function is keyword-only and takes the acting user explicitly. Authorization of *who may see
the object* is done by the selectors' access helpers before a service is called; services still
refuse actions that the role does not allow (Forbidden) and stale or repeated decisions (Conflict).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from adjudication.consensus import canonical, consensus
from adjudication.models import (
    AdjudicationCase,
    CaseStatus,
    ConsensusRule,
    GoldLabel,
    GoldSource,
)
from annotation import answers
from annotation.access import can_adjudicate, is_researcher
from annotation.item_units import assignment_units
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Label,
    Pool,
    Question,
)
from concord.errors import Conflict, Forbidden, NotFound, ValidationFailed

# Gold written by people stands until a person changes it; detection never overrides it.
HUMAN_SOURCES = {GoldSource.ADJUDICATED, GoldSource.UNRESOLVED, GoldSource.IMPORTED}


# --- Gold -------------------------------------------------------------------------------------


def gold_set(
    *,
    pool_id: int,
    item_id: int,
    unit_key: str,
    question_id: int,
    value: Any,
    source: str,
    adjudicator: AbstractBaseUser | None = None,
    adjudicator_name: str = "",
    rationale: str = "",
    confidence: int | None = None,
    guideline_gap: bool = False,
    case: AdjudicationCase | None = None,
    expected_version: int | None = None,
) -> GoldLabel:
    """Append a new gold version for one unit and make it the current one; older versions are kept.

    ``expected_version`` is the version the caller decided on (0 when there was none yet): if
    another decision landed in between, Conflict is raised and nothing is written. The current
    rows are locked, so two concurrent writers are serialized; when there is no row yet to lock,
    the unique (unit, version) constraint turns the losing insert into a Conflict.
    """
    if source not in GoldSource.values:
        raise ValidationFailed(f"unknown gold source {source!r}")
    if confidence is not None and not 1 <= confidence <= 5:
        raise ValidationFailed("confidence is from 1 (low) to 5 (high)")
    key = {"pool_id": pool_id, "item_id": item_id, "unit_key": unit_key, "question_id": question_id}
    try:
        with transaction.atomic():
            versions = list(GoldLabel.objects.select_for_update().filter(**key).values_list("version", flat=True))
            latest = max(versions, default=0)
            if expected_version is not None and expected_version != latest:
                raise Conflict(
                    f"the gold label changed while you decided "
                    f"(now version {latest}, you saw version {expected_version})",
                    details={"current_version": latest},
                )
            GoldLabel.objects.filter(**key, is_current=True).update(is_current=False)
            return GoldLabel.objects.create(
                **key,
                value=value,
                source=source,
                case=case,
                adjudicator=adjudicator,
                adjudicator_name=adjudicator_name,
                rationale=rationale,
                confidence=confidence,
                guideline_gap=guideline_gap,
                version=latest + 1,
                is_current=True,
            )
    except IntegrityError as exc:
        raise Conflict(
            "another gold decision for this unit was saved at the same time; reload and decide again"
        ) from exc


def case_resolve(
    *,
    case_id: int,
    actor: AbstractBaseUser,
    value: Any = None,
    unresolved: bool = False,
    rationale: str = "",
    confidence: int | None = None,
    guideline_gap: bool = False,
    expected_version: int | None = None,
    revise_reason: str = "",
) -> GoldLabel:
    """Record an adjudicator's decision on a case as a new gold version (re-adjudication appends).

    ``unresolved`` records that the adjudicator could not decide: gold source ``unresolved`` with
    no value, and the case leaves the open queue. A case already decided (resolved or unresolved) takes
    another decision only as an explicit revision: ``revise_reason`` says why, and is kept at the head of
    the new version's rationale ("Revision: …"); without it the decision is refused (409), so that a
    repeated save never writes a second gold version unnoticed. Precondition: the caller may see the case.
    """
    with transaction.atomic():
        try:
            case = (
                AdjudicationCase.objects.select_for_update().select_related("pool__study", "question").get(pk=case_id)
            )
        except AdjudicationCase.DoesNotExist:
            raise NotFound("no such case") from None
        if not can_adjudicate(actor, case.pool.study):
            raise Forbidden("only adjudicators and researchers of the study decide cases")
        if case.status == CaseStatus.WITHDRAWN:
            raise Conflict("this case was withdrawn: the annotators agreed after the item was reopened")
        reopened = Assignment.objects.filter(pool_id=case.pool_id, item_id=case.item_id).exclude(
            status__in=(AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED, AssignmentStatus.WITHDRAWN)
        )
        if reopened.exists():
            raise Conflict(
                "an annotator is working on this item (reopened, or assigned since the case opened); "
                "decide the case once their answers are submitted"
            )
        rationale = rationale.strip()
        if case.status in (CaseStatus.RESOLVED, CaseStatus.UNRESOLVED):
            reason = revise_reason.strip()
            if not reason:
                raise Conflict(
                    "this case is already decided: to change its gold, revise it and say why",
                    details={"field": "revise_reason"},
                )
            rationale = f"Revision: {reason}" + (f"\n{rationale}" if rationale else "")
        question = case.question
        if unresolved:
            decided, source, status = None, GoldSource.UNRESOLVED, CaseStatus.UNRESOLVED
        else:
            units = assignment_units(item_id=case.item_id)
            try:
                decided = answers.normalise(question, value, alignment_targets=units.alignment_targets(question.scope))
            except answers.InvalidValue as exc:
                raise ValidationFailed(f"{question.prompt}: {exc}", details={"field": "value"}) from None
            if decided is None:
                raise ValidationFailed("choose a value, or mark the case unresolved", details={"field": "value"})
            source, status = GoldSource.ADJUDICATED, CaseStatus.RESOLVED
        gold = gold_set(
            pool_id=case.pool_id,
            item_id=case.item_id,
            unit_key=case.unit_key,
            question_id=case.question_id,
            value=decided,
            source=source,
            adjudicator=actor,
            rationale=rationale,
            confidence=confidence,
            guideline_gap=guideline_gap,
            case=case,
            expected_version=expected_version,
        )
        case.status = status
        case.save(update_fields=["status"])
        return gold


# --- Disagreement detection -------------------------------------------------------------------


@dataclass(frozen=True)
class Detection:
    ready: bool
    gold_written: int = 0
    cases_opened: int = 0
    cases_withdrawn: int = 0


def item_disagreements_detect(*, pool_id: int, item_id: int) -> Detection:
    """Turn the submitted labels of one item in one pool into gold or adjudication cases.

    Called inside the submitting transaction, on annotation.signals.assignment_submitted (connected in
    adjudication/apps.py). Nothing happens until every non-skipped assignment of
    the item in the pool is submitted and at least two are (one annotator cannot agree or disagree);
    withdrawn work (a researcher took the item back) is not waited for and never counts.
    Then, for every question of the pool and every unit anyone labelled: unanimity makes gold
    (``unanimous``); a strict majority makes gold (``majority``) where the pool's ConsensusRule for
    the question allows it; anything else opens one case (unique per pool, item, unit, question).
    Idempotent: a second call finds the same cases and gold and writes nothing new. Gold written by
    a person (adjudicated, unresolved, imported) is never replaced here. After an item is reopened and
    submitted again, an open case whose unit now has a consensus is withdrawn (status ``withdrawn``).
    """
    assignments = list(
        Assignment.objects.filter(pool_id=pool_id, item_id=item_id)
        .exclude(status__in=(AssignmentStatus.SKIPPED, AssignmentStatus.WITHDRAWN))
        .order_by("pk")
    )
    submitted = [a for a in assignments if a.status == AssignmentStatus.SUBMITTED]
    if len(submitted) != len(assignments) or len(submitted) < 2:
        return Detection(ready=False)

    questions = {q.pk: q for q in Question.objects.filter(pools=pool_id)}
    majority_for = set(
        ConsensusRule.objects.filter(pool_id=pool_id, majority=True).values_list("question_id", flat=True)
    )
    by_unit: dict[tuple[int, str], dict[int, Label]] = {}
    for label in Label.objects.filter(assignment__in=submitted, question_id__in=questions):
        by_unit.setdefault((label.question_id, label.unit_key), {})[label.assignment_id] = label

    current_gold = {
        (g.question_id, g.unit_key): g
        for g in GoldLabel.objects.filter(pool_id=pool_id, item_id=item_id, is_current=True)
    }
    existing_cases = {
        (c.question_id, c.unit_key): c for c in AdjudicationCase.objects.filter(pool_id=pool_id, item_id=item_id)
    }

    gold_written = cases_opened = cases_withdrawn = 0
    for (question_id, unit_key), labels in sorted(by_unit.items()):
        question = questions[question_id]
        values = [labels[a.pk].value if a.pk in labels else None for a in submitted]
        result = consensus(values, kind=question.kind, majority=question_id in majority_for)
        if result.outcome == "empty":
            continue
        if result.outcome in ("unanimous", "majority"):
            stale = existing_cases.get((question_id, unit_key))
            if stale is not None and stale.status == CaseStatus.OPEN:
                # An item reopened and submitted again: the disagreement is gone, so is the case's question.
                stale.status = CaseStatus.WITHDRAWN
                stale.save(update_fields=["status"])
                cases_withdrawn += 1
            gold = current_gold.get((question_id, unit_key))
            if gold is not None and (
                gold.source in HUMAN_SOURCES
                or (
                    gold.source == result.outcome
                    and canonical(question.kind, gold.value) == canonical(question.kind, result.value)
                )
            ):
                continue
            gold_set(
                pool_id=pool_id,
                item_id=item_id,
                unit_key=unit_key,
                question_id=question_id,
                value=result.value,
                source=result.outcome,
                rationale=f"{result.support} of {result.n} annotators agreed",
            )
            gold_written += 1
            continue
        case = existing_cases.get((question_id, unit_key))
        if case is None:
            case = AdjudicationCase.objects.create(
                pool_id=pool_id,
                item_id=item_id,
                unit_key=unit_key,
                question_id=question_id,
                shuffle_seed=secrets.randbits(62),
            )
            cases_opened += 1
        case.labels.add(*labels.values())
    return Detection(ready=True, gold_written=gold_written, cases_opened=cases_opened, cases_withdrawn=cases_withdrawn)


def consensus_rule_set(*, pool_id: int, question_id: int, majority: bool, actor: AbstractBaseUser) -> ConsensusRule:
    """Allow or forbid gold by strict majority for one question of a pool (only with overlap k ≥ 3)."""
    pool = Pool.objects.select_related("study").get(pk=pool_id)
    if not is_researcher(actor, pool.study):
        raise Forbidden("only researchers of the study change consensus rules")
    if not pool.questions.filter(pk=question_id).exists():
        raise ValidationFailed("the question is not answered by this pool")
    if majority and pool.overlap < 3:
        raise ValidationFailed(
            f"a majority needs at least three annotators per item; the pool's overlap is {pool.overlap}"
        )
    rule, _ = ConsensusRule.objects.update_or_create(
        pool=pool, question_id=question_id, defaults={"majority": majority, "updated_by": actor}
    )
    return rule


# --- Proposed aspects ---------------------------------------------------------------------------


def aspect_decide(*, aspect_id: int, actor: AbstractBaseUser, accept: bool) -> Aspect:
    """Accept or reject an aspect an annotator proposed. Accepting versions the item's aspect set.

    The decider must be a second person (not the proposer) with adjudicator or researcher rights.
    An accepted aspect joins the set at version = the set's latest version + 1, so reports and
    metrics can still compute against any earlier version; rejected aspects stay, marked rejected.
    """
    with transaction.atomic():
        try:
            aspect = Aspect.objects.select_related("item__study").get(pk=aspect_id)
        except Aspect.DoesNotExist:
            raise NotFound("no such aspect") from None
        # Lock the item's whole aspect set: two acceptances must not get the same version.
        siblings = list(Aspect.objects.select_for_update().filter(item_id=aspect.item_id).order_by("pk"))
        aspect = next(a for a in siblings if a.pk == aspect_id)
        if not can_adjudicate(actor, aspect.item.study):
            raise Forbidden("only adjudicators and researchers of the study decide proposed aspects")
        if aspect.status != AspectStatus.PROPOSED:
            raise Conflict(f"this aspect was already {aspect.status}", details={"status": aspect.status})
        if aspect.proposed_by_id is not None and aspect.proposed_by_id == actor.pk:
            raise Forbidden("a proposed aspect must be accepted or rejected by a second person, not its proposer")
        if accept:
            latest = max(
                [a.version for a in siblings if a.status == AspectStatus.ACCEPTED]
                + [a.retired_in_version for a in siblings if a.retired_in_version is not None],
                default=0,
            )
            aspect.status = AspectStatus.ACCEPTED
            aspect.version = latest + 1
        else:
            aspect.status = AspectStatus.REJECTED
        aspect.decided_by = actor
        aspect.decided_at = timezone.now()
        aspect.save(update_fields=["status", "version", "decided_by", "decided_at"])
        return aspect
