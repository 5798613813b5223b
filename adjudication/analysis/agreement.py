"""The agreement report: every agreement statistic of one pool on one question, as plain data for pages,
downloads, the REST API and the CLI (statistics in :mod:`adjudication.stats.agreement`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adjudication.analysis.access import RATEABLE
from adjudication.analysis.loading import OPTION_SCALE, Ratings, ratings_load
from adjudication.analysis.params import bootstrap_params
from adjudication.analysis.quality import flagged_annotators
from adjudication.analysis.rating_tables import RatingTables, rating_tables_load
from adjudication.stats import agreement as ag
from annotation.models import Pool, Question, QuestionKind, Study
from concord.errors import ValidationFailed


def agreement_report(
    *,
    pool: Pool,
    question: Question,
    weights: ag.Weights | None = None,
    n_boot: int = 0,
    seed: int = 0,
    progress: ag.Progress | None = None,
    ratings: Ratings | RatingTables | None = None,
    include_controls: bool = False,
    exclude_flagged: bool = False,
) -> dict[str, Any]:
    """Every agreement statistic of one pool on one question (point estimates unless ``n_boot``).

    Items of known answer are left out unless ``include_controls``; the pool's flagged annotators
    (:func:`adjudication.analysis.quality.flagged_annotators`) are left out when ``exclude_flagged``. The
    report says which (``quality``). ``ratings``, when given, were loaded with the same options.

    A categorical or multi-label question's ratings are read as :class:`RatingTables` (a range of items at a
    time, nothing kept per unit: the statistics need only the count table's patterns and the raters' tables, so
    what the report holds does not grow with the pool); a number question's as one entry per rating (interval α
    needs every value)."""
    flagged = flagged_annotators(pool=pool) if exclude_flagged else []
    if ratings is None:
        exclude = frozenset(u for u, _ in flagged)
        if question.kind in RATEABLE - {QuestionKind.NUMBER}:
            ratings = rating_tables_load(
                pool=pool, question=question, include_controls=include_controls, exclude_raters=exclude,
                per_unit=False,
            )
        else:
            ratings = ratings_load(
                pool=pool, question=question, include_controls=include_controls, exclude_raters=exclude
            )
    if weights is None:
        weights = "linear" if ratings.level == "ordinal" else "none"
    head = {
        "study": pool.study.slug,
        "pool": {"id": pool.pk, "name": pool.name},
        "question": {"key": question.key, "kind": question.kind, "scope": question.scope, "prompt": question.prompt},
        "n_off_scale_ratings": ratings.n_off_scale_ratings,
        "quality": quality_note(ratings, include_controls=include_controls, exclude_flagged=exclude_flagged,
                                flagged=flagged),
    }
    if (ratings.n_units if isinstance(ratings, RatingTables) else len(ratings.units)) == 0:
        return {
            **head,
            "n_units": 0,
            "n_raters": 0,
            "n_excluded_units": 0,
            "empty": True,
            "reason": "no submitted labels for this question in this pool",
        }
    # From the tables or the entries, never the units × raters matrix (ratings.codes): see
    # ag.agreement_summary_tables and ag.agreement_summary_sparse.
    if isinstance(ratings, RatingTables):
        if ratings.option_tables is not None:
            summary = _multilabel_summary(
                ratings, (ratings.n_rated_units, ratings.n_single_units), list(ratings.option_tables),
                lambda option, **kw: ag.agreement_summary_tables(ratings.option_tables[option], **kw),  # type: ignore[index]
                n_boot=n_boot, seed=seed, progress=progress,
            )
            return {**head, **summary, "empty": False}
        assert ratings.tables is not None  # a single-choice question's tables
        summary = ag.agreement_summary_tables(
            ratings.tables, level=ratings.level, scale=ratings.scale, rater_names=ratings.rater_names,
            weights=weights, n_boot=n_boot, seed=seed, progress=progress,
        )
        return {**head, **summary, "multilabel": False, "empty": False}
    if ratings.option_entries is not None:
        entries = ratings.option_entries
        per_unit = ratings.entries.per_unit()
        summary = _multilabel_summary(
            ratings, (int((per_unit > 0).sum()), int((per_unit == 1).sum())), list(entries),
            lambda option, **kw: ag.agreement_summary_sparse(entries[option], **kw),
            n_boot=n_boot, seed=seed, progress=progress,
        )
        return {**head, **summary, "empty": False}
    summary = ag.agreement_summary_sparse(
        ratings.entries,
        level=ratings.level,
        scale=ratings.scale,
        rater_names=ratings.rater_names,
        weights=weights,
        n_boot=n_boot,
        seed=seed,
        progress=progress,
    )
    return {**head, **summary, "multilabel": False, "empty": False}


def _multilabel_summary(
    ratings: Ratings | RatingTables,
    unit_counts: tuple[int, int],
    options: list[str],
    summarize: Callable[..., dict[str, Any]],
    *,
    n_boot: int,
    seed: int,
    progress: ag.Progress | None,
) -> dict[str, Any]:
    """Agreement on each option of a multi-label question, as a selected / not selected rating (``summarize``:
    one option's summary); ``unit_counts``: the units with a rating and those with exactly one."""
    per_option = []
    for i, option in enumerate(options):

        def step(done: int, total: int, i: int = i) -> None:
            if progress is not None:
                progress(i * total + done, len(options) * total)

        per_option.append(
            {
                "option": option,
                **summarize(
                    option,
                    level="nominal",
                    scale=OPTION_SCALE,
                    rater_names=ratings.rater_names,
                    n_boot=n_boot,
                    seed=seed,
                    progress=step,
                ),
            }
        )
    return {
        "multilabel": True,
        "level": "nominal",
        "scale": OPTION_SCALE,
        "raters": ratings.rater_names,
        "n_units": unit_counts[0],
        "n_raters": len(ratings.rater_names),
        "n_excluded_units": unit_counts[1],
        "per_option": per_option,
        "bootstrap": {"n": n_boot, "seed": seed} if n_boot > 0 else None,
    }


def quality_note(
    ratings: Ratings | RatingTables, *, include_controls: bool, exclude_flagged: bool, flagged: list[tuple[int, str]]
) -> dict[str, Any]:
    """What a report says about items of known answer and flagged annotators (docs/guide/quality.md)."""
    return {
        "controls_included": include_controls,
        "n_control_ratings_excluded": ratings.n_control_ratings_excluded,
        "flagged_excluded": exclude_flagged,
        "excluded_annotators": [name for _, name in flagged] if exclude_flagged else [],
        "n_flagged_ratings_excluded": ratings.n_rater_ratings_excluded,
    }


def quality_params_parse(query: Any) -> dict[str, bool]:
    """The reports' options ``controls=include`` and ``flagged=exclude`` (anything else: 400)."""
    controls = (query.get("controls") or "exclude").strip()
    flagged = (query.get("flagged") or "keep").strip()
    if controls not in ("include", "exclude"):
        raise ValidationFailed("controls must be include or exclude")
    if flagged not in ("keep", "exclude"):
        raise ValidationFailed("flagged must be keep or exclude")
    return {"include_controls": controls == "include", "exclude_flagged": flagged == "exclude"}


def agreement_overview(*, study: Study) -> list[dict[str, Any]]:
    """Point estimates for every (pool, rateable question) of the study, for the report index."""
    out = []
    for pool in Pool.objects.filter(study=study).prefetch_related("questions").order_by("name"):
        for question in pool.questions.all():
            if question.kind not in RATEABLE:
                continue
            rep = agreement_report(pool=pool, question=question)
            out.append({"pool": pool, "question": question, "report": rep})
    return out


def pair_matrix(report: dict[str, Any]) -> dict[str, Any]:
    """The annotator × annotator κ matrix as rows for a template (diagonal empty)."""
    names = report.get("raters") or []
    by_pair = {}
    for p in report.get("cohen_kappa_pairs") or []:
        by_pair[(p["rater_a"], p["rater_b"])] = p
        by_pair[(p["rater_b"], p["rater_a"])] = p
    rows = [{"rater": a, "cells": [None if a == b else by_pair.get((a, b)) for b in names]} for a in names]
    return {"names": names, "rows": rows}


def agreement_params_parse(*, pool_id: int, question: str, query: Any) -> dict[str, Any]:
    """The parameters that key an agreement report and its bootstrap (weights follow the question)."""
    n_boot, seed = bootstrap_params(query.get("n_boot"), query.get("seed"))
    params: dict[str, Any] = {"pool": pool_id, "question": question, "weights": None, "n_boot": n_boot, "seed": seed}
    # Only options that differ from the defaults are part of the key, so existing bootstraps keep theirs.
    params.update({k: v for k, v in quality_params_parse(query).items() if v})
    return params
