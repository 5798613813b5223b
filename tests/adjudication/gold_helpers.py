"""Builders for the adjudication tests: pools whose annotators have submitted given labels.

Labels are written directly (the workspace's label_save is B's and is tested there); detection is
then triggered the way annotation.services.assignment_submit triggers it.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Item, Label, LabelHistory, Pool, Question
from tests import factories


def yes_no(study, key: str = "pf", **extra: Any) -> Question:
    return factories.make_question(study, key, **extra)


def pool_with_members(study, questions: list[Question], n: int = 2, *, overlap: int | None = None, name: str = "P"):
    pool = factories.make_pool(study, name, questions=questions, overlap=overlap or n)
    members = []
    for i in range(n):
        user = factories.make_user(f"{name.lower()}-annotator-{i}")
        factories.add_member(pool, user, pseudonym=f"{name}-A{i + 1}")
        members.append(user)
    return pool, members


def submit_labels(
    pool: Pool,
    item: Item,
    annotator,
    answers: dict[tuple[str, str], Any],
    *,
    status: str = AssignmentStatus.SUBMITTED,
    active_seconds: float = 0.0,
) -> Assignment:
    now = timezone.now()
    assignment = Assignment.objects.create(
        pool=pool,
        item=item,
        annotator=annotator,
        status=status,
        active_seconds=active_seconds,
        submitted_at=now if status == AssignmentStatus.SUBMITTED else None,
    )
    questions = {q.key: q for q in pool.questions.all()}
    for (key, unit), value in answers.items():
        label = Label.objects.create(
            assignment=assignment,
            question=questions[key],
            unit_key=unit,
            value=value,
            updated_by=annotator,
            updated_at=now,
        )
        LabelHistory.objects.create(label=label, new_value=value, new_version=1, actor=annotator, at=now)
    return assignment
