#!/usr/bin/env bash
# scripts/bootstrap, as a user runs it: it refuses an
# unknown option by name, `--no-tests` builds the library, the command and the
# example SPITS jobs but not the tests, and a build shows progress instead of one line in minutes.
# Run against the build directory bootstrap itself made (CMakeLists.txt adds
# this test only there), so it finds everything built and rebuilds nothing.
set -euo pipefail
source_dir=$1 build_dir=$2
fail() { echo "bootstrap_test: $*" >&2; exit 1; }

set +e
out=$("$source_dir/scripts/bootstrap" --no-test 2>&1); code=$?
set -e
[ "$code" = 2 ] || fail "an unknown option exited $code, expected 2: $out"
grep -q "unknown option '--no-test'" <<<"$out" || fail "the unknown option is not named: $out"

out=$(REDFLOW_BUILD_DIR="$build_dir" "$source_dir/scripts/bootstrap" --no-tests 2>&1) || fail "bootstrap --no-tests failed: $out"
grep -Eq '^bootstrap: +[0-9]+% ' <<<"$out" || fail "no progress line: $out"
grep -q "Built target redflow_cli" "$build_dir/build.log" || fail "--no-tests did not build the command: $(cat "$build_dir/build.log")"
grep -q "Built target redflow_user_cli" "$build_dir/build.log" || fail "--no-tests did not build the command cmake --install installs: $(cat "$build_dir/build.log")"
# `redflow spits --help` and docs/spits.md run the example jobs.
for job in pi block_filter; do
  grep -q "Built target spits_$job" "$build_dir/build.log" || fail "--no-tests did not build examples/spits ($job): $(cat "$build_dir/build.log")"
  [ -f "$build_dir/examples/spits/libspits_$job.so" ] || fail "--no-tests left no $build_dir/examples/spits/libspits_$job.so"
done
if grep -q "redflow_tests" "$build_dir/build.log"; then fail "--no-tests built the tests: $(cat "$build_dir/build.log")"; fi
echo "bootstrap_test: ok"
