"""The validity report computes from one entry per rating (Ratings.entries), never from the units × raters matrix
(Ratings.codes), and says exactly what it said when it read the matrix: the majority and one rater's targets, and
the humans' binary Fleiss' κ beside the metric (same estimate, same bootstrap draws)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from adjudication.analysis import joined_rows, loading, rating_tables, validity
from adjudication.analysis.loading import Ratings, binary_target, human_target
from adjudication.analysis.rating_tables import RatingTables
from adjudication.analysis.validity import ValidityParams, validity_report
from adjudication.models import GoldLabel, GoldSource
from adjudication.stats import agreement as ag
from adjudication.stats import targets, validity_stream
from adjudication.stats import validity as va
from annotation.models import AssignmentStatus, Label, Question, QuestionKind
from concord.errors import NotFound
from scoring.models import RunStatus, Score, ScoreRun, ScoreState
from tests import factories
from tests.adjudication.close import assert_close

YES_NO = ["yes", "no"]
ROLES = ["background", "definition", "example"]
HARM = ["none", "slight", "moderate", "severe"]
SCALES = {"binary": YES_NO, "nominal": ROLES, "ordinal": HARM}
N_ITEMS, N_RATERS = 36, 6


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- the matrix path as it was (3897451), for comparison -------------------------------------------


def _matrix_human_target(
    *, pool: Any, question: Question, target: str, ratings: Ratings, include_controls: bool = False
) -> tuple[dict[tuple[int, str], float], dict[str, int]]:
    excluded: dict[str, int] = {}
    if target == "majority":
        assert ratings.scale is not None
        kept, winners, excluded["majority_ties"] = targets.majority(ratings.codes, len(ratings.scale))
        return {ratings.units[i]: float(w) for i, w in zip(kept, winners, strict=True)}, excluded
    if target.startswith("rater:"):
        name = target.split(":", 1)[1]
        if name not in ratings.rater_names:
            raise NotFound("no such annotator with labels on this question in this pool")
        col = ratings.codes[:, ratings.rater_names.index(name)]
        return {ratings.units[i]: float(col[i]) for i in np.nonzero(~np.isnan(col))[0]}, excluded
    return human_target(pool=pool, question=question, target=target, ratings=ratings, include_controls=include_controls)


def _matrix_human_target_arrays(**kwargs: Any) -> tuple[loading.UnitList, np.ndarray, dict[str, int]]:
    """:func:`_matrix_human_target` in the form the report reads (human_target_arrays): the units sorted as
    tuples, their values, what was left out."""
    values, excluded = _matrix_human_target(**kwargs)
    units = sorted(values)
    return loading.UnitList.from_pairs(units), np.array([values[u] for u in units], dtype=float), excluded


def _matrix_binary_fleiss(ratings: Ratings, question: Question, positive: str, *, n_boot: int, seed: int) -> Any:
    binary_codes = np.where(np.isnan(ratings.codes), np.nan, binary_target(question, ratings.codes, positive))
    return ag.fleiss_kappa(binary_codes, 2, n_boot=n_boot, seed=seed).as_dict()


# --- in memory: random matrices ------------------------------------------------------------------


def _question(kind: str) -> Question:
    return Question(key=f"q_{kind}", kind=kind, scope="item", options=[{"value": v} for v in SCALES[kind]])


def _random_ratings(seed: int, kind: str, n_units: int, n_raters: int, missing: float) -> Ratings:
    """Ratings of a random units × raters matrix (few categories, so ties are common), some units nobody rated."""
    rng = np.random.default_rng(seed)
    k = len(SCALES[kind])
    truth = rng.integers(k, size=n_units)
    codes = np.where(rng.random((n_units, n_raters)) < 0.5, truth[:, None], rng.integers(k, size=(n_units, n_raters)))
    codes = np.where(rng.random((n_units, n_raters)) < missing, np.nan, codes.astype(float))
    if n_units > 3:
        codes[n_units // 3] = np.nan  # a unit whose every rating was off the scale
    ratings = Ratings(
        _question(kind),
        [(1000 + u, "item") for u in range(n_units)],
        list(range(10, 10 + n_raters)),
        [f"R{r + 1}" for r in range(n_raters)],
        ag.SparseRatings.from_dense(codes),
        SCALES[kind],
        "ordinal" if kind == "ordinal" else "nominal",
    )
    return ratings


CASES = [
    (seed, kind, n_units, n_raters, missing)
    for seed in (0, 1, 2)
    for kind in ("binary", "nominal", "ordinal")
    for n_units, n_raters in ((1, 1), (2, 2), (40, 3), (150, 9))
    for missing in (0.0, 0.5, 0.9)
]


@pytest.mark.parametrize(("seed", "kind", "n_units", "n_raters", "missing"), CASES)
def test_the_majority_and_each_raters_target_are_the_matrixs_without_building_it(
    seed, kind, n_units, n_raters, missing
):
    ratings = _random_ratings(seed, kind, n_units, n_raters, missing)
    question = ratings.question
    got = [human_target(pool=None, question=question, target="majority", ratings=ratings)]
    got += [
        human_target(pool=None, question=question, target=f"rater:{name}", ratings=ratings)
        for name in ratings.rater_names
    ]
    assert "codes" not in vars(ratings)  # the cached matrix was never built
    expected = [_matrix_human_target(pool=None, question=question, target="majority", ratings=ratings)]
    expected += [
        _matrix_human_target(pool=None, question=question, target=f"rater:{name}", ratings=ratings)
        for name in ratings.rater_names
    ]
    # Same units in the same order, same values, same ties.
    assert [(list(h.items()), e) for h, e in got] == [(list(h.items()), e) for h, e in expected]
    if n_units >= 40 and missing < 0.9 and not (kind == "binary" and missing == 0.0 and n_raters % 2):
        assert expected[0][1]["majority_ties"] > 0  # the cases have ties
    with pytest.raises(NotFound):
        human_target(pool=None, question=question, target="rater:nobody", ratings=ratings)


@pytest.mark.parametrize(("seed", "kind", "n_units", "n_raters", "missing"), CASES)
def test_the_majority_from_the_entries_is_the_majority_of_the_matrix(seed, kind, n_units, n_raters, missing):
    ratings = _random_ratings(seed, kind, n_units, n_raters, missing)
    k = len(SCALES[kind])
    dense = ratings.entries.dense()
    np.testing.assert_array_equal(
        targets.category_counts_from_entries(ratings.entries, k), ag.category_counts(dense, k)
    )
    kept, winners, ties = targets.majority_from_entries(ratings.entries, k)
    kept0, winners0, ties0 = targets.majority(dense, k)
    assert (kept.tolist(), winners.tolist(), ties) == (kept0.tolist(), winners0.tolist(), ties0)
    assert kept.dtype == kept0.dtype and winners.dtype == winners0.dtype


def test_a_tie_is_left_out_and_counted():
    codes = np.array([[0, 1, np.nan], [1, 1, 0], [2, 0, 1], [np.nan, np.nan, np.nan], [2, 2, np.nan]])
    kept, winners, ties = targets.majority_from_entries(ag.SparseRatings.from_dense(codes), 3)
    assert (kept.tolist(), winners.tolist(), ties) == ([1, 4], [1, 2], 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kind", ["binary", "nominal", "ordinal"])
@pytest.mark.parametrize("n_boot", [0, 70])
def test_the_binary_fleiss_kappa_is_the_matrixs_without_building_it(seed, kind, n_boot):
    for n_units, n_raters, missing in ((1, 1, 0.0), (3, 2, 0.0), (60, 4, 0.3), (200, 9, 0.6), (120, 30, 0.9)):
        for positive in SCALES[kind]:
            ratings = _random_ratings(seed, kind, n_units, n_raters, missing)
            got = validity._binary_fleiss(ratings, ratings.question, positive, n_boot=n_boot, seed=seed + 5)
            assert "codes" not in vars(ratings)
            expected = _matrix_binary_fleiss(ratings, ratings.question, positive, n_boot=n_boot, seed=seed + 5)
            assert json.dumps(got) == json.dumps(expected)


# --- from the database: the whole report --------------------------------------------------------


def _label(assignment, question, value):
    return Label(
        assignment=assignment,
        question=question,
        unit_key="item",
        value=value,
        version=1,
        updated_by=assignment.annotator,
        updated_at=timezone.now(),
    )


@pytest.fixture
def validity_study(study, researcher):
    """36 items rated by 1 to 4 of 6 annotators on a binary, a nominal and an ordinal question (ties, an answer off
    the scale, a cleared one, a draft), gold on two thirds of them, and two score runs."""
    questions = {
        kind: factories.make_question(
            study,
            f"q_{kind}",
            kind=kind,
            options=[{"value": v, "label": v, "key": str(i)} for i, v in enumerate(SCALES[kind], 1)],
            order=n,
        )
        for n, kind in enumerate(SCALES)
    }
    pool = factories.make_pool(study, "raters", questions=list(questions.values()), overlap=3)
    users = [factories.make_user(f"val{i}") for i in range(N_RATERS)]
    for i, user in enumerate(users):
        factories.add_member(pool, user, pseudonym=f"R{i + 1}")
    rng = np.random.default_rng(7)
    items = [factories.make_item(study, f"v{i:02d}") for i in range(N_ITEMS)]
    labels, gold = [], []
    for i, item in enumerate(items):
        truth = int(rng.integers(12))
        who = rng.choice(N_RATERS, size=int(rng.integers(1, 5)), replace=False)
        for n, r in enumerate(who):
            a = factories.make_assignment(
                pool, item, users[r], status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            for kind, q in questions.items():
                scale = SCALES[kind]
                value: object = scale[truth % len(scale) if rng.random() < 0.6 else int(rng.integers(len(scale)))]
                if i == 4 and n == 0:
                    value = "off the scale"
                if i == 8 and n == 0:
                    value = None  # a cleared answer: no rating
                labels.append(_label(a, q, value))
        if i % 3:
            for kind, q in questions.items():
                scale = SCALES[kind]
                gold.append(
                    GoldLabel(
                        pool=pool,
                        item=item,
                        unit_key="item",
                        question=q,
                        value=scale[truth % len(scale)],
                        source=GoldSource.ADJUDICATED,
                    )
                )
    late = factories.make_user("late")
    factories.add_member(pool, late, pseudonym="R7")
    draft = factories.make_assignment(pool, items[0], late)
    labels.append(_label(draft, questions["binary"], "no"))
    Label.objects.bulk_create(labels)
    GoldLabel.objects.bulk_create(gold)
    runs = []
    for n in range(2):
        run = ScoreRun.objects.create(
            study=study,
            metric="cf",
            metric_version="1",
            backend="lexical",
            status=RunStatus.DONE,
            created_by=researcher,
        )
        Score.objects.bulk_create(
            Score(run=run, item=item, unit_key="item", value=float(rng.random()), state=ScoreState.OK) for item in items
        )
        Score.objects.filter(run=run, item=items[n + 2]).update(state=ScoreState.UNDETERMINED, value=None)
        runs.append(run)
    return {"study": study, "pool": pool, "questions": questions, "runs": runs}


def _read_whole(
    *, params: ValidityParams, pool: Any, question: Question, exclude: frozenset[int], join: Any
) -> tuple[Ratings, dict[str, int]]:
    """validity._read_joined as it was when a report read whole: every rating in one matrix, the human target and
    each metric's values of every unit as arrays, joined once."""
    target = params.target
    ratings = loading.ratings_load(
        pool=pool, question=question, include_controls=params.include_controls, exclude_raters=exclude
    )
    human_units, human_values, excluded = _matrix_human_target_arrays(
        pool=pool, question=question, target=target, ratings=ratings, include_controls=params.include_controls
    )
    metric = join.source.load()
    other = join.other.source.load() if join.other is not None else None
    join.add(human_units, human_values, metric, other)
    if other is not None:
        join.arrays = (human_units, human_values, metric, other)
    return ratings, excluded


def _arrays_comparison(join: Any) -> dict[str, Any]:
    """The paired comparison as it was computed from the arrays of every unit (validity's roc_auc, delong_paired)."""
    human_units, human_values, metric, other = join.arrays
    _, (at_human, at_a, at_b) = loading.common_units(human_units, metric.units, other.units)
    labels = binary_target(join.question, human_values[at_human], join.positive)
    a, b = metric.values[at_a], other.values[at_b]
    return validity.comparison_entry(
        join.other.source, int(at_human.size), va.roc_auc(a, labels), va.roc_auc(b, labels),
        va.delong_paired(a, b, labels),
    )


def _both_reports(
    monkeypatch, vs, params: ValidityParams, n_boot: int, seed: int, exact: bool = True
) -> tuple[str, str, list[RatingTables]]:
    """The report as computed now (its ratings read as tables, a range of five items at a time, its statistics from
    the joined rows) and as computed from the units × raters matrix of every rating (ratings_load) and every unit's
    arrays, and the tables it read."""
    loaded: list[RatingTables] = []

    def recording_load(**kwargs: Any) -> RatingTables:
        ratings = rating_tables.rating_tables_load(**kwargs, step=5)
        loaded.append(ratings)
        return ratings

    monkeypatch.setattr(validity, "rating_tables_load", recording_load)
    progress: list[tuple[int, int]] = []
    now = validity_report(
        study=vs["study"],
        params=params,
        n_boot=n_boot,
        seed=seed,
        progress=lambda done, total: progress.append((done, total)),
    )
    with monkeypatch.context() as m:
        m.setattr(validity, "_read_joined", _read_whole)  # every unit's target and score as arrays
        m.setattr(validity._Join, "comparison", _arrays_comparison)
        m.setattr(validity, "_binary_fleiss", _matrix_binary_fleiss)
        progress_before: list[tuple[int, int]] = []
        before = validity_report(
            study=vs["study"],
            params=params,
            n_boot=n_boot,
            seed=seed,
            progress=lambda done, total: progress_before.append((done, total)),
        )
    assert progress == progress_before
    if exact:  # the comparison to rounding; the rest (exact=True) to the last digit by the caller
        _same_comparison(now.pop("comparison"), before.pop("comparison"))
    return json.dumps(now), json.dumps(before), loaded


def _same_comparison(got: Any, expected: Any) -> None:
    """The paired comparison's AUCs and difference the same floats; its variances, computed from exact integer sums
    rather than np.cov's float ones, the same to rounding."""
    assert_close(got, expected, 1e-9, abs=1e-15)
    if expected is not None:
        for key in ("auc_a", "auc_b"):
            assert got[key]["value"] == expected[key]["value"]
        assert got["delong_paired"]["diff"] == expected["delong_paired"]["diff"]


@pytest.mark.parametrize("kind", ["binary", "nominal", "ordinal"])
@pytest.mark.parametrize("target", ["majority", "rater:R2", "rater:R5", "gold"])
@pytest.mark.parametrize("n_boot", [0, 40])
def test_the_validity_report_is_the_matrix_reports_without_building_the_matrix(
    monkeypatch, validity_study, kind, target, n_boot
):
    vs = validity_study
    positive = "slight" if kind == "ordinal" else SCALES[kind][-1 if target == "gold" else 0]
    params = ValidityParams(
        source=f"run:{vs['runs'][0].pk}",
        pool_id=vs["pool"].pk,
        question=f"q_{kind}",
        target=target,
        positive=positive,
        compare=f"run:{vs['runs'][1].pk}" if target != "rater:R5" else None,
    )
    now, before, loaded = _both_reports(monkeypatch, vs, params, n_boot, seed=3)
    assert isinstance(loaded[0], RatingTables)  # counts and tables: no entry per rating, no matrix
    assert now == before
    rep = json.loads(now)
    assert rep["n_units_both"] > 10 and rep["human_ceiling"]["binary_fleiss_kappa"]["value"] is not None
    if target == "majority":
        assert rep["human_excluded"]["majority_ties"] > 0
    if n_boot:
        assert rep["human_ceiling"]["binary_fleiss_kappa"]["ci95"] is not None


@pytest.mark.parametrize("kind", ["binary", "nominal", "ordinal"])
@pytest.mark.parametrize("target", ["majority", "rater:R2", "gold"])
@pytest.mark.parametrize("n_boot", [0, 40])
def test_read_a_range_at_a_time_the_report_is_the_report_of_every_units_arrays(
    monkeypatch, validity_study, kind, target, n_boot
):
    # Without a paired comparison the target and the metric's values are read and joined a range of items at a
    # time (five here: the ratings' ranges, and the gold's) into the table of distinct (score, label, target)
    # triples; the report is the one computed from every unit's arrays.
    vs = validity_study
    monkeypatch.setattr(validity, "STREAM_ITEMS", 5)
    positive = "slight" if kind == "ordinal" else SCALES[kind][0]
    params = ValidityParams(
        source=f"run:{vs['runs'][0].pk}", pool_id=vs["pool"].pk, question=f"q_{kind}", target=target,
        positive=positive,
    )
    joined: list[int] = []
    add = validity._Join.add
    monkeypatch.setattr(validity._Join, "add", lambda self, *a: joined.append(len(a[0])) or add(self, *a))
    now, before, loaded = _both_reports(monkeypatch, vs, params, n_boot, seed=5)
    assert now == before
    assert loaded[0].units is None and loaded[0].tables.counts is None  # nothing kept per unit
    rep = json.loads(now)
    assert rep["n_units_both"] > 10 and rep["n_units_metric"] == N_ITEMS - 1 and rep["n_metric_not_ok"] == 1
    assert len(joined) > 3  # several ranges, then the whole arrays once
    assert sum(joined[:-1]) == joined[-1] == rep["n_units_human"]


@pytest.mark.parametrize("kind", ["binary", "ordinal"])
@pytest.mark.parametrize("target", ["majority", "gold"])
def test_past_the_package_limit_the_report_is_computed_in_passes_over_the_rows_read_back(
    monkeypatch, validity_study, kind, target
):
    # Past MAX_UNITS_FOR_PACKAGE the statistics come from passes over the joined rows read back from the database
    # three rows a page (scores split between pages); with a paired comparison. The report is the whole arrays'
    # to rounding: the AUCs, the curve and the threshold exactly.
    vs = validity_study
    monkeypatch.setattr(validity, "STREAM_ITEMS", 5)
    monkeypatch.setattr(joined_rows, "PAGE_ROWS", 3)
    positive = "slight" if kind == "ordinal" else SCALES[kind][0]
    params = ValidityParams(
        source=f"run:{vs['runs'][0].pk}", pool_id=vs["pool"].pk, question=f"q_{kind}", target=target,
        positive=positive, compare=f"run:{vs['runs'][1].pk}",
    )
    streamed: list[int] = []
    stream_points = validity_stream.stream_points
    monkeypatch.setattr(
        validity_stream, "stream_points", lambda *a, **kw: streamed.append(1) or stream_points(*a, **kw)
    )
    monkeypatch.setattr(ag, "MAX_UNITS_FOR_PACKAGE", 5)
    pages: list[int] = []
    pieces = joined_rows.JoinedRows.pieces

    def counted(self: Any) -> Any:
        for piece in pieces(self):
            pages.append(piece.scores.size)
            yield piece

    monkeypatch.setattr(joined_rows.JoinedRows, "pieces", counted)
    now, before, _ = _both_reports(monkeypatch, vs, params, 30, seed=2, exact=False)
    assert streamed == [1, 1]  # the report now and the arrays' report: both past the limit
    assert max(pages) == 3 and len(pages) > 10
    now_report, before_report = json.loads(now), json.loads(before)
    assert now_report["n_units_both"] > 10
    _same_comparison(now_report.pop("comparison"), before_report.pop("comparison"))
    assert_close(now_report, before_report, 1e-9, abs=1e-15)
    for key in ("roc", "youden", "at_youden_threshold"):
        assert now_report[key] == before_report[key]
    assert now_report["auc"]["value"] == before_report["auc"]["value"]


def test_a_pool_without_ratings_gives_the_same_report(monkeypatch, validity_study):
    vs = validity_study
    Label.objects.filter(question=vs["questions"]["binary"]).delete()
    params = ValidityParams(
        source=f"run:{vs['runs'][0].pk}", pool_id=vs["pool"].pk, question="q_binary", target="gold", positive="yes"
    )
    now, before, loaded = _both_reports(monkeypatch, vs, params, 20, seed=1)
    assert isinstance(loaded[0], RatingTables)
    assert now == before and json.loads(now)["human_ceiling"]["binary_fleiss_kappa"] is None


def test_the_question_kinds_are_the_ones_the_report_takes():
    assert {QuestionKind.BINARY, QuestionKind.NOMINAL, QuestionKind.ORDINAL} == set(validity.CATEGORICAL)
