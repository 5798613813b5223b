"""A small two-pool study for the validation-study tests, labelled through the real services.

Pool A ("A") answers ASTRID's sentence questions (information_bearing, grounded), so human CF comes
from it; pool B ("B", k = 2) rates perceived faithfulness, the target. Labels go through
``label_save`` and ``assignment_submit`` exactly as the workspace saves them.
"""

from __future__ import annotations

from typing import Any

from annotation.labels import label_save
from annotation.models import Assignment, Question, Study
from annotation.protocols import study_protocol_apply
from annotation.services import assignment_submit, pool_assign_items
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories

# Three sentences each: two information-bearing, then a greeting.
ANSWER = "Take 0.5 mg daily. Avoid alcohol while on it. Hello there!"
CONTEXT = "The usual dose is 0.5 mg daily; alcohol should be avoided."
# Per item: pool A's grounded answers for s:0 and s:1 (human CF = supported share).
GROUNDED = [
    ("supported", "supported"),
    ("supported", "unsupported"),
    ("unsupported", "unsupported"),
    ("supported", "supported"),
    ("unsupported", "contradicted"),
    ("supported", "unsupported"),
]
HUMAN_CF = [1.0, 0.5, 0.0, 1.0, 0.0, 0.5]
# Pool B's perceived faithfulness (1–5) per item from its two annotators.
PF = [("5", "4"), ("3", "2"), ("1", "2"), ("4", "4"), ("2", "1"), ("2", "3")]


def label_all(assignment: Assignment, answers: dict[tuple[str, str], Any], questions: dict[str, Question]) -> None:
    """Save every answer through label_save, then submit."""
    user = assignment.annotator
    for (key, unit), value in answers.items():
        label_save(
            assignment=assignment, question=questions[key], unit_key=unit, value=value, base_version=None, actor=user
        )
    assignment_submit(assignment=assignment, actor=user)


# Answers that a lexical backend grounds to different degrees in CONTEXT (the worker test's CF varies).
VARIED_ANSWERS = [
    "Take 0.5 mg daily. Avoid alcohol while on it. Hello there!",
    "Take 0.5 mg daily. Eat grapefruit every single morning. Hello there!",
    "Double your dose every week. Eat grapefruit every single morning. Hello there!",
    "The usual dose is 0.5 mg daily. Alcohol should be avoided. Hello there!",
    "Double your dose every week. Skip your meals quite often. Hello there!",
    "Take 0.5 mg daily. Skip your meals quite often. Hello there!",
]


def build(
    researcher, *, independent: bool = True, n_items: int = 6, answers: list[str] | None = None
) -> dict[str, Any]:
    study: Study = factories.make_study(owner=researcher, slug="validation-study", independent_pools=independent)
    study_protocol_apply(study=study, presets=["astrid"])
    q = {question.key: question for question in study.questions.all()}
    items = []
    for n in range(n_items):
        item = factories.make_item(study, f"v{n}", answer=answers[n] if answers else ANSWER)
        factories.make_chunk(item, 1, CONTEXT)
        items.append(item)
    pool_a = factories.make_pool(study, "A", questions=[q["information_bearing"], q["grounded"]], overlap=1)
    pool_b = factories.make_pool(study, "B", questions=[q["perceived_faithfulness"]], overlap=2)
    a_user = factories.make_user("alice-pool-a")
    factories.add_member(pool_a, a_user, "A1")
    b_users = [factories.make_user("bob-pool-b"), factories.make_user("bea-pool-b")]
    for n, user in enumerate(b_users, start=1):
        factories.add_member(pool_b, user, f"B{n}")
    pool_assign_items(pool=pool_a)
    pool_assign_items(pool=pool_b)
    return {
        "study": study,
        "questions": q,
        "items": items,
        "pool_a": pool_a,
        "pool_b": pool_b,
        "a_user": a_user,
        "b_users": b_users,
    }


def label_pool_a(s: dict[str, Any]) -> None:
    for item, (g0, g1) in zip(s["items"], GROUNDED, strict=False):
        assignment = Assignment.objects.get(pool=s["pool_a"], item=item)
        label_all(
            assignment,
            {
                ("information_bearing", "s:0"): "yes",
                ("grounded", "s:0"): g0,
                ("information_bearing", "s:1"): "yes",
                ("grounded", "s:1"): g1,
                ("information_bearing", "s:2"): "no",
            },
            s["questions"],
        )


def label_pool_b(s: dict[str, Any]) -> None:
    for item, ratings in zip(s["items"], PF, strict=False):
        for user, value in zip(s["b_users"], ratings, strict=True):
            assignment = Assignment.objects.get(pool=s["pool_b"], item=item, annotator=user)
            label_all(assignment, {("perceived_faithfulness", "item"): value}, s["questions"])


def make_run(
    study: Study,
    metric: str,
    values: dict[int, float | None],
    *,
    unit: str = "item",
    details: dict[int, dict[str, Any]] | None = None,
    **extra: Any,
) -> ScoreRun:
    """A finished run with the given item scores (for tests of the reading side; the worker test
    makes its run through a real worker)."""
    run = ScoreRun.objects.create(
        study=study, metric=metric, metric_version="1.0", backend="lexical", status=RunStatus.DONE, **extra
    )
    Score.objects.bulk_create(
        Score(
            run=run,
            item_id=item_id,
            unit_key=unit,
            value=value,
            state=ScoreState.OK if value is not None else ScoreState.UNDETERMINED,
            details=(details or {}).get(item_id, {}),
        )
        for item_id, value in values.items()
    )
    return run


def auc_by_counting(scores: list[float], labels: list[int]) -> float:
    """AUC as the share of (positive, negative) pairs ranked right, ties counting one half
    (Hanley & McNeil 1982: the Mann–Whitney reading of the ROC area)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    neg = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def cohen_kappa_by_hand(a: list[str], b: list[str], categories: list[str]) -> float:
    """Cohen (1960): (p_o − p_e) / (1 − p_e) from the two raters' marginals."""
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in categories)
    return (p_o - p_e) / (1 - p_e)
