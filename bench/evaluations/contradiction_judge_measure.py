"""Caught / false-alarm rates of a backend's ``supports`` on a natural contradiction set, with its default options.

    .venv/bin/python bench/evaluations/contradiction_judge_measure.py --set PATH [--backend embedding] [--json OUT]

For every pair the backend's ``supports([claim], [evidence])`` is asked once (one passage, the default
threshold). "caught" = contradicted pairs given verdict False; "false alarm" = supported pairs given verdict
False (contradicted or merely unsupported, as in ``contradiction_accuracy.py``). Also printed: how many were
labelled ``contradicted`` by the judge and by a forcing rule, the same per ``transform`` family, and the
backend's identity and the judge's version. Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

from scoring.backends import get_backend  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", required=True)
    parser.add_argument("--backend", default="embedding")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    pairs = [json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()]
    backend = get_backend(args.backend)
    started = time.time()
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    judge_version = None
    for p in pairs:
        (j,) = backend.supports([p["claim"]], [p["evidence"]])
        info = j.details.get("contradiction_judge") or {}
        judge_version = info.get("version", judge_version)
        fam = p.get("transform", p.get("kind", "")).split(":")[0].strip() or "all"
        for key in ("all", fam):
            row = counts[key, p["label"]]
            row[0] += not j.verdict
            row[1] += 1
    c, s = counts["all", "contradicted"], counts["all", "supported"]
    result = {"set": args.set, "backend": backend.identity, "judge": judge_version, "pairs": len(pairs),
              "caught": round(c[0] / c[1], 3), "caught_n": c, "false_alarm": round(s[0] / s[1], 3),
              "false_alarm_n": s, "seconds": round(time.time() - started, 1),
              "families_contradicted": {k[0]: f"{v[0]}/{v[1]}" for k, v in sorted(counts.items())
                                        if k[1] == "contradicted" and k[0] != "all"},
              "families_supported_false_alarms": {k[0]: f"{v[0]}/{v[1]}" for k, v in sorted(counts.items())
                                                  if k[1] == "supported" and k[0] != "all"}}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
