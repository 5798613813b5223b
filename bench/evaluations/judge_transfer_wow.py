"""Out of domain: a ``supports`` judge trained on BEGIN CMU-DoG, applied to BEGIN Wizard of Wikipedia (dev), against
raw unigram precision on the same WoW responses.

    .venv/bin/python bench/evaluations/judge_transfer_wow.py [--feature-sets lexical,embedding,combined,transfer]
        [--generic negative|exclude]

Each judge is the product's own training (``scoring.judges.training.train``: logistic regression on the feature
set, final model refit on every CMU-DoG row, Generic responses as negatives by default, as in
``judge_begin_cv.py``) and scores each WoW (response, knowledge) pair by its probability of "Fully attributable".
Unigram precision is the ``lexical`` backend's measure of the response against the knowledge
(``scoring.backends.lexical.unigram_precision_recall``), the baseline the judge must at least match. Printed:
ROC AUC on WoW with a 95 % stratified bootstrap interval for each, the paired difference judge − unigram with its
own bootstrap interval (the same resampled rows for both), and the in-domain 5-fold CV AUC on CMU-DoG beside it.
Last, which of them the product keeps when training on CMU-DoG (``scoring.judges.training.choose``: the simplest
within one standard error of the best CV AUC) and what the best CV AUC alone would keep. Nothing here is tuned
on WoW: the feature sets and the rule are fixed before the data is read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from bench.evaluations.judge_begin_cv import begin_examples as read  # noqa: E402
from scoring.backends.embedding import get_embedding_backend  # noqa: E402
from scoring.backends.lexical import unigram_precision_recall  # noqa: E402
from scoring.judges.features import featurize, needs_encoder  # noqa: E402
from scoring.judges.training import bootstrap_auc, choose, fmt_ci, rank_auc, summary, train  # noqa: E402

CMU = ROOT / "data/demo/begin_cmudog/begin_dev_cmu.tsv"
WOW = ROOT / "data/demo/begin_wow_dev/begin_dev_wow.tsv"


def auc(y: np.ndarray, p: np.ndarray) -> float:
    return rank_auc(p[y == 1], p[y == 0])


def paired_difference(y: np.ndarray, a: np.ndarray, b: np.ndarray, reps: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    diffs = []
    for _ in range(reps):
        rp, rn = rng.choice(pos, len(pos)), rng.choice(neg, len(neg))
        diffs.append(rank_auc(a[rp], a[rn]) - rank_auc(b[rp], b[rn]))
    return auc(y, a) - auc(y, b), (float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--feature-sets", default="lexical,embedding,combined")
    parser.add_argument("--generic", choices=("negative", "exclude"), default="negative")
    args = parser.parse_args()
    source, target = read(CMU, args.generic), read(WOW, "exclude")
    y = np.array([int(e.label) for e in target])
    print(f"train: BEGIN CMU-DoG dev, n={len(source)} (Fully attributable {sum(e.label for e in source)}; "
          f"Generic as {args.generic}); test: BEGIN WoW dev, n={len(target)} (Fully attributable {int(y.sum())})")
    unigram = np.array([unigram_precision_recall(e.text, e.evidence or "")[0] for e in target])
    lo, hi = bootstrap_auc(y, unigram)
    print(f"unigram precision        WoW ROC AUC {fmt_ci(auc(y, unigram), [lo, hi])}")
    encoder = None
    results = []
    for feature_set in args.feature_sets.split(","):
        if needs_encoder(feature_set) and encoder is None:
            encoder = get_embedding_backend()
        trained = train(source, task="supports", model_type="logistic", feature_set=feature_set, folds=5,
                        encoder=encoder)
        X = featurize(feature_set, encoder, [e.text for e in target], [e.evidence or "" for e in target])
        p = trained.final.predict_proba(X)[:, 1]
        lo, hi = bootstrap_auc(y, p)
        diff, (dlo, dhi) = paired_difference(y, p, unigram)
        cv = trained.evaluation.figures
        print(f"judge {feature_set:<18} WoW ROC AUC {fmt_ci(auc(y, p), [lo, hi])}  − unigram {diff:+.3f} "
              f"[{dlo:+.3f}, {dhi:+.3f}]  (CMU-DoG 5-fold CV {fmt_ci(cv['auc'], cv['auc_ci'])})", flush=True)
        results.append((trained, auc(y, p)))
    if len(results) > 1:
        kept = choose([summary(t.evaluation) for t, _ in results])
        best_cv = max(range(len(results)), key=lambda i: results[i][0].evaluation.figures["auc"])
        print(f"the product keeps (one-standard-error rule): {results[kept][0].feature_set}, WoW ROC AUC "
              f"{results[kept][1]:.3f}; the best CV AUC alone would keep {results[best_cv][0].feature_set}, "
              f"WoW ROC AUC {results[best_cv][1]:.3f}")


if __name__ == "__main__":
    main()
