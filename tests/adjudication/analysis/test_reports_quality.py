"""The validity report with items of known answer and flagged annotators (docs/guide/quality.md), on the
twelve-item study of test_reports.py: items q00 and q01 become control items whose known "pf" is "yes"."""

from __future__ import annotations

import numpy as np
import pytest

from adjudication.analysis.validity import validity_params_parse, validity_report
from adjudication.stats import validity as va
from annotation import quality
from tests.adjudication.analysis.test_reports import METRIC, fixture_study, score_run  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_controls(fixture_study):  # noqa: F811
    study, pool = fixture_study["study"], fixture_study["pool"]
    for item in fixture_study["items"][:2]:
        quality.control_mark(study=study, item=item, kind="control", answers_raw={"pf": "yes"}, explanation="",
                             actor=None)
    # On q00 and q01 (PF rows 0 and 1) A1 says yes, yes (2/2), A2 yes, yes (2/2), A3 yes, no (1/2 = 0.5 < 0.6).
    pool.flag_below = 0.6
    pool.save(update_fields=["flag_below"])
    return fixture_study


def _report(fixture, run, **query):
    vp = validity_params_parse(
        study=fixture["study"],
        query={"source": f"run:{run.pk}", "pool": fixture["pool"].pk, "question": "pf", **query},
    )
    return validity_report(study=fixture["study"], params=vp)


def test_validity_leaves_control_items_out_unless_asked(with_controls, score_run):  # noqa: F811
    default = _report(with_controls, score_run)
    # Majority of PF on q02..q10 (q11 is undetermined in the run): no, no, yes, yes, no, yes, no, yes, no.
    majority = [0, 0, 1, 1, 0, 1, 0, 1, 0]
    assert default["n_units_both"] == 9
    assert default["auc"]["value"] == pytest.approx(va.roc_auc(np.array(METRIC[2:11]), np.array(majority, float)).value)
    assert default["quality"]["controls_included"] is False
    assert default["quality"]["n_control_ratings_excluded"] == 6  # 2 items x 3 annotators
    included = _report(with_controls, score_run, controls="include")
    assert included["n_units_both"] == 11 and included["quality"]["n_control_ratings_excluded"] == 0


def test_validity_can_leave_flagged_annotators_out_and_says_whom(with_controls, score_run):  # noqa: F811
    rep = _report(with_controls, score_run, flagged="exclude")
    assert rep["quality"]["excluded_annotators"] == ["A3"]
    assert rep["human_ceiling"]["n_raters"] == 2
    # A1 and A2 on q02..q10: no/no, no/no, yes/yes, yes/no (a tie: left out), no/no, yes/yes, no/no, yes/yes, no/-.
    assert rep["n_units_both"] == 8
    assert rep["human_excluded"]["majority_ties"] == 1
