"""The pool's questions, as a save (and every page of the workspace) reads them.

Once per pool object: the access check, the save and the redraw of one request share one read, kept where
``prefetch_related("questions")`` keeps it, so ``pool.questions.all()`` reuses it too.

Between requests, per web process: a save through the API reads the questions' revision in its own first
statement (``statements.token_lookup``: one number in ``annotation_questions_revision``, changed by triggers,
migration 0010, on every change of a question or of a pool's questions, to a number it has never been), and
uses the questions this process kept only when they were read under that revision. An edit committed before
the save began is therefore always seen; otherwise the questions are read again (one statement more).
"""

from __future__ import annotations

from functools import lru_cache

from django.db import connection
from django.db.models import QuerySet

from annotation.labels import statements
from annotation.models import Pool, Question
from concord.errors import NotFound
from concord.params import parse_id


def pool_questions(pool: Pool) -> list[Question]:
    """The pool's questions in protocol order, loaded once per pool object (one statement) and reused by
    every later call: the access check, the save and the redraw of one request share them. They are
    kept where ``prefetch_related("questions")`` keeps them, so ``pool.questions.all()`` reuses them too,
    and a change of the pool's questions through its manager (which drops that cache) is seen."""
    cache = getattr(pool, "_prefetched_objects_cache", None)
    if cache is None:
        pool._prefetched_objects_cache = cache = {}  # type: ignore[attr-defined]
    queryset = cache.get("questions")
    ordered = pool.__dict__.get("_questions_in_order")
    if queryset is not None and ordered is not None and ordered[0] is queryset:
        return list(ordered[1])
    if queryset is None:
        queryset = _pool_questions_queryset(pool.pk)._chain()  # type: ignore[attr-defined]
        queryset._result_cache = _pool_questions_current(pool)
        queryset._prefetch_done = True
        cache["questions"] = queryset
    questions = sorted(queryset, key=lambda q: (q.order, q.pk))
    pool.__dict__["_questions_in_order"] = (queryset, questions)
    return list(questions)


# Per process: pool id → (the questions' revision when they were read, the questions). Used only for a pool
# that carries the revision read in its request's own statement (a save through the API), so a change of the
# questions committed before that statement is always seen (statements.QUESTIONS_REVISION).
_questions_kept: dict[tuple[str, int], tuple[int, list[Question]]] = {}
_QUESTIONS_KEPT_MAX = 4096


def _pool_questions_current(pool: Pool) -> list[Question]:
    revision = pool.__dict__.get(statements.QUESTIONS_REVISION)
    if revision is None:
        return statements.pool_questions(pool.pk)
    key = (connection.settings_dict["NAME"], pool.pk)
    kept = _questions_kept.get(key)
    if kept is not None and kept[0] == revision:
        return list(kept[1])
    questions = statements.pool_questions(pool.pk)
    if len(_questions_kept) >= _QUESTIONS_KEPT_MAX:
        _questions_kept.clear()
    _questions_kept[key] = (revision, questions)
    return list(questions)


@lru_cache(maxsize=4096)
def _pool_questions_queryset(pool_id: int) -> QuerySet[Question]:
    # The queryset a prefetch would store (never evaluated here: each use is a copy that receives the
    # questions read), built once per pool and process because building a filter costs more than the read.
    return Question.objects.filter(pools=pool_id)


def get_pool_question(pool: Pool, key_or_id: str | int) -> Question:
    """The pool's question named by its key or its id (404 otherwise)."""
    question_id = parse_id(key_or_id)
    for question in pool_questions(pool):
        if (question.pk == question_id) if question_id is not None else (question.key == key_or_id):
            return question
    raise NotFound("No such question in this pool.")
