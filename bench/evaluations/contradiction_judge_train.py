"""Cross-validate a trained contradiction judge for the embedding backend: a MiniLM cross-encoder fine-tuned on
(claim, evidence sentence) pairs, its top layers only (the rest frozen: the artifact to ship would be small).

    .venv/bin/python bench/evaluations/contradiction_judge_train.py --candidate top2 [--oof-out PATH]
        [--rules KINDS] [--cv-from OOF] [--final-to PATH] [--pooling cls|mean] [--lr LR] [--epochs N]

Data (all already seen; ``natural_contradictions_heldout2.jsonl`` is never read here):
``tests/scoring/data/natural_contradictions.jsonl`` (443), ``natural_contradictions_heldout.jsonl`` (630) and
``contradiction_pairs.jsonl`` (1,188 word-list rewrites; ``--rewrites N`` of them, a seeded stratified sample, so
they do not dominate). Label 1 = contradicted. Each row gives two training pairs: (claim, its evidence sentence)
with its label, and (claim, the passage's other sentence most similar to the claim by the embedding model's
cosine) labelled 0 (weight ``--negative-weight``), because the judge is applied to several sentences of a
passage and takes the maximum.

Cross-validation: 3-fold ``StratifiedGroupKFold`` (scikit-learn, shuffled, seed 0) over groups = evidence
paragraph (sha256 of its text), so a paragraph's claims are never on both sides of a fold, across all three sets.
Out of fold, each row's judge probability is the maximum over the ``--top-k`` (≤ 3) sentences of its paragraph
most similar to the claim. The verdict is the embedding backend's: False when the max cosine
< 0.6 (its ``support`` default) or the judge's probability ≥ the threshold (or, with ``--rules``, when the rule
check finds a mismatch of one of those kinds). The threshold is chosen on the pooled out-of-fold predictions of
the two natural sets: the lowest one whose false-alarm rate there is ≤ ``--target-fa``.

Result (2026-12-06, top2, defaults: docs/metrics/README.md, "Contradictions"): out-of-fold AUC ≈ 0.5 on both
natural sets, no better than the rules; nothing is shipped and no backend consults it.
With ``--pooling mean --lr 3e-4 --epochs 3`` (the head on the mean of the top token states; the set-up then fits
its training data, ``contradiction_judge_fit_check.py``): out-of-fold AUC 0.578 / 0.562 (natural / held-out),
caught 0.166 at false alarms 0.064; still far below the bar.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
import torch  # noqa: E402

from scoring.backends.embedding import PACKAGED_MODEL, get_embedding_backend, resolve_model_dir  # noqa: E402
from scoring.backends.text import sentences_of  # noqa: E402
from scoring.judges.training import cross_encoder_fit, top_proba  # noqa: E402
from scoring.metrics import contradiction  # noqa: E402

DATA = ROOT / "tests/scoring/data"
SETS = {"natural": DATA / "natural_contradictions.jsonl", "heldout": DATA / "natural_contradictions_heldout.jsonl",
        "rewrites": DATA / "contradiction_pairs.jsonl"}
NATURAL = ("natural", "heldout")
SUPPORT = 0.6  # the embedding backend's default support threshold
CANDIDATES = {"top3": 3, "top2": 2, "top1": 1}
SEED = 0


def family(row: dict) -> str:
    return row["transform"].split(":")[0].strip() if row["kind"] == "natural_written" else row["kind"]


def load(rewrites: int) -> list[dict]:
    rows = []
    for name, path in SETS.items():
        data = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if name == "rewrites" and rewrites < len(data):
            rng = np.random.default_rng(SEED)
            keep: list[int] = []
            for label in ("contradicted", "supported"):
                idx = [i for i, r in enumerate(data) if r["label"] == label]
                take = round(rewrites * len(idx) / len(data))
                keep.extend(rng.choice(idx, size=take, replace=False).tolist())
            data = [data[i] for i in sorted(keep)]
        for r in data:
            rid = str(r.get("id") or "") or hashlib.sha256(r["claim"].encode()).hexdigest()[:12]
            rows.append({"set": name, "id": rid,
                         "claim": r["claim"], "evidence": r["evidence"], "sentence": r.get("evidence_sentence"),
                         "y": int(r["label"] == "contradicted"), "family": family(r),
                         "group": hashlib.sha256(r["evidence"].encode()).hexdigest()[:16]})
    return rows


def prepare(rows: list[dict], cache: Path) -> None:
    """Per row: the paragraph's sentences, the cosine of the claim to each, the evidence sentence's index,
    and the rule check's mismatch kinds against the most similar sentence (as the embedding backend applies it)."""
    key = hashlib.sha256(json.dumps([(r["id"], r["claim"], r["evidence"]) for r in rows]).encode()).hexdigest()
    stored = json.loads(cache.read_text()) if cache.exists() else {}
    if stored.get("key") != key:
        backend = get_embedding_backend()
        out = {}
        for r in rows:
            sentences = sentences_of([r["evidence"]]) or [r["evidence"]]
            sims = (backend.encode([r["claim"]]) @ backend.encode(sentences).T)[0]
            best = int(sims.argmax())
            found, _ = contradiction.check(r["claim"], sentences, best)
            out[r["id"] + r["set"]] = {"sentences": sentences, "sims": [float(s) for s in sims],
                                       "kinds": sorted({m.kind for m in found})}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "rows": out}))
        stored = {"key": key, "rows": out}
    for r in rows:
        r.update(stored["rows"][r["id"] + r["set"]])
        sims = np.array(r["sims"])
        target = r["sentence"]
        hits = [i for i, s in enumerate(r["sentences"]) if target and (target.strip() in s or s.strip() in target)]
        r["ev_index"] = hits[0] if hits else int(sims.argmax())
        others = [i for i in np.argsort(-sims) if i != r["ev_index"]]
        r["neg_index"] = int(others[0]) if others else None


def training_pairs(rows: list[dict], negative_weight: float) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    pairs, y, w = [], [], []
    for r in rows:
        pairs.append((r["claim"], r["sentences"][r["ev_index"]]))
        y.append(r["y"])
        w.append(1.0)
        if r["neg_index"] is not None and negative_weight > 0:
            pairs.append((r["claim"], r["sentences"][r["neg_index"]]))
            y.append(0)
            w.append(negative_weight)
    return pairs, np.array(y), np.array(w)


READ = 3  # sentences per paragraph whose probabilities are computed out of fold (the most similar to the claim)


def sentence_probabilities(model, rows: list[dict], below: int, max_length: int, cache: dict,
                           pooling: str = "cls") -> list[np.ndarray]:
    """P(contradiction) of the ``READ`` sentences of each row's paragraph most similar to the claim (in that order)."""
    chosen = [list(np.argsort(-np.array(r["sims"]), kind="stable")[:READ]) for r in rows]
    pairs = [(r["claim"], r["sentences"][i]) for r, idx in zip(rows, chosen, strict=True) for i in idx]
    p = top_proba(model, pairs, below, max_length=max_length, state_cache=cache, pooling=pooling)
    out, start = [], 0
    for idx in chosen:
        out.append(p[start:start + len(idx)])
        start += len(idx)
    return out


def judge_p(r: dict, top_k: int) -> float:
    return float(np.max(np.asarray(r["p_sent"])[:top_k]))


def rates(rows: list[dict], false_of) -> dict:
    c = [r for r in rows if r["y"] == 1]
    s = [r for r in rows if r["y"] == 0]
    cf = sum(bool(false_of(r)) for r in c)
    sf = sum(bool(false_of(r)) for r in s)
    return {"caught": round(cf / len(c), 3) if c else None, "caught_n": [cf, len(c)],
            "false_alarm": round(sf / len(s), 3) if s else None, "false_alarm_n": [sf, len(s)]}


def choose_threshold(rows: list[dict], top_k: int, target: float, rules: set[str]) -> float:
    natural = [r for r in rows if r["set"] in NATURAL]
    for t in np.round(np.arange(0.05, 1.0, 0.005), 3):
        fa = rates(natural, lambda r, t=t: verdict_false(r, top_k, t, rules))["false_alarm"]
        if fa <= target:
            return float(t)
    return 1.0


def verdict_false(r: dict, top_k: int, t: float, rules: set[str]) -> bool:
    return max(r["sims"]) < SUPPORT or judge_p(r, top_k) >= t or bool(rules & set(r["kinds"]))


def report(rows: list[dict], top_k: int, t: float, rules: set[str]) -> dict:
    out: dict = {"threshold": t, "top_k": top_k, "rules": sorted(rules)}
    vf = lambda r: verdict_false(r, top_k, t, rules)  # noqa: E731
    out["natural_seen"] = rates([r for r in rows if r["set"] in NATURAL], vf)
    for name in SETS:
        out[name] = rates([r for r in rows if r["set"] == name], vf)
    out["rules_only_natural_seen"] = rates(
        [r for r in rows if r["set"] in NATURAL], lambda r: max(r["sims"]) < SUPPORT or bool(r["kinds"]))
    fam: dict = defaultdict(list)
    for r in rows:
        if r["set"] in NATURAL and r["y"] == 1:
            fam[r["family"]].append(vf(r))
    out["families_natural_contradicted"] = {k: f"{sum(v)}/{len(v)}" for k, v in
                                            sorted(fam.items(), key=lambda kv: -len(kv[1]))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", choices=sorted(CANDIDATES), default="top2")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--rewrites", type=int, default=300)
    parser.add_argument("--negative-weight", type=float, default=1.0)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--target-fa", type=float, default=0.065)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls",
                        help="the head's input: the BERT pooler on [CLS] (cls) or the masked mean of the top states")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--oof-out", default="")
    parser.add_argument("--rules", default="", help="rule kinds that still force a contradiction (comma-separated)")
    parser.add_argument("--final-to", default="", help="only fit the final model on every row and save its tuned "
                        "tensors (fp32 safetensors) here")
    parser.add_argument("--cv-from", default="", help="take the out-of-fold predictions from an --oof-out file")
    var = Path(os.environ.get("CONCORD_VAR_DIR", ROOT / "var"))
    parser.add_argument("--cache", default=str(var / "contradiction_judge_prep.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    started = time.time()
    rows = load(args.rewrites)
    prepare(rows, Path(args.cache))
    print(f"rows {Counter((r['set'], r['y']) for r in rows)}; prepared in {time.time() - started:.0f}s", flush=True)
    base_dir = resolve_model_dir(PACKAGED_MODEL)[0]
    top = CANDIDATES[args.candidate]
    cache: dict = {}  # the frozen lower layers' states of every pair, shared by all fits (the same base)
    below = 6 - top
    fit = dict(base_dir=base_dir, epochs=args.epochs, seed=SEED, top_layers=top, lr=args.lr,
               max_length=args.max_length, state_cache=cache, pooling=args.pooling)

    from safetensors.torch import save_file
    from sklearn.model_selection import StratifiedGroupKFold

    if args.final_to:
        pairs, ty, tw = training_pairs(rows, args.negative_weight)
        model = cross_encoder_fit(pairs, ty, weights=tw, **fit)
        save_file({n: p.detach().contiguous() for n, p in model.model.named_parameters() if p.requires_grad},
                  args.final_to)
        print(f"final fit on {len(pairs)} pairs saved to {args.final_to} in {time.time() - started:.0f}s")
        return
    y = np.array([r["y"] for r in rows])
    groups = [r["group"] for r in rows]
    splitter = StratifiedGroupKFold(n_splits=args.folds, shuffle=True, random_state=SEED)
    folds = [] if args.cv_from else list(splitter.split(np.zeros(len(y)), y, groups))
    if args.cv_from:
        stored = {(r["set"], r["id"]): r["p_sent"] for r in json.loads(Path(args.cv_from).read_text())}
        for r in rows:
            r["p_sent"] = stored[r["set"], r["id"]]
    for fold, (train, test) in enumerate(folds):
        pairs, ty, tw = training_pairs([rows[i] for i in train], args.negative_weight)
        model = cross_encoder_fit(pairs, ty, weights=tw, **fit)
        tested = [rows[i] for i in test]
        for r, p in zip(tested, sentence_probabilities(model, tested, below, args.max_length, cache,
                                                                     args.pooling), strict=True):
            r["p_sent"] = p.tolist()
        print(f"fold {fold}: trained on {len(pairs)} pairs, {time.time() - started:.0f}s", flush=True)

    results = {}
    for top_k in (1, 2, 3):
        t = choose_threshold(rows, top_k, args.target_fa, set())
        results[f"top_k={top_k}"] = report(rows, top_k, t, set())
    kinds = sorted({k for r in rows for k in r["kinds"]})
    for kind in kinds:  # does a rule kind forced as a contradiction (OR) help, at the same false-alarm target?
        t = choose_threshold(rows, args.top_k, args.target_fa, {kind})
        results[f"top_k={args.top_k}+rule:{kind}"] = report(rows, args.top_k, t, {kind})
    for name, res in results.items():
        ns = res["natural_seen"]
        print(f"{args.candidate} {name:28s} t={res['threshold']:.3f} natural-seen caught {ns['caught']} "
              f"{ns['caught_n']} FA {ns['false_alarm']} {ns['false_alarm_n']} | natural {res['natural']['caught']}/"
              f"{res['natural']['false_alarm']} heldout {res['heldout']['caught']}/{res['heldout']['false_alarm']} "
              f"rewrites {res['rewrites']['caught']}/{res['rewrites']['false_alarm']}")
    from sklearn.metrics import roc_auc_score

    for name in SETS:  # how well the judge's probability alone ranks contradicted above supported, out of fold
        part = [r for r in rows if r["set"] == name]
        aucs = [roc_auc_score([r["y"] for r in part], [judge_p(r, k) for r in part]) for k in (1, 3)]
        print(f"{args.candidate} {name:9s} out-of-fold AUC of the judge: top-1 sentence {aucs[0]:.3f}, "
              f"max over top-3 {aucs[1]:.3f}")
    rules = {k for k in args.rules.split(",") if k}
    main_res = report(rows, args.top_k, choose_threshold(rows, args.top_k, args.target_fa, rules), rules)
    print(json.dumps(main_res, indent=1))
    if args.oof_out:
        Path(args.oof_out).write_text(json.dumps([{k: r[k] for k in ("set", "id", "y", "family", "sims", "kinds",
                                                                      "p_sent")} for r in rows]))
    print(f"CV done in {time.time() - started:.0f}s", flush=True)

if __name__ == "__main__":
    main()
