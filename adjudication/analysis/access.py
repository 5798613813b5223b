"""Which pools and questions of a study a report may read: a pool of another study, or a question the pool
does not answer, is not found (404); a question of a kind that cannot be rated is refused (400).

The study itself is authorized before (``annotation.access.get_study_for_researcher``).
"""

from __future__ import annotations

from annotation.models import Pool, Question, QuestionKind, Study
from concord.errors import NotFound, ValidationFailed

# Question kinds whose answers are ratings on a declared scale, and those a report can rate at all.

CATEGORICAL = {QuestionKind.BINARY, QuestionKind.NOMINAL, QuestionKind.ORDINAL}


RATEABLE = CATEGORICAL | {QuestionKind.NUMBER, QuestionKind.MULTILABEL}


def get_pool_for_report(study: Study, pool_id: int) -> Pool:
    pool = Pool.objects.filter(study=study, pk=pool_id).first()
    if pool is None:
        raise NotFound("no such pool")
    return pool


def get_question_for_report(pool: Pool, key: str) -> Question:
    question = pool.questions.filter(key=key).first()
    if question is None:
        raise NotFound("this pool answers no such question")
    if question.kind not in RATEABLE:
        raise ValidationFailed(
            f"agreement needs a categorical, multi-label or number question; {key!r} is {question.kind}"
        )
    return question
