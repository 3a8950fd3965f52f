#!/usr/bin/env bash
# Builds the native executor for a target other than linux-x64 (the linux-x64 builds stay with
# scripts/build-wheel.sh and extension/scripts/build-portable-addon.sh): the headless executor
# (crates/oh-headless) and the napi addon (crates/oh-node), both with the `vendored-openssl`
# feature where the target's TLS is OpenSSL (Linux), from the COMMITTED state (git archive HEAD).
#
#   scripts/build-cross.sh TRIPLE     # prints the output folder on the last line:
#     <out>/openhands-vscode-executor                       the headless executor
#     <out>/openhands-vscode-executor.<napi-platform>.node  the addon
#
# The compiler is Debian's rustc-web (scripts/setup-cross.sh): rustup's servers, which serve the
# prebuilt standard library of other targets, are not reachable from every build machine, so
# `-Zbuild-std` (RUSTC_BOOTSTRAP=1) builds `std` for the target from rust-web-src.
# Cached in $HOME/.cache/openhands-vscode-runtime/dist-<triple>, keyed by the compiler's version,
# this script and the committed crates/, Cargo.lock and Cargo.toml (scripts/addon-key.sh).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
TRIPLE="$1"
"$REPO/scripts/setup-cross.sh"
RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo
case "$TRIPLE" in
  aarch64-unknown-linux-gnu)
    PLATFORM=linux-arm64-gnu; CC_T=aarch64-linux-gnu-gcc; AR_T=aarch64-linux-gnu-ar ;;
  *) echo "build-cross: unsupported target $TRIPLE" >&2; exit 2 ;;
esac
DIR="${OH_CROSS_CACHE:-$HOME/.cache/openhands-vscode-runtime}/dist-$TRIPLE"
OUT="$DIR/out"
COMMIT="$(git -C "$REPO" rev-parse HEAD)"
key="$("$REPO/scripts/addon-key.sh" "$COMMIT") $(git -C "$REPO" rev-parse "$COMMIT:scripts/build-cross.sh") $("$RUSTC" -V)"
if [ -f "$OUT/SOURCE" ] && [ "$(cat "$OUT/SOURCE")" = "$key" ]; then
  echo "build-cross: cached build of the same sources ($OUT)" >&2
  echo "$OUT"; exit 0
fi
mkdir -p "$DIR"
rm -rf "$DIR/src" "$OUT" && mkdir -p "$DIR/src" "$OUT"
(cd "$REPO" && git archive "$COMMIT" -- crates Cargo.toml Cargo.lock) | tar -x -C "$DIR/src"
u="$(echo "$TRIPLE" | tr - _)"; U="$(echo "$u" | tr a-z A-Z)"
export "CARGO_TARGET_${U}_LINKER=$CC_T" "CC_$u=$CC_T" "AR_$u=$AR_T"
export RUSTC RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$DIR/target"
echo "build-cross: building $TRIPLE from commit $(git -C "$REPO" rev-parse --short "$COMMIT")" >&2
# `-Zbuild-std` alone: a list (std,panic_abort) makes cargo reject the features it passes to std.
(cd "$DIR/src" && nice -n 10 "$CARGO" build --release --locked -Zbuild-std --target "$TRIPLE" \
   -p oh-headless -p oh-node --features oh-headless/vendored-openssl,oh-node/vendored-openssl >&2)
R="$DIR/target/$TRIPLE/release"
cp "$R/openhands-vscode-executor" "$OUT/openhands-vscode-executor"
cp "$R/liboh_node.so" "$OUT/openhands-vscode-executor.$PLATFORM.node"
echo "$key" > "$OUT/SOURCE"
echo "$OUT"
