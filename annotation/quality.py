"""Quality controls on the annotation side (docs/guide/quality.md): items of known answer and how the queue
serves them, and the qualification set a pool may require before any real item.

* **Control items** (``ControlKind.CONTROL``) and **attention checks** (``ControlKind.ATTENTION``, instructed
  response: the item itself tells the annotator what to answer) are ordinary items of the study with a
  ``ControlItem`` row holding their known answers. A pool with a ``control_rate`` (``attention_rate``) gives
  each active member an assignment of every such item, outside the overlap k, and the queue serves one at
  that rate: position *n* of an annotator's queue (their *n*-th item taken) is a control when a seeded hash
  of (seed, pool, annotator, n) falls below the rate, so the share is the rate on average and unpredictable
  to the annotator. Nothing an annotator can reach says that an item is one: the workspace, the API and the
  history are built from the item, never from its ``ControlItem`` row.
* **Qualification items** (``ControlKind.QUALIFICATION``) are never in a queue. A pool with
  ``qualification_required`` shows them first, one at a time on the qualification page, each answer followed
  by feedback (right or wrong, the known answer and the researcher's explanation). An attempt passes when
  the share right reaches the pool's pass mark; the attempts are numbered and limited
  (``qualification_max_attempts``). Until a member passes, every access to their real items in that pool is
  refused with :class:`QualificationRequired` (a page that says why and links to the qualification).

Known answers are given for item-scoped questions (the unit ``item``) of the study.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotation import answers
from annotation.models import (
    Assignment,
    ControlItem,
    ControlKind,
    Item,
    Pool,
    QualificationAnswer,
    QualificationAttempt,
    Question,
    Study,
)
from concord.errors import Forbidden, NotFound, ValidationFailed

QUEUE_KINDS = (ControlKind.CONTROL, ControlKind.ATTENTION)
MAX_EXPLANATION = 2000


class QualificationRequired(Forbidden):
    """The member has not passed the pool's qualification: their real items stay closed (403, with a page
    that links to the qualification)."""

    def __init__(self, pool: Pool) -> None:
        url = reverse("annotation:qualification", args=[pool.pk])
        super().__init__(
            f"Pool {pool.name!r} asks you to pass a short qualification before its items: open {url} to take it."
        )
        self.pool = pool


# --- Comparing an answer with the known one ----------------------------------------------------------


def _comparable(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind in answers.LIST_KINDS:
        return tuple(sorted({str(v) for v in value})) if isinstance(value, list) else (str(value),)
    if kind == "number":
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    if kind == "text":
        return " ".join(str(value).split())
    return str(value)


def answer_matches(kind: str, given: Any, known: Any) -> bool:
    """Whether ``given`` is the known answer (the same canonical forms as adjudication's consensus: option
    values as strings, sets for list kinds, numbers as floats, text with white space collapsed). No answer
    never matches."""
    if given is None:
        return False
    return _comparable(kind, given) == _comparable(kind, known)


# --- Marking items ---------------------------------------------------------------------------------------


def known_answers_parse(*, study: Study, raw: Any) -> dict[str, Any]:
    """The known answers ``{question key: value}``, each normalised as a label of that question would be;
    ValidationFailed naming the question for anything else (unknown key, a question not about the whole item,
    a value the question does not accept, none given)."""
    return known_answers_check({q.key: q for q in study.questions.all()}, raw)


def known_answers_check(questions: dict[str, Question], raw: Any) -> dict[str, Any]:
    """:func:`known_answers_parse` against the study's questions by key (the importer has them already)."""
    if not isinstance(raw, dict) or not raw:
        raise ValidationFailed("known answers must be an object {question key: answer} with at least one answer")
    out = {}
    for key, value in raw.items():
        question = questions.get(str(key))
        if question is None:
            raise ValidationFailed(f"known answers: the study has no question {key!r}")
        if question.scope != "item":
            raise ValidationFailed(f"known answers: {key!r} is not about the whole item (only item questions)")
        try:
            normalised = answers.normalise(question, value, alignment_targets=None)
        except answers.InvalidValue as exc:
            raise ValidationFailed(f"known answers: {key!r}: {exc}") from None
        if normalised is None:
            raise ValidationFailed(f"known answers: {key!r} has no answer")
        out[question.key] = normalised
    return out


def control_mark(
    *, study: Study, item: Item, kind: str, answers_raw: Any, explanation: str, actor: AbstractBaseUser | None
) -> ControlItem:
    """Mark (or re-mark) ``item`` as an item of known answer."""
    if item.study_id != study.pk:
        raise NotFound("No such item.")
    if kind not in ControlKind.values:
        raise ValidationFailed(f"kind must be one of {', '.join(ControlKind.values)}")
    if len(explanation or "") > MAX_EXPLANATION:
        raise ValidationFailed(f"explanation longer than {MAX_EXPLANATION} characters")
    known = known_answers_parse(study=study, raw=answers_raw)
    control, _ = ControlItem.objects.update_or_create(
        item=item, defaults={"kind": kind, "answers": known, "explanation": explanation or "", "created_by": actor}
    )
    return control


def control_unmark(*, study: Study, item: Item) -> None:
    if item.study_id != study.pk:
        raise NotFound("No such item.")
    ControlItem.objects.filter(item=item).delete()


def control_item_ids(study_id: int, kinds: tuple[str, ...] | None = None) -> set[int]:
    rows = ControlItem.objects.filter(item__study_id=study_id)
    if kinds is not None:
        rows = rows.filter(kind__in=kinds)
    return set(rows.values_list("item_id", flat=True))


# --- The queue --------------------------------------------------------------------------------------------


def slot_draw(*, seed: int, pool_id: int, annotator_id: int, position: int) -> float:
    """A reproducible number in [0, 1) for one position of one annotator's queue."""
    digest = hashlib.blake2b(f"slot:{seed}:{pool_id}:{annotator_id}:{position}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def slot_kind(*, pool: Pool, annotator_id: int, position: int) -> str | None:
    """What the queue serves at ``position``: ``control``, ``attention`` or None (a real item)."""
    u = slot_draw(seed=pool.seed, pool_id=pool.pk, annotator_id=annotator_id, position=position)
    if u < pool.control_rate:
        return ControlKind.CONTROL
    if u < pool.control_rate + pool.attention_rate:
        return ControlKind.ATTENTION
    return None


def queue_kinds(pool: Pool) -> tuple[str, ...]:
    """The kinds of known-answer item this pool puts in its members' queues."""
    return tuple(
        kind for kind, rate in ((ControlKind.CONTROL, pool.control_rate), (ControlKind.ATTENTION, pool.attention_rate))
        if rate > 0
    )


def rates_check(*, control_rate: float, attention_rate: float) -> None:
    for name, rate in (("control rate", control_rate), ("attention rate", attention_rate)):
        if not 0 <= rate < 1:
            raise ValidationFailed(f"the {name} must be at least 0 and below 1")
    if control_rate + attention_rate >= 1:
        raise ValidationFailed("the control and attention rates together must stay below 1")


# --- Qualification ---------------------------------------------------------------------------------------


def qualification_items(pool: Pool) -> list[ControlItem]:
    return list(
        ControlItem.objects.filter(item__study_id=pool.study_id, kind=ControlKind.QUALIFICATION)
        .select_related("item")
        .order_by("item_id")
    )


def is_qualified(*, pool: Pool, user_id: int) -> bool:
    if not pool.qualification_required:
        return True
    return QualificationAttempt.objects.filter(pool=pool, user_id=user_id, passed=True).exists()


def ensure_qualified(assignment: Assignment) -> None:
    """Refuse a member's real item until they passed the pool's qualification (no query unless required)."""
    pool = assignment.pool
    if pool.qualification_required and not is_qualified(pool=pool, user_id=assignment.annotator_id):
        raise QualificationRequired(pool)


@dataclass
class QualificationState:
    pool: Pool
    attempts: list[QualificationAttempt]
    current: QualificationAttempt | None
    next_item: ControlItem | None
    n_items: int
    last_feedback: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return any(a.passed for a in self.attempts)

    @property
    def attempts_left(self) -> int:
        return max(self.pool.qualification_max_attempts - len(self.attempts), 0)

    @property
    def blocked(self) -> bool:
        """Failed every allowed attempt: real items stay closed for good (a researcher may raise the limit)."""
        return not self.passed and self.current is None and self.attempts_left == 0


def qualification_state(*, pool: Pool, user: AbstractBaseUser) -> QualificationState:
    items = qualification_items(pool)
    attempts = list(QualificationAttempt.objects.filter(pool=pool, user=user).order_by("number"))
    current = next((a for a in attempts if a.finished_at is None), None)
    next_item = None
    if current is not None:
        done = set(QualificationAnswer.objects.filter(attempt=current).values_list("item_id", flat=True))
        next_item = next((c for c in items if c.item_id not in done), None)
    return QualificationState(pool=pool, attempts=attempts, current=current, next_item=next_item, n_items=len(items))


def qualification_start(*, pool: Pool, user: AbstractBaseUser, now: datetime | None = None) -> QualificationAttempt:
    """Start the next attempt (or return the open one)."""
    if not pool.qualification_required:
        raise ValidationFailed("This pool does not ask for a qualification.")
    now = now or timezone.now()
    with transaction.atomic():
        Pool.objects.select_for_update().filter(pk=pool.pk).first()  # one start per pool at a time
        attempts = list(QualificationAttempt.objects.filter(pool=pool, user=user).order_by("number"))
        open_one = next((a for a in attempts if a.finished_at is None), None)
        if open_one is not None:
            return open_one
        if any(a.passed for a in attempts):
            raise ValidationFailed("You have already passed this qualification.")
        if len(attempts) >= pool.qualification_max_attempts:
            raise ValidationFailed(
                f"You have used all {pool.qualification_max_attempts} attempts at this qualification."
            )
        n_items = len(qualification_items(pool))
        if n_items == 0:
            raise ValidationFailed("This pool's qualification set is empty: ask the study's researcher.")
        return QualificationAttempt.objects.create(
            pool=pool, user=user, number=len(attempts) + 1, pass_mark=pool.qualification_pass_mark,
            n_items=n_items, started_at=now,
        )


def qualification_answer(
    *, pool: Pool, user: AbstractBaseUser, item_id: int, data: Any, now: datetime | None = None
) -> dict[str, Any]:
    """Record the answer to one qualification item of the open attempt and return the feedback: per question
    the given and the known answer and whether they match, the explanation, and the attempt's result when
    this was its last item (passed or not, against the pass mark). ``data`` is the posted form: the answer to
    question ``key`` in the field ``q-<key>`` (repeated for list kinds)."""
    now = now or timezone.now()
    with transaction.atomic():
        attempt = (
            QualificationAttempt.objects.select_for_update()
            .filter(pool=pool, user=user, finished_at__isnull=True)
            .first()
        )
        if attempt is None:
            raise ValidationFailed("Start an attempt first.")
        control = ControlItem.objects.filter(
            item_id=item_id, item__study_id=pool.study_id, kind=ControlKind.QUALIFICATION
        ).select_related("item").first()
        if control is None:
            raise NotFound("No such qualification item.")
        if QualificationAnswer.objects.filter(attempt=attempt, item_id=item_id).exists():
            raise ValidationFailed("You have already answered this item in this attempt.")
        questions = {q.key: q for q in Question.objects.filter(study_id=pool.study_id, key__in=list(control.answers))}
        rows = []
        values = {}
        for key, known in control.answers.items():
            question = questions[key]
            try:
                given = answers.normalise(
                    question, answers.from_form(question, data, field=f"q-{key}"), alignment_targets=None
                )
            except answers.InvalidValue as exc:
                raise ValidationFailed(f"{question.prompt}: {exc}") from None
            values[key] = given
            rows.append(
                {
                    "question": question, "given": answers.display(question, given),
                    "known": answers.display(question, known), "correct": answer_matches(question.kind, given, known),
                }
            )
        correct = all(r["correct"] for r in rows)
        QualificationAnswer.objects.create(attempt=attempt, item_id=item_id, values=values, correct=correct, at=now)
        attempt.n_answered += 1
        attempt.n_correct += int(correct)
        finished = attempt.n_answered >= attempt.n_items
        if finished:
            attempt.finished_at = now
            attempt.passed = attempt.n_correct >= attempt.pass_mark * attempt.n_items - 1e-9
        attempt.save(update_fields=["n_answered", "n_correct", "finished_at", "passed"])
    return {
        "item": control.item, "rows": rows, "correct": correct, "explanation": control.explanation,
        "attempt": attempt, "finished": finished,
    }
