"""CF's information-bearing decision, judge by judge, on 250 labelled sentences (tests/scoring/data/
information_bearing.jsonl: 150 information-bearing, 100 conversational; its README says how it was made).

    .venv/bin/python bench/evaluations/informative_judges.py [--set PATH]

Judges: ``rules`` (``information_bearing=rules``: ``scoring.metrics.text.conversational_rule``), the ``lexical``
and ``embedding`` backends' own ``informative`` judgements, and a judge trained the way a study's gold trains the
``learned`` backend's ``informative_model`` (``scoring.judges.training.compare`` over the lexical, embedding and
combined feature sets, kept by the one-standard-error rule) on the ``dev`` split and applied to ``test``; its
5-fold cross-validated figures over ``dev`` are printed beside. Each judge: accuracy with a 95 % Wilson interval,
the share of information-bearing sentences kept (recall) and of conversational ones dropped, per split, and ROC AUC
where the judge gives a score. The split was fixed by the set's builder before any judge was run on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from scoring.backends import get_backend  # noqa: E402
from scoring.backends.embedding import get_embedding_backend  # noqa: E402
from scoring.judges.features import featurize  # noqa: E402
from scoring.judges.training import Example, compare, fmt_ci, rank_auc, wilson  # noqa: E402
from scoring.metrics.text import conversational_rule  # noqa: E402

DEFAULT_SET = ROOT / "tests/scoring/data/information_bearing.jsonl"


def line(name: str, split: str, y: np.ndarray, verdict: np.ndarray, score: np.ndarray | None = None) -> str:
    correct = int((verdict == y).sum())
    lo, hi = wilson(correct, len(y))
    kept = verdict[y == 1].mean()
    dropped = 1 - verdict[y == 0].mean()
    text = (f"{name:<22} {split:<5} accuracy {correct}/{len(y)} = {correct / len(y):.3f} [{lo:.3f}, {hi:.3f}]  "
            f"information-bearing kept {kept:.3f}  conversational dropped {dropped:.3f}")
    if score is not None:
        text += f"  ROC AUC {rank_auc(score[y == 1], score[y == 0]):.3f}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default=str(DEFAULT_SET))
    args = parser.parse_args()
    rows = [json.loads(x) for x in Path(args.set).read_text(encoding="utf-8").splitlines() if x.strip()]
    splits = {s: [r for r in rows if r["split"] == s] for s in ("dev", "test")}
    print(f"{len(rows)} sentences: " + ", ".join(
        f"{s} {len(rs)} ({sum(r['label'] == 'information_bearing' for r in rs)} information-bearing)"
        for s, rs in splits.items()))
    y = {s: np.array([int(r["label"] == "information_bearing") for r in rs]) for s, rs in splits.items()}
    texts = {s: [r["text"] for r in rs] for s, rs in splits.items()}
    for s in ("dev", "test"):
        print(line("rules", s, y[s], np.array([int(conversational_rule(t) is None) for t in texts[s]])))
    for name in ("lexical", "embedding"):
        backend = get_backend(name)
        for s in ("dev", "test"):
            judged = backend.informative(texts[s])
            verdict = np.array([int(bool(j.verdict)) for j in judged])
            # The embedding backend's score is the similarity to conversational prototypes: lower = informative.
            score = np.array([-float(j.score) for j in judged]) if name == "embedding" else None
            print(line(f"{name} backend", s, y[s], verdict, score), flush=True)
    encoder = get_embedding_backend()
    dev = [Example(text=t, evidence=None, label=bool(label), group=r["id"])
           for t, label, r in zip(texts["dev"], y["dev"], splits["dev"], strict=True)]
    candidates = [("logistic", fs) for fs in ("lexical", "embedding", "combined")]
    kept = compare(dev, task="informative", candidates=candidates, folds=5, encoder=encoder)
    for c in kept.comparison:
        print(f"  trained on dev, 5-fold CV: {c['model_type']}/{c['feature_set']:<9} ROC AUC "
              f"{fmt_ci(c['auc'], c['auc_ci'])}  accuracy {fmt_ci(c['accuracy'], c['accuracy_ci'])}"
              f"{'  (kept)' if c.get('chosen') else ''}")
    X = featurize(kept.feature_set, encoder, texts["test"], None)
    p = kept.final.predict_proba(X)[:, 1]
    print(line(f"trained ({kept.feature_set})", "test", y["test"], (p >= 0.5).astype(int), p))


if __name__ == "__main__":
    main()
