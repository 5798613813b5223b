"""Prediction-powered against classical interval widths on BEGIN (CMU-DoG dev), for 100, 200 and 300 labels.

    .venv/bin/python bench/evaluations/ppi_begin_widths.py [TSV] [--backend lexical] [--draws 1000] [--seed 0]

The population is the 416 responses of ``data/demo/begin_cmudog``; the share estimated is that of responses
*not* fully attributable to their knowledge passage (``Generic`` counts as not attributable). The metric is
Concord's ``cf`` (the share of the response's information-bearing sentences grounded in the passage),
scored by ``manage.py score`` with the chosen backend, inverted (1 − cf). For each label count n, ``--draws``
simple random samples of n responses play the clinicians' labels and the rest only carry the metric; the
script prints the mean half-width of the classical, plain PPI and PPI++ 95 % intervals, their coverage of the
population share, and the mean effective labels of PPI++.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "concord.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from adjudication.stats import ppi  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tsv", nargs="?", default=str(ROOT / "data/demo/begin_cmudog/begin_dev_cmu.tsv"))
    parser.add_argument("--backend", default="lexical")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with open(args.tsv, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    with tempfile.TemporaryDirectory() as tmp:
        items, scores = Path(tmp) / "items.jsonl", Path(tmp) / "scores.jsonl"
        with items.open("w", encoding="utf-8") as out:
            for i, row in enumerate(rows):
                record = {
                    "id": f"row-{i}",
                    "question": row["message"].strip() or "(no message)",
                    "answer": row["response"].strip(),
                    "contexts": [row["knowledge"].strip()],
                }
                out.write(json.dumps(record) + "\n")
        call_command("score", str(items), "--metric", "cf", "--backend", args.backend, "--out", str(scores))
        by_id = {r["id"]: r for r in map(json.loads, scores.read_text(encoding="utf-8").splitlines())}
    keep = [i for i in range(len(rows)) if by_id[f"row-{i}"]["state"] == "ok"]
    y = np.array([rows[i]["begin_label"].strip() != "Fully attributable" for i in keep], dtype=float)
    f = np.array([1.0 - by_id[f"row-{i}"]["value"] for i in keep])
    truth = float(y.mean())
    print(
        f"{len(keep)} responses scored ok of {len(rows)}; share not fully attributable {truth:.4f}; "
        f"mean of 1 − cf ({args.backend}) {f.mean():.4f}; corr(Y, 1 − cf) {np.corrcoef(y, f)[0, 1]:.3f}"
    )
    rng = np.random.default_rng(args.seed)
    print(f"{'labels':>6}  {'classical':>10} {'ppi':>10} {'ppi++':>10}  coverage c/ppi/ppi++   ppi++ effective labels")
    for n in (100, 200, 300):
        half = {"classical": [], "ppi": [], "ppi++": []}
        hits = dict.fromkeys(half, 0)
        eff = []
        for _ in range(args.draws):
            idx = rng.permutation(len(keep))
            lab, unl = idx[:n], idx[n:]
            for e in (ppi.classical(y[lab]), ppi.ppi(y[lab], f[lab], f[unl]), ppi.ppipp(y[lab], f[lab], f[unl])):
                half[e.method].append(e.half_width)
                hits[e.method] += e.lower <= truth <= e.upper
                if e.method == "ppi++":
                    eff.append(e.effective_labels)
        cov = "/".join(f"{hits[k] / args.draws:.3f}" for k in half)
        print(
            f"{n:>6}  {np.mean(half['classical']):>10.4f} {np.mean(half['ppi']):>10.4f} {np.mean(half['ppi++']):>10.4f}"
            f"  {cov:<21}  {np.mean(eff):.1f}"
        )


if __name__ == "__main__":
    main()
