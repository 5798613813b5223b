"""What a refused save (409) tells, and how the page shows it.

A save based on a version that is no longer the label's is refused with the newer value, so nothing typed is
lost: the page redraws the unit with both answers side by side, the API answers them in the 409's details.
Who set the newer value is never told, except ``"you"`` when it was the annotator's own earlier save (another
tab, window or script): an annotator never learns another person's identity, not even a pseudonym.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation import answers
from annotation.models import Label, Question

CONFLICT_BY_YOU = "you"


def label_conflict_details(
    current: Label | None, attempted: Any, question: Question, unit_key: str, *, viewer: AbstractBaseUser
) -> dict[str, Any]:
    """What a 409 carries: the newer value, its version, whether ``viewer`` (the annotator who tried to
    save) set it, when, and the value the client tried to save (so the page can offer it again — nothing
    typed is lost). Who set it is ``"you"`` for the viewer's own earlier save (another tab, window or
    script), and None for anyone else: an annotator never learns another person's identity, not even
    a pseudonym (the answer is simply newer than theirs)."""
    return {
        "question": question.key,
        "unit_key": unit_key,
        "value": current.value if current else None,
        "version": current.version if current else 0,
        "updated_by": CONFLICT_BY_YOU if current is not None and current.updated_by_id == viewer.pk else None,
        "updated_at": current.updated_at.isoformat() if current else None,
        "your_value": attempted,
    }


def conflict_view(question: Question, details: dict[str, Any]) -> dict[str, Any]:
    """A 409's details prepared for the page: the newer answer and the one that was not saved."""
    mine = details.get("your_value")
    return {
        **details,
        "value_display": answers.display(question, details.get("value")),
        "your_display": answers.display(question, mine),
        "your_list": [str(v) for v in mine] if isinstance(mine, list) else None,
        "your_scalar": None if isinstance(mine, list) or mine is None else str(mine),
    }
