#!/usr/bin/env bash
# Mutation testing (mutmut) over the modules that hold Concord's rules: access, assignment, blinding, history
# (reopen, undo), agreement, the data manager, imports (validation and the all-or-nothing writer), exports
# (their filters) and the API's SQL save. Prints, per module, the kill rate and whether it meets the target
# (MUTATION_TARGET, 90 %), then the surviving mutants.
#
#     bench/mutation.sh                                         # every module below, against all their tests
#     bench/mutation.sh --module adjudication/data_manager.py   # one module against its own tests (repeatable)
#     bench/mutation.sh --module adjudication/exports/filters.py --only 'adjudication.exports.filters.xǁExportFiltersǁ*'
#                                                               # only the mutants whose names match (fnmatch:
#                                                               # a class or a function of the module)
#     bench/mutation.sh concord/access.py                       # these files (globs) against every test below
#     MUTATION_TESTS="tests/a.py tests/b.py" bench/mutation.sh …  # another test list
#     MUTMUT_CHILDREN=1 bench/mutation.sh …                     # parallel mutants (default: the number of CPUs;
#                                                               # one reuses its test database between mutants)
#     MUTATION_DATABASE_URL=postgres://… bench/mutation.sh …    # the tests on that PostgreSQL database; one child.
#                                                               # `--module` of a module with PostgreSQL-only
#                                                               # branches (MODULE_ON_POSTGRESQL below) defaults to
#                                                               # postgres://postgres@127.0.0.1:5432/concord_mutation
#     MUTATION_LOG=bench/mutation-figures.log bench/mutation.sh # also append the figures to that file
#     PYTHON=… MUTMUT=… bench/mutation.sh                       # another interpreter / mutmut than the .venv's
#     MUTATION_SQLITE=1 bench/mutation.sh --module X            # on SQLite even for a MODULE_ON_POSTGRESQL module:
#                                                               # with MUTATION_RESUME, a PostgreSQL run's survivors
#                                                               # face the SQLite tests too, so a mutant counts as
#                                                               # killed on either database (a module with branches
#                                                               # for each database: SQLite's can only die there)
#     MUTATION_KEEP=1 bench/mutation.sh --module X              # keep the scratch copy (its path is printed)
#     MUTATION_TIMEOUT_CONSTANT=10 bench/mutation.sh …          # seconds of fixed cost per mutant in mutmut's timeout
#     MUTATION_RESUME=/tmp/concord-mutation.XXXX bench/mutation.sh --module X
#                                                               # re-run only the survivors of that kept run against
#                                                               # the tests of the committed tree now, then print the
#                                                               # whole module's figures (below)
#
# Resuming: a killed mutant stays killed when tests are only added, so after a full run kept with MUTATION_KEEP,
# new tests need only face the survivors; the mutants an interrupted run had not reached are run too (with --only,
# those it selects), so an interrupted run can be finished this way. MUTATION_RESUME refuses unless the measured modules are byte-for-byte
# those of the kept run (their mutants would differ otherwise) and the same modules are named; other source
# files and the tests come from HEAD; the test files are the kept run's list (mutmut resets every result when
# that list changes): put new tests in files already listed, or make a full run. Figures say "resumed".
#
# It runs in a scratch copy of the committed tree (git archive HEAD), so the working tree is never mutated and
# nothing is left behind but the printed figures (and $MUTATION_KEEP, when set, the copy: `mutmut show NAME`
# there shows a mutant). Commit before a run: uncommitted changes are not measured.
# mutmut runs the tests that reach each mutated function, chosen from the test list, on SQLite (PostgreSQL for
# MODULE_ON_POSTGRESQL, or MUTATION_DATABASE_URL). A mutant is killed when a test fails, survives when they all pass; the kill
# rate is killed / (killed + survived), timeouts counted as killed (as mutmut does); mutants that no listed
# test reaches ("no tests") and those not selected by --only are not counted.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
MUTMUT="${MUTMUT:-$ROOT/.venv/bin/mutmut}"
CHILDREN="${MUTMUT_CHILDREN:-$(nproc)}"
TARGET_RATE="${MUTATION_TARGET:-90}"

# Each module and the tests that exercise it (what `--module` runs it against).
declare -A MODULE_TESTS=(
  [concord/access.py]="tests/test_access_helpers.py tests/test_access_matrix.py tests/test_access_policies.py tests/test_security_object_ids.py
    tests/test_named_mutations.py"
  [annotation/access.py]="tests/test_access_helpers.py tests/test_access_matrix.py tests/test_access_policies.py tests/test_security_object_ids.py
    tests/test_security_pages.py tests/annotation/test_console_views.py tests/annotation/test_console_api.py"
  [annotation/selectors.py]="tests/test_access_matrix.py tests/test_security_object_ids.py tests/test_named_mutations.py
    tests/annotation/test_blinding.py tests/annotation/test_workspace.py tests/annotation/test_api.py
    tests/annotation/test_selectors_units.py"
  [annotation/services.py]="tests/test_named_mutations.py tests/annotation/test_assignment.py
    tests/annotation/test_workspace.py tests/annotation/test_api.py tests/annotation/test_labels.py
    tests/annotation/test_history.py tests/annotation/test_labels_conditions.py tests/annotation/test_quality_controls.py"
  [annotation/labels/save.py]="tests/annotation/test_label_save_cases.py tests/test_named_mutations.py tests/annotation/test_assignment.py
    tests/annotation/test_workspace.py tests/annotation/test_api.py tests/annotation/test_labels.py
    tests/annotation/test_history.py tests/annotation/test_labels_conditions.py tests/annotation/test_access_rule.py
    tests/annotation/test_conflict_identity.py tests/annotation/test_save_sql.py"
  [annotation/labels/access.py]="tests/annotation/test_access_rule.py tests/test_access_matrix.py
    tests/test_security_object_ids.py tests/test_named_mutations.py tests/annotation/test_api.py"
  [annotation/labels/undo.py]="tests/annotation/test_history.py tests/annotation/test_labels.py tests/annotation/test_api.py"
  [annotation/labels/conflicts.py]="tests/annotation/test_conflict_identity.py tests/annotation/test_labels.py
    tests/annotation/test_api.py"
  [annotation/workspace.py]="tests/annotation/test_workspace_model.py tests/test_named_mutations.py tests/annotation/test_blinding.py
    tests/annotation/test_workspace.py tests/annotation/test_api.py tests/annotation/test_history.py"
  [adjudication/selectors.py]="tests/test_access_matrix.py tests/test_security_object_ids.py
    tests/adjudication/web/test_cases_pages.py"
  [adjudication/stats/agreement.py]="tests/adjudication/stats/test_agreement.py
    tests/adjudication/stats/test_agreement_mutants.py tests/adjudication/stats/test_agreement_sparse.py
    tests/adjudication/stats/test_agreement_chunks.py"
  [adjudication/data_manager.py]="tests/adjudication/test_data_manager.py tests/adjudication/test_data_manager_nothing.py
    tests/adjudication/test_data_manager_pool_states.py tests/adjudication/test_data_manager_text_index.py"
  [annotation/imports/validation.py]="tests/annotation/test_import_validation.py tests/annotation/test_imports.py
    tests/annotation/test_import_format.py tests/annotation/test_import_writer.py tests/test_security_import_identities.py"
  [annotation/imports/writer.py]="tests/annotation/test_imports.py tests/annotation/test_import_writer.py
    tests/test_security_import_identities.py"
  [adjudication/exports/filters.py]="tests/adjudication/exports/test_exports.py
    tests/adjudication/exports/test_exports_limits.py tests/adjudication/exports/test_exports_filters.py
    tests/adjudication/stats/test_exports_agreement.py tests/adjudication/exports/test_roundtrip.py"
  [adjudication/exports/records.py]="tests/adjudication/exports/test_exports.py
    tests/adjudication/exports/test_exports_limits.py tests/adjudication/exports/test_exports_filters.py
    tests/adjudication/stats/test_exports_agreement.py tests/adjudication/exports/test_roundtrip.py
    tests/test_security_csv.py tests/adjudication/exports/test_exports_records.py"
  [annotation/labels/statements.py]="tests/annotation/test_save_sql_edges.py tests/annotation/test_save_sql.py tests/annotation/test_access_rule.py tests/annotation/test_api.py tests/annotation/test_api_label_io.py
    tests/annotation/test_labels.py"
)
# Modules with a branch that only PostgreSQL takes (the one-statement save, COPY and id drawing at import, the
# export's SQL readers): `--module` measures them on PostgreSQL unless MUTATION_DATABASE_URL names a database
# (on SQLite those branches are never run, so their mutants could only survive). The others run on SQLite.
declare -A MODULE_ON_POSTGRESQL=(
  [annotation/labels/save.py]=1 [annotation/labels/statements.py]=1 [annotation/imports/validation.py]=1
  [annotation/imports/writer.py]=1 [adjudication/exports/records.py]=1
)
DEFAULT_POSTGRESQL_URL="postgres://postgres@127.0.0.1:5432/concord_mutation"
# The order of a full run.
ALL_MODULES=(
  concord/access.py annotation/access.py annotation/selectors.py annotation/services.py annotation/labels/save.py
  annotation/labels/access.py annotation/labels/undo.py annotation/labels/conflicts.py annotation/workspace.py
  adjudication/selectors.py
  adjudication/stats/agreement.py adjudication/data_manager.py annotation/imports/validation.py
  annotation/imports/writer.py adjudication/exports/filters.py adjudication/exports/records.py annotation/labels/statements.py
)

MODULES=()
GLOBS=()
ONLY=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --module)
      [ -n "${MODULE_TESTS[${2:-}]+set}" ] || {
        echo "unknown module '${2:-}'; one of: ${ALL_MODULES[*]}" >&2; exit 2; }
      MODULES+=("$2"); shift 2 ;;
    --only) [ -n "${2:-}" ] || { echo "--only needs a mutant name pattern" >&2; exit 2; }; ONLY+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) GLOBS+=("$1"); shift ;;
  esac
done
if [ "${#MODULES[@]}" -gt 0 ] && [ "${#GLOBS[@]}" -gt 0 ]; then
  echo "name modules either with --module or as plain paths, not both" >&2; exit 2
fi

if [ "${#MODULES[@]}" -gt 0 ] && [ -z "${MUTATION_DATABASE_URL:-}" ] && [ -z "${MUTATION_SQLITE:-}" ]; then
  on_pg=0
  for m in "${MODULES[@]}"; do [ -n "${MODULE_ON_POSTGRESQL[$m]+set}" ] && on_pg=$((on_pg + 1)); done
  if [ "$on_pg" -gt 0 ] && [ "$on_pg" -lt "${#MODULES[@]}" ]; then
    echo "these modules are measured on different databases (PostgreSQL for ${!MODULE_ON_POSTGRESQL[*]}): one run each" >&2
    exit 2
  fi
  if [ "$on_pg" -gt 0 ]; then
    MUTATION_DATABASE_URL="$DEFAULT_POSTGRESQL_URL"
    echo "note: measured on PostgreSQL ($MUTATION_DATABASE_URL; MUTATION_DATABASE_URL overrides it)" >&2
  fi
fi

TESTS=()
if [ "${#MODULES[@]}" -gt 0 ]; then
  TARGETS=("${MODULES[@]}")
  for m in "${MODULES[@]}"; do read -r -d '' -a more <<<"${MODULE_TESTS[$m]}" || true; TESTS+=("${more[@]}"); done
elif [ "${#GLOBS[@]}" -gt 0 ]; then
  TARGETS=("${GLOBS[@]}")
else
  TARGETS=("${ALL_MODULES[@]}")
fi
if [ "${#TESTS[@]}" -eq 0 ]; then
  for m in "${ALL_MODULES[@]}"; do read -r -d '' -a more <<<"${MODULE_TESTS[$m]}" || true; TESTS+=("${more[@]}"); done
fi
read -r -a OVERRIDE <<<"${MUTATION_TESTS:-}"
[ "${#OVERRIDE[@]}" -eq 0 ] || TESTS=("${OVERRIDE[@]}")
# Each test file once, in a stable order.
mapfile -t TESTS < <(printf '%s\n' "${TESTS[@]}" | awk 'NF && !seen[$0]++')

PYTEST_ARGS=(-p no:cacheprovider -p no:randomly -x -q --timeout=120)
if [ -n "${MUTATION_DATABASE_URL:-}" ]; then
  # One test database for the whole run: parallel children would share (and drop) it. A mutant stopped in
  # the middle of a transactional test leaves its rows there; bench/mutation_clean_db.py flushes them before
  # the next mutant's tests (else they all fail in setup and count as killed).
  CHILDREN=1
  PYTEST_ARGS+=(-p bench.mutation_clean_db)
fi
if [ "$CHILDREN" -eq 1 ]; then
  # One mutant at a time: each test run keeps the test database the previous one made instead of migrating
  # a new one (seconds per mutant, most of the time of a mutant whose first test fails). A mutant stopped in
  # a transactional test leaves its rows there on SQLite as well: the same plugin flushes them.
  PYTEST_ARGS+=(--reuse-db)
  [ -n "${MUTATION_DATABASE_URL:-}" ] || PYTEST_ARGS+=(-p bench.mutation_clean_db)
else
  # Parallel children on SQLite: each mutant's tests on a test database file of their own (the settings name
  # one file, which the children would otherwise drop under each other's tests: false kills).
  PYTEST_ARGS+=(-p bench.mutation_own_db)
fi

COMMIT="$(git -C "$ROOT" rev-parse --short HEAD)"
RESUMED=""
RERUN=()
if [ -n "${MUTATION_RESUME:-}" ]; then
  WORK="$(cd "$MUTATION_RESUME" && pwd)"
  [ -f "$WORK/.mutation-run" ] && [ -d "$WORK/mutants" ] || {
    echo "$WORK is not a kept mutation run (no .mutation-run or mutants/)" >&2; exit 2; }
  base="$(sed -n 's/^commit=//p' "$WORK/.mutation-run")"
  kept_targets="$(sed -n 's/^targets=//p' "$WORK/.mutation-run")"
  [ "$kept_targets" = "${TARGETS[*]}" ] || {
    echo "the kept run measured '$kept_targets', not '${TARGETS[*]}'" >&2; exit 2; }
  for t in "${TARGETS[@]}"; do
    cmp -s <(git -C "$ROOT" show "HEAD:$t") "$WORK/$t" || {
      echo "$t differs from the kept run's copy (at $base): its mutants would differ; make a full run" >&2; exit 2; }
  done
  # HEAD's tree over the copy (mutants/ and mutmut's state are not in git, so they stay); a source file that
  # changed since is removed from mutants/ so that mutmut copies it afresh.
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
  while IFS= read -r f; do
    case "$f" in concord/*|annotation/*|scoring/*|adjudication/*) rm -f "$WORK/mutants/$f" ;; esac
  done < <(git -C "$ROOT" diff --name-only "$base" HEAD)
  # The survivors, and the mutants an interrupted run never reached ("not checked"; with --only, those it selects).
  mapfile -t SURVIVORS < <(cd "$WORK" && "$MUTMUT" results --all true 2>/dev/null \
    | sed -n 's/^ *\([^ :]*__mutmut_[0-9]*\): survived$/\1/p')
  mapfile -t UNCHECKED < <(cd "$WORK" && "$MUTMUT" results --all true 2>/dev/null \
    | sed -n 's/^ *\([^ :]*__mutmut_[0-9]*\): not checked$/\1/p' \
    | "$PY" -c 'import fnmatch, sys; p = sys.argv[1:]; [print(n) for n in sys.stdin.read().split() if not p or any(fnmatch.fnmatch(n, x) for x in p)]' "${ONLY[@]}")
  RERUN=("${SURVIVORS[@]}" "${UNCHECKED[@]}")
  RESUMED="resumed from the kept run at ${base:0:7}: its ${#SURVIVORS[@]} survivors re-run and the ${#UNCHECKED[@]} mutants it had not reached run, against the tests at $COMMIT on $([ -n "${MUTATION_DATABASE_URL:-}" ] && echo PostgreSQL || echo SQLite)"
  echo "$RESUMED" >&2
  cleanup() { echo "kept: $WORK"; }
  trap cleanup EXIT
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/concord-mutation.XXXXXX")"
  cleanup() { if [ -z "${MUTATION_KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept: $WORK"; fi; }
  trap cleanup EXIT
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
  ln -s "$(dirname "$(dirname "$PY")")" "$WORK/.venv"
  printf 'commit=%s\ntargets=%s\n' "$(git -C "$ROOT" rev-parse HEAD)" "${TARGETS[*]}" > "$WORK/.mutation-run"
fi
# A listed test file that the committed tree lacks is named and left out (pytest would refuse the whole list).
present=()
for t in "${TESTS[@]}"; do
  if [ -e "$WORK/$t" ]; then present+=("$t"); else echo "note: $t is not in the committed tree; left out" >&2; fi
done
TESTS=("${present[@]}")

# mutmut reads [mutmut] from setup.cfg when pyproject.toml has no [tool.mutmut]; the copy gets its own (a resumed
# run keeps the kept run's).
[ -n "$RESUMED" ] || {
  echo "[mutmut]"
  echo "source_paths="
  for p in concord annotation scoring adjudication; do echo "    $p"; done
  echo "only_mutate="
  for t in "${TARGETS[@]}"; do echo "    $t"; done
  echo "also_copy="
  for p in manage.py templates static data docs bench; do echo "    $p"; done
  echo "pytest_add_cli_args="
  for a in "${PYTEST_ARGS[@]}"; do echo "    $a"; done
  echo "pytest_add_cli_args_test_selection="
  for t in "${TESTS[@]}"; do echo "    $t"; done
  echo "use_git_change_detection=false"
  # mutmut stops a mutant's tests after (their estimated seconds + timeout_constant) x 15 of wall time and counts
  # it killed ("timeout"). Its default constant, 1 s, leaves ~16 s to a mutant whose tests take a tenth of a
  # second, too little for pytest's start and a new test database on a loaded machine (a two-child run beside two
  # others timed out 20 of its first 60 mutants): 10 s of fixed cost per mutant instead.
  echo "timeout_constant=${MUTATION_TIMEOUT_CONSTANT:-10}"
  # Each mutant's tests run in a process forked from a server that has collected the tests but run none: forked
  # from mutmut's main process (the default), they would inherit what the stats run left there, such as the SQL
  # that annotation/labels/statements.py builds once per process, and a mutant of that builder would never run.
  echo "process_isolation=forkserver"
} > "$WORK/setup.cfg"

cd "$WORK"
export DJANGO_ALLOW_ASYNC_UNSAFE=true CONCORD_VAR_DIR="$WORK/var"
if [ -n "${MUTATION_DATABASE_URL:-}" ]; then export DATABASE_URL="$MUTATION_DATABASE_URL"; else unset DATABASE_URL; fi
start=$(date +%s)
if [ -n "$RESUMED" ] && [ "${#RERUN[@]}" -eq 0 ]; then
  : # nothing survived: nothing to re-run
elif [ -n "$RESUMED" ]; then
  # A kept run made with one child reuses one test database between mutants (--reuse-db in its setup.cfg, which
  # a resumed run keeps): parallel children would share it and fail each other's tests (false kills).
  if grep -q -- "--reuse-db" "$WORK/setup.cfg"; then CHILDREN=1; fi
  "$MUTMUT" run --max-children "$CHILDREN" "${RERUN[@]}" >"$WORK/mutmut-run.log" 2>&1 || {
    echo "mutmut run failed; its last lines:"; tail -40 "$WORK/mutmut-run.log"; exit 1; }
else
"$MUTMUT" run --max-children "$CHILDREN" "${ONLY[@]}" >"$WORK/mutmut-run.log" 2>&1 || {
  echo "mutmut run failed; its last lines:"; tail -40 "$WORK/mutmut-run.log"; exit 1; }
fi
elapsed=$(( $(date +%s) - start ))

"$MUTMUT" results --all true >"$WORK/results.txt" 2>&1 || true
summary="$("$PY" - "$WORK/results.txt" "$elapsed" "$TARGET_RATE" "$COMMIT" "${DATABASE_URL:+PostgreSQL}" \
  "${TARGETS[*]}" "${ONLY[*]:-}" "$RESUMED" <<'PY'
import collections, fnmatch, re, sys

path, elapsed, target, commit, database, targets, only, resumed = sys.argv[1:9]
patterns = only.split()
by_status = collections.Counter()
by_module = collections.defaultdict(collections.Counter)
survivors = []
for line in open(path, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*([\w.ǁ]+__mutmut_\d+):\s*(\w[\w ]*)", line)
    if not m:
        continue
    name, status = m.group(1), m.group(2).strip()
    if patterns and not any(fnmatch.fnmatch(name, p) for p in patterns):
        continue
    if status == "not checked":
        continue
    by_status[status] += 1
    module = name.split(".x_")[0].split(".xǁ")[0]
    by_module[module][status] += 1
    if status == "survived":
        survivors.append(name)


def rate(counts):
    killed = counts["killed"] + counts["timeout"]
    tested = killed + counts["survived"]
    return killed, tested


print(f"mutation bench at {commit} ({database or 'SQLite'}): {targets}" + (f" (only {only})" if only else ""))
if resumed:
    print(resumed)
print(f"elapsed: {elapsed} s")
for module, counts in sorted(by_module.items()):
    killed, tested = rate(counts)
    verdict = ("met" if 100 * killed >= float(target) * tested else "NOT met") if tested else "n/a"
    figure = f"{killed}/{tested} = {100 * killed / tested:.1f}%" if tested else "no mutant tested"
    print(f"  {module}: kill rate {figure} — {verdict} (target {target}%); {dict(counts)}")
killed, tested = rate(by_status)
print(f"total: {dict(by_status)}")
print(f"kill rate: {killed}/{tested} = {100 * killed / tested:.1f}%" if tested else "kill rate: n/a (no mutant tested)")
print(f"survivors ({len(survivors)}; `mutmut show NAME` in a kept copy, MUTATION_KEEP=1):")
for name in survivors:
    print("  ", name)
PY
)"
echo "$summary"
if [ -n "${MUTATION_LOG:-}" ]; then
  case "$MUTATION_LOG" in /*) log="$MUTATION_LOG" ;; *) log="$ROOT/$MUTATION_LOG" ;; esac
  { echo "--- $(date -u +%Y-%m-%dT%H:%MZ)"; echo "$summary"; } >>"$log"
fi
