"""What grounding per passage costs on natural data: K-QA's physician NLI labels (data/demo/kqa).

    .venv/bin/python bench/evaluations/grounding_per_passage_kqa.py [--backends lexical,embedding] [--sentences 2]

Each of the 399 rows of ``NLI_medical_annotator.csv`` is a gold statement (hypothesis) and an LLM answer (premise)
labelled Entailment / Neutral / Contradiction by three physicians (majority label). The answer is cut into
passages of ``--sentences`` consecutive sentences (the import's segmenter), as retrieved chunks would be. For each
backend the statement is judged twice with ``supports``: against the whole answer as one passage, and against
the passages (the best single passage's judgement). Printed per backend and evidence form: accuracy of the
verdict for Entailment vs the rest, the share judged supported, and the ROC AUC of the score (probability where
the backend gives one) for Entailment vs the rest. Where a physician-entailed statement needs facts from two
passages, the passage form loses it; that is the price of refusing to pool words.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="lexical,embedding")
    parser.add_argument("--sentences", type=int, default=2, help="sentences per passage")
    args = parser.parse_args()

    import django

    django.setup()
    from sklearn.metrics import roc_auc_score

    from scoring.backends import get_backend
    from scoring.backends.text import sentences_of

    rows = []
    with (ROOT / "data/demo/kqa/NLI_medical_annotator.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            rows.append((row["claim"], row["answer"], row["majority_label"] == "Entailment"))
    print(
        f"{len(rows)} statements, {sum(r[2] for r in rows)} entailed (majority of three physicians); "
        f"passages of {args.sentences} sentences"
    )
    for name in args.backends.split(","):
        backend = get_backend(name)
        for form in ("whole answer", "per passage"):
            verdicts, scores, labels = [], [], []
            for claim, answer, entailed in rows:
                if form == "whole answer":
                    evidence = [answer]
                else:
                    sentences = sentences_of([answer])
                    evidence = [
                        " ".join(sentences[i : i + args.sentences]) for i in range(0, len(sentences), args.sentences)
                    ]
                (j,) = backend.supports([claim], evidence)
                verdicts.append(bool(j.verdict))
                scores.append(j.probability if j.probability is not None else (j.score or 0.0))
                labels.append(entailed)
            accuracy = sum(v == y for v, y in zip(verdicts, labels, strict=True)) / len(labels)
            print(
                f"{name:10s} {form:13s} accuracy {accuracy:.3f}  supported {sum(verdicts) / len(verdicts):.3f}  "
                f"AUC {roc_auc_score(labels, scores):.4f}"
            )


if __name__ == "__main__":
    main()
