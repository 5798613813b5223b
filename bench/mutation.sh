#!/usr/bin/env bash
# Mutation testing (mutmut) over the modules that hold Concord's access, assignment, label save, blinding
# and agreement rules; prints mutmut's results and the kill rate.
#
#     bench/mutation.sh                     # the four areas below
#     bench/mutation.sh concord/access.py   # only these files (glob patterns mutmut accepts)
#     MUTMUT_CHILDREN=4 bench/mutation.sh   # parallel mutants (default: the number of CPUs)
#     PYTHON=… MUTMUT=… bench/mutation.sh    # another interpreter / mutmut than the project's .venv
#
# It runs in a scratch copy of the committed tree (git archive HEAD), so the working tree is never
# mutated and nothing is left behind but the printed figures (and $MUTATION_KEEP, when set, the copy).
# mutmut runs the tests that reach each mutated function, chosen from those listed in TESTS below,
# on SQLite. A mutant is killed when a test fails, survives when they all pass; the kill rate is
# killed / (killed + survived + timeouts counted as killed, as mutmut does), skipped ones excluded.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
MUTMUT="${MUTMUT:-$ROOT/.venv/bin/mutmut}"
CHILDREN="${MUTMUT_CHILDREN:-$(nproc)}"

if [ "$#" -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=(
    concord/access.py                  # the access rule (404 / 403)
    annotation/selectors.py            # annotator object access (the access helpers)
    annotation/workspace.py            # blinding (the item page an annotator sees, calibration labels)
    annotation/item_units.py           # an item's units (what a complete assignment answers)
    annotation/services.py             # assignment (pool_assign_items, reservations, submit)
    annotation/labels/access.py        # the annotator access rule (ORM and SQL forms) and who may write
    annotation/labels/save.py          # the label save (versions, conflicts, conditions, the two paths)
    annotation/labels/questions.py     # the pool's questions (kept under the questions' revision)
    annotation/labels/conflicts.py     # what a 409 tells (nobody named but "you")
    annotation/labels/undo.py          # undoing a change (new versions, never an erasure)
    adjudication/selectors.py          # adjudicator / researcher object access
    adjudication/stats/agreement.py    # Cohen, Fleiss, Krippendorff and their bootstraps
  )
fi
# MUTATION_TESTS="tests/a.py tests/b.py" narrows the tests mutmut may choose from (a quicker, partial run).
read -r -a TESTS <<<"${MUTATION_TESTS:-}"
[ "${#TESTS[@]}" -gt 0 ] || TESTS=(
  tests/test_access_matrix.py tests/test_access_policies.py tests/test_security_object_ids.py
  tests/test_named_mutations.py tests/annotation/test_blinding.py tests/annotation/test_assignment.py
  tests/annotation/test_workspace.py tests/annotation/test_api.py tests/annotation/test_labels.py
  tests/annotation/test_access_rule.py
  tests/adjudication/test_agreement.py tests/adjudication/test_cases_pages.py
)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/concord-mutation.XXXXXX")"
cleanup() { if [ -z "${MUTATION_KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept: $WORK"; fi; }
trap cleanup EXIT
git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
ln -s "$(dirname "$(dirname "$PY")")" "$WORK/.venv"

# mutmut reads [mutmut] from setup.cfg when pyproject.toml has no [tool.mutmut]; the copy gets its own.
{
  echo "[mutmut]"
  echo "source_paths="
  for p in concord annotation scoring adjudication; do echo "    $p"; done
  echo "only_mutate="
  for t in "${TARGETS[@]}"; do echo "    $t"; done
  echo "also_copy="
  for p in manage.py templates static data docs bench; do echo "    $p"; done
  echo "pytest_add_cli_args="
  for a in -p no:cacheprovider -p no:randomly -x -q --timeout=120; do echo "    $a"; done
  echo "pytest_add_cli_args_test_selection="
  for t in "${TESTS[@]}"; do echo "    $t"; done
  echo "use_git_change_detection=false"
} > "$WORK/setup.cfg"

cd "$WORK"
export DJANGO_ALLOW_ASYNC_UNSAFE=true CONCORD_VAR_DIR="$WORK/var"
start=$(date +%s)
"$MUTMUT" run --max-children "$CHILDREN" >"$WORK/mutmut-run.log" 2>&1 || {
  echo "mutmut run failed; its last lines:"; tail -40 "$WORK/mutmut-run.log"; exit 1; }
elapsed=$(( $(date +%s) - start ))

"$MUTMUT" results --all true >"$WORK/results.txt" 2>&1 || true
"$PY" - "$WORK/results.txt" "$elapsed" "${TARGETS[@]}" <<'PY'
import collections, re, sys
path, elapsed, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
by_status = collections.Counter()
by_module = collections.defaultdict(collections.Counter)
survivors = []
for line in open(path, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*([\w.]+)__mutmut_\d+:\s*(\w[\w ]*)", line)
    if not m:
        continue
    name, status = m.group(1), m.group(2).strip()
    by_status[status] += 1
    module = name.split(".x_")[0].split(".xǁ")[0]
    by_module[module][status] += 1
    if status == "survived":
        survivors.append(line.split(":")[0].strip())
killed = by_status["killed"] + by_status["timeout"]
tested = killed + by_status["survived"]
print(f"mutation bench: {', '.join(targets)}")
print(f"elapsed: {elapsed} s")
for module, counts in sorted(by_module.items()):
    k = counts["killed"] + counts["timeout"]
    t = k + counts["survived"]
    rate = f"{100 * k / t:.1f}%" if t else "n/a"
    print(f"  {module}: {dict(counts)} kill rate {rate}")
print(f"total: {dict(by_status)}")
print(f"kill rate: {killed}/{tested} = {100 * killed / tested:.1f}%" if tested else "kill rate: n/a (no mutant tested)")
print(f"survivors ({len(survivors)}): see `mutmut show <name>` in a kept copy (MUTATION_KEEP=1)")
for name in survivors[:50]:
    print("  ", name)
PY
