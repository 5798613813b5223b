"""Contradictions are caught, not passed as support (``scoring.metrics.contradiction`` in every backend).

Worked example (issue 14's review): against "Use the eye drops four times a day.", the claim "Do not use the
eye drops four times a day." shares every content word (lexical unigram precision 0.80, cosine ≈ 0.9), so
similarity alone calls it supported. The negation makes it a contradiction.

The test set (tests/scoring/data/contradiction_pairs.jsonl, built by bench/data/build_contradiction_set.py from
the K-QA and BEGIN copies under data/demo/, provenance on every row) holds ≥ 60 pairs of each kind.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scoring.backends import get_backend
from scoring.metrics import contradiction as C

EVIDENCE = "Use the eye drops four times a day."
SET = Path(__file__).parent / "data" / "contradiction_pairs.jsonl"


@pytest.mark.parametrize(("claim", "kind"), [
    ("Do not use the eye drops four times a day.", "negation"),
    ("Use the eye drops twice a day.", "frequency"),
    ("Use the ear drops four times a day.", "body_part"),
])
def test_the_worked_example_and_its_slots(claim, kind):
    assert [m.kind for m in C.mismatches(claim, EVIDENCE)] == [kind]


@pytest.mark.parametrize(("claim", "evidence", "kinds"), [
    ("Take 250 mg of paracetamol.", "Take 500 mg of paracetamol.", ["dose"]),
    ("Take 500 g of paracetamol.", "Take 500 mg of paracetamol.", ["unit"]),
    ("Take 500 mg of ibuprofen.", "Take 500 mg of paracetamol.", ["drug"]),
    ("Avoid swimming for 3 weeks.", "Avoid swimming for 2 weeks.", ["number"]),
    ("Put one drop in your left eye.", "Put one drop in your right eye.", ["body_part"]),
    # Equal or equivalent: no mismatch.
    ("Take 0.5 g of paracetamol.", "Take 500 mg of paracetamol.", []),
    ("Use the eye drops every 6 hours.", EVIDENCE, []),
    ("Don't rub your eye.", "Do not rub your eye.", []),
    ("Take Tylenol for the pain.", "Take paracetamol for the pain.", []),
    # Unrelated sentences are not compared.
    ("Ibuprofen can upset the stomach.", "Wear the eye shield at night.", []),
])
def test_mismatch_kinds(claim, evidence, kinds):
    assert [m.kind for m in C.mismatches(claim, evidence)] == kinds


# A drug named on one side only is a lack of support, not a contradiction: the drug slot contradicts only
# when each side names a drug the other does not (counted as mentions, brand names folded into the generic).
PAIN = "for the pain."


@pytest.mark.parametrize(("claim", "evidence"), [
    (f"Take 500 mg of ibuprofen {PAIN}", f"Take 500 mg {PAIN}"),  # only the claim names a drug
    (f"Take 500 mg {PAIN}", f"Take 500 mg of ibuprofen {PAIN}"),  # only the sentence names one
    (f"Take ibuprofen and paracetamol {PAIN}", f"Take paracetamol {PAIN}"),  # the claim names one more
    (f"Take paracetamol {PAIN}", f"Take ibuprofen and paracetamol {PAIN}"),  # the sentence names one more
    (f"Take paracetamol, sold as Tylenol, {PAIN}", f"Take paracetamol {PAIN}"),  # the same drug named twice
])
def test_a_drug_named_on_one_side_only_is_not_a_contradiction(claim, evidence):
    assert C.match_f1(claim, evidence) >= C.MIN_MATCH  # the two say the same thing: the drug slot is compared
    assert C.mismatches(claim, evidence) == []
    assert C.drugs(claim) != C.drugs(evidence) or C.drug_mentions(claim) != C.drug_mentions(evidence)


@pytest.mark.parametrize(("claim", "evidence", "named"), [
    (f"Take ibuprofen {PAIN}", f"Take paracetamol {PAIN}", ("ibuprofen", "paracetamol")),
    (f"Take ibuprofen and aspirin {PAIN}", f"Take paracetamol {PAIN}", ("aspirin, ibuprofen", "paracetamol")),
    # Mentions are counted: the claim names ibuprofen once more, the sentence paracetamol once more.
    (f"Take ibuprofen or ibuprofen {PAIN}", f"Take ibuprofen or paracetamol {PAIN}", ("ibuprofen", "paracetamol")),
])
def test_a_drug_on_each_side_that_the_other_does_not_name_is_a_contradiction(claim, evidence, named):
    assert [(m.kind, m.claim, m.evidence) for m in C.mismatches(claim, evidence)] == [("drug", *named)]


@pytest.mark.parametrize("backend_name", ["lexical", "embedding"])
def test_backends_judge_the_negated_claim_contradicted(backend_name):
    backend = get_backend(backend_name)
    negated, same = backend.supports(["Do not use the eye drops four times a day.", EVIDENCE], [EVIDENCE])
    assert (negated.verdict, negated.label) == (False, "contradicted")
    assert negated.details["contradiction"]["verdict_before"] is True  # similarity alone said supported
    assert negated.details["contradiction"]["mismatches"][0]["kind"] == "negation"
    assert (same.verdict, same.label) == (True, "supported")


def test_the_contradiction_feeds_cf_as_ungrounded():
    from scoring.metrics import ChunkInput, ItemInput, get_metric

    item = ItemInput(id="i", question="How often?", answer="Do not use the eye drops four times a day.",
                     sentences=["Do not use the eye drops four times a day."],
                     contexts=[ChunkInput(rank=1, text=EVIDENCE)])
    cf = get_metric("cf")
    (score, sentence) = cf.score(item, get_backend("lexical"), cf.resolve_params({}))
    assert score.value == 0.0
    assert sentence.details["grounding_details"]["label"] == "contradicted"


def _pairs() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines()]


def test_the_set_has_sixty_contradictions_of_each_kind_and_supported_paraphrases_with_provenance():
    pairs = _pairs()
    counts = Counter((p["kind"], p["label"]) for p in pairs)
    for kind in (k for k in C.KINDS if k != "polarity"):  # polarity: the natural set (test_contradiction_polarity)
        assert counts[kind, "contradicted"] >= 60, kind
        assert counts[kind, "supported"] >= 60, kind
        assert counts[kind, "contradicted"] + counts[kind, "supported"] >= 100, kind
    assert counts["natural", "supported"] >= 60
    assert all(p["source"].startswith(("kqa/", "begin_cmudog/")) and p["transform"] for p in pairs)


def test_lexical_accuracy_on_the_set():
    # Figures of bench/evaluations/contradiction_accuracy.py for lexical (this commit, 1,188 pairs): contradictions
    # 0.966 (473 of 496 labelled contradicted), supported 0.939. A regression in the check or the lexicons fails here.
    backend = get_backend("lexical")
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for pair in _pairs():
        (j,) = backend.supports([pair["claim"]], [pair["evidence"]])
        total[pair["label"]] += 1
        right[pair["label"]] += bool(j.verdict) == (pair["label"] == "supported")
    assert right["contradicted"] / total["contradicted"] >= 0.96
    assert right["supported"] / total["supported"] >= 0.93
