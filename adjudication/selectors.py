"""Reads of adjudication: access helpers, the adjudicator's queue and case page, human measures.

Access helpers fetch and authorize together. The study itself is fetched by ``annotation.access``
(``get_study_for_researcher``, ``get_study_for_adjudicator``: strangers 404, members without the role
403); an object named by its own id (a case, an aspect, a pool, an export) is answered 404 to everyone
who may not see it, members of its study included (``concord.access.require_object_role``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from adjudication.models import AdjudicationCase, CaseStatus, ConsensusRule, ExportJob, GoldLabel
from adjudication.stats import measures
from annotation import answers as answer_vocabulary
from annotation import units as unit_keys
from annotation.access import ADJUDICATING_ROLES
from annotation.models import (
    Aspect,
    AspectStatus,
    Assignment,
    AssignmentStatus,
    Chunk,
    Item,
    Label,
    Pool,
    PoolMembership,
    Question,
    Role,
    Sentence,
    Study,
)
from concord.access import require_object_role
from concord.errors import NotFound
from scoring.models import Score

# --- Access helpers -----------------------------------------------------------------------------


def get_case_for_adjudicator(user: AbstractBaseUser, case_id: int) -> AdjudicationCase:
    case = AdjudicationCase.objects.select_related("pool__study", "item", "question").filter(pk=case_id).first()
    if case is None:
        raise NotFound("no such case")
    require_object_role(user, case.pool.study_id, *ADJUDICATING_ROLES, what="case")
    return case


def get_aspect_for_adjudicator(user: AbstractBaseUser, aspect_id: int) -> Aspect:
    aspect = Aspect.objects.select_related("item__study").filter(pk=aspect_id).first()
    if aspect is None:
        raise NotFound("no such aspect")
    require_object_role(user, aspect.item.study_id, *ADJUDICATING_ROLES, what="aspect")
    return aspect


def get_pool_for_researcher(user: AbstractBaseUser, pool_id: int) -> Pool:
    pool = Pool.objects.select_related("study").filter(pk=pool_id).first()
    if pool is None:
        raise NotFound("no such pool")
    require_object_role(user, pool.study_id, Role.RESEARCHER, what="pool")
    return pool


def consensus_rules(*, study: Study) -> list[dict[str, Any]]:
    """Per pool and question: whether a strict majority makes gold (only offered when k ≥ 3)."""
    majority = set(ConsensusRule.objects.filter(pool__study=study, majority=True).values_list("pool_id", "question_id"))
    return [
        {"pool": pool, "questions": [(q, (pool.pk, q.pk) in majority) for q in pool.questions.all()]}
        for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name")
    ]


def get_export_for_researcher(user: AbstractBaseUser, job_id: int) -> ExportJob:
    job = ExportJob.objects.select_related("study").filter(pk=job_id).first()
    if job is None:
        raise NotFound("no such export")
    require_object_role(user, job.study_id, Role.RESEARCHER, what="export")
    return job


# --- Queue --------------------------------------------------------------------------------------


def case_queue(*, study: Study, status: str = CaseStatus.OPEN) -> QuerySet[AdjudicationCase]:
    cases = AdjudicationCase.objects.filter(pool__study=study)
    if status:
        cases = cases.filter(status=status)
    return (
        cases.select_related("pool", "item", "question").annotate(n_labels=Count("labels")).order_by("opened_at", "pk")
    )


def case_counts(*, study: Study) -> dict[str, int]:
    rows = AdjudicationCase.objects.filter(pool__study=study).values("status").annotate(n=Count("pk"))
    counts = {status: 0 for status in CaseStatus.values}
    counts.update({row["status"]: row["n"] for row in rows})
    return counts


def proposed_aspects(*, study: Study) -> QuerySet[Aspect]:
    return (
        Aspect.objects.filter(item__study=study, status=AspectStatus.PROPOSED)
        .select_related("item", "proposed_by")
        .order_by("created_at", "pk")
    )


def case_next_open(*, study: Study, after_case_id: int) -> AdjudicationCase | None:
    return (
        AdjudicationCase.objects.filter(pool__study=study, status=CaseStatus.OPEN)
        .exclude(pk=after_case_id)
        .order_by("opened_at", "pk")
        .first()
    )


# --- Case page ----------------------------------------------------------------------------------


@dataclass
class AnnotatorAnswer:
    pseudonym: str
    value: Any
    display: str
    active_seconds: float
    answered: bool


@dataclass
class UnitContext:
    kind: str  # item, sentence, source, chunk, aspect
    description: str
    answer_before: str = ""
    answer_marked: str = ""
    answer_after: str = ""
    source_before: str = ""
    source_marked: str = ""
    source_after: str = ""
    chunk_rank: int | None = None
    aspect: Aspect | None = None


@dataclass
class CaseDetail:
    case: AdjudicationCase
    item: Item
    question: Question
    unit: UnitContext
    answers: list[AnnotatorAnswer]
    chunks: list[Chunk]
    aspects: list[Aspect]
    proposed: list[Aspect]
    gold_history: list[GoldLabel]
    scores: list[Any] = field(default_factory=list)
    scores_shown: bool = False

    @property
    def current_gold(self) -> GoldLabel | None:
        return next((g for g in self.gold_history if g.is_current), None)

    @property
    def current_version(self) -> int:
        return max((g.version for g in self.gold_history), default=0)


def _unit_context(item: Item, unit_key: str, sentences: list[Sentence], aspects: list[Aspect]) -> UnitContext:
    if not unit_keys.is_valid(unit_key):
        return UnitContext("item", unit_key, answer_before=item.answer)
    unit = unit_keys.parse(unit_key)
    kind, rest = unit.kind, str(unit.ref)
    if kind == unit_keys.ITEM:
        return UnitContext("item", "the answer as a whole", answer_before=item.answer)
    if kind in (unit_keys.ANSWER_SENTENCE, unit_keys.SOURCE_SENTENCE):
        part = "answer" if kind == unit_keys.ANSWER_SENTENCE else "source"
        sentence = next((s for s in sentences if s.part == part and str(s.index) == rest), None)
        text = item.answer if part == "answer" else item.source
        if sentence is None:
            return UnitContext("sentence", f"{part} sentence {rest} (no longer present)", answer_before=item.answer)
        before, marked, after = text[: sentence.start], text[sentence.start : sentence.end], text[sentence.end :]
        if part == "answer":
            return UnitContext("sentence", f"sentence {sentence.index + 1}", before, marked, after)
        return UnitContext(
            "source",
            f"source sentence {sentence.index + 1}",
            answer_before=item.answer,
            source_before=before,
            source_marked=marked,
            source_after=after,
        )
    if kind == unit_keys.CHUNK:
        return UnitContext("chunk", f"retrieved chunk {rest}", answer_before=item.answer, chunk_rank=int(rest))
    if kind == unit_keys.ASPECT:
        aspect = next((a for a in aspects if str(a.pk) == rest), None)
        return UnitContext("aspect", "expected aspect", answer_before=item.answer, aspect=aspect)
    return UnitContext("item", unit_key, answer_before=item.answer)


def case_detail(*, case: AdjudicationCase) -> CaseDetail:
    """Everything the case page shows. Annotators appear only under their pool pseudonym, in an
    order shuffled with the case's own seed (stable across reloads, different between cases), so
    an adjudicator cannot learn to trust or discount a position."""
    item, question, pool = case.item, case.question, case.pool
    sentences = list(Sentence.objects.filter(item=item).order_by("part", "index"))
    chunks = list(Chunk.objects.filter(item=item).order_by("rank"))
    aspects = list(Aspect.objects.filter(item=item).select_related("proposed_by").order_by("pk"))
    pseudonyms = dict(PoolMembership.objects.filter(pool=pool).values_list("user_id", "pseudonym"))
    labels = {
        label.assignment_id: label
        for label in Label.objects.filter(
            assignment__pool=pool, assignment__item=item, question=question, unit_key=case.unit_key
        )
    }
    answers = []
    for assignment in Assignment.objects.filter(pool=pool, item=item, status=AssignmentStatus.SUBMITTED).order_by("pk"):
        label = labels.get(assignment.pk)
        value = label.value if label else None
        answers.append(
            AnnotatorAnswer(
                pseudonym=pseudonyms.get(assignment.annotator_id, "unknown annotator"),
                value=value,
                display=answer_vocabulary.display(question, value) if label else "no answer (not asked or left empty)",
                active_seconds=round(assignment.active_seconds),
                answered=value is not None,
            )
        )
    random.Random(case.shuffle_seed).shuffle(answers)
    gold_history = list(
        GoldLabel.objects.filter(pool=pool, item=item, unit_key=case.unit_key, question=question)
        .select_related("adjudicator")
        .order_by("-version")
    )
    detail = CaseDetail(
        case=case,
        item=item,
        question=question,
        unit=_unit_context(item, case.unit_key, sentences, aspects),
        answers=answers,
        chunks=chunks,
        aspects=[a for a in aspects if a.status == AspectStatus.ACCEPTED],
        proposed=[a for a in aspects if a.status == AspectStatus.PROPOSED],
        gold_history=gold_history,
    )
    if pool.study.show_scores_to_adjudicators:
        detail.scores_shown = True
        detail.scores = list(
            Score.objects.filter(item=item, unit_key__in={case.unit_key, unit_keys.ITEM})
            .select_related("run")
            .order_by("run__metric", "unit_key")
        )
    return detail


# --- Human measures -----------------------------------------------------------------------------

GOLD = "gold"


@dataclass(frozen=True)
class PerItemMeasure:
    """One human measure over the items of a pool, from one rater (an annotator's pseudonym) or gold.

    ``values`` maps the item's external id to the measure; ``undefined`` maps the external id of
    every item where it is undefined to the reason (kept apart so that no caller mistakes an
    undefined item for a zero).
    """

    measure: str
    rater: str
    values: dict[str, float]
    undefined: dict[str, str]


MEASURES = {
    "human_cf": "Human conversational faithfulness (from information_bearing and grounded sentence labels)",
    "human_aspect_coverage": "Human aspect coverage (covered expected aspects / expected aspects)",
    "human_chunk_relevance": "Human chunk relevance (relevant retrieved chunks / retrieved chunks)",
}
# The question keys each measure reads, from annotation.presets, in order of preference, with the
# answers that count: ICAT's aspect_covered or K-QA's aspect_entailment; ASTRID's context_relevant or
# PubHealthBench's supports_answer.
ASPECT_QUESTIONS = {"aspect_covered": ("yes",), "aspect_entailment": ("entailment",)}
CHUNK_QUESTIONS = {"context_relevant": ("yes",), "supports_answer": ("yes",)}
CF_QUESTIONS = ("information_bearing", "grounded")


def human_measure_raters(*, pool_id: int) -> list[str]:
    """The raters a measure can be computed for: every member's pseudonym, then ``"gold"``."""
    return [
        *PoolMembership.objects.filter(pool_id=pool_id).order_by("pseudonym").values_list("pseudonym", flat=True),
        GOLD,
    ]


def human_measures_available(*, pool_id: int) -> list[str]:
    """The measures whose questions the pool answers."""
    keys = set(Question.objects.filter(pools=pool_id).values_list("key", flat=True))
    available = []
    if set(CF_QUESTIONS) <= keys:
        available.append("human_cf")
    if keys & ASPECT_QUESTIONS.keys():
        available.append("human_aspect_coverage")
    if keys & CHUNK_QUESTIONS.keys():
        available.append("human_chunk_relevance")
    return available


def _answers_by_item(
    *, pool: Pool, rater: str, question_ids: Iterable[int], items: tuple[int, int] | None = None
) -> tuple[dict[int, dict[tuple[int, str], Any]], set[int]]:
    """(item id → {(question id, unit key): value}, the item ids the rater judged); ``items``: only the items with
    ids in [low, high)."""
    question_ids = list(question_ids)
    answers: dict[int, dict[tuple[int, str], Any]] = defaultdict(dict)
    in_range = Q() if items is None else Q(item_id__gte=items[0], item_id__lt=items[1])
    if rater == GOLD:
        rows = GoldLabel.objects.filter(
            in_range, pool=pool, is_current=True, question_id__in=question_ids
        ).values_list("item_id", "question_id", "unit_key", "value")
        for item_id, question_id, unit_key, value in rows.iterator(chunk_size=5000):
            answers[item_id][(question_id, unit_key)] = value
        return answers, set(answers)
    user_id = PoolMembership.objects.filter(pool=pool, pseudonym=rater).values_list("user_id", flat=True).first()
    if user_id is None:
        raise NotFound(f"no annotator {rater!r} in pool {pool.name!r}")
    judged = set(
        Assignment.objects.filter(
            in_range, pool=pool, annotator_id=user_id, status=AssignmentStatus.SUBMITTED
        ).values_list("item_id", flat=True)
    )
    labels_in_range = Q() if items is None else Q(
        assignment__item_id__gte=items[0], assignment__item_id__lt=items[1]
    )
    rows = Label.objects.filter(
        labels_in_range,
        assignment__pool=pool,
        assignment__annotator_id=user_id,
        assignment__status=AssignmentStatus.SUBMITTED,
        question_id__in=question_ids,
    ).values_list("assignment__item_id", "question_id", "unit_key", "value")
    for item_id, question_id, unit_key, value in rows.iterator(chunk_size=5000):
        answers[item_id][(question_id, unit_key)] = value
    return answers, judged


def human_measure_values(
    *, pool_id: int, measure: str, rater: str = GOLD, items: tuple[int, int] | None = None
) -> PerItemMeasure:
    """Per-item values of a human measure (see adjudication.stats.measures) for D's reports.

    ``measure`` is one of MEASURES; ``rater`` is an annotator's pool pseudonym (their submitted
    labels only) or ``"gold"`` (the current gold labels of the pool; units still in adjudication, or
    adjudicated ``unresolved``, make the item undefined). The aspect set is the item's current
    accepted set. ``items``: only the items with ids in [low, high) (an item's value depends on its
    own labels alone). Returns PerItemMeasure keyed by item external id.
    """
    if measure not in MEASURES:
        raise NotFound(f"unknown human measure {measure!r}; choose from {', '.join(MEASURES)}")
    pool = Pool.objects.get(pk=pool_id)
    questions = {q.key: q for q in Question.objects.filter(pools=pool)}
    values: dict[str, float] = {}
    undefined: dict[str, str] = {}

    if measure == "human_cf":
        missing = [k for k in CF_QUESTIONS if k not in questions]
        if missing:
            raise NotFound(f"pool {pool.name!r} does not answer {', '.join(missing)}")
        ib, gr = questions["information_bearing"].pk, questions["grounded"].pk
        answers, judged = _answers_by_item(pool=pool, rater=rater, question_ids=[ib, gr], items=items)
        units: dict[int, list[int]] = defaultdict(list)
        for item_id, index in (
            Sentence.objects.filter(item_id__in=judged, part="answer").order_by("index").values_list("item_id", "index")
        ):
            units[item_id].append(index)
        compute = {
            item_id: measures.conversational_faithfulness(
                [
                    (
                        answers[item_id].get((ib, unit_keys.sentence(i))),
                        answers[item_id].get((gr, unit_keys.sentence(i))),
                    )
                    for i in units[item_id]
                ]
            )
            for item_id in judged
        }
    else:
        table = ASPECT_QUESTIONS if measure == "human_aspect_coverage" else CHUNK_QUESTIONS
        key = next((k for k in table if k in questions), None)
        if key is None:
            raise NotFound(f"pool {pool.name!r} answers none of {', '.join(table)}")
        question = questions[key]
        answers, judged = _answers_by_item(pool=pool, rater=rater, question_ids=[question.pk], items=items)
        units = defaultdict(list)
        if measure == "human_aspect_coverage":
            rows = (
                Aspect.objects.filter(item_id__in=judged, status=AspectStatus.ACCEPTED, retired_in_version__isnull=True)
                .order_by("pk")
                .values_list("item_id", "pk")
            )
            for item_id, pk in rows:
                units[item_id].append(unit_keys.aspect(pk))
            fn = measures.aspect_coverage
            compute = {
                item_id: fn([answers[item_id].get((question.pk, u)) for u in units[item_id]], covered=table[key])
                for item_id in judged
            }
        else:
            for item_id, rank in (
                Chunk.objects.filter(item_id__in=judged).order_by("rank").values_list("item_id", "rank")
            ):
                units[item_id].append(unit_keys.chunk(rank))
            compute = {
                item_id: measures.chunk_relevance(
                    [answers[item_id].get((question.pk, u)) for u in units[item_id]], relevant=table[key]
                )
                for item_id in judged
            }
    external = dict(Item.objects.filter(pk__in=compute).values_list("pk", "external_id"))
    for item_id, result in compute.items():
        if result.value is None:
            undefined[external[item_id]] = result.reason
        else:
            values[external[item_id]] = result.value
    return PerItemMeasure(measure=measure, rater=rater, values=values, undefined=undefined)
