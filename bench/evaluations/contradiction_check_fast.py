"""Caught / false-alarm rates of the contradiction check on a set, fast enough to tune on (the full bench,
``contradiction_accuracy.py``, re-encodes every evidence passage for the embedding backend).

    .venv/bin/python bench/evaluations/contradiction_check_fast.py [--set PATH] [--backends lexical,embedding]
        [--cache PATH] [--show dev|test]

lexical: the backend's ``supports([claim], [evidence])``, as in the bench. embedding: the backend's own verdict
and most similar sentence do not depend on ``scoring.metrics.contradiction``, so they are computed once and
cached (``--cache``, default ``$CONCORD_VAR_DIR/contradiction_embedding_cache.json``, keyed by pair id and the
set's text); the check is then re-applied to the cached sentence, exactly as ``apply_contradiction`` does
(one passage per pair, as in the natural set). "caught" = contradicted pairs given verdict False; "false
alarm" = supported pairs given verdict False. ``--show`` prints the pairs the check gets wrong on that split.
"""

from __future__ import annotations

import argparse
import hashlib
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
from scoring.backends.text import sentences_of  # noqa: E402
from scoring.metrics import contradiction  # noqa: E402

DEFAULT_SET = ROOT / "tests/scoring/data/natural_contradictions.jsonl"


def embedding_rows(pairs: list[dict], cache: Path) -> dict[str, dict]:
    key = hashlib.sha256(json.dumps([(p["id"], p["claim"], p["evidence"]) for p in pairs]).encode()).hexdigest()
    if cache.exists():
        stored = json.loads(cache.read_text())
        if stored.get("key") == key:
            return stored["rows"]
    backend = get_backend("embedding")
    rows = {}
    for p in pairs:
        (j,) = backend.supports([p["claim"]], [p["evidence"]])
        sentences = sentences_of([p["evidence"]]) or [p["evidence"]]
        before = j.details.get("contradiction", {}).get("verdict_before", j.verdict)
        rows[p["id"]] = {"verdict_before": bool(before), "sentence": sentences[j.details["best_index"]]}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "rows": rows}))
    return rows


def verdicts(name: str, pairs: list[dict], cache: Path) -> dict[str, tuple[bool, list]]:
    out = {}
    if name == "embedding":
        rows = embedding_rows(pairs, cache)
        for p in pairs:
            found = contradiction.mismatches(p["claim"], rows[p["id"]]["sentence"])
            out[p["id"]] = (rows[p["id"]]["verdict_before"] and not found, found)
        return out
    backend = get_backend(name)
    for p in pairs:
        (j,) = backend.supports([p["claim"]], [p["evidence"]])
        out[p["id"]] = (bool(j.verdict), j.details.get("contradiction", {}).get("mismatches", []))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default=str(DEFAULT_SET))
    parser.add_argument("--backends", default="lexical,embedding")
    var = Path(os.environ.get("CONCORD_VAR_DIR", ROOT / "var"))
    parser.add_argument("--cache", default=str(var / "contradiction_embedding_cache.json"))
    parser.add_argument("--show", choices=("dev", "test"))
    args = parser.parse_args()
    pairs = [json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()]
    for name in args.backends.split(","):
        result = verdicts(name, pairs, Path(args.cache))
        counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        for p in pairs:
            for split in (p.get("split", "all"), "all"):
                row = counts[split, p["label"]]
                row[0] += not result[p["id"]][0]
                row[1] += 1
        for split in ("dev", "test", "all"):
            c, s = counts[split, "contradicted"], counts[split, "supported"]
            if c[1]:
                print(
                    f"{name:10s} {split:5s} caught {c[0] / c[1]:.3f} ({c[0]}/{c[1]})  "
                    f"false alarm {s[0] / s[1]:.3f} ({s[0]}/{s[1]})"
                )
        if args.show:
            for p in pairs:
                verdict, found = result[p["id"]]
                wrong = verdict if p["label"] == "contradicted" else not verdict
                if p.get("split") == args.show and wrong:
                    print(
                        f"  [{p['label'][:6]}] {p['id']} {p['transform']}\n    C: {p['claim']}\n"
                        f"    S: {p['evidence_sentence']}\n    found: {found}"
                    )


if __name__ == "__main__":
    main()
