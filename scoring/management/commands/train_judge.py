"""Train a judge for the ``learned`` backend and register it.

    python manage.py train_judge --study SLUG --question KEY --task supports|informative|relevance|kind \\
        [--name NAME] [--positive VALUE ...] [--exclude VALUE ...]
    python manage.py train_judge --from FILE --task supports|informative|relevance|kind --name NAME [--study OWNER]

Common options: ``--folds K`` (5), ``--model-types logistic[,cross-encoder]``, ``--feature-sets
embedding,lexical,combined`` (all three), ``--epochs N`` (cross-encoder, 2). Every candidate is
cross-validated; the best by CV ROC AUC is kept and every candidate's figures are printed.
FILE is JSONL (``{"text", "evidence", "label"}``) or CSV with those columns. Nothing is registered
when the data is refused (a malformed line is named by number; fewer than 10 examples of a class).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from concord.errors import DomainError
from scoring.judges import services
from scoring.judges.training import TASKS, fmt_ci
from scoring.models import TrainedJudge


def describe(judge: TrainedJudge) -> list[str]:
    cv = judge.cv
    c = cv["confusion"]
    lines = [
        f"judge {judge.name}: task {judge.task}, {judge.model_type}/{judge.feature_set}, source {judge.source_label}",
        f"  n={judge.n} (positive {judge.n_positive}), {cv['folds']}-fold CV: "
        f"ROC AUC {fmt_ci(cv['auc'], cv['auc_ci'])}, "
        f"accuracy@{cv['threshold']} {fmt_ci(cv['accuracy'], cv['accuracy_ci'])}, Brier {cv['brier']:.3f}",
        f"  confusion at {cv['threshold']}: TP {c['tp']} FP {c['fp']} TN {c['tn']} FN {c['fn']}",
        "  reliability (bin: mean predicted / observed positive / n): " + ", ".join(
            f"[{b['bin_low']:.1f},{b['bin_high']:.1f}) {b['mean_predicted']:.2f}/{b['fraction_positive']:.2f}/{b['n']}"
            for b in cv["reliability"]
        ),
        "  candidates compared (CV):",
    ]
    for row in judge.comparison:
        lines.append(f"    {row['model_type']:<13} {row['feature_set']:<10} AUC {fmt_ci(row['auc'], row['auc_ci'])}  "
                     f"accuracy {fmt_ci(row['accuracy'], row['accuracy_ci'])}")
    return lines


class Command(BaseCommand):
    help = "Train a judge (learned backend) from a study's gold or a labelled JSONL/CSV file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", help="Study slug: the gold to train on, or with --from the owning study.")
        parser.add_argument("--question", help="Question key whose gold labels are the training labels.")
        parser.add_argument("--from", dest="source", help="A labelled JSONL or CSV file (text, evidence, label).")
        parser.add_argument("--task", required=True, choices=TASKS)
        parser.add_argument("--name", help="Registry name (default with --study: <study>-<question>-<task>).")
        parser.add_argument("--positive", action="append", default=[], help="Gold value counted as positive.")
        parser.add_argument("--exclude", action="append", default=[], help="Gold value left out of training.")
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument("--model-types", default="logistic", help="logistic and/or cross-encoder, comma-separated")
        parser.add_argument("--feature-sets", default="embedding,lexical,combined")
        parser.add_argument("--epochs", type=int, default=2)
        parser.add_argument("--json", action="store_true", help="Print the registry row's figures as JSON.")

    def handle(self, *args: Any, **opts: Any) -> None:
        options = {"folds": opts["folds"], "model_types": opts["model_types"], "feature_sets": opts["feature_sets"],
                   "epochs": opts["epochs"]}
        study = None
        if opts["study"]:
            study = Study.objects.filter(slug=opts["study"]).first()
            if study is None:
                raise CommandError(f"no study {opts['study']!r}")

        def progress(done: int, total: int) -> None:
            self.stderr.write(f"\rtraining: {done}/{total}", ending="")

        try:
            if opts["source"]:
                if opts["question"]:
                    raise CommandError("--question reads a study's gold; it does not go with --from")
                if not opts["name"]:
                    raise CommandError("--from needs --name")
                path = Path(opts["source"])
                if not path.is_file():
                    raise CommandError(f"no such file: {path}")
                judge = services.judge_train_from_file(
                    content=path.read_bytes(), filename=path.name, task=opts["task"], name=opts["name"], actor=None,
                    owner=study, options=options, progress=progress,
                )
            else:
                if study is None or not opts["question"]:
                    raise CommandError("give --study SLUG --question KEY, or --from FILE")
                name = opts["name"] or f"{study.slug}-{opts['question']}-{opts['task']}"
                judge = services.judge_train_from_study(
                    study=study, question_key=opts["question"], task=opts["task"], name=name, actor=None,
                    positive=opts["positive"], exclude=opts["exclude"], options=options, progress=progress,
                )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stderr.write("")
        if opts["json"]:
            self.stdout.write(json.dumps({"name": judge.name, "cv": judge.cv, "comparison": judge.comparison}))
        else:
            for line in describe(judge):
                self.stdout.write(line)
