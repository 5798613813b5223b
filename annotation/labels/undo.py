"""Undoing the annotator's last change: the save run backwards, never an erasure.

The labels that one save changed (the answer and the dependent answers it cleared) are saved again with their
previous values (:func:`annotation.labels.save.label_save`), each as a new version whose history row is marked
``undoes``: the history keeps both the change and its undoing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.labels.access import OPEN_STATUSES, ensure_annotator
from annotation.labels.save import label_save
from annotation.models import Assignment, Label, LabelHistory, Question
from concord.errors import ValidationFailed


@dataclass
class Undone:
    """What an undo reverted: (question, unit key, value restored) per label, in the order written."""

    restored: list[tuple[Question, str, Any]]


def label_undo(*, assignment: Assignment, actor: AbstractBaseUser, now: datetime | None = None) -> Undone:
    """Undo the annotator's last change on an open item: the labels that one save changed (the answer
    and any dependent answers it cleared) get their previous values back, each as a new version with
    its own history row marked ``undoes`` — nothing is erased. Undo again to revert the change before
    that one. Refused (ValidationFailed) when there is nothing left to undo or the item is not open."""
    now = now or timezone.now()
    ensure_annotator(assignment, actor)
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().select_related("pool").get(pk=assignment.pk)
        if locked.status not in OPEN_STATUSES:
            raise ValidationFailed("This item is not open; its answers can no longer change.")
        rows = list(
            LabelHistory.objects.filter(label__assignment=locked, actor=actor)
            .select_related("label__question")
            .order_by("-id")[:2000]
        )
        undone = {r.undoes_id for r in rows if r.undoes_id}
        undone_at = {r.at for r in rows if r.pk in undone}
        candidates = [r for r in rows if r.undoes_id is None and r.pk not in undone and r.at not in undone_at]
        if not candidates:
            raise ValidationFailed("Nothing to undo on this item.")
        last_at = candidates[0].at
        group = sorted((r for r in candidates if r.at == last_at), key=lambda r: r.pk)
        restored: list[tuple[Question, str, Any]] = []
        for row in group:  # the answer first, then the dependents it cleared
            label = Label.objects.select_for_update().get(pk=row.label_id)
            question = row.label.question
            saved = label_save(
                assignment=locked, question=question, unit_key=label.unit_key, value=row.old_value,
                base_version=label.version, actor=actor, now=now,
            )
            restored.append((question, label.unit_key, saved.value))
        # Every history row this undo wrote (dependents it cleared included) is marked as an undo.
        LabelHistory.objects.filter(label__assignment=locked, actor=actor, at=now, undoes__isnull=True).update(
            undoes=group[0]
        )
    return Undone(restored=restored)
