"""Reads for scoring: access helpers, the plain-data items a metric scores, run progress and scores.

Access helpers fetch and authorize in one place. Scores are researcher-only: the study is fetched by
``annotation.access.get_study_for_researcher`` (an annotator or adjudicator of the study gets 403, they know
the study exists; anyone else 404); an object named by its own id (a run, a knowledge base) is 404 to
everyone who is not a researcher of its study.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from annotation import units
from annotation.access import get_study_for_researcher
from annotation.models import (
    Aspect,
    AspectStatus,
    AssignmentStatus,
    Chunk,
    Item,
    Label,
    Role,
    Sentence,
    Study,
)
from concord.access import require_object_role
from concord.errors import NotFound
from scoring.backends import BACKENDS
from scoring.metrics import AspectInput, ChunkInput, ItemInput
from scoring.models import KnowledgeBase, Score, ScoreRun, ScoreState

# The protocol questions whose human answers metrics may read (annotation/presets.py): every chunk
# annotators marked as supporting the answer (multi-label relevance, PubHealthBench critics' point),
# and whether a summary sentence restates the source or elaborates on it (PlainFact).
SUPPORTS_QUESTION = "supports_answer"
SENTENCE_KIND_QUESTION = "sentence_kind"
_YES = {"yes", "true", "1", "supports", "relevant"}

User = AbstractBaseUser | AnonymousUser


# --- Access -----------------------------------------------------------------------------------------


def get_run_for_researcher(user: User, run_id: int) -> ScoreRun:
    run = ScoreRun.objects.select_related("study", "knowledge_base", "created_by").filter(pk=run_id).first()
    if run is None:
        raise NotFound("no such score run")
    require_object_role(user, run.study_id, Role.RESEARCHER, what="score run")
    return run


def get_knowledge_base_for_researcher(user: User, kb_id: int) -> KnowledgeBase:
    kb = KnowledgeBase.objects.select_related("study").filter(pk=kb_id).first()
    if kb is None:
        raise NotFound("no such knowledge base")
    require_object_role(user, kb.study_id, Role.RESEARCHER, what="knowledge base")
    return kb


def get_item_for_researcher(user: User, slug: str, external_id: str) -> Item:
    study = get_study_for_researcher(user, slug)
    item = Item.objects.filter(study=study, external_id=external_id).first()
    if item is None:
        raise NotFound("no such item")
    return item


# --- What metrics read -------------------------------------------------------------------------------


def _is_yes(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _YES


def _human_labels(item_ids: list[int], question_key: str, scope: str) -> dict[int, dict[str, list[Any]]]:
    """Submitted human labels of one question, by item and unit key (every annotator of every pool)."""
    rows = Label.objects.filter(
        assignment__item_id__in=item_ids,
        assignment__status=AssignmentStatus.SUBMITTED,
        question__key=question_key,
        question__scope=scope,
    ).values_list("assignment__item_id", "unit_key", "value")
    out: dict[int, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for item_id, unit_key, value in rows:
        if value is not None:
            out[item_id][unit_key].append(value)
    return out


def _units_of_kind(votes: dict[str, list[Any]], kind: str) -> list[tuple[int, list[Any]]]:
    """The votes on units of one kind (``units.CHUNK``, ``units.ANSWER_SENTENCE``), by unit number."""
    out = []
    for unit_key, values in votes.items():
        unit = units.parse(unit_key)
        if unit.kind == kind and unit.ref is not None:
            out.append((unit.ref, values))
    return out


def _human_relevant_ranks(votes: dict[str, list[Any]]) -> list[int] | None:
    """Chunks that a strict majority of the labels on that chunk mark as supporting the answer."""
    if not votes:
        return None
    ranks = []
    for rank, values in _units_of_kind(votes, units.CHUNK):
        if sum(_is_yes(v) for v in values) * 2 > len(values):
            ranks.append(rank)
    return sorted(ranks)


def _sentence_kinds(votes: dict[str, list[Any]]) -> dict[int, str] | None:
    """Majority kind per answer sentence; a tie leaves the sentence out (undecided, not guessed)."""
    if not votes:
        return None
    kinds: dict[int, str] = {}
    for index, values in _units_of_kind(votes, units.ANSWER_SENTENCE):
        counts = Counter(str(v) for v in values).most_common()
        if len(counts) == 1 or counts[0][1] > counts[1][1]:
            kinds[index] = counts[0][0]
    return kinds or None


def item_inputs(item_ids: Iterable[int]) -> dict[int, ItemInput]:
    """The plain data metrics read, for many items in a constant number of queries.

    Aspects are the item's current accepted set (accepted and not retired).
    """
    ids = list(item_ids)
    items = Item.objects.filter(pk__in=ids).prefetch_related(
        Prefetch("sentences", queryset=Sentence.objects.order_by("part", "index")),
        Prefetch("chunks", queryset=Chunk.objects.order_by("rank")),
        Prefetch(
            "aspects",
            queryset=Aspect.objects.filter(status=AspectStatus.ACCEPTED, retired_in_version__isnull=True).order_by(
                "id"
            ),
        ),
    )
    supports = _human_labels(ids, SUPPORTS_QUESTION, "chunk")
    kinds = _human_labels(ids, SENTENCE_KIND_QUESTION, "sentence")
    out: dict[int, ItemInput] = {}
    for item in items:
        sentences = [s for s in item.sentences.all()]
        out[item.pk] = ItemInput(
            id=item.external_id,
            question=item.question,
            answer=item.answer,
            sentences=[s.text for s in sentences if s.part == "answer"],
            contexts=[
                ChunkInput(
                    rank=c.rank,
                    text=c.text,
                    document_id=c.document_id,
                    is_target=c.is_labelled_target,
                    unit_key=units.chunk(c.rank),
                )
                for c in item.chunks.all()
            ],
            source=item.source,
            source_sentences=[s.text for s in sentences if s.part == "source"],
            aspects=[AspectInput(ref=a.pk, text=a.text, importance=a.importance) for a in item.aspects.all()],
            scope_class=item.scope_class,
            human_relevant_ranks=_human_relevant_ranks(supports.get(item.pk, {})),
            sentence_kinds=_sentence_kinds(kinds.get(item.pk, {})),
            target_ids=target_ids(item.metadata),
        )
    return out


def target_ids(metadata: object) -> list[str] | None:
    """The item's relevant target document ids, retrieved or not (``metadata.target_ids``); None when absent."""
    value = metadata.get("target_ids") if isinstance(metadata, dict) else None
    if not isinstance(value, list):
        return None
    return [str(v) for v in value if v is not None and str(v) != ""]


# --- Runs and scores ----------------------------------------------------------------------------------


def runs_for_study(study: Study) -> QuerySet[ScoreRun]:
    return ScoreRun.objects.filter(study=study).select_related("created_by", "knowledge_base")


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    failed: int
    percent: int
    eta: timedelta | None
    items_per_second: float | None


def run_progress(run: ScoreRun) -> Progress:
    """Counts from the run row (kept by the batch writes) and an ETA from the rate so far."""
    finished = run.n_done + run.n_failed
    eta = rate = None
    if run.started_at and finished:
        end = run.finished_at or timezone.now()
        elapsed = max((end - run.started_at).total_seconds(), 1e-3)
        rate = finished / elapsed
        if run.is_active and run.n_total > finished:
            eta = timedelta(seconds=round((run.n_total - finished) / rate))
    percent = int(100 * finished / run.n_total) if run.n_total else (100 if not run.is_active else 0)
    return Progress(run.n_total, run.n_done, run.n_failed, percent, eta, rate)


def run_failed_scores(run: ScoreRun, limit: int = 50) -> QuerySet[Score]:
    failed = Score.objects.filter(run=run, state=ScoreState.FAILED).select_related("item")
    return failed.order_by("item_id", "unit_key")[:limit]


def run_scores(run: ScoreRun) -> QuerySet[Score]:
    return Score.objects.filter(run=run).select_related("item").order_by("item_id", "unit_key")


def run_state_counts(run: ScoreRun) -> dict[str, int]:
    rows = Score.objects.filter(run=run).values("state").annotate(n=Count("id"))
    counts = {state: 0 for state in ScoreState.values}
    counts.update({r["state"]: r["n"] for r in rows})
    return counts


def item_scores(item: Item) -> list[tuple[ScoreRun, list[Score]]]:
    """Every run's scores of one item, newest run first."""
    scores = Score.objects.filter(item=item).select_related("run").order_by("-run__created_at", "-run_id", "unit_key")
    grouped: dict[int, tuple[ScoreRun, list[Score]]] = {}
    for score in scores:
        grouped.setdefault(score.run_id, (score.run, []))[1].append(score)
    return list(grouped.values())


def knowledge_bases_for_study(study: Study) -> QuerySet[KnowledgeBase]:
    # order_by again: a GROUP BY query drops the model's default ordering (Django 3.1+).
    return (
        KnowledgeBase.objects.filter(study=study)
        .annotate(
            n_passages=Count("passages"), n_embedded=Count("passages", filter=Q(passages__embedding__isnull=False))
        )
        .order_by("name", "id")
    )


# --- What a researcher reads on a run's page --------------------------------------------------------

ITEMS_PER_PAGE = 10
_VERDICT_KEYS = (
    ("grounded", "grounded", "not grounded"),
    ("supported", "supported", "not supported"),
    ("relevant", "relevant", "not relevant"),
    ("covered", "covered", "not covered"),
)
_NESTED = ("grounding_details", "verification")


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else ", ".join(str(v) for v in value) if isinstance(value, list) else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class UnitJudgement:
    """What a metric decided about one unit and on what evidence, read from the score's details."""

    verdict: str
    label: str
    probability: float | None
    evidence: str
    reason: str


def judgement_of(details: dict[str, Any] | None) -> UnitJudgement:
    details = details or {}
    nested = next((details[k] for k in _NESTED if isinstance(details.get(k), dict)), {})
    verdict = ""
    for key, yes, no in _VERDICT_KEYS:
        if isinstance(details.get(key), bool):
            verdict = yes if details[key] else no
            break
    else:
        if isinstance(details.get("verdict"), bool):
            verdict = "yes" if details["verdict"] else "no"
    if details.get("information_bearing") is False:
        verdict = "not information-bearing"
    label = details.get("label") or nested.get("label") or ""
    probability = details.get("probability", nested.get("probability"))
    evidence = ""
    for source in (nested, details):
        for key in ("best", "evidence", "matched"):
            if source.get(key):
                evidence = _short(source[key])
                break
        if evidence:
            break
    return UnitJudgement(verdict, str(label), probability if isinstance(probability, float) else None, evidence,
                         str(details.get("reason") or details.get("note") or ""))


@dataclass
class UnitRow:
    key: str
    kind: str
    text: str
    score: Score | None
    judgement: UnitJudgement | None


@dataclass
class ItemView:
    item: Item
    overall: Score | None
    overall_judgement: UnitJudgement | None
    rows: list[UnitRow]


def run_item_views(run: ScoreRun, page: int | str | None) -> tuple[Any, list[ItemView]]:
    """One page of the run's items, each with its answer sentences, passages and aspects beside the
    unit's score, the judgement behind it and the evidence it used."""
    item_ids = Score.objects.filter(run=run).values_list("item_id", flat=True).distinct().order_by("item_id")
    current = Paginator(item_ids, ITEMS_PER_PAGE).get_page(page)
    ids = list(current.object_list)
    items = Item.objects.filter(pk__in=ids).prefetch_related(
        Prefetch("sentences", queryset=Sentence.objects.filter(part="answer").order_by("index")),
        Prefetch("chunks", queryset=Chunk.objects.order_by("rank")),
        Prefetch("aspects", queryset=Aspect.objects.order_by("id")),
    )
    scores: dict[int, dict[str, Score]] = defaultdict(dict)
    for score in Score.objects.filter(run=run, item_id__in=ids):
        scores[score.item_id][score.unit_key] = score
    views = []
    for item in sorted(items, key=lambda i: ids.index(i.pk)):
        own = scores.get(item.pk, {})
        rows: list[UnitRow] = []
        for kind, key, text in (
            *(("sentence", units.sentence(s.index), s.text) for s in item.sentences.all()),
            *(("passage", units.chunk(c.rank), c.text) for c in item.chunks.all()),
            *(("aspect", units.aspect(a.pk), a.text) for a in item.aspects.all()),
        ):
            score = own.get(key)
            if score is None and kind != "sentence":
                continue  # passages and aspects the metric does not judge are left out; sentences always show
            rows.append(UnitRow(key, kind, text, score, judgement_of(score.details) if score else None))
        overall = own.get(units.ITEM)
        views.append(ItemView(item, overall, judgement_of(overall.details) if overall else None, rows))
    return current, views


def run_item_values(run: ScoreRun) -> list[float]:
    """The item-level values the run computed (state ok), for its distribution."""
    return [
        float(v) for v in Score.objects.filter(run=run, unit_key=units.ITEM, state=ScoreState.OK)
        .values_list("value", flat=True) if v is not None
    ]


def paired_values(a: ScoreRun, b: ScoreRun, *, unit: str = "item") -> list[tuple[str, str, float, float]]:
    """(item id, unit key, value of a, value of b) for the units both runs scored ok; ``unit`` "item"
    keeps the item-level scores, "units" the sentences, passages and aspects."""
    wanted = Score.objects.filter(state=ScoreState.OK, value__isnull=False)
    wanted = wanted.filter(unit_key=units.ITEM) if unit == "item" else wanted.exclude(unit_key=units.ITEM)
    left = {(i, u): v for i, u, v in wanted.filter(run=a).values_list("item_id", "unit_key", "value")}
    right = {(i, u): v for i, u, v in wanted.filter(run=b).values_list("item_id", "unit_key", "value")}
    shared = sorted(left.keys() & right.keys())
    names = dict(Item.objects.filter(pk__in={i for i, _ in shared}).values_list("pk", "external_id"))
    return [(names[i], u, float(left[(i, u)]), float(right[(i, u)])) for i, u in shared]


@dataclass(frozen=True)
class BackendStatus:
    name: str
    available: bool
    reason: str = ""


def backend_statuses(study: Study) -> dict[str, BackendStatus]:
    """Whether each backend can run here for this study, and why not: each descriptor's ``availability`` with
    its configured defaults, checked without loading any model (the check ``services.score_run_start``
    makes with a run's options)."""
    out = {}
    for name, descriptor in BACKENDS.items():
        availability = descriptor.availability(study_id=study.pk)
        out[name] = BackendStatus(name, availability.available, availability.reason)
    return out
