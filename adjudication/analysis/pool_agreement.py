"""Agreement so far of one pool, per categorical question and per annotator, for the researcher
console's progress page.

Point estimates only (no bootstrap in a request): every figure comes from
:func:`adjudication.analysis.agreement.agreement_report`, so the numbers and the outlier flag are the same
as on the full agreement report. The flag is that report's rule (adjudication.stats.agreement
``each_against_rest``): an annotator is far below the others when the upper end of the 95%
asymptotic interval of their Cohen κ against the majority of the other annotators lies below the
pool's Fleiss κ. It needs three annotators and a defined Fleiss κ; otherwise nobody is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adjudication.analysis.access import CATEGORICAL, get_pool_for_report
from adjudication.analysis.agreement import agreement_report
from adjudication.analysis.loading import Ratings, ratings_load
from annotation.models import Pool, PoolMembership, Question, Study


@dataclass
class AnnotatorAgreement:
    """One annotator against the majority of the others on one question."""

    username: str
    pseudonym: str
    active: bool
    kappa: float | None
    ci95: list[float] | None
    agreement_with_rest: float | None
    n_units: int
    n_excluded_units: int
    reason: str | None
    outlier: bool


@dataclass
class QuestionAgreement:
    question: Question
    report: dict[str, Any]
    annotators: list[AnnotatorAgreement] = field(default_factory=list)

    @property
    def flagged(self) -> list[AnnotatorAgreement]:
        return [a for a in self.annotators if a.outlier]


@dataclass
class PoolAgreement:
    pool: Pool
    questions: list[QuestionAgreement]

    @property
    def flagged(self) -> list[tuple[str, AnnotatorAgreement]]:
        return [(q.question.key, a) for q in self.questions for a in q.flagged]


def pool_agreement_so_far(*, study: Study, pool_id: int) -> PoolAgreement:
    """The pool's agreement on each of its categorical questions, and each annotator's against the rest."""
    pool = get_pool_for_report(study, pool_id)
    questions = [q for q in pool.questions.all().order_by("order", "id") if q.kind in CATEGORICAL]
    out = []
    for question in questions:
        ratings = ratings_load(pool=pool, question=question)
        report = agreement_report(pool=pool, question=question, ratings=ratings)
        out.append(
            QuestionAgreement(
                question=question,
                report=report,
                annotators=_annotators(pool, ratings, report.get("each_against_rest") or []),
            )
        )
    return PoolAgreement(pool=pool, questions=out)


def _annotators(pool: Pool, ratings: Ratings, rows: list[dict[str, Any]]) -> list[AnnotatorAgreement]:
    # each_against_rest follows the columns of the ratings matrix, i.e. ratings.rater_ids; it is empty
    # when it is not computed (fewer than three raters, or numbers rather than categories).
    if not rows:
        return []
    members = {
        m.user_id: m
        for m in PoolMembership.objects.filter(pool=pool, user_id__in=ratings.rater_ids).select_related("user")
    }
    out = []
    for user_id, row in zip(ratings.rater_ids, rows, strict=True):
        member = members.get(user_id)
        out.append(
            AnnotatorAgreement(
                username=member.user.get_username() if member else "",
                pseudonym=row["rater"],
                active=member.active if member else False,
                kappa=row.get("value"),
                ci95=row.get("ci95"),
                agreement_with_rest=row.get("agreement_with_rest"),
                n_units=row.get("n_units", 0),
                n_excluded_units=row.get("n_excluded_units", 0),
                reason=row.get("reason"),
                outlier=bool(row.get("outlier")),
            )
        )
    return out
