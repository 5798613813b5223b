#!/usr/bin/env bash
# The suite is not allowed to depend on how fast the machine is. This runs CI (`.ci/run`: lint, the whole suite
# on PostgreSQL and Redis, the superuser audit pass) N times in a row, each time on a fresh clone of HEAD, with
# CPU-bound processes running beside it the whole time, and stops at the first red run.
#
#     bench/ci_under_load.sh            # five runs, one CPU-bound process beside them
#     bench/ci_under_load.sh 2          # two runs
#     CI_LOAD_PROCESSES=2 bench/ci_under_load.sh   # two CPU-bound processes (one per core of a 2-core machine)
#
# Prints, per run, its exit status, wall time and pytest's summary lines; the logs stay in the printed folder.
# Commit first: the clones are of HEAD. Each clone uses this checkout's .venv (the README's install command
# makes it), so nothing is downloaded.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUNS="${1:-5}"
PROCESSES="${CI_LOAD_PROCESSES:-1}"
COMMIT="$(git -C "$ROOT" rev-parse HEAD)"
[ -x "$ROOT/.venv/bin/python" ] || { echo "no $ROOT/.venv: run the README's install command first" >&2; exit 2; }
[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] \
  || echo "note: uncommitted changes are not in the clones (they are of HEAD, ${COMMIT:0:7})" >&2

OUT="$(mktemp -d "${TMPDIR:-/tmp}/concord-ci-load.XXXXXX")"
HOGS=()
stop_hogs() { for pid in "${HOGS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_hogs EXIT
for _ in $(seq "$PROCESSES"); do
  python3 -c 'while True: pass' &
  HOGS+=("$!")
done
echo "CI at ${COMMIT:0:7}, $RUNS runs in a row beside $PROCESSES CPU-bound process(es); logs in $OUT"

for i in $(seq "$RUNS"); do
  clone="$OUT/clone-$i"
  git clone -q "$ROOT" "$clone"
  git -C "$clone" checkout -q "$COMMIT"
  ln -s "$ROOT/.venv" "$clone/.venv"
  start=$(date +%s)
  set +e
  (cd "$clone" && CONCORD_VAR_DIR="$OUT/var-$i" bash .ci/run) >"$OUT/run-$i.log" 2>&1
  status=$?
  set -e
  seconds=$(( $(date +%s) - start ))
  for pid in "${HOGS[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "a CPU-bound process stopped during run $i: the run does not count" >&2; exit 1; }
  done
  summary="$(grep -E '[0-9]+ (passed|failed).* in [0-9]' "$OUT/run-$i.log" | tr '\n' ';')"
  echo "run $i/$RUNS: exit $status, $seconds s; $summary"
  if [ "$status" -ne 0 ]; then
    echo "red: $OUT/run-$i.log"
    exit 1
  fi
  rm -rf "$clone" "$OUT/var-$i"
done
echo "green: $RUNS runs of .ci/run in a row at ${COMMIT:0:7} beside $PROCESSES CPU-bound process(es)"
