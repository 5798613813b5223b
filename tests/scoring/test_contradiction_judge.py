"""The shipped contradiction judge (scoring/judges/contradiction_judge/): it loads over the packaged MiniLM,
its files match the digests it records, it refuses other base weights, and on hand-written pairs (written for
this test, not taken from any set it was trained on) it tells reversals from paraphrases; the embedding backend
records and applies it."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from scoring.backends import base as backend_base
from scoring.backends.embedding import weights_digest
from scoring.judges import contradiction_judge as cj

EVIDENCE = {
    "timing": "Take the tablets 30 minutes before meals, on an empty stomach.",
    "inhaler": "Stop using the reliever inhaler once your breathing has returned to normal.",
    "driving": "This medicine causes drowsiness, so driving while you take it is dangerous.",
    "diabetes": "Type 1 diabetes needs insulin from diagnosis, while type 2 is usually managed first with diet and "
                "tablets such as metformin.",
    "food": "The capsules can be taken with or without food.",
}
CONTRADICTED = [
    ("Take the tablets after you have eaten a meal.", "timing"),
    ("Keep using the reliever inhaler even after your breathing is back to normal.", "inhaler"),
    ("It is safe to drive while you take this medicine.", "driving"),
    ("Type 2 diabetes needs insulin from diagnosis, while type 1 is usually managed first with diet and tablets.",
     "diabetes"),
]
SUPPORTED = [
    ("Swallow the tablets half an hour before you eat.", "timing"),
    ("Once your breathing is normal again, you can stop the reliever inhaler.", "inhaler"),
    ("Because it makes you sleepy, it is unsafe to drive on this medicine.", "driving"),
    ("You can take the capsules with food.", "food"),
]


@pytest.fixture(scope="module")
def judge():
    return cj.get_judge()


def test_the_shipped_judge_loads_once_and_matches_its_recorded_digests(judge):
    assert cj.get_judge() is judge
    meta = json.loads((cj.ARTIFACT_DIR / cj.META).read_text())
    assert hashlib.sha256((cj.ARTIFACT_DIR / cj.TENSORS).read_bytes()).hexdigest() == meta["tensors_sha256"]
    assert weights_digest(cj.base_model_dir()) == meta["base_weights_digest"]
    assert 0.0 < judge.threshold < 1.0 and judge.version.startswith(cj.VERSION_PREFIX)
    assert (cj.ARTIFACT_DIR / cj.TENSORS).stat().st_size <= 8 * 1024 * 1024


def test_the_judge_tells_reversals_from_paraphrases(judge):
    p = judge.proba([(claim, EVIDENCE[key]) for claim, key in CONTRADICTED + SUPPORTED])
    verdicts = [bool(x >= judge.threshold) for x in p]
    expected = [True] * len(CONTRADICTED) + [False] * len(SUPPORTED)
    assert verdicts == expected, list(zip(verdicts, p.round(3), strict=True))


def test_the_embedding_backend_applies_and_records_the_judge(embedding_backend, judge):
    reversed_, paraphrase = embedding_backend.supports(
        [CONTRADICTED[0][0], SUPPORTED[0][0]], ["Keep the pack below 25 °C. " + EVIDENCE["timing"]])
    info = reversed_.details["contradiction_judge"]
    assert (reversed_.verdict, reversed_.label) == (False, "contradicted")
    assert info["probability"] >= info["threshold"] == judge.threshold and info["version"] == judge.version
    assert info["evidence_sentence"] == EVIDENCE["timing"] and info["verdict_before"] is True
    assert (paraphrase.verdict, paraphrase.label) == (True, "supported")
    assert paraphrase.details["contradiction_judge"]["probability"] < judge.threshold


def test_with_or_without_food_is_not_contradicted_by_with_food(embedding_backend):
    (j,) = embedding_backend.supports(["You can take the capsules with food."], [EVIDENCE["food"]])
    assert (j.verdict, j.label) == (True, "supported")


def test_the_judge_refuses_other_base_weights(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(cj.base_model_dir(), base)
    weights = base / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01  # one bit of the last weight changed
    weights.write_bytes(bytes(data))
    with pytest.raises(cj.ContradictionJudgeError, match=r"weights digest .* trained over"):
        cj.ContradictionJudge(base_dir=base)


def test_altered_tensors_are_refused(tmp_path):
    directory = tmp_path / "judge"
    shutil.copytree(cj.ARTIFACT_DIR, directory)
    tensors = directory / cj.TENSORS
    tensors.write_bytes(tensors.read_bytes() + b" ")
    with pytest.raises(cj.ContradictionJudgeError, match="sha256"):
        cj.ContradictionJudge(directory)


def test_only_the_listed_rule_kinds_force_a_contradiction():
    class Judge:
        threshold, version = 0.5, "t"

        def describe(self, p):
            return {"probability": p, "threshold": 0.5, "version": "t"}

    claim, sentence = "Do not use the eye drops four times a day.", "Use the eye drops four times a day."
    j = backend_base.apply_contradiction_judge(
        backend_base.Judgement(True, 0.9, {}), claim, [sentence], best_index=0, judge=Judge(), probability=0.1,
        judged_sentence=sentence, sentences_read=1)
    forced = "negation" in backend_base.JUDGE_RULE_KINDS
    assert j.details["contradiction"]["mismatches"][0]["kind"] == "negation"
    assert j.details["contradiction"]["forces"] is forced
    assert (j.verdict, j.label) == ((False, "contradicted") if forced else (True, "supported"))
