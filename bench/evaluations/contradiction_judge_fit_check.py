"""Can the contradiction judge's set-up fit its own training data? In-sample AUC of a cross-encoder fitted on a
seeded stratified sample of the seen sets' rows (the training pairs of ``contradiction_judge_train``: each row's
(claim, evidence sentence) pair and its most-similar-other-sentence negative), scored on the same pairs.

    .venv/bin/python bench/evaluations/contradiction_judge_fit_check.py --rows 300 --top-layers 2 \
        --pooling cls --lr 1e-4 --epochs 3

Also the AUC on the evidence pairs of the seen sets' other paragraphs (no paragraph of the sample), a
rough out-of-sample figure. ``--top-layers 0``: full fine-tune. Uses only the seen sets
(``contradiction_judge_train.load``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contradiction_judge_train as bench
import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from scoring.backends.embedding import PACKAGED_MODEL, resolve_model_dir
from scoring.judges.training import cross_encoder_fit, cross_encoder_proba, top_proba


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--top-layers", type=int, default=2)
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    var = Path(os.environ.get("CONCORD_VAR_DIR", bench.ROOT / "var"))
    parser.add_argument("--cache", default=str(var / "contradiction_judge_prep.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.time()
    rows = bench.load(300)
    bench.prepare(rows, Path(args.cache))
    rng = np.random.default_rng(bench.SEED)
    pick: list[int] = []
    for label in (0, 1):
        idx = [i for i, r in enumerate(rows) if r["y"] == label]
        pick.extend(rng.choice(idx, size=args.rows // 2, replace=False).tolist())
    sample = [rows[i] for i in sorted(pick)]
    seen_groups = {r["group"] for r in sample}
    unseen = [r for r in rows if r["group"] not in seen_groups]  # other paragraphs of the same seen sets
    pairs, y, w = bench.training_pairs(sample, 1.0)
    base_dir = resolve_model_dir(PACKAGED_MODEL)[0]
    top = args.top_layers or None
    cache: dict = {}
    model = cross_encoder_fit(pairs, y, weights=w, base_dir=base_dir, epochs=args.epochs, seed=bench.SEED,
                              top_layers=top, lr=args.lr, max_length=args.max_length, state_cache=cache,
                              pooling=args.pooling)

    def score(scored: list[tuple[str, str]]) -> np.ndarray:
        if top:
            return top_proba(model, scored, 6 - top, max_length=args.max_length, state_cache=cache,
                             pooling=args.pooling)
        return cross_encoder_proba(model, scored, pooling=args.pooling, max_length=args.max_length)

    p = score(pairs)
    yo = np.array([r["y"] for r in unseen])
    po = score([(r["claim"], r["sentences"][r["ev_index"]]) for r in unseen])
    ev = np.array([i for i in range(len(pairs)) if i == 0 or pairs[i][0] != pairs[i - 1][0]])
    print(f"rows={len(sample)} pairs={len(pairs)} top_layers={args.top_layers} pooling={args.pooling} lr={args.lr} "
          f"epochs={args.epochs}: in-sample AUC all pairs {roc_auc_score(y, p):.3f}, evidence pairs "
          f"{roc_auc_score(y[ev], p[ev]):.3f}; other paragraphs' evidence pairs ({len(unseen)}) "
          f"{roc_auc_score(yo, po):.3f}; {time.time() - started:.0f}s", flush=True)


if __name__ == "__main__":
    main()
