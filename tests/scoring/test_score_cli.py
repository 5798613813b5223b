"""``manage.py score``: a JSONL file in the import schema scored without a study."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, Study

RECORDS = [
    # CF = 1: the greeting is not information-bearing, the other sentence is in the context.
    {
        "id": "grounded",
        "question": "What is first-line?",
        "answer": "Hello! Metformin is the first-line drug for type 2 diabetes.",
        "contexts": ["Metformin is the first-line drug for type 2 diabetes."],
    },
    # CF = 1 by definition: no information-bearing sentence at all.
    {
        "id": "chitchat",
        "question": "Hi",
        "answer": "Hello there! Thanks so much!",
        "contexts": ["Metformin is first-line."],
    },
    # CF = 0: the only information-bearing sentence is not in the context.
    {
        "id": 7,
        "question": "What cures diabetes?",
        "answer": "Aspirin cures diabetes within a week.",
        "contexts": [{"id": "d1", "text": "Metformin lowers blood glucose.", "is_target": True}],
        "scope": "in_scope",
    },
]


def _write(tmp_path, records, name="items.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.mark.django_db
def test_score_writes_one_object_per_item_and_creates_no_study(tmp_path):
    out = tmp_path / "out.jsonl"
    call_command("score", str(_write(tmp_path, RECORDS)), "--metric", "cf", "--backend", "lexical", "--out", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [set(r) for r in rows] == [{"id", "metric", "backend", "value", "state", "details"}] * 3
    assert [(r["id"], r["metric"], r["backend"], r["value"], r["state"]) for r in rows] == [
        ("grounded", "cf", "lexical", 1.0, "ok"),
        ("chitchat", "cf", "lexical", 1.0, "ok"),
        ("7", "cf", "lexical", 0.0, "ok"),
    ]
    sentence_units = [u["unit"] for u in rows[0]["details"]["units"]]
    assert sentence_units == ["s:0", "s:1"]  # split with the import's segmenter
    assert not Study.objects.exists() and not Item.objects.exists()


@pytest.mark.django_db
def test_parameters_are_passed_to_the_metric(tmp_path):
    out = tmp_path / "out.jsonl"
    call_command(
        "score",
        str(_write(tmp_path, RECORDS[:1])),
        "--metric",
        "cf",
        "--backend",
        "lexical",
        "--param",
        "information_bearing=rules",
        "--out",
        str(out),
    )
    row = json.loads(out.read_text())
    assert row["details"]["information_bearing_method"] == "rules"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "question": "q"}'], "line 1: field 'answer' is required"),
        ([json.dumps(RECORDS[0]), "{not json"], "line 2: malformed JSON"),
        ([json.dumps(RECORDS[0]), json.dumps(RECORDS[0])], "line 2: id 'grounded' appears twice"),
        ([json.dumps({**RECORDS[0], "scope": "maybe"})], "line 1: field 'scope'"),
    ],
)
def test_bad_input_is_refused_naming_the_line_and_nothing_is_written(tmp_path, lines, message):
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match=message):
        call_command("score", str(_write(tmp_path, lines)), "--metric", "cf", "--backend", "lexical", "--out", str(out))
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "nope", "--backend", "lexical"], "unknown metric"),
        (["--metric", "cf", "--backend", "lexical", "--param", "information_bearing=guess"], "must be one of"),
        (["--metric", "cf", "--backend", "lexical", "--param", "oops"], "is not KEY=VALUE"),
        (["--metric", "rubric", "--backend", "lexical"], "cannot use the 'lexical' backend"),
    ],
)
def test_a_bad_metric_parameter_or_backend_is_refused(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("score", str(_write(tmp_path, RECORDS)), *args, "--out", str(tmp_path / "o.jsonl"))


def test_an_unavailable_backend_is_refused_with_its_reason(tmp_path, settings):
    settings.NLI_MODEL_DIR = str(tmp_path / "no-model-here")
    with pytest.raises(CommandError, match="the nli backend is unavailable"):
        call_command(
            "score",
            str(_write(tmp_path, RECORDS)),
            "--metric",
            "cf",
            "--backend",
            "nli",
            "--param",
            "information_bearing=rules",
            "--out",
            str(tmp_path / "o.jsonl"),
        )


@pytest.mark.django_db
def test_a_file_is_scored_with_a_trained_judge_and_the_mean_probability(tmp_path, settings, capsys):
    # The command: score FILE --metric cf --backend learned --backend-option model=NAME
    # --param aggregate=mean_probability (information-bearing sentences by the rules: no informative judge).
    from scoring.judges import services
    from tests.scoring.judge_support import labelled_jsonl

    settings.VAR_DIR = tmp_path
    services.judge_train_from_file(content=labelled_jsonl(), filename="claims.jsonl", task="supports",
                                   name="claims-cli", actor=None, options={"feature_sets": ["lexical"], "folds": 3})
    out = tmp_path / "out.jsonl"
    call_command("score", str(_write(tmp_path, RECORDS)), "--metric", "cf", "--backend", "learned",
                 "--backend-option", "model=claims-cli", "--param", "aggregate=mean_probability",
                 "--param", "information_bearing=rules", "--out", str(out))
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    grounded = rows["grounded"]
    sentence = next(u for u in grounded["details"]["units"] if u["unit"] == "s:1")
    probability = sentence["details"]["grounding_details"]["probability"]
    assert grounded["backend"] == "learned" and grounded["state"] == "ok"
    assert grounded["value"] == pytest.approx(probability) and probability > 0.5  # copies its context
    assert rows["7"]["value"] < 0.5  # its one information-bearing sentence is not in the context
    printed = capsys.readouterr().out  # the judge and how it was applied are printed with the summary
    assert "supports=claims-cli" in printed and "transfer from file claims.jsonl" in printed
