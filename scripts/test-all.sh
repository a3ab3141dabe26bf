#!/usr/bin/env bash
# The one test command (`npm test`): build, type-check, every jest project, then any non-jest suite in
# scripts/suites/*.sh. Prints one final line `N passed, N failed`, summed from jest's JSON reports
# (numPassedTests / numFailedTests, plus numRuntimeErrorTestSuites: a suite that failed to run is a
# failure), and exits non-zero when anything failed.
#
# Counting: each jest test counts once; build and each type-check count as one check each; a suite under
# scripts/suites/ counts what its last line says when that line is `N passed, N failed`, else 1 by exit code.
# A jest project that crashed or hung (no JSON report) counts as 1 failed.
#
# Env: TEST_RESULTS_DIR (where the JSON reports go; default a temp dir), TEST_PROJECTS (space-separated
# subset of jest projects), TEST_PROJECT_TIMEOUT (bound per jest project, default 1200 s; hangs only).
set -uo pipefail

cd "$(dirname "$0")/.."
RESULTS_DIR="${TEST_RESULTS_DIR:-$(mktemp -d -t vanish-tests.XXXXXX)}"
mkdir -p "$RESULTS_DIR"
PROJECTS="${TEST_PROJECTS:-unit integration e2e browser resilience containers compose cluster}"
PROJECT_TIMEOUT="${TEST_PROJECT_TIMEOUT:-1200}"

passed=0
failed=0
summary=()

note() { printf '\n=== %s\n' "$*"; step_started=$SECONDS; }
# Each step's wall time, so a suite that grows shows up in the summary before CI's bound does.
step_started=$SECONDS
record() { # name passed failed
  passed=$((passed + $2))
  failed=$((failed + $3))
  summary+=("$(printf '%-22s %4d passed, %4d failed  %5d s' "$1" "$2" "$3" $((SECONDS - step_started)))")
  step_started=$SECONDS
}

check() { # name command...
  local name=$1; shift
  note "$name: $*"
  if "$@"; then record "$name" 1 0; else record "$name" 0 1; echo "!!! $name failed"; fi
}

# Workers per project: unit tests are CPU-bound and independent, so two workers. Everything else gets
# one: integration suites run concurrency scenarios (racing replicas, 50 reveals at once) that, with a
# second worker competing for the two cores, timed out or raced now and then (two flaky failures in
# three full runs); one worker costs about half a minute and made them steady.
workers_for() {
  case "$1" in
    unit) echo 2 ;;
    *) echo 1 ;;
  esac
}

check build npm run build
check typecheck npx tsc -p tsconfig.json
# Code outside the workspaces' build that has its own tsconfig (k6 scripts, their Node shim, benchmarks).
for extra in load-tests/tsconfig.json load-tests/shim/tsconfig.json scripts/tsconfig.bench.json; do
  if [[ -f "$extra" ]]; then check "tsc:${extra%/tsconfig*.json}" npx tsc -p "$extra" --noEmit; fi
done

for project in $PROJECTS; do
  report="$RESULTS_DIR/jest-$project.json"
  rm -f "$report"
  note "jest --selectProjects $project"
  timeout --signal=TERM --kill-after=30 "$PROJECT_TIMEOUT" \
    npx jest --selectProjects "$project" --passWithNoTests --ci --forceExit \
      --maxWorkers="$(workers_for "$project")" --json --outputFile="$report"
  status=$?
  if [[ -s "$report" ]]; then
    read -r p f r < <(node -e '
      const r = require(process.argv[1]);
      console.log(r.numPassedTests, r.numFailedTests, r.numRuntimeErrorTestSuites);' "$report")
    record "$project" "$p" $((f + r))
    if ((r > 0)); then echo "!!! $project: $r suite(s) failed to run"; fi
    if ((status != 0 && f + r == 0)); then
      # jest failed for a reason its counts do not show (e.g. open handles, a coverage threshold).
      echo "!!! $project: jest exited $status with no failed test"; record "$project-exit" 0 1
    fi
  else
    echo "!!! $project: jest produced no report (exit $status: crashed or hit the ${PROJECT_TIMEOUT}s bound)"
    record "$project" 0 1
  fi
done

shopt -s nullglob
for suite in scripts/suites/*.sh; do
  name="$(basename "$suite" .sh)"
  note "suite $name"
  out="$RESULTS_DIR/suite-$name.log"
  bash "$suite" 2>&1 | tee "$out"
  status=${PIPESTATUS[0]}
  last="$(tail -n 1 "$out")"
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    p=${BASH_REMATCH[1]}; f=${BASH_REMATCH[2]}
    if ((status != 0 && f == 0)); then f=1; fi
    record "$name" "$p" "$f"
  elif ((status == 0)); then record "$name" 1 0
  else record "$name" 0 1
  fi
done

note "summary (reports in $RESULTS_DIR)"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
((failed == 0))
