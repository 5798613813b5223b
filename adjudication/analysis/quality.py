"""The per-annotator quality report of one pool (docs/guide/quality.md), as plain data for the page, the REST
API and the reports' option to leave flagged annotators out (statistics in :mod:`adjudication.stats.quality`).

What it reads: the pool's submitted assignments (withdrawn and skipped work never counts), their labels, the
study's items of known answer (``annotation.models.ControlItem``) and the pool's qualification attempts.

* **Accuracy on control items**: one judgement per (control item, known question the pool asks) an annotator
  submitted; right when the label equals the known answer in the canonical form of
  :func:`adjudication.consensus.canonical`; a known question left unanswered counts as wrong.
* **Attention checks**: one judgement per attention item submitted; passed when every known answer is right.
* **Agreement with the consensus**: on the pool's real items (never items of known answer), every
  categorical, multi-label and number question, every unit: the others' strict majority, the annotator's
  own label left out (:func:`adjudication.stats.quality.consensus_agreement`).
* **Time per item**: the active seconds the workspace measured, on each submitted item.
* **Drift**: the control judgements in the order they were submitted, in windows of ``window``.
* **Flagged**: the pool sets ``flag_below``; an annotator whose accuracy on controls or attention pass rate
  is below it is flagged (listed with the reason), never dropped from anything unless a report is asked to.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from adjudication.consensus import canonical
from adjudication.stats import quality as qs
from annotation.models import (
    Assignment,
    AssignmentStatus,
    ControlItem,
    ControlKind,
    Label,
    Pool,
    PoolMembership,
    QualificationAttempt,
)

DEFAULT_WINDOW = 10
AGREEMENT_KINDS = {"binary", "nominal", "ordinal", "multilabel", "number"}

PLOT_WIDTH, PLOT_HEIGHT = 560, 220
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 48, 16, 12, 34


def pool_quality(*, pool: Pool, window: int = DEFAULT_WINDOW) -> dict[str, Any]:
    """Every annotator of the pool (members, current or past, and anyone with submitted work) with their
    figures, in pseudonym order."""
    questions = {q.key: q for q in pool.questions.all()}
    controls = {
        c.item_id: c
        for c in ControlItem.objects.filter(
            item__study_id=pool.study_id, kind__in=[ControlKind.CONTROL, ControlKind.ATTENTION]
        )
    }
    submitted = list(
        Assignment.objects.filter(pool=pool, status=AssignmentStatus.SUBMITTED)
        .order_by("submitted_at", "id")
        .values_list("id", "item_id", "annotator_id", "submitted_at", "active_seconds")
    )
    labels: dict[int, dict[tuple[str, str], Any]] = defaultdict(dict)
    for assignment_id, key, unit, value in Label.objects.filter(
        assignment__pool=pool, assignment__status=AssignmentStatus.SUBMITTED, value__isnull=False
    ).values_list("assignment_id", "question__key", "unit_key", "value"):
        if value is not None:
            labels[assignment_id][(key, unit)] = value

    control_judgements: dict[int, list[bool]] = defaultdict(list)
    attention: dict[int, list[bool]] = defaultdict(list)
    seconds: dict[int, list[float]] = defaultdict(list)
    units: dict[tuple[int, str, str], dict[int, Any]] = defaultdict(dict)
    raters: set[int] = set()
    for assignment_id, item_id, user_id, _, active in submitted:
        raters.add(user_id)
        seconds[user_id].append(float(active))
        given = labels.get(assignment_id, {})
        control = controls.get(item_id)
        if control is not None:
            results = [
                given.get((key, "item")) is not None
                and canonical(questions[key].kind, given[(key, "item")]) == canonical(questions[key].kind, known)
                for key, known in control.answers.items()
                if key in questions
            ]
            if not results:
                continue  # the pool asks none of the known questions
            if control.kind == ControlKind.CONTROL:
                control_judgements[user_id].extend(results)
            else:
                attention[user_id].append(all(results))
            continue
        for (key, unit), value in given.items():
            question = questions.get(key)
            if question is not None and question.kind in AGREEMENT_KINDS:
                units[(item_id, key, unit)][user_id] = canonical(question.kind, value)

    members = {m.user_id: m for m in PoolMembership.objects.filter(pool=pool)}
    raters |= set(members)
    qualification = _qualification_by_user(pool)
    rows = []
    for user_id in raters:
        member = members.get(user_id)
        judgements = control_judgements.get(user_id, [])
        accuracy = qs.share(sum(judgements), len(judgements))
        passes = attention.get(user_id, [])
        attention_share = qs.share(sum(passes), len(passes))
        reasons = []
        if pool.flag_below is not None:
            if accuracy.share is not None and accuracy.share < pool.flag_below:
                reasons.append(f"accuracy on control items {accuracy.share:.0%} is below {pool.flag_below:.0%}")
            if attention_share.share is not None and attention_share.share < pool.flag_below:
                reasons.append(f"attention checks passed {attention_share.share:.0%} is below {pool.flag_below:.0%}")
        drift = qs.windows(judgements, window)
        rows.append(
            {
                "user_id": user_id,
                "pseudonym": member.pseudonym if member else f"annotator #{user_id}",
                "active": bool(member and member.active),
                "n_submitted": len(seconds.get(user_id, [])),
                "control_accuracy": accuracy.as_dict(),
                "attention": attention_share.as_dict(),
                "consensus_agreement": qs.consensus_agreement(units, user_id).as_dict(),
                "time_per_item": qs.time_summary(seconds.get(user_id, [])),
                "drift": drift,
                "qualification": qualification.get(user_id),
                "flagged": bool(reasons),
                "flag_reasons": reasons,
            }
        )
    rows.sort(key=lambda r: (r["pseudonym"], r["user_id"]))
    return {
        "study": pool.study.slug,
        "pool": {"id": pool.pk, "name": pool.name},
        "settings": {
            "control_rate": pool.control_rate,
            "attention_rate": pool.attention_rate,
            "flag_below": pool.flag_below,
            "qualification_required": pool.qualification_required,
            "qualification_pass_mark": pool.qualification_pass_mark,
            "qualification_max_attempts": pool.qualification_max_attempts,
        },
        "window": window,
        "n_control_items": sum(1 for c in controls.values() if c.kind == ControlKind.CONTROL),
        "n_attention_items": sum(1 for c in controls.values() if c.kind == ControlKind.ATTENTION),
        "interval": f"{qs.INTERVAL_METHOD} score interval, {int(qs.CONFIDENCE * 100)}% (Newcombe 1998)",
        "annotators": rows,
        "flagged": [r["pseudonym"] for r in rows if r["flagged"]],
    }


def _qualification_by_user(pool: Pool) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for a in QualificationAttempt.objects.filter(pool=pool).order_by("user_id", "number"):
        row = out.setdefault(a.user_id, {"attempts": 0, "passed": False, "results": []})
        row["attempts"] += 1
        row["passed"] = row["passed"] or bool(a.passed)
        row["results"].append(
            {
                "number": a.number, "n_items": a.n_items, "n_answered": a.n_answered, "n_correct": a.n_correct,
                "pass_mark": a.pass_mark, "passed": a.passed,
            }
        )
    return out


def flagged_annotators(*, pool: Pool) -> list[tuple[int, str]]:
    """(user id, pseudonym) of the pool's flagged annotators, for the reports' "leave flagged out" option."""
    if pool.flag_below is None:
        return []
    return [(r["user_id"], r["pseudonym"]) for r in pool_quality(pool=pool)["annotators"] if r["flagged"]]


def drift_plot(drift: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Coordinates for the inline SVG of one annotator's accuracy per window (numbers only; the template
    draws them): per window its point and interval, x by window number, y from 0 to 1."""
    if not drift:
        return None
    inner_w = PLOT_WIDTH - PLOT_LEFT - PLOT_RIGHT
    inner_h = PLOT_HEIGHT - PLOT_TOP - PLOT_BOTTOM
    n = len(drift)

    def x(i: int) -> float:
        return round(PLOT_LEFT + inner_w * (i + 0.5) / n, 1)

    def y(v: float) -> float:
        return round(PLOT_TOP + inner_h * (1 - v), 1)

    points = [
        {
            "x": x(i), "point": y(w["share"]), "lower": y(w["lower"]), "upper": y(w["upper"]),
            "label": f"items {w['first']}–{w['last']}: {w['k']} of {w['n']} right",
        }
        for i, w in enumerate(drift)
    ]
    return {
        "width": PLOT_WIDTH, "height": PLOT_HEIGHT, "left": PLOT_LEFT, "right": PLOT_WIDTH - PLOT_RIGHT,
        "top": PLOT_TOP, "bottom": PLOT_HEIGHT - PLOT_BOTTOM, "label_y": PLOT_HEIGHT - 6,
        "points": points, "line": " ".join(f"{p['x']},{p['point']}" for p in points),
        "yticks": [{"y": y(v), "label": f"{v:.0%}"} for v in (0, 0.25, 0.5, 0.75, 1)],
    }
