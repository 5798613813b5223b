"""Training a judge over plain data: reading labelled files, refusals, cross-validated figures."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.judges.features import featurize, lexical_pair
from scoring.judges.training import (
    Example,
    TrainingError,
    bootstrap_auc,
    check_examples,
    choose,
    compare,
    figures,
    fold_plan,
    rank_auc,
    read_labelled_file,
    reliability,
    train,
    wilson,
)
from tests.scoring.judge_support import labelled_jsonl, labelled_records


def test_a_jsonl_file_is_read_with_evidence_as_string_or_list():
    content = b'{"text": "a", "evidence": ["x", "y"], "label": 1}\n\n{"text": "b", "evidence": "z", "label": 0}\n'
    a, b = read_labelled_file(content, "data.jsonl")
    assert (a.text, a.evidence, a.label, b.evidence, b.label) == ("a", "x y", True, "z", False)
    assert a.group != b.group


def test_a_csv_file_is_read_with_its_columns():
    (ex,) = read_labelled_file(b"text,evidence,label\nclaim,source text,1\n", "data.csv")
    assert (ex.text, ex.evidence, ex.label) == ("claim", "source text", True)


@pytest.mark.parametrize("line, message", [
    ('{"text": "b", "evidence": "z", "label": 2}', "line 2: field 'label' must be 0 or 1"),
    ('{"text": "", "evidence": "z", "label": 1}', "line 2: field 'text' must be a non-empty string"),
    ('{"text": "b", "evidence": 5, "label": 1}', "line 2: field 'evidence' must be a string or a list"),
    ('not json', "line 2: not valid JSON"),
    ('["text"]', "line 2: expected an object"),
])
def test_a_malformed_line_is_named_by_number(line, message):
    content = ('{"text": "a", "evidence": "x", "label": 1}\n' + line + "\n").encode()
    with pytest.raises(TrainingError, match=message.replace("(", r"\(")):
        read_labelled_file(content, "data.jsonl")


def test_a_csv_without_the_label_column_is_refused():
    with pytest.raises(TrainingError, match="line 1: the CSV header lacks label"):
        read_labelled_file(b"text,evidence\na,b\n", "x.csv")


def test_fewer_than_ten_examples_of_a_class_is_refused():
    examples = [Example("t", True, "e")] * 10 + [Example("u", False, "e")] * 9
    with pytest.raises(TrainingError, match=r"at least 10 examples of each class.*10 positive and 9 negative"):
        check_examples(examples, "supports")


def test_pair_tasks_need_evidence_and_informative_takes_none():
    with pytest.raises(TrainingError, match="example 1: task 'supports' needs evidence"):
        check_examples([Example("t", True)], "supports")
    with pytest.raises(TrainingError, match="takes no evidence"):
        check_examples([Example("t", True, "e")], "informative")
    with pytest.raises(TrainingError, match=r"cross-encoder judges .* pairs"):
        check_examples([Example("t", True)], "informative", "cross-encoder")


def test_wilson_interval_matches_newcombes_worked_example():
    # Newcombe RG (1998), Statistics in Medicine 17:857-872, Table I example (81/263): 0.2553 to 0.3662.
    low, high = wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_reliability_bins_report_mean_prediction_observed_rate_and_count():
    y = np.array([0, 0, 1, 1, 1])
    p = np.array([0.05, 0.15, 0.12, 0.95, 1.0])
    bins = reliability(y, p)
    assert [(b["bin_low"], b["n"]) for b in bins] == [(0.0, 1), (0.1, 2), (0.9, 2)]
    assert bins[1]["fraction_positive"] == 0.5 and bins[1]["mean_predicted"] == pytest.approx(0.135)


def test_figures_give_the_confusion_matrix_at_the_threshold_and_intervals_around_the_estimates():
    y = np.array([1, 1, 1, 0, 0, 0, 1, 0])
    p = np.array([0.9, 0.8, 0.4, 0.3, 0.6, 0.1, 0.7, 0.2])
    f = figures(y, p)
    assert f["confusion"] == {"tp": 3, "fp": 1, "tn": 3, "fn": 1}
    # 15 of the 16 (positive, negative) pairs are ordered correctly.
    assert f["accuracy"] == 0.75 and f["auc"] == pytest.approx(15 / 16)
    assert f["auc_ci"][0] <= f["auc"] <= f["auc_ci"][1] and f["accuracy_ci"][0] < 0.75 < f["accuracy_ci"][1]
    assert bootstrap_auc(y, p) == bootstrap_auc(y, p)  # seeded


def test_the_rank_auc_used_in_the_bootstrap_equals_scikit_learns_with_ties():
    from sklearn.metrics import roc_auc_score

    y = np.array([1, 1, 0, 0, 1, 0, 0])
    p = np.array([0.5, 0.9, 0.5, 0.1, 0.3, 0.3, 0.8])
    assert rank_auc(p[y == 1], p[y == 0]) == pytest.approx(roc_auc_score(y, p))


def test_folds_keep_every_example_of_one_group_together():
    examples = [Example(f"t{i}", i % 2 == 0, "e", group=f"item-{i // 4}") for i in range(40)]
    k, fold_of_group = fold_plan(examples, 5)
    assert k == 5 and set(fold_of_group) == {f"item-{i}" for i in range(10)}
    assert set(fold_of_group.values()) == set(range(5))


def _one_per_group(n_positive: int, n_negative: int) -> list[Example]:
    return [Example(f"p{i}", True, "e", group=f"p{i}") for i in range(n_positive)] + [
        Example(f"n{i}", False, "e", group=f"n{i}") for i in range(n_negative)
    ]


@pytest.mark.parametrize(("n_positive", "n_negative"), [(3, 20), (20, 3)])
def test_folds_are_capped_by_the_smaller_class_so_that_every_fold_holds_one_of_it(n_positive, n_negative):
    examples = _one_per_group(n_positive, n_negative)
    k, fold_of_group = fold_plan(examples, 5)
    assert k == 3  # five folds asked, three examples in the smaller class
    smaller = [e.group for e in examples if e.label == (n_positive < n_negative)]
    assert sorted(fold_of_group[g] for g in smaller) == [0, 1, 2]
    assert set(fold_of_group.values()) == {0, 1, 2}


@pytest.mark.parametrize(("n_smaller", "k"), [(5, 5), (6, 5), (4, 4)])
def test_the_cap_binds_only_below_the_folds_asked_for(n_smaller, k):
    """Both sides of the cap: a smaller class of at least as many examples as folds keeps the folds asked for."""
    assert fold_plan(_one_per_group(n_smaller, 20), 5)[0] == k
    assert fold_plan(_one_per_group(20, n_smaller), 5)[0] == k


def test_lexical_features_see_overlap_numbers_and_negation():
    supported = lexical_pair("Take 5 mg daily.", "Take 5 mg daily. Avoid alcohol.")
    wrong_number = lexical_pair("Take 50 mg daily.", "Take 5 mg daily. Avoid alcohol.")
    negated = lexical_pair("Do not take 5 mg daily.", "Take 5 mg daily.")
    assert supported[0] == 1.0 and supported[6] == 1.0 and supported[7] == 0.0
    assert wrong_number[6] == 0.0 and wrong_number[7] == 1.0
    assert negated[8] == 1.0


def test_training_on_a_small_labelled_set_separates_the_classes_in_cross_validation():
    examples = read_labelled_file(labelled_jsonl(), "claims.jsonl")
    trained = train(examples, task="supports", model_type="logistic", feature_set="lexical", folds=4)
    f = trained.evaluation.figures
    assert (f["n"], f["n_positive"], trained.evaluation.folds) == (28, 14, 4)
    assert f["auc"] > 0.9 and f["accuracy"] > 0.8
    assert len(trained.fold_models) == 4 and len(trained.fold_of_group) == 28
    X = featurize("lexical", None, [e.text for e in examples], [e.evidence or "" for e in examples])
    assert trained.final.predict_proba(X)[:14 * 2:2, 1].min() > 0.5  # supported claims in-sample


def test_labelled_records_have_both_classes():
    labels = [r["label"] for r in labelled_records()]
    assert labels.count(1) == labels.count(0) == 14


# --- which candidate is kept: the one-standard-error rule ----------------------------------------------------


def _summary(feature_set: str, auc: float, ci: tuple[float, float], model_type: str = "logistic") -> dict:
    return {"model_type": model_type, "feature_set": feature_set, "auc": auc, "auc_ci": list(ci)}


def test_the_simplest_candidate_within_one_standard_error_of_the_best_is_kept():
    # Hand-worked with the figures of a judge trained on BEGIN CMU-DoG (bench/evaluations/judge_transfer_wow.py):
    # best = combined 0.960 [0.940, 0.977]; SE = (0.977 - 0.940) / 3.92 = 0.00944; cut = 0.960 - 0.00944 = 0.9506.
    # lexical 0.954 >= 0.9506 and is the simplest: kept. embedding 0.906 is outside.
    summaries = [_summary("combined", 0.960, (0.940, 0.977)), _summary("lexical", 0.954, (0.920, 0.980)),
                 _summary("embedding", 0.906, (0.869, 0.939))]
    assert choose(summaries) == 1
    # lexical at 0.950 is below the cut (0.9506): the best is kept.
    summaries[1]["auc"] = 0.950
    assert choose(summaries) == 0
    # Within the cut but more complex than another within it: embedding 0.955 vs lexical 0.954 -> lexical.
    summaries = [_summary("combined", 0.960, (0.940, 0.977)), _summary("embedding", 0.955, (0.93, 0.97)),
                 _summary("lexical", 0.954, (0.92, 0.98))]
    assert choose(summaries) == 2


def test_the_rule_never_keeps_an_undefined_auc_and_a_cross_encoder_is_the_most_complex():
    nan = float("nan")
    assert choose([_summary("lexical", nan, (nan, nan)), _summary("combined", 0.8, (0.7, 0.9))]) == 1
    assert choose([_summary("pair-text", 0.90, (0.88, 0.92), "cross-encoder"),
                   _summary("combined", 0.895, (0.85, 0.93))]) == 1


def test_compare_marks_the_kept_candidate_first(tmp_path):
    examples = [Example(text=f"aspirin reduces fever {i}", evidence="aspirin reduces fever", label=True)
                for i in range(12)]
    examples += [Example(text=f"the moon is made of cheese {i}", evidence="aspirin reduces fever", label=False)
                 for i in range(12)]
    kept = compare(examples, task="supports", candidates=[("logistic", "lexical")], folds=3)
    assert kept.comparison[0]["chosen"] is True and kept.comparison[0]["feature_set"] == "lexical"
