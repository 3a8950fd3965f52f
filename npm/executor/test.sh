#!/usr/bin/env bash
# npm deps (if the lockfile changed), debug addon build (incremental), then the node:test suites.
# The Socket.IO suites use the python-socketio server of crates/oh-transport/tests/support with
# $OH_TEST_PYTHON or ~/.cache/openhands-vscode-runtime/venv/bin/python (skipped without it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build.sh" debug
cd "$here"
exec node --test --test-concurrency=1 __test__/
