"""The lexical backend: token overlap, ROUGE-L and BLEU on worked examples, and the BEGIN baseline figure."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from scoring.backends import get_backend
from scoring.backends.lexical import bleu, rouge_l, unigram_precision_recall
from scoring.metrics import MetricError

# The BEGIN CMU-DoG dev split kept in the repository.
BEGIN_DEV = Path(__file__).resolve().parents[2] / "data" / "demo" / "begin_cmudog" / "begin_dev_cmu.tsv"


def test_unigram_precision_and_recall_count_repeats_against_the_other_sides_vocabulary():
    # Candidate tokens: the, cat, the, dog (4); reference {the, cat, sat}: precision 3/4.
    # Reference tokens: the, cat, sat (3); candidate {the, cat, dog}: recall 2/3.
    assert unigram_precision_recall("The cat, the dog!", "the cat sat") == pytest.approx((0.75, 2 / 3))
    assert unigram_precision_recall("", "anything") == (0.0, 0.0)


def test_rouge_l_is_the_longest_common_subsequence_ratio():
    # LCS("the cat sat", "the cat was sat") = 3 tokens: precision 3/3, recall 3/4, F1 = 6/7.
    assert rouge_l("the cat sat", "the cat was sat") == pytest.approx((1.0, 0.75, 6 / 7))


def test_bleu_is_one_for_an_identical_sentence_and_zero_without_overlap():
    assert bleu("the patient was given aspirin", ["the patient was given aspirin"]) == pytest.approx(1.0)
    assert bleu("completely unrelated words here", ["the patient was given aspirin"]) == 0.0


def test_lexical_support_measure_is_selectable_and_recorded_in_the_identity():
    backend = get_backend("lexical", measure="rouge_l")
    assert "rouge_l" in backend.identity and "rouge-score==0.1.2" in backend.identity
    (j,) = backend.supports(["the cat sat"], ["the cat was sat"])
    assert (j.verdict, j.score) == (True, 1.0)
    with pytest.raises(MetricError, match="lexical measure"):
        get_backend("lexical", measure="meteor")


def test_lexical_sentence_kinds_and_coverage_use_documented_thresholds():
    backend = get_backend("lexical")
    simp, elab = backend.sentence_kinds(["Drug X lowered blood pressure.", "Blood pressure is the force of blood."],
                                        ["Drug X lowered blood pressure in adults."])
    assert (simp.details["kind"], elab.details["kind"]) == ("simplification", "elaboration")
    # Aspect content tokens {kidney, function} vs claim tokens: 1/2 < 0.6; {dose, mg} 2/2.
    kidney, dose = backend.covers(["kidney function", "dose in mg"], ["Check kidney levels.", "The dose is 5 mg."])
    assert (kidney.verdict, kidney.score, dose.verdict) == (False, 0.5, True)


def test_unigram_precision_reproduces_the_begin_cmudog_lexical_baseline_auc():
    # BEGIN MANIFEST: lexical baseline AUC 0.96729 for Fully vs Not fully attributable (Generic excluded, n=337).
    from sklearn.metrics import roc_auc_score

    backend = get_backend("lexical")
    labels, scores = [], []
    with BEGIN_DEV.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader)
        for row in reader:
            knowledge, response, label = row[2].strip(), row[4].strip(), row[5].strip()
            if label == "Generic":
                continue
            labels.append(label == "Fully attributable")
            scores.append(backend.supports([response], [knowledge])[0].score)
    assert len(labels) == 337
    assert round(roc_auc_score(labels, scores), 5) == 0.96729


@pytest.mark.parametrize(
    ("sentence", "rule"),
    [
        ("Hello!", "too_short"),
        ("Have you seen the movie?", "question_to_user"),
        ("Thanks for asking!", "thanks"),
        ("I'm sorry to hear that you're feeling unwell.", "empathy"),
        ("Great question.", "acknowledgement"),
        ("Let me know if you have any other questions.", "follow_up_offer"),
        ("Ibuprofen reduces fever.", None),
        ("I understand, aspirin thins blood.", None),
        ("If you have chest pain, call 911 immediately.", None),
        ("Sure, the recommended dose is 500 mg every six hours.", None),
    ],
)
def test_the_conversational_rule_set_separates_formulas_from_information(sentence, rule):
    (j,) = get_backend("lexical").informative([sentence])
    assert j.details["rule"] == rule
    assert j.verdict is (rule is None)
