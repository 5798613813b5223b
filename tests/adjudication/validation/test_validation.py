"""Validation studies: independence and blinding checks, the four templates, hand-checked figures."""

from __future__ import annotations

import statistics

import pytest
from scipy import stats

from adjudication.models import ValidationStudy
from adjudication.services import aspect_decide
from adjudication.stats.validation_stats import mean_ci, paired_difference
from adjudication.validation.inputs import validation_checks_preview, validation_inputs_parse
from adjudication.validation.services import validation_study_create, validation_study_run
from annotation.models import Aspect, Assignment, Exposure, ExposureKind, Role, Visibility
from annotation.protocols import study_protocol_apply
from annotation.services import aspect_propose, pool_assign_items
from concord.errors import ValidationFailed
from tests import factories
from tests.adjudication import validation_support as vs_support
from tests.adjudication.validation_support import auc_by_counting, cohen_kappa_by_hand, label_all, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _figure(results, key, name, target=None):
    for analysis in results["analyses"]:
        if analysis["key"] == key and (target is None or analysis["target"] == target):
            for f in analysis["figures"]:
                if f["name"] == name:
                    return f
    raise AssertionError(
        f"no figure {name!r} in {key}: "
        + repr([(a["key"], a["target"], [f["name"] for f in a["figures"]]) for a in results["analyses"]])
    )


def _analysis(results, key, target=None):
    return next(a for a in results["analyses"] if a["key"] == key and (target is None or a["target"] == target))


def _inputs(study, **data):
    if data.get("target_question") == "perceived_faithfulness":
        # The researcher's cut-off, given explicitly: the service has no default for an ordinal target.
        data.setdefault("positive", "3")
    return validation_inputs_parse(study=study, data={"n_boot": "200", **data})


def test_an_ordinal_target_without_an_explicit_cut_off_is_refused(researcher):
    s = vs_support.build(researcher)
    data = {"n_boot": "200", "template": "astrid", "target_pool": s["pool_b"].pk,
            "target_question": "perceived_faithfulness", "metric_pool": s["pool_a"].pk}
    with pytest.raises(ValidationFailed, match="choose the cut-off"):
        validation_inputs_parse(study=s["study"], data=data)


# --- pure figures --------------------------------------------------------------------------------


def test_a_mean_comes_with_the_student_t_interval_worked_by_hand():
    values = [0.5, 1.0, 0.0, 0.5]
    est = mean_ci(values)
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    half = stats.t.ppf(0.975, 3) * sd / 2  # √4 = 2
    assert est.value == pytest.approx(0.5) and est.n_units == 4
    assert est.ci95 == pytest.approx((mean - half, mean + half))
    assert est.ci_method.startswith("Student t")


def test_a_mean_of_nothing_is_undefined_and_one_value_has_no_interval():
    assert mean_ci([], n_excluded=3).value is None and mean_ci([], n_excluded=3).n_excluded == 3
    one = mean_ci([0.25])
    assert one.value == 0.25 and one.ci95 is None
    diff = paired_difference([1.0, 0.5], [0.5, 0.5])
    assert diff.value == pytest.approx(0.25) and diff.n_units == 2


# --- checks ----------------------------------------------------------------------------------------


def test_a_study_whose_pools_share_an_annotator_is_refused_with_the_reason(researcher):
    s = vs_support.build(researcher, independent=False)
    factories.add_member(s["pool_b"], s["a_user"], "B3")
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    with pytest.raises(ValidationFailed) as refused:
        validation_study_create(study=s["study"], actor=researcher, inputs=inputs)
    assert "belong to both pools" in refused.value.message and "A1 (A) = B3 (B)" in refused.value.message
    assert not ValidationStudy.objects.exists()


def test_running_anyway_is_recorded_and_stamps_not_independent_on_the_results(researcher):
    s = vs_support.build(researcher, independent=False)
    factories.add_member(s["pool_b"], s["a_user"], "B3")
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    vs = validation_study_create(
        study=s["study"],
        actor=researcher,
        inputs=inputs,
        run_anyway=True,
        override_reason="pilot: only three clinicians available",
    )
    assert vs.not_independent and not vs.checks_passed
    vs = validation_study_run(validation_study=vs, actor=researcher)
    assert vs.results["not_independent"] is True
    assert vs.results["stamp"].startswith("NOT INDEPENDENT") and "pilot" in vs.results["stamp"]


def test_independent_blinded_pools_pass_every_blocking_check(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_b(s)
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    checks = {c["key"]: c for c in validation_checks_preview(inputs=inputs)}
    assert checks["pools_disjoint"]["status"] == "pass"
    assert checks["roles_blind"]["status"] == "pass"
    assert checks["pool_visibility"]["status"] == "pass"
    # Labels saved through the services, without any page read: no trail for those members.
    assert checks["exposure_trail"]["status"] == "warn"
    assert checks["human_ceiling"]["status"] == "pass"


def test_a_pool_b_member_shown_scores_or_pool_a_labels_fails_blinding_with_the_rows_counted(researcher):
    s = vs_support.build(researcher)
    bob, item = s["b_users"][0], s["items"][0]
    Exposure.objects.create(user=bob, pool=s["pool_b"], item=item, kind=ExposureKind.ITEM_PAGE)
    Exposure.objects.create(user=bob, pool=s["pool_b"], item=item, kind=ExposureKind.API, showed_scores=True)
    Exposure.objects.create(
        user=bob, pool=s["pool_a"], item=item, kind=ExposureKind.CALIBRATION, showed_other_labels=True
    )
    Exposure.objects.create(
        user=bob, pool=s["pool_a"], item=item, kind=ExposureKind.CALIBRATION, showed_other_labels=True
    )
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    trail = next(c for c in validation_checks_preview(inputs=inputs) if c["key"] == "exposure_trail")
    assert trail["status"] == "fail"
    assert (
        trail["data"]["showed_scores"],
        trail["data"]["showed_pool_a_labels"],
        trail["data"]["exposures_audited"],
    ) == (1, 2, 4)
    assert "3 of 4" in trail["detail"]
    with pytest.raises(ValidationFailed, match="showed scores"):
        validation_study_create(study=s["study"], actor=researcher, inputs=inputs)


def test_a_read_after_pool_b_finished_collecting_is_outside_the_audited_period(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_b(s)
    Exposure.objects.create(
        user=s["b_users"][0], pool=s["pool_b"], item=s["items"][0], kind=ExposureKind.API, showed_scores=True
    )
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    trail = next(c for c in validation_checks_preview(inputs=inputs) if c["key"] == "exposure_trail")
    assert trail["data"]["showed_scores"] == 0 and trail["data"]["period_open"] is False


def test_a_pool_b_member_who_adjudicates_the_study_fails_the_access_rule_check(researcher):
    s = vs_support.build(researcher)
    factories.grant(s["study"], s["b_users"][1], Role.ADJUDICATOR)
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    with pytest.raises(ValidationFailed, match="B2 \\(adjudicator\\)"):
        validation_study_create(study=s["study"], actor=researcher, inputs=inputs)


def test_calibration_within_pool_b_is_a_warning_not_a_refusal(researcher):
    s = vs_support.build(researcher)
    s["pool_b"].visibility = Visibility.AFTER_SUBMIT
    s["pool_b"].save()
    Exposure.objects.create(
        user=s["b_users"][0],
        pool=s["pool_b"],
        item=s["items"][0],
        kind=ExposureKind.CALIBRATION,
        showed_other_labels=True,
    )
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    checks = {c["key"]: c for c in validation_checks_preview(inputs=inputs)}
    assert checks["pool_visibility"]["status"] == "warn" and checks["exposure_trail"]["status"] == "pass"
    assert validation_study_create(study=s["study"], actor=researcher, inputs=inputs).checks_passed


def test_a_study_that_later_fails_a_check_is_refused_at_run_time(researcher):
    s = vs_support.build(researcher)
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    vs = validation_study_create(study=s["study"], actor=researcher, inputs=inputs)
    Exposure.objects.create(
        user=s["b_users"][0], pool=s["pool_b"], item=s["items"][0], kind=ExposureKind.API, showed_scores=True
    )
    with pytest.raises(ValidationFailed, match="now fails"):
        validation_study_run(validation_study=vs, actor=researcher)
    vs.refresh_from_db()
    assert vs.results is None


def test_pool_b_with_one_annotator_per_item_has_no_ceiling_and_says_so(researcher):
    s = vs_support.build(researcher)
    s["pool_b"].overlap = 1
    s["pool_b"].save()
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_pool=s["pool_a"].pk,
    )
    ceiling = next(c for c in validation_checks_preview(inputs=inputs) if c["key"] == "human_ceiling")
    assert ceiling["status"] == "warn" and "k=1" in ceiling["detail"] and not ceiling["blocking"]


# --- ASTRID ----------------------------------------------------------------------------------------

CF = [0.9, 0.6, 0.1, 0.8, 0.3, 0.6]
RF = [0.7, 0.2, 0.4, 0.9, 0.1, 0.5]


def test_astrid_figures_match_aucs_counted_by_hand(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_a(s)
    vs_support.label_pool_b(s)
    study, items = s["study"], s["items"]
    cf = make_run(study, "cf", {i.pk: v for i, v in zip(items, CF, strict=True)})
    rf = make_run(study, "rf", {i.pk: v for i, v in zip(items, RF, strict=True)})
    inputs = _inputs(
        study,
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        target_mode="per_annotator",
        metric_run=cf.pk,
        compare_run=rf.pk,
        metric_pool=s["pool_a"].pk,
        metric_rater="A1",
    )
    vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    # Positive = "3" or more (the middle of 1..5, in the declared order).
    b1 = [1 if int(a) >= 3 else 0 for a, _ in vs_support.PF]
    target = "pool B annotator B1"
    assert _figure(results, "automated_cf", f"CF (run #{cf.pk}, lexical): ROC AUC", target)["value"] == pytest.approx(
        auc_by_counting(CF, b1)
    )
    auc = _figure(results, "automated_cf", f"CF (run #{cf.pk}, lexical): ROC AUC", target)
    assert auc["n_units"] == 6 and auc["ci95"][0] <= auc["value"] <= auc["ci95"][1]
    assert _figure(results, "human_cf", "human CF (A, A1): ROC AUC", target)["value"] == pytest.approx(
        auc_by_counting(vs_support.HUMAN_CF, b1)
    )
    diff = _figure(
        results, "cf_vs_rf", f"CF (run #{cf.pk}) − RF (run #{rf.pk}): AUC difference (paired DeLong)", target
    )
    assert diff["value"] == pytest.approx(auc_by_counting(CF, b1) - auc_by_counting(RF, b1))
    assert diff["n_units"] == 6
    # The human ceiling: pool B's two annotators, linear-weighted κ on the 5-point scale, with n.
    assert results["human_ceiling"]["n_raters"] == 2 and results["human_ceiling"]["n_units"] == 6
    assert results["stamp"] is None


def test_astrid_without_an_rf_run_or_pool_a_names_each_missing_input(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_b(s)
    cf = make_run(s["study"], "cf", {i.pk: v for i, v in zip(s["items"], CF, strict=True)})
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_run=cf.pk,
    )
    vs = validation_study_create(study=s["study"], actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    assert _analysis(results, "automated_cf")["status"] == "ok"
    assert _analysis(results, "cf_vs_rf")["missing"] == [
        "no comparison run (RF): choose a completed rf score run of this study"
    ]
    assert _analysis(results, "human_cf")["missing"][0].startswith("no pool A")
    # The majority of two raters keeps only the items they agree on (one here: 4 and 4); the AUC
    # says it is undefined and why, with its n, rather than inventing a value.
    auc = _figure(results, "automated_cf", f"CF (run #{cf.pk}, lexical): ROC AUC")
    assert auc["n_units"] == 1 and auc["value"] is None and "both classes" in auc["reason"]


def test_a_run_that_is_not_done_is_named_as_not_done(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_b(s)
    cf = make_run(
        s["study"],
        "cf",
        {},
    )
    cf.status = "running"
    cf.save()
    inputs = _inputs(
        s["study"],
        template="astrid",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_run=cf.pk,
    )
    vs = validation_study_create(study=s["study"], actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    assert (
        f"the metric run (automated CF) (run #{cf.pk}, cf) is running, not done"
        in _analysis(results, "automated_cf")["missing"]
    )


# --- ICAT ------------------------------------------------------------------------------------------

B1 = {
    0: {"a": "yes", "b": "no", "c": "yes"},
    1: {"a": "yes", "b": "yes", "c": "no"},
    2: {"a": "no", "b": "no"},
    3: {"a": "yes", "b": "no"},
}
B2 = {
    0: {"a": "yes", "b": "yes", "c": "yes"},
    1: {"a": "yes", "b": "no", "c": "no"},
    2: {"a": "no", "b": "no"},
    3: {"a": "yes", "b": "no"},
}
ICAT_ASPECTS = {0: {"a": 1, "b": 0, "c": 1}, 1: {"a": 1, "b": 0, "c": 0}, 2: {"a": 0, "b": 0}, 3: {"a": 1, "b": 1}}


def _icat_study(researcher):
    study = factories.make_study(owner=researcher, slug="icat-validation")
    study_protocol_apply(study=study, presets=["icat"])
    q = {question.key: question for question in study.questions.all()}
    proposer = factories.make_user("pat-proposer")
    pool_a = factories.make_pool(study, "A", questions=[q["aspect_covered"], q["missing_aspects"]], overlap=1)
    factories.add_member(pool_a, proposer, "A1")
    pool_b = factories.make_pool(study, "B", questions=[q["aspect_covered"]], overlap=2)
    b_users = [factories.make_user("bob-pool-b"), factories.make_user("bea-pool-b")]
    for n, user in enumerate(b_users, start=1):
        factories.add_member(pool_b, user, f"B{n}")
    items, aspects = [], {}
    for n in range(4):
        item = factories.make_item(study, f"q{n}")
        items.append(item)
        aspects[n] = {name: Aspect.objects.create(item=item, text=f"aspect {name} of {n}") for name in ("a", "b")}
    pool_assign_items(pool=pool_a)
    for n in (0, 1):
        # An annotator of pool A proposes a missing aspect; the researcher accepts it (version 2).
        assignment = Assignment.objects.get(pool=pool_a, item=items[n])
        proposed = aspect_propose(
            assignment=assignment, actor=proposer, text=f"missing aspect of {n}", importance="must_have"
        )
        aspects[n]["c"] = aspect_decide(aspect_id=proposed.pk, actor=researcher, accept=True)
    pool_assign_items(pool=pool_b)
    for user, table in zip(b_users, (B1, B2), strict=True):
        for n, item in enumerate(items):
            assignment = Assignment.objects.get(pool=pool_b, item=item, annotator=user)
            label_all(assignment, {("aspect_covered", f"a:{aspects[n][k].pk}"): v for k, v in table[n].items()}, q)
    run = make_run(study, "icat", {})
    from scoring.models import Score

    Score.objects.bulk_create(
        Score(run=run, item=items[n], unit_key=f"a:{aspects[n][k].pk}", value=float(v), state="ok")
        for n, row in ICAT_ASPECTS.items()
        for k, v in row.items()
    )
    return study, items, aspects, pool_a, pool_b, run


def test_icat_reports_coverage_under_the_original_and_the_expanded_aspect_set_as_worked_by_hand(researcher):
    study, _items, _aspects, pool_a, pool_b, run = _icat_study(researcher)
    inputs = _inputs(
        study,
        template="icat",
        target_pool=pool_b.pk,
        target_question="aspect_covered",
        target_mode="per_annotator",
        metric_run=run.pk,
        metric_pool=pool_a.pk,
    )
    vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    target = "pool B annotator B1"

    def cov(table, names):
        return [sum(1 for k in names(n) if table[n][k] in ("yes", 1)) / len(names(n)) for n in range(4)]

    original = lambda n: ("a", "b")  # noqa: E731
    expanded = lambda n: tuple(ICAT_ASPECTS[n])  # noqa: E731
    b1_orig, b1_exp = cov(B1, original), cov(B1, expanded)
    orig = _figure(results, "coverage_by_aspect_set", "human coverage (pool B), original set: mean per item", target)
    half = stats.t.ppf(0.975, 3) * statistics.stdev(b1_orig) / 2
    assert orig["value"] == pytest.approx(statistics.fmean(b1_orig)) and orig["n_units"] == 4
    assert orig["ci95"] == pytest.approx([statistics.fmean(b1_orig) - half, statistics.fmean(b1_orig) + half])
    exp = _figure(results, "coverage_by_aspect_set", "human coverage (pool B), expanded set: mean per item", target)
    assert exp["value"] == pytest.approx(statistics.fmean(b1_exp))
    icat_exp = _figure(
        results, "coverage_by_aspect_set", f"ICAT coverage (run #{run.pk}), expanded set: mean per item", target
    )
    assert icat_exp["value"] == pytest.approx(statistics.fmean(cov(ICAT_ASPECTS, expanded)))
    # Per-aspect AUC of ICAT's verdicts against B1 on the original set, counted pair by pair.
    units = [(n, k) for n in range(4) for k in ("a", "b")]
    auc = _figure(results, "icat_vs_human", "ICAT vs pool B, original set: ROC AUC of the per-aspect verdicts", target)
    assert auc["value"] == pytest.approx(
        auc_by_counting([ICAT_ASPECTS[n][k] for n, k in units], [1 if B1[n][k] == "yes" else 0 for n, k in units])
    )
    assert auc["n_units"] == 8
    note = _analysis(results, "coverage_by_aspect_set", target)["notes"][0]
    assert "original set: 8 aspects" in note.lower() and "10 aspects, 2 of them accepted proposals" in note
    # The ceiling: Cohen's κ of B1 and B2 over the ten aspect units (binary, unweighted).
    order = [(n, k) for n in range(4) for k in ICAT_ASPECTS[n]]
    kappa = cohen_kappa_by_hand([B1[n][k] for n, k in order], [B2[n][k] for n, k in order], ["yes", "no"])
    assert results["human_ceiling"]["cohen_kappa"]["value"] == pytest.approx(kappa)
    assert results["human_ceiling"]["cohen_kappa"]["n_units"] == 10
    # Pool A only proposed aspects; it has submitted no coverage labels, and the analysis says so.
    assert _analysis(results, "pool_a_vs_pool_b", target)["missing"] == [
        "pool A (A) has no gold labels on aspect_covered yet"
    ]


# --- PubHealthBench ----------------------------------------------------------------------------------


def test_pubhealth_retrieval_and_rubric_under_single_target_and_multi_label_relevance(researcher):
    study = factories.make_study(owner=researcher, slug="pubhealth-validation")
    study_protocol_apply(study=study, presets=["pubhealth"])
    q = {question.key: question for question in study.questions.all()}
    pool_b = factories.make_pool(study, "B", questions=[q["supports_answer"]], overlap=1)
    bob = factories.make_user("bob-pool-b")
    factories.add_member(pool_b, bob, "B1")
    # (target rank, ranks pool B marks as supporting) per item, three chunks each.
    design = [(1, {1}), (2, {1, 2}), (3, {1}), (1, {2, 3})]
    items = []
    for n, (target, _) in enumerate(design):
        item = factories.make_item(study, f"p{n}")
        for rank in (1, 2, 3):
            factories.make_chunk(item, rank, f"chunk {rank}", is_labelled_target=rank == target)
        items.append(item)
    pool_assign_items(pool=pool_b)
    for item, (_, supporting) in zip(items, design, strict=True):
        assignment = Assignment.objects.get(pool=pool_b, item=item)
        label_all(assignment, {("supports_answer", f"c:{r}"): "yes" if r in supporting else "no" for r in (1, 2, 3)}, q)
    faith = [5, 4, 2, 3]
    rubric = make_run(
        study,
        "rubric",
        {i.pk: 3.0 for i in items},
        details={i.pk: {"ratings": {"faithfulness": f}} for i, f in zip(items, faith, strict=True)},
    )
    inputs = _inputs(
        study,
        template="pubhealth",
        target_pool=pool_b.pk,
        target_question="supports_answer",
        metric_run=rubric.pk,
        k="1",
    )
    vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    # MRR by hand: single target at ranks 1, 2, 3, 1 → 1, 1/2, 1/3, 1; multi-label first hits 1, 1, 1, 2 → 1, 1, 1, 1/2.
    single = _figure(results, "retrieval", "mrr, single target: mean")
    multi = _figure(results, "retrieval", "mrr, multi-label (pool B): mean")
    assert single["value"] == pytest.approx(statistics.fmean([1, 1 / 2, 1 / 3, 1])) and single["n_units"] == 4
    assert multi["value"] == pytest.approx(statistics.fmean([1, 1, 1, 1 / 2]))
    assert _figure(results, "retrieval", "p@1, single target: mean")["value"] == pytest.approx(0.5)
    assert _figure(results, "retrieval", "p@1, multi-label (pool B): mean")["value"] == pytest.approx(0.75)
    diff = _figure(results, "retrieval", "mrr: multi-label − single target, paired")
    assert diff["value"] == pytest.approx(multi["value"] - single["value"])
    # Supported under single-target: pool B marked the target chunk → items 0, 1 yes; 2, 3 no.
    auc_single = _figure(results, "rubric_faithfulness", "rubric faithfulness vs single-target support: ROC AUC")
    assert auc_single["value"] == pytest.approx(auc_by_counting(faith, [1, 1, 0, 0]))
    # Under multi-label relevance every answer is supported by some chunk: one class, AUC undefined.
    auc_multi = _figure(results, "rubric_faithfulness", "rubric faithfulness vs multi-label support: ROC AUC")
    assert auc_multi["value"] is None and "both classes" in auc_multi["reason"]
    assert next(c for c in results["checks"] if c["key"] == "human_ceiling")["status"] == "warn"


# --- PlainQAFact ---------------------------------------------------------------------------------------


def test_plainqafact_explanation_only_auc_kind_aware_against_source_only_paired(researcher):
    study = factories.make_study(owner=researcher, slug="plainqafact-validation")
    judged = factories.make_question(study, "explanation_faithful")
    pool_b = factories.make_pool(study, "B", questions=[judged], overlap=1)
    bob = factories.make_user("bob-pool-b")
    factories.add_member(pool_b, bob, "B1")
    items = [factories.make_item(study, f"s{n}", source="The abstract.") for n in range(6)]
    pool_assign_items(pool=pool_b)
    truth = [1, 1, 0, 1, 0, 0]
    for item, t in zip(items, truth, strict=True):
        label_all(
            Assignment.objects.get(pool=pool_b, item=item),
            {("explanation_faithful", "item"): "yes" if t else "no"},
            {"explanation_faithful": judged},
        )
    kind_aware = [0.9, 0.7, 0.2, 0.6, 0.3, 0.1]
    source_only = [0.5, 0.2, 0.4, 0.6, 0.1, 0.3]
    a = make_run(
        study,
        "plainqafact",
        {i.pk: 0.5 for i in items},
        parameters={"knowledge": "kb"},
        details={i.pk: {"explanation_score": v} for i, v in zip(items, kind_aware, strict=True)},
    )
    b = make_run(
        study,
        "plainqafact",
        {i.pk: 0.5 for i in items},
        parameters={"knowledge": "none"},
        details={i.pk: {"explanation_score": v} for i, v in zip(items, source_only, strict=True)},
    )
    inputs = _inputs(
        study,
        template="plainqafact",
        target_pool=pool_b.pk,
        target_question="explanation_faithful",
        metric_run=a.pk,
        compare_run=b.pk,
    )
    vs = validation_study_create(study=study, actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    name_a, name_b = f"kind-aware (run #{a.pk})", f"source-only (run #{b.pk})"
    assert _figure(results, "explanation_only_auc", f"{name_a}: ROC AUC (paired units)")["value"] == pytest.approx(
        auc_by_counting(kind_aware, truth)
    )
    assert _figure(results, "explanation_only_auc", f"{name_b}: ROC AUC (paired units)")["value"] == pytest.approx(
        auc_by_counting(source_only, truth)
    )
    diff = _figure(results, "explanation_only_auc", f"{name_a} − {name_b}: AUC difference (paired DeLong)")
    assert diff["value"] == pytest.approx(auc_by_counting(kind_aware, truth) - auc_by_counting(source_only, truth))


def test_plainqafact_on_a_study_without_its_runs_says_which_input_is_missing(researcher):
    s = vs_support.build(researcher)
    vs_support.label_pool_b(s)
    cf = make_run(s["study"], "cf", {i.pk: v for i, v in zip(s["items"], CF, strict=True)})
    inputs = _inputs(
        s["study"],
        template="plainqafact",
        target_pool=s["pool_b"].pk,
        target_question="perceived_faithfulness",
        metric_run=cf.pk,
    )
    vs = validation_study_create(study=s["study"], actor=researcher, inputs=inputs)
    results = validation_study_run(validation_study=vs, actor=researcher).results
    missing = _analysis(results, "explanation_only_auc")["missing"]
    assert missing == [
        f"the metric run (kind-aware PlainQAFact) is run #{cf.pk}, a cf run; this analysis needs a plainqafact run",
        "no comparison run (a source-only metric): choose a completed score run of this study",
    ]
    assert _analysis(results, "explanation_only_auc")["figures"] == []


def test_bad_inputs_are_refused_before_anything_is_written(researcher, stranger):
    s = vs_support.build(researcher)
    with pytest.raises(ValidationFailed, match="metric side"):
        _inputs(s["study"], template="astrid", target_pool=s["pool_b"].pk, target_question="perceived_faithfulness")
    with pytest.raises(ValidationFailed, match="template"):
        _inputs(s["study"], template="nope", target_pool=s["pool_b"].pk, target_question="perceived_faithfulness")
    with pytest.raises(ValidationFailed, match="answers no question"):
        _inputs(
            s["study"],
            template="astrid",
            target_pool=s["pool_b"].pk,
            target_question="grounded",
            metric_pool=s["pool_a"].pk,
        )
    other = factories.make_study(owner=stranger)
    foreign = make_run(other, "cf", {})
    with pytest.raises(Exception, match="no such score run"):
        _inputs(
            s["study"],
            template="astrid",
            target_pool=s["pool_b"].pk,
            target_question="perceived_faithfulness",
            metric_run=foreign.pk,
        )
    assert not ValidationStudy.objects.exists()


def test_a_metric_is_offered_only_against_the_human_questions_it_estimates(researcher):
    # CF estimates perceived faithfulness (ASTRID §4.2.1), not harm: the report lists CF against
    # perceived_faithfulness and never against "harmful", and refuses the pair when asked for it.
    from adjudication.analysis.validity import ValidityParams, validity_pairs, validity_report
    from annotation.models import Pool

    s = vs_support.build(researcher)
    harm_pool = factories.make_pool(s["study"], "H", questions=[s["questions"]["harmful"]], overlap=1)
    cf = vs_support.make_run(s["study"], "cf", {item.pk: 0.5 for item in s["items"]})
    offered = {(p["source"].key, p["question"].key) for p in validity_pairs(study=s["study"])}
    assert (f"run:{cf.pk}", "perceived_faithfulness") in offered
    assert (f"run:{cf.pk}", "harmful") not in offered
    assert isinstance(harm_pool, Pool)
    params = ValidityParams(source=f"run:{cf.pk}", pool_id=harm_pool.pk, question="harmful", positive="slight")
    with pytest.raises(ValidationFailed, match="does not estimate 'harmful'"):
        validity_report(study=s["study"], params=params)
    inputs = {"n_boot": "200", "template": "astrid", "target_pool": harm_pool.pk, "target_question": "harmful",
              "positive": "slight", "metric_run": cf.pk}
    with pytest.raises(ValidationFailed, match="does not estimate 'harmful'"):
        validation_inputs_parse(study=s["study"], data=inputs)
