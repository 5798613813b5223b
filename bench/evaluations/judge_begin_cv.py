"""Cross-validated figures of the trained judges on BEGIN (CMU-DoG dev), per feature set and model type.

    .venv/bin/python bench/evaluations/judge_begin_cv.py [TSV] [--generic negative|exclude] [--cross-encoder]
        [--epochs N] [--write-jsonl OUT]

Task ``supports``: text = the response, evidence = the knowledge passage, label 1 = "Fully attributable"
and 0 = "Not fully attributable"; ``Generic`` responses are negatives by default (they are not fully
attributable: "Fully attributable vs the rest") or left out with ``--generic exclude``. Each row is its
own group. Prints, for each candidate, 5-fold stratified CV ROC AUC and accuracy with 95% intervals.
``--write-jsonl`` writes the labelled file ``manage.py train_judge --from`` reads.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

from scoring.backends.embedding import PACKAGED_MODEL, get_embedding_backend, resolve_model_dir  # noqa: E402
from scoring.judges.training import Example, fmt_ci, train  # noqa: E402


def begin_examples(path: Path, generic: str) -> list[Example]:
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE), start=2):
            label = row["begin_label"].strip()
            if label == "Generic" and generic == "exclude":
                continue
            out.append(Example(text=row["response"].strip(), evidence=row["knowledge"].strip(),
                               label=label == "Fully attributable", group=f"row-{i}"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tsv", nargs="?", default=str(ROOT / "data/demo/begin_cmudog/begin_dev_cmu.tsv"))
    parser.add_argument("--generic", choices=("negative", "exclude"), default="negative")
    parser.add_argument("--cross-encoder", action="store_true")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--write-jsonl")
    args = parser.parse_args()
    examples = begin_examples(Path(args.tsv), args.generic)
    if args.write_jsonl:
        with open(args.write_jsonl, "w", encoding="utf-8") as f:
            for e in examples:
                f.write(json.dumps({"text": e.text, "evidence": e.evidence, "label": int(e.label)}) + "\n")
    n_pos = sum(e.label for e in examples)
    print(f"BEGIN {Path(args.tsv).name}: n={len(examples)}, positive (Fully attributable) {n_pos}, "
          f"Generic as {args.generic}")
    encoder = get_embedding_backend()
    candidates = [("logistic", fs) for fs in ("lexical", "embedding", "combined")]
    if args.cross_encoder:
        candidates.append(("cross-encoder", "pair-text"))
    for model_type, feature_set in candidates:
        started = time.perf_counter()
        t = train(examples, task="supports", model_type=model_type, feature_set=feature_set, folds=args.folds,
                  epochs=args.epochs, encoder=encoder, keep_models=False,
                  base_dir=resolve_model_dir(PACKAGED_MODEL)[0])
        f = t.evaluation.figures
        print(f"{model_type:<13} {t.evaluation.feature_set:<10} {t.evaluation.folds}-fold CV ROC AUC "
              f"{fmt_ci(f['auc'], f['auc_ci'])}  accuracy {fmt_ci(f['accuracy'], f['accuracy_ci'])}  "
              f"Brier {f['brier']:.3f}  ({time.perf_counter() - started:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
