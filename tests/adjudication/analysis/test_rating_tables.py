"""rating_tables_load reads a pool's ratings a range of items at a time and keeps only their tables: the units,
raters, counts, tables and reports must be ratings_load's to the last digit, whatever the ranges (here a few items
each, so that units, raters and unit keys straddle them), on both databases."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from adjudication.analysis import rating_tables
from adjudication.analysis.agreement import agreement_report
from adjudication.analysis.loading import ratings_load
from adjudication.analysis.rating_tables import rating_tables_load
from adjudication.stats import agreement as ag
from annotation.models import AssignmentStatus, ControlItem, Label
from tests import factories

HARM = [{"value": v, "label": v, "key": str(i)} for i, v in enumerate(["none", "slight", "moderate", "severe"], 1)]
ROLES = [{"value": v, "label": v, "key": str(i)} for i, v in enumerate(["background", "definition", "example"], 1)]
N_ITEMS, N_RATERS = 30, 7
# Sentence keys whose text order is not their number's ("s:10" < "s:2"): units within an item go by the text.
SENTENCES = ["s:0", "s:2", "s:10"]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _value(rng: np.random.Generator, kind: str, truth: int) -> object:
    agree = rng.random() < 0.7
    if kind in ("binary", "sentence"):
        return ["yes", "no"][truth % 2 if agree else int(rng.integers(2))]
    if kind == "ordinal":
        return HARM[truth % 4 if agree else int(rng.integers(4))]["value"]
    return [r["value"] for j, r in enumerate(ROLES) if (truth >> j) & 1 or (not agree and rng.random() < 0.3)]


@pytest.fixture
def pool(study):
    """30 items, each rated by 1 to 4 of 7 annotators on four questions (one of sentence scope, three sentences an
    item); answers off the scale, a cleared one, a draft, two items of known answer, an annotator whose every answer
    is off the scale, one with assignments and no submitted label, one member with no assignment at all."""
    questions = {
        "binary": factories.make_question(study, "pf"),
        "ordinal": factories.make_question(study, "harm", kind="ordinal", options=HARM, order=1),
        "multilabel": factories.make_question(study, "role", kind="multilabel", options=ROLES, order=2),
        "sentence": factories.make_question(study, "grounded", scope="sentence", order=3),
    }
    pool = factories.make_pool(study, "seven", questions=list(questions.values()), overlap=3)
    users = [factories.make_user(f"rater{i}") for i in range(N_RATERS)]
    # Members joined in an order that is not their user ids' (raters are numbered by user id).
    for i in (3, 0, 6, 1, 5, 2, 4):
        factories.add_member(pool, users[i], pseudonym=f"R{i + 1}")
    factories.add_member(pool, factories.make_user("idle"), pseudonym="R-idle")
    rng = np.random.default_rng(23)
    labels = []
    for i in range(N_ITEMS):
        item = factories.make_item(study, f"it{i:02d}")
        if i in (4, 17):
            ControlItem.objects.create(item=item, answers={"pf": "yes"})
        truth = int(rng.integers(8))
        who = rng.choice(N_RATERS - 1, size=1 + i % 4, replace=False)
        if i % 5 == 0:
            who = np.append(who, N_RATERS - 1)  # R7: only ever off the scale
        for r in who:
            a = factories.make_assignment(
                pool, item, users[r], status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            for kind, q in questions.items():
                # Some items with one sentence only, so that some ranges hold only some of the keys.
                for key in (SENTENCES if i % 6 != 3 else ["s:2"]) if kind == "sentence" else ["item"]:
                    value = _value(rng, kind, truth)
                    if r == N_RATERS - 1 or (i == 5 and r == who[0]):
                        value = {"binary": "maybe", "sentence": "perhaps", "ordinal": "awful", "multilabel": ["x"]}[
                            kind]
                    if i == 9 and r == who[-1]:
                        value = None  # a cleared answer: no rating
                    labels.append(Label(assignment=a, question=q, unit_key=key, value=value, version=1,
                                        updated_by=users[r], updated_at=timezone.now()))
    waiting = factories.make_user("waiting")
    factories.add_member(pool, waiting, pseudonym="R-waiting")
    draft = factories.make_assignment(pool, item, waiting)
    labels.append(Label(assignment=draft, question=questions["binary"], unit_key="item", value="no", version=1,
                        updated_by=waiting, updated_at=timezone.now()))
    Label.objects.bulk_create(labels)
    return pool, questions, users


OPTIONS = [
    {},
    {"include_controls": True},
    {"exclude": (1, 4)},
]


def _options(users, option):
    out = {"include_controls": option.get("include_controls", False)}
    out["exclude_raters"] = frozenset(users[i].pk for i in option.get("exclude", ()))
    return out


def _same_tables(got: ag.CategoricalTables, want: ag.CategoricalTables, *, counts: bool = True) -> None:
    if counts:
        np.testing.assert_array_equal(got.counts, want.counts)
    else:
        assert got.counts is None
    np.testing.assert_array_equal(got.patterns.rows, want.patterns.rows)
    np.testing.assert_array_equal(got.patterns.weights, want.patterns.weights)
    np.testing.assert_array_equal(got.pairs, want.pairs)
    np.testing.assert_array_equal(got.n_rated, want.n_rated)
    assert (got.rests is None) == (want.rests is None)
    if want.rests is not None:
        np.testing.assert_array_equal(got.rests, want.rests)
        np.testing.assert_array_equal(got.rest_excluded, want.rest_excluded)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["binary", "ordinal", "sentence", "multilabel"])
@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("step", [1, 3, 7, 10_000])
def test_read_a_range_of_items_at_a_time_the_tables_are_the_whole_reads(pool, kind, option, step):
    pool, questions, users = pool
    question = questions[kind]
    kw = _options(users, option)
    whole = ratings_load(pool=pool, question=question, **kw)
    got = rating_tables_load(pool=pool, question=question, step=step, **kw)
    assert list(got.units) == list(whole.units)
    assert len(got.units.keys) == len(set(got.units.keys))
    assert got.rater_ids == whole.rater_ids
    assert got.rater_names == whole.rater_names
    assert users[-1].pk in got.rater_ids  # only off the scale, and still one of the raters (as in the matrix)
    assert (got.n_off_scale_ratings, got.n_control_ratings_excluded, got.n_rater_ratings_excluded) == (
        whole.n_off_scale_ratings, whole.n_control_ratings_excluded, whole.n_rater_ratings_excluded)
    assert got.n_off_scale_ratings > 0
    if kind == "multilabel":
        assert got.tables is None and whole.option_entries is not None and got.option_tables is not None
        assert list(got.option_tables) == list(whole.option_entries)
        for option_key, entries in whole.option_entries.items():
            _same_tables(got.option_tables[option_key], ag.categorical_tables(entries, 2))
        np.testing.assert_array_equal(got.n_ratings, whole.entries.per_unit())
    else:
        assert got.tables is not None
        _same_tables(got.tables, ag.categorical_tables(whole.entries, len(question.option_values)))
        np.testing.assert_array_equal(got.counts, whole.counts)
        np.testing.assert_array_equal(got.n_ratings, whole.entries.per_unit())
    # Read with nothing kept per unit: the same patterns and tables, the same unit counts, no unit's own arrays.
    flat = rating_tables_load(pool=pool, question=question, step=step, per_unit=False, **kw)
    per_unit = whole.entries.per_unit()
    assert flat.units is None and flat.option_n_ratings is None and flat.n_units == len(whole.units)
    assert (flat.n_rated_units, flat.n_single_units) == (int((per_unit > 0).sum()), int((per_unit == 1).sum()))
    for option_key, tables in (flat.option_tables or {"": flat.tables}).items():
        want = got.option_tables[option_key] if kind == "multilabel" else got.tables
        _same_tables(tables, want, counts=False)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["binary", "ordinal", "sentence", "multilabel"])
@pytest.mark.parametrize("option", OPTIONS)
def test_the_agreement_report_from_the_tables_is_the_report_from_every_rating(pool, kind, option):
    pool, questions, users = pool
    question = questions[kind]
    kw = _options(users, option)
    report = {"include_controls": kw["include_controls"], "n_boot": 30, "seed": 4}
    whole = agreement_report(pool=pool, question=question, ratings=ratings_load(pool=pool, question=question, **kw),
                             **report)
    tables = rating_tables_load(pool=pool, question=question, step=4, **kw)
    got = agreement_report(pool=pool, question=question, ratings=tables, **report)
    assert json.dumps(got, sort_keys=True) == json.dumps(whole, sort_keys=True)
    assert got["bootstrap"] == {"n": 30, "seed": 4}
    # Without ratings given, the report reads the tables itself (one range: the default step).
    if not option:
        assert json.dumps(agreement_report(pool=pool, question=question, **report), sort_keys=True) == json.dumps(
            whole, sort_keys=True)


@pytest.mark.django_db
def test_a_rater_the_numbering_missed_stops_the_read(pool, monkeypatch):
    pool, questions, users = pool
    real = rating_tables._pool_annotators
    missing = users[2].pk
    monkeypatch.setattr(rating_tables, "_pool_annotators", lambda pool_id: real(pool_id)[real(pool_id) != missing])
    with pytest.raises(RuntimeError, match="changed while its labels were read"):
        rating_tables_load(pool=pool, question=questions["binary"], step=3)
    # The largest user id of a rater missing (after the drafts' annotator's): it would be numbered past the rest.
    largest = max(u.pk for u in users)
    monkeypatch.setattr(rating_tables, "_pool_annotators", lambda pool_id: real(pool_id)[real(pool_id) < largest])
    with pytest.raises(RuntimeError, match="changed while its labels were read"):
        rating_tables_load(pool=pool, question=questions["binary"], step=3)


@pytest.mark.django_db
def test_the_numbering_holds_every_annotator_with_an_assignment_in_the_pool(pool):
    pool, _, users = pool
    found = rating_tables._pool_annotators(pool.pk).tolist()
    want = sorted({u.pk for u in users} | {get_user_model().objects.get(username="waiting").pk})
    assert found == want


@pytest.mark.django_db
def test_a_number_question_is_not_read_as_tables(study):
    question = factories.make_question(study, "minutes", kind="number", options=[])
    pool = factories.make_pool(study, "n", questions=[question])
    with pytest.raises(ValueError, match="categorical or multi-label"):
        rating_tables_load(pool=pool, question=question)


@pytest.mark.django_db(transaction=True)
def test_every_range_is_read_from_one_snapshot_on_postgresql(study, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("REPEATABLE READ is PostgreSQL's; SQLite reads one file under one transaction")
    question = factories.make_question(study, "pf")
    pool = factories.make_pool(study, "snap", questions=[question])
    user = factories.make_user("snap-rater")
    factories.add_member(pool, user, pseudonym="S1")
    for i in range(3):
        a = factories.make_assignment(pool, factories.make_item(study, f"snap{i}"), user,
                                      status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now())
        Label.objects.create(assignment=a, question=question, unit_key="item", value="yes", version=1,
                             updated_by=user, updated_at=timezone.now())
    seen = []
    real = rating_tables._label_rows

    def spy(*args):
        with connection.cursor() as cursor:
            cursor.execute("SHOW transaction_isolation")
            seen.append(cursor.fetchone()[0])
        return real(*args)

    monkeypatch.setattr(rating_tables, "_label_rows", spy)
    got = rating_tables_load(pool=pool, question=question, step=1)
    assert int(got.counts.sum()) == 3
    assert len(seen) == 3 and set(seen) == {"repeatable read"}


@pytest.mark.django_db
def test_the_range_read_leaves_the_planner_settings_of_the_callers_transaction_as_they_were(pool):
    if connection.vendor != "postgresql":
        pytest.skip("the range read's planner settings are PostgreSQL's")
    pool, questions, _ = pool
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = on")
        got = rating_tables_load(pool=pool, question=questions["binary"], step=4)
        cursor.execute("SELECT current_setting('jit')")
        after = cursor.fetchone()[0]
    assert int(got.counts.sum()) > 0
    assert after == "on"
