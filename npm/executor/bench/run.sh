#!/usr/bin/env bash
# Benchmarks: delegated `echo hi` round trip, small file reads through the JS fs callbacks, RSS.
# `run.sh` uses a release build of the addon (built if missing; BENCH_PROFILE=debug to use the
# debug build that test.sh makes).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
profile=${BENCH_PROFILE:-release}
"$here/build.sh" "$profile"
BENCH_PROFILE=$profile exec node "$here/bench/bench.js"
