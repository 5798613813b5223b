"""The agreement report computes from one entry per rating (Ratings.entries), never from the units × raters matrix
(Ratings.codes, built only when another report asks for it), and says exactly what the matrix's summary says."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.utils import timezone

from adjudication.analysis.agreement import agreement_report
from adjudication.analysis.loading import OPTION_SCALE, ratings_load
from adjudication.stats import agreement as ag
from annotation.models import AssignmentStatus, Label
from tests import factories

HARM = [{"value": v, "label": v, "key": str(i)} for i, v in enumerate(["none", "slight", "moderate", "severe"], 1)]
ROLES = [{"value": v, "label": v, "key": str(i)} for i, v in enumerate(["background", "definition", "example"], 1)]
N_ITEMS, N_RATERS = 40, 8


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _value(rng: np.random.Generator, kind: str, truth: int) -> object:
    agree = rng.random() < 0.7
    if kind == "binary":
        return ["yes", "no"][truth % 2 if agree else int(rng.integers(2))]
    if kind == "ordinal":
        return HARM[truth % 4 if agree else int(rng.integers(4))]["value"]
    if kind == "number":
        return float(truth % 5) + (0.0 if agree else float(rng.integers(-2, 3)) / 2)
    return [r["value"] for j, r in enumerate(ROLES) if (truth >> j) & 1 or (not agree and rng.random() < 0.3)]


@pytest.fixture
def pool_of_eight(study):
    """40 items, each rated by 3 of 8 annotators (every seventh by one only) on four questions; a few answers off
    the scale, a cleared one, and a draft that must not count."""
    questions = {
        "binary": factories.make_question(study, "pf"),
        "ordinal": factories.make_question(study, "harm", kind="ordinal", options=HARM, order=1),
        "number": factories.make_question(study, "minutes", kind="number", options=[], order=2),
        "multilabel": factories.make_question(study, "role", kind="multilabel", options=ROLES, order=3),
    }
    pool = factories.make_pool(study, "eight", questions=list(questions.values()), overlap=3)
    users = [factories.make_user(f"rater{i}") for i in range(N_RATERS)]
    for i, user in enumerate(users):
        factories.add_member(pool, user, pseudonym=f"R{i + 1}")
    rng = np.random.default_rng(11)
    labels = []
    for i in range(N_ITEMS):
        item = factories.make_item(study, f"it{i:02d}")
        truth = int(rng.integers(8))
        who = rng.choice(N_RATERS, size=1 if i % 7 == 0 else 3, replace=False)
        for r in who:
            a = factories.make_assignment(
                pool, item, users[r], status=AssignmentStatus.SUBMITTED, submitted_at=timezone.now()
            )
            for kind, q in questions.items():
                value = _value(rng, kind, truth)
                if i == 5 and r == who[0]:
                    value = {"binary": "maybe", "ordinal": "awful", "number": "many", "multilabel": ["x"]}[kind]
                if i == 9 and r == who[1]:
                    value = None  # a cleared answer: no rating
                labels.append(
                    Label(assignment=a, question=q, unit_key="item", value=value, version=1,
                          updated_by=users[r], updated_at=timezone.now())
                )
    late = factories.make_user("late")
    factories.add_member(pool, late, pseudonym="R9")
    draft = factories.make_assignment(pool, item, late)
    labels.append(Label(assignment=draft, question=questions["binary"], unit_key="item", value="no", version=1,
                        updated_by=draft.annotator, updated_at=timezone.now()))
    Label.objects.bulk_create(labels)
    return pool, questions


@pytest.mark.parametrize("kind", ["binary", "ordinal", "number"])
@pytest.mark.parametrize("n_boot", [0, 60])
def test_the_report_is_the_matrix_summary_without_building_the_matrix(pool_of_eight, kind, n_boot):
    pool, questions = pool_of_eight
    ratings = ratings_load(pool=pool, question=questions[kind])
    rep = agreement_report(pool=pool, question=questions[kind], ratings=ratings, n_boot=n_boot, seed=4)
    assert "codes" not in vars(ratings)  # the cached matrix was never built
    assert rep["n_off_scale_ratings"] == 1 and rep["n_raters"] == N_RATERS and not rep["empty"]
    expected = ag.agreement_summary(
        ratings.codes,
        level=ratings.level,
        scale=ratings.scale,
        rater_names=ratings.rater_names,
        weights="linear" if kind == "ordinal" else "none",
        n_boot=n_boot,
        seed=4,
    )
    assert json.dumps({key: rep[key] for key in expected}) == json.dumps(expected)
    assert ratings.codes.shape == (N_ITEMS, N_RATERS)
    np.testing.assert_array_equal((~np.isnan(ratings.codes)).sum(), ratings.entries.unit.size)


@pytest.mark.parametrize("n_boot", [0, 40])
def test_a_multilabel_report_is_each_options_matrix_summary_without_building_the_matrices(pool_of_eight, n_boot):
    pool, questions = pool_of_eight
    ratings = ratings_load(pool=pool, question=questions["multilabel"])
    rep = agreement_report(pool=pool, question=questions["multilabel"], ratings=ratings, n_boot=n_boot, seed=2)
    assert "codes" not in vars(ratings) and "per_option" not in vars(ratings)
    assert rep["multilabel"] and rep["n_off_scale_ratings"] == 1
    n_ratings = (~np.isnan(ratings.codes)).sum(axis=1)
    assert rep["n_units"] == int((n_ratings > 0).sum())
    assert rep["n_excluded_units"] == int(((n_ratings > 0) & (n_ratings < 2)).sum())
    assert ratings.per_option is not None and list(ratings.per_option) == ["background", "definition", "example"]
    for got, (option, matrix) in zip(rep["per_option"], ratings.per_option.items(), strict=True):
        expected = ag.agreement_summary(
            matrix, level="nominal", scale=OPTION_SCALE, rater_names=ratings.rater_names, n_boot=n_boot, seed=2
        )
        assert got["option"] == option
        assert json.dumps({key: got[key] for key in expected}) == json.dumps(expected)
