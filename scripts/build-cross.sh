#!/usr/bin/env bash
# Builds the native executor for a target other than linux-x64 (the linux-x64 builds stay with
# scripts/build-wheel.sh and extension/scripts/build-portable-addon.sh): the headless executor
# (crates/oh-headless) and the napi addon (crates/oh-node), from the COMMITTED state (git archive
# HEAD).
#
#   scripts/build-cross.sh TRIPLE     # prints the output folder on the last line:
#     <out>/openhands-vscode-executor                       the headless executor
#     <out>/openhands-vscode-executor.<napi-platform>.node  the addon
#     <out>/PLATFORM                                        the napi platform name (linux-arm64-gnu, linux-x64-musl, darwin-arm64, darwin-x64)
#
# The compiler is Debian's rustc-web (scripts/setup-cross.sh): rustup's servers, which serve the
# prebuilt standard library of other targets, are not reachable from every build machine, so
# `-Zbuild-std` (RUSTC_BOOTSTRAP=1) builds `std` for the target from rust-web-src.
# TLS (the Socket.IO client's native-tls): OpenSSL, linked statically (`vendored-openssl`), on
# Linux; Security.framework on macOS (the system's, nothing to bundle).
# Linker: zig (PyPI ziglang, through cargo-zigbuild) for every target: linux-arm64 against glibc
# 2.17's symbols (the floor of manylinux2014, as for the linux-x64 build), linux-x64 against zig's
# own musl (the executor static), and macOS without an Apple SDK: scripts/macos-stubs/ holds text
# stubs of the frameworks the -sys crates link (scripts/macos-framework-stubs.py writes them from
# Cargo.lock; this script refuses stale ones).
# Cached in $HOME/.cache/openhands-vscode-runtime/dist-<triple>, keyed by the committed crates/,
# Cargo.lock and Cargo.toml (scripts/addon-key.sh), the macOS stubs, the compiler's version and the
# recipe below (flags, features, linker and tool versions). One cargo target dir serves every
# target (dist-cross-target): the build scripts and proc macros, which run on this machine, are
# compiled once for all four instead of once each; it persists across source changes (cargo's own
# fingerprints decide what recompiles), and no path of the checkout enters the flags: a change
# under crates/, or a clone at another path, recompiles the project's crates only.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
TRIPLE="$1"
MACOS= ZIG_TARGET=
"$REPO/scripts/setup-cross.sh"
RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo
CACHE="${OH_CROSS_CACHE:-$HOME/.cache/openhands-vscode-runtime}"
DIR="$CACHE/dist-$TRIPLE"
TARGET_DIR="$CACHE/dist-cross-target"
OUT="$DIR/out"
REG="${CARGO_HOME:-$HOME/.cargo}/registry/src"
ZIG_VERSION=0.17.1 ZIGBUILD_VERSION=0.24.1
ZIGTOOLS="$HOME/.cache/openhands-vscode-runtime/zigbuild-$ZIG_VERSION-$ZIGBUILD_VERSION"
u="$(echo "$TRIPLE" | tr - _)"; U="$(echo "$u" | tr a-z A-Z)"
LINUX_FEATURES=oh-headless/vendored-openssl,oh-node/vendored-openssl
# No path of the build machine in the artifacts (panic locations, OpenSSL's file names): the
# registry, the sources and std's sources get neutral prefixes (tests/cross/check-*.sh check it).
RUSTFLAGS="--remap-path-prefix=$REG=/cargo/registry --remap-path-prefix=$DIR/src=/build --remap-path-prefix=$TARGET_DIR=/build/target --remap-path-prefix=/usr/lib/rustlib/src/rust=/rustc/src"
CFLAGS_T="-O2 -fPIC -ffile-prefix-map=$REG=/cargo/registry -ffile-prefix-map=$DIR=/build -ffile-prefix-map=$TARGET_DIR=/build/target"
case "$TRIPLE" in
  aarch64-unknown-linux-gnu)
    # zig links against the glibc 2.17 symbol set (cargo-zigbuild's `TRIPLE.2.17`), the oldest
    # aarch64 glibc there is; Debian's cross gcc would link against bookworm's 2.36 (floor 2.34).
    PLATFORM=linux-arm64-gnu FEATURES=$LINUX_FEATURES LIB=liboh_node.so ZIG_TARGET=$TRIPLE.2.17
    RECIPE="zig=$ZIG_VERSION cargo-zigbuild=$ZIGBUILD_VERSION glibc=2.17" ;;
  x86_64-unknown-linux-musl)
    # zig links against its own musl and C runtime objects (`link-self-contained=no`: the
    # self-contained ones rustup ships with this target are not in Debian's sysroot) and its own
    # LLVM libunwind (std's `-lunwind`); zig cc also compiles the vendored OpenSSL.
    # One build for both, without `crt-static`: the addon must link musl's shared C library (a
    # cdylib loaded by Alpine's Node), and the flag changes how std itself is built, so a build
    # with it for the executor would build std and every dependency a second time (about 4 of
    # the build's 10 minutes). zig links an executable for a musl target statically all the
    # same (its `-lc` is its own static musl), so the executor stays static, now a static PIE (no
    # interpreter, no library needed; its dynamic section relocates itself): tests/cross checks it
    # (check-elf.sh static) and runs it here as it is, tests/dist too (check-targets.py).
    PLATFORM=linux-x64-musl FEATURES=$LINUX_FEATURES LIB=liboh_node.so
    RUSTFLAGS="$RUSTFLAGS -C link-self-contained=no -C target-feature=-crt-static"
    RECIPE="zig=$ZIG_VERSION cargo-zigbuild=$ZIGBUILD_VERSION crt=dynamic" ;;
  aarch64-apple-darwin|x86_64-apple-darwin)
    if [ "$TRIPLE" = aarch64-apple-darwin ]; then PLATFORM=darwin-arm64 MIN=11.0; else PLATFORM=darwin-x64 MIN=10.15; fi
    FEATURES= LIB=liboh_node.dylib MACOS=1
    export MACOSX_DEPLOYMENT_TARGET=$MIN
    # The stubs are linked from the extracted sources, not from the checkout: a path of the
    # checkout in RUSTFLAGS would make every clone at another path rebuild everything.
    STUBS="$DIR/src/scripts/macos-stubs"
    RUSTFLAGS="$RUSTFLAGS -C link-arg=-F$STUBS"
    RECIPE="zig=$ZIG_VERSION cargo-zigbuild=$ZIGBUILD_VERSION objcopy=llvm-14 strip+install-name=llvm-14 macos=$MIN" ;;
  *) echo "build-cross: unsupported target $TRIPLE" >&2; exit 2 ;;
esac
# One build per cache slot at a time: two checkouts building the same target would extract their
# sources over each other's.
mkdir -p "$DIR"
exec 9>"$DIR.lock"
flock 9
COMMIT="$(git -C "$REPO" rev-parse HEAD)"
key="$("$REPO/scripts/addon-key.sh" "$COMMIT") $("$RUSTC" -V)${MACOS:+ stubs=$(git -C "$REPO" rev-parse "$COMMIT:scripts/macos-stubs")} | $TRIPLE features=$FEATURES $RECIPE RUSTFLAGS=$RUSTFLAGS CFLAGS=$CFLAGS_T"
if [ -f "$OUT/SOURCE" ] && [ "$(cat "$OUT/SOURCE")" = "$key" ]; then
  echo "build-cross: cached build of the same sources ($OUT)" >&2
  echo "$OUT"; exit 0
fi
if [ ! -x "$ZIGTOOLS/bin/cargo-zigbuild" ]; then
  "$("$REPO/scripts/find-python312.sh")" -m venv "$ZIGTOOLS"
  "$ZIGTOOLS/bin/pip" install -q "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION" >&2
fi
rm -rf "$DIR/src" "$OUT" && mkdir -p "$DIR/src" "$OUT"
(cd "$REPO" && git archive "$COMMIT" -- crates Cargo.toml Cargo.lock ${MACOS:+scripts/macos-stubs}) | tar -x -C "$DIR/src"
# An older cache's target dir of this target alone (before dist-cross-target): its disk space.
rm -rf "$DIR/target"
export RUSTC RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$TARGET_DIR" RUSTFLAGS "CFLAGS_$u=$CFLAGS_T"
if [ -n "$MACOS" ]; then
  # The framework stubs must list what the -sys crates of this Cargo.lock declare.
  (cd "$DIR/src" && "$CARGO" fetch --locked -q)
  rm -rf "$DIR/stubs-check"
  python3 "$REPO/scripts/macos-framework-stubs.py" "$DIR/src/Cargo.lock" "$(ls -d "$REG"/index.crates.io-* | head -1)" "$DIR/stubs-check" 2>/dev/null
  diff -r "$DIR/stubs-check" "$STUBS" >/dev/null || {
    echo "build-cross: scripts/macos-stubs is stale for this Cargo.lock; refresh it with" >&2
    echo "  python3 scripts/macos-framework-stubs.py Cargo.lock ~/.cargo/registry/src/index.crates.io-* scripts/macos-stubs" >&2
    exit 1; }
fi
echo "build-cross: building $TRIPLE from commit $(git -C "$REPO" rev-parse --short "$COMMIT")" >&2
# `-Zbuild-std` alone: a list (std,panic_abort) makes cargo reject the features it passes to std.
ARGS=(--release --locked -Zbuild-std)
cargo_build() {  # cargo_build PACKAGE...: with those of FEATURES that belong to the packages
  local pkgs=() feats=() p f
  for p in "$@"; do
    pkgs+=(-p "$p")
    for f in ${FEATURES//,/ }; do [ "${f%%/*}" = "$p" ] && feats+=("$f"); done
  done
  [ ${#feats[@]} -gt 0 ] && pkgs+=(--features "$(IFS=,; echo "${feats[*]}")")
  # cargo-zigbuild runs the `cargo` it finds first: Debian's (/usr/bin), not rustup's shim.
  # rustc strips macOS binaries with `rust-objcopy` (rustup's llvm-tools; Debian's rustc has
  # none): LLVM's objcopy of Debian's llvm-14 under that name.
  mkdir -p "$DIR/bin" && ln -sf /usr/lib/llvm-14/bin/llvm-objcopy "$DIR/bin/rust-objcopy"
  (cd "$DIR/src" && PATH="$DIR/bin:$ZIGTOOLS/bin:/usr/bin:$PATH" "$ZIGTOOLS/bin/cargo-zigbuild" zigbuild "${ARGS[@]}" --target "${ZIG_TARGET:-$TRIPLE}" "${pkgs[@]}" >&2)
}
cargo_build oh-headless oh-node
rm -rf "$DIR/target-addon"  # an older cache's separate musl addon build (no longer made): its disk space
cp "$TARGET_DIR/$TRIPLE/release/openhands-vscode-executor" "$OUT/openhands-vscode-executor"
cp "$TARGET_DIR/$TRIPLE/release/$LIB" "$OUT/openhands-vscode-executor.$PLATFORM.node"
if [ -n "$MACOS" ]; then
  # The linker leaves the build's paths in the files: the debug map (STABS naming the objects it
  # linked) and, in the addon, the install name (the path it was linked at). LLVM's tools remove
  # them and re-sign (the ad-hoc signature covers the whole file: tests/cross/check-macho.py
  # checks its page hashes).
  /usr/lib/llvm-14/bin/llvm-strip "$OUT/openhands-vscode-executor" "$OUT/openhands-vscode-executor.$PLATFORM.node"
  /usr/lib/llvm-14/bin/llvm-install-name-tool -id "@rpath/openhands-vscode-executor.$PLATFORM.node" "$OUT/openhands-vscode-executor.$PLATFORM.node"
fi
echo "$PLATFORM" > "$OUT/PLATFORM"
echo "$key" > "$OUT/SOURCE"
echo "$OUT"
