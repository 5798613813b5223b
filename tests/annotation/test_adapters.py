"""The K-QA and BEGIN adapters reproduce the counts of their MANIFESTs (data/demo/*/MANIFEST.md)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.adapters import begin, kqa
from annotation.models import Aspect, Chunk, Item, Label, LabelHistory, Pool, PoolMembership, Study

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
KQA_ANSWERS = DEMO / "kqa" / "questions_w_answers.jsonl"
KQA_NLI = DEMO / "kqa" / "NLI_medical_annotator.csv"
BEGIN_TSV = DEMO / "begin_cmudog" / "begin_dev_cmu.tsv"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The personas' passwords are hashed once per test; the production hasher costs ~1 s each here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.mark.parametrize(
    ("path", "sha256"),
    [
        (KQA_ANSWERS, "1d4204665e2c9e50c3c348b8ad1de2ddf5d90205c3efaea0eb38135192272c6f"),
        (KQA_NLI, "98372a3feea2ac7b445357ec2ab2e6f6251ecd72ad03a102ea4e4cdf53956779"),
        (DEMO / "kqa" / "LICENSE.txt", "f50d2b0e84a08081ce6c3623b06a0c45866891e3e86ccdc2e35862e6ab12726a"),
        (BEGIN_TSV, "9482294df23cf08a976773ca73203b84f7178534ecab1a206eaade365e97071c"),
        (DEMO / "begin_cmudog" / "NOTICE.txt", "b8dcafc36b2f61facc33512c323e44b44da5c461e501ed580b3bc90ef23a9079"),
        (DEMO / "begin_cmudog" / "LICENSE.txt", "5cae4a69c3c71bfec6251130e2a413bcaea051467f9805c2580dcf771a76361f"),
    ],
)
def test_shipped_demo_files_are_the_manifests_files(path, sha256):
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def test_kqa_questions_adapter_reads_201_questions_with_892_must_have_and_697_nice_to_have():
    records = [r for _, r in kqa.question_records(KQA_ANSWERS)]
    assert len(records) == 201
    imported = Counter(a["importance"] for r in records for a in r["aspects"])
    blank = Counter()
    for r in records:
        blank.update(r["metadata"]["blank_statements"])
    # Three Must_have statements of the file are blank: counted, not turned into aspects.
    assert imported["must_have"] + blank["must_have"] == 892 and blank["must_have"] == 3
    assert imported["nice_to_have"] + blank["nice_to_have"] == 697
    assert all(a["text"] == a["text"].strip() and a["text"] for r in records for a in r["aspects"])


def test_kqa_nli_adapter_groups_399_rows_into_50_answers_by_one_system_each():
    records = [r for _, r in kqa.nli_records(KQA_NLI)]
    assert len(records) == 50
    assert len({r["question"] for r in records}) == 50
    assert sum(len(r["aspects"]) for r in records) == 399
    assert Counter(r["system"] for r in records) == {"askk": 15, "bard": 10, "gpt35": 10, "gpt4": 15}
    assert Counter(a["importance"] for r in records for a in r["aspects"]) == {"must_have": 217, "nice_to_have": 182}
    # 49 of the 50 questions are among the 201 with a physician answer, which becomes the context.
    assert sum(1 for r in records if r.get("contexts")) == 49


def _majority(values):
    value, n = Counter(values).most_common(1)[0]
    return value if n >= 2 else None


def test_kqa_nli_adapter_carries_each_physicians_labels():
    labels = [lab for _, r in kqa.nli_records(KQA_NLI) for lab in r["labels"]]
    per = {
        a: Counter(lab["value"] for lab in labels if lab["annotator"] == a)
        for a in ("physician-1", "physician-2", "physician-3")
    }
    assert per["physician-1"] == {"entailment": 136, "neutral": 244, "contradiction": 19}
    assert per["physician-2"] == {"entailment": 181, "neutral": 204, "contradiction": 14}
    assert per["physician-3"] == {"entailment": 147, "neutral": 241, "contradiction": 11}


def test_begin_adapter_reads_416_responses_with_stripped_labels():
    records = [r for _, r in begin.records(BEGIN_TSV)]
    assert len(records) == 416
    assert Counter(r["labels"][0]["value"] for r in records) == {"fully": 59, "not_fully": 278, "generic": 79}
    assert Counter(r["system"] for r in records) == {"t5": 114, "ctrl": 109, "gpt2": 97, "doha": 96}
    assert all(len(r["contexts"]) == 1 and not r["answer"].endswith("\r") for r in records)


@pytest.fixture
def owner(researcher):
    return researcher.username


def test_kqa_nli_import_gives_three_pseudonymous_physicians_399_aspect_units_each(owner, capsys):
    call_command("import_items", str(KQA_NLI), "--study", "kqa", "--create", "--adapter", "kqa-nli", "--owner", owner)
    study = Study.objects.get(slug="kqa")
    assert "Itay Manes" in study.licence and "MIT" in study.licence
    assert Item.objects.filter(study=study).count() == 50
    assert Aspect.objects.filter(item__study=study).count() == 399
    pool = Pool.objects.get(study=study, name="K-QA physicians")
    members = PoolMembership.objects.filter(pool=pool).select_related("user")
    assert sorted(m.pseudonym for m in members) == ["physician-1", "physician-2", "physician-3"]
    assert not any(m.user.is_active for m in members)
    labels = Label.objects.filter(assignment__pool=pool).values_list("assignment__annotator_id", "unit_key", "value")
    assert len(labels) == 1197 and LabelHistory.objects.filter(label__assignment__pool=pool).count() == 1197
    by_unit: dict[str, list[str]] = {}
    per_member = {m.user_id: Counter() for m in members}
    for annotator_id, unit, value in labels:
        by_unit.setdefault(unit, []).append(value)
        per_member[annotator_id][value] += 1
    assert len(by_unit) == 399 and all(len(v) == 3 for v in by_unit.values())
    pseudonym = {m.user_id: m.pseudonym for m in members}
    counts = {pseudonym[u]: (c["entailment"], c["neutral"], c["contradiction"]) for u, c in per_member.items()}
    assert counts == {"physician-1": (136, 244, 19), "physician-2": (181, 204, 14), "physician-3": (147, 241, 11)}
    assert Counter(_majority(v) for v in by_unit.values()) == {"neutral": 234, "entailment": 153, "contradiction": 12}
    assert sum(1 for v in by_unit.values() if len(set(v)) == 1) == 312  # full agreement, MANIFEST: 312/399


def test_kqa_questions_import_gives_201_items_with_their_aspects(owner, capsys):
    call_command(
        "import_items",
        str(KQA_ANSWERS),
        "--study",
        "kqa-q",
        "--create",
        "--protocol",
        "icat",
        "--adapter",
        "kqa-questions",
        "--owner",
        owner,
    )
    aspects = Aspect.objects.filter(item__study__slug="kqa-q")
    assert Item.objects.filter(study__slug="kqa-q").count() == 201
    assert aspects.filter(importance="must_have").count() == 889  # 892 less the three blank statements
    assert aspects.filter(importance="nice_to_have").count() == 697


def test_begin_import_gives_416_items_with_one_annotators_attribution_labels(owner, capsys):
    call_command("import_items", str(BEGIN_TSV), "--study", "begin", "--create", "--adapter", "begin", "--owner", owner)
    study = Study.objects.get(slug="begin")
    assert Item.objects.filter(study=study).count() == 416
    assert Chunk.objects.filter(item__study=study).count() == 416
    values = Counter(
        Label.objects.filter(assignment__pool__study=study, question__key="attribution").values_list("value", flat=True)
    )
    assert values == {"fully": 59, "not_fully": 278, "generic": 79}
    assert PoolMembership.objects.filter(study=study).count() == 1
    assert "Carnegie Mellon University" in study.licence and "CC BY 4.0" in study.licence
