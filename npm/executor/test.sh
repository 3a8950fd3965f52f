#!/usr/bin/env bash
# npm deps (if the lockfile changed), debug addon build (incremental), then the node:test suites.
# The Socket.IO suites use the python-socketio server of crates/oh-transport/tests/support with
# $OH_TEST_PYTHON or $OH_VENV/bin/python (default ~/.cache/openhands-vscode-runtime/venv); without
# one they fail (`make test-node` installs the venv first); OH_ALLOW_SKIP=1 skips them instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build.sh" debug
cd "$here"
exec node --test --test-concurrency=1 __test__/
