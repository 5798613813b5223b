"""adjudication's place in the layers below it: what it receives, what it audits, what the console links to.

annotation and scoring never import adjudication (docs/architecture.md, "Layers"). Where they must reach it at
run time they declare a way in (a signal, a registry, an AppConfig attribute) and adjudication plugs into it
here; docs/architecture.md, "Calls that go up", lists each one.
"""

from typing import Any

from django.apps import AppConfig

from annotation.audit import Audited
from annotation.signals import assignment_submitted


def disagreements_on_submit(sender: Any, *, pool_id: int, item_id: int, **kwargs: Any) -> None:
    """Receiver of ``assignment_submitted``: the item's submitted labels become gold or adjudication cases.

    The import is here, not at module level: the services import the models, which exist only once the apps
    are loaded."""
    from adjudication.services import item_disagreements_detect

    item_disagreements_detect(pool_id=pool_id, item_id=item_id)


def precision_on_submit(sender: Any, *, pool_id: int, item_id: int, **kwargs: Any) -> None:
    """Receiver of ``assignment_submitted``: the pool closes once its fixed-precision rule is met."""
    from adjudication.validation.services import pool_precision_check

    pool_precision_check(pool_id=pool_id, item_id=item_id)


# (dispatch_uid, receiver), connected and so run in this order: disagreement detection, then the precision rule.
ASSIGNMENT_SUBMITTED_RECEIVERS = (
    ("adjudication.disagreements_on_submit", disagreements_on_submit),
    ("adjudication.precision_on_submit", precision_on_submit),
)


class AdjudicationConfig(AppConfig):
    name = "adjudication"
    default_auto_field = "django.db.models.BigAutoField"

    # This app's tables in the audit trail (annotation/audit.py collects every app's).
    audited_tables = (
        Audited("adjudication_consensusrule", actor_column="updated_by_id"),
        Audited(
            "adjudication_goldlabel",
            actor_column="adjudicator_id",
            # A new decision is a new version; only ``is_current`` of the previous one changes.
            fixed_columns=(
                "pool_id", "item_id", "unit_key", "question_id", "value", "source", "version",
                "adjudicator_id", "adjudicator_name",
            ),
            tracked_columns=("is_current",),
        ),
        # Exports and who downloaded them (the download rows carry who/what/when, never the content).
        Audited("adjudication_exportjob", actor_column="requested_by_id"),
        Audited("adjudication_exportdownload", actor_column="user_id"),
        # Bulk actions of the data manager (each row names who acted, on which items).
        Audited("adjudication_bulkaction", actor_column="actor_id"),
        # A pool's recorded sample: who drew it, from which run, with which design, n and seed (the seeded draw
        # can be repeated from this row; its per-item rows are written once, in the same transaction).
        Audited("adjudication_poolsample", actor_column="created_by_id"),
    )

    # The pages of this app that the researcher console links to, by the role the console gives them
    # (annotation/console/links.py).
    console_links = {
        "pool-agreement-fragment": "adjudication:pool_agreement_fragment",
        "agreement-reports": "adjudication:report-index",
        "question-agreement-report": "adjudication:report-agreement",
    }

    def ready(self) -> None:
        for dispatch_uid, receiver in ASSIGNMENT_SUBMITTED_RECEIVERS:
            assignment_submitted.connect(receiver, dispatch_uid=dispatch_uid)
        # Gold lives in this app; scoring's judge training reads it through the reader registered here
        # (the models can be imported only once the apps are loaded).
        from adjudication.judge_gold import current_gold
        from scoring.judges.gold import register_gold_reader

        register_gold_reader(current_gold)
