"""manage.py train_judge: from a study's gold and from a labelled file; refusals register nothing."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from scoring.models import TrainedJudge
from tests.factories import make_study
from tests.scoring.judge_support import labelled_jsonl, labelled_records, study_with_gold

pytestmark = pytest.mark.django_db
FAST = ["--feature-sets", "lexical", "--folds", "3"]


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_training_from_a_study_reports_cv_figures_and_registers_the_judge(capsys):
    study = make_study(slug="ward")
    study_with_gold(study)
    call_command("train_judge", "--study", "ward", "--question", "grounded", "--task", "supports", *FAST)
    out = capsys.readouterr().out
    judge = TrainedJudge.objects.get()
    assert judge.name == "ward-grounded-supports" and judge.study == study and judge.source_study == study
    assert (judge.n, judge.n_positive, judge.source_kind, judge.source_question) == (28, 14, "study", "grounded")
    assert "3-fold CV: ROC AUC" in out and "confusion at 0.5" in out and "reliability" in out
    assert set(judge.cv) >= {"auc", "auc_ci", "accuracy", "accuracy_ci", "confusion", "reliability", "brier"}


def test_training_from_a_jsonl_or_csv_file(tmp_path, capsys):
    jsonl = tmp_path / "claims.jsonl"
    jsonl.write_bytes(labelled_jsonl())
    call_command("train_judge", "--from", str(jsonl), "--task", "supports", "--name", "from-jsonl", *FAST,
                 "--json")
    shown = json.loads(capsys.readouterr().out)
    assert shown["name"] == "from-jsonl" and shown["cv"]["n"] == 28
    csv_file = tmp_path / "claims.csv"
    rows = ["text,evidence,label"] + [f'"{r["text"]}","{r["evidence"]}",{r["label"]}' for r in labelled_records()]
    csv_file.write_text("\n".join(rows))
    call_command("train_judge", "--from", str(csv_file), "--task", "supports", "--name", "from-csv", *FAST)
    judge = TrainedJudge.objects.get(name="from-csv")
    assert judge.source_kind == "file" and judge.study is None and len(judge.source_file_sha256) == 64


def test_a_malformed_line_is_named_and_nothing_is_trained(tmp_path, var_dir):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(labelled_jsonl() + b'\n{"text": "x", "evidence": "y", "label": "maybe"}\n')
    with pytest.raises(CommandError, match="line 29: field 'label' must be 0 or 1"):
        call_command("train_judge", "--from", str(path), "--task", "supports", "--name", "bad", *FAST)
    assert not TrainedJudge.objects.exists()
    assert not (var_dir / "models" / "judges").exists()


def test_fewer_than_ten_of_a_class_is_refused(tmp_path):
    path = tmp_path / "few.jsonl"
    records = [r for r in labelled_records() if r["label"] == 1] + [r for r in labelled_records() if not r["label"]][:9]
    path.write_text("\n".join(json.dumps(r) for r in records))
    with pytest.raises(CommandError, match=r"at least 10 examples of each class.*14 positive and 9 negative"):
        call_command("train_judge", "--from", str(path), "--task", "supports", "--name", "few", *FAST)
    assert not TrainedJudge.objects.exists()


def test_refusals_for_missing_gold_names_and_options(tmp_path):
    study = make_study(slug="empty")
    with pytest.raises(CommandError, match="has no question 'grounded'"):
        call_command("train_judge", "--study", "empty", "--question", "grounded", "--task", "supports", *FAST)
    with pytest.raises(CommandError, match="--from needs --name"):
        call_command("train_judge", "--from", "x.jsonl", "--task", "supports")
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("train_judge", "--study", "nope", "--question", "q", "--task", "supports")
    study_with_gold(study)
    with pytest.raises(CommandError, match="a judge name is"):
        call_command("train_judge", "--study", "empty", "--question", "grounded", "--task", "supports",
                     "--name", "../etc", *FAST)
    call_command("train_judge", "--study", "empty", "--question", "grounded", "--task", "supports", "--name", "j",
                 *FAST)
    with pytest.raises(CommandError, match="a judge named 'j' already exists"):
        call_command("train_judge", "--study", "empty", "--question", "grounded", "--task", "supports",
                     "--name", "j", *FAST)
    assert TrainedJudge.objects.count() == 1
