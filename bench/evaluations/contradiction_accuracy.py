"""Each backend's accuracy on the contradiction test set (tests/scoring/data/contradiction_pairs.jsonl).

    .venv/bin/python bench/evaluations/contradiction_accuracy.py [--backends lexical,embedding,nli,llm,learned]
        [--learned-model NAME] [--set PATH]

For every pair the backend's ``supports([claim], [evidence])`` is asked with its default threshold. A pair is
right when a ``contradicted`` pair gets verdict False and a ``supported`` pair verdict True. Printed per kind
and label (and per split for a set whose pairs carry ``split``): accuracy, and for contradictions how many
carry the label ``contradicted`` (caught as a contradiction, not merely unsupported). "before check" is the
accuracy the backend's own verdict would have had without ``scoring.metrics.contradiction`` (from
``details.contradiction.verdict_before``).

A backend that cannot run here (no NLI_MODEL_DIR, no LLM endpoint, no ``--learned-model`` naming a trained
judge of the registry) is reported with its reason, never replaced by another one. A learned judge trained
on K-QA or BEGIN text has seen sentences the set is built from: say so next to its figures. The set is
rebuilt by bench/data/build_contradiction_set.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

from scoring.backends import get_backend  # noqa: E402
from scoring.metrics.base import MetricError  # noqa: E402

DEFAULT_SET = ROOT / "tests/scoring/data/contradiction_pairs.jsonl"


def evaluate(backend, pairs: list[dict]) -> dict:
    rows: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for pair in pairs:
        (j,) = backend.supports([pair["claim"]], [pair["evidence"]])
        before = j.details.get("contradiction", {}).get("verdict_before", j.verdict)
        want = pair["label"] == "supported"
        keys = [(pair["kind"], pair["label"]), ("all", pair["label"])]
        if "split" in pair:  # sets with a dev/test split (natural_contradictions.jsonl) are also reported per split
            keys.append((f"split={pair['split']}", pair["label"]))
        for key in keys:
            row = rows[key]
            row["n"] += 1
            row["right"] += bool(j.verdict) == want
            row["right_before"] += bool(before) == want
            row["labelled_contradicted"] += j.label == "contradicted"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="lexical,embedding,nli,llm,learned")
    parser.add_argument("--set", default=str(DEFAULT_SET))
    parser.add_argument("--learned-model", help="registry name of the supports judge the learned backend uses")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"{len(pairs)} pairs from {args.set}")
    for name in args.backends.split(","):
        options = {"supports_model": args.learned_model} if name == "learned" and args.learned_model else {}
        try:
            backend = get_backend(name, **options)
        except MetricError as exc:
            print(f"\n== {name}: not run here: {exc}")
            continue
        rows = evaluate(backend, pairs)
        print(f"\n== {name} ({backend.identity})")
        header = f"{'kind':15s} {'label':13s} {'n':>4s} {'accuracy':>9s} {'before check':>13s}"
        print(f"{header} {'label=contradicted':>19s}")
        order = lambda kv: (kv[0][0] == "all", kv[0][0].startswith("split="), kv[0])  # noqa: E731
        for (kind, label), row in sorted(rows.items(), key=order):
            n = row["n"]
            print(f"{kind:15s} {label:13s} {n:4d} {row['right'] / n:9.3f} {row['right_before'] / n:13.3f} "
                  f"{row['labelled_contradicted']:19d}")
        total = sum(r["n"] for k, r in rows.items() if k[0] == "all")
        right = sum(r["right"] for k, r in rows.items() if k[0] == "all")
        print(f"overall accuracy {right / total:.3f} over {total} pairs")


if __name__ == "__main__":
    main()
