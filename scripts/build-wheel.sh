#!/usr/bin/env bash
# Builds the portable linux-x86_64 wheel (and the sdist) of openhands-vscode-runtime with maturin:
# the native headless executor (crates/oh-headless) inside, built with napi-rs' cross toolchain
# (glibc 2.17 sysroot, the one the VSIX addon uses) and `vendored-openssl` (no libssl.so.3).
#
#   scripts/build-wheel.sh OUT_DIR        # prints the wheel's path on the last line
#
# Built from the COMMITTED state (git archive HEAD) in a cache folder, keyed like the addon cache:
# the wheel is reused while crates/, Cargo.lock and openhands-runtime-py/ are unchanged.
#   OH_DIST_CROSS_DIR   cache folder (default ~/.cache/openhands-vscode-runtime/dist-cross)
# The first build seeds its cargo target dir from the addon's portable build when that exists
# (same toolchain, triple and OpenSSL: only tokio and the project's crates recompile); cold, it
# costs ~15-25 min on 2 busy cores (vendored OpenSSL, rust_socketio).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
DIR="${OH_DIST_CROSS_DIR:-$HOME/.cache/openhands-vscode-runtime/dist-cross}"
ADDON_TARGET="$HOME/.cache/openhands-vscode-runtime/addon-cross/target"
TRIPLE=x86_64-unknown-linux-gnu
TC_VERSION=1.0.0
TC="$HOME/.napi-rs/cross-toolchain/$TC_VERSION/$TRIPLE"
mkdir -p "$DIR"
exec 9>"$DIR.lock"  # one build per cache at a time
flock 9

# One commit for the key and the archive: HEAD may move while this builds.
COMMIT="$(cd "$REPO" && git rev-parse HEAD)"
key="$(cd "$REPO" && echo "$(scripts/addon-key.sh "$COMMIT") $(git rev-parse "$COMMIT:openhands-runtime-py") $(git rev-parse "$COMMIT:scripts/build-wheel.sh")")"
if [ -f "$DIR/out/SOURCE" ] && [ "$(cat "$DIR/out/SOURCE")" = "$key" ] && ls "$DIR"/out/*.whl >/dev/null 2>&1; then
  echo "build-wheel: cached build of the same sources ($DIR/out)" >&2
else
  # maturin, in its own venv (the build tool of the wheel; from PyPI).
  if [ ! -x "$DIR/tools/bin/maturin" ]; then
    py=$("$REPO/scripts/find-python312.sh")
    "$py" -m venv "$DIR/tools"
    "$DIR/tools/bin/pip" install -q 'maturin>=1.7,<2'
  fi
  # The glibc 2.17 gcc toolchain of @napi-rs/cross-toolchain (shared with the addon's build).
  if [ ! -x "$TC/bin/$TRIPLE-gcc" ]; then
    if [ ! -d "$DIR/npm/node_modules/@napi-rs/cross-toolchain-x64-target-x86_64" ]; then
      mkdir -p "$DIR/npm"
      (cd "$DIR/npm" && echo '{"private":true}' > package.json && \
        npm install --no-audit --no-fund --no-save "@napi-rs/cross-toolchain@$TC_VERSION" \
          "@napi-rs/cross-toolchain-x64-target-x86_64@$TC_VERSION" "@napi-rs/lzma-linux-x64-gnu" >&2)
    fi
    mkdir -p "$TC"
    (cd "$DIR/npm" && node -e "require('@napi-rs/cross-toolchain').download(process.arch, '$TRIPLE').unpack('$TC')")
  fi
  if [ ! -d "$DIR/target" ] && [ -d "$ADDON_TARGET" ]; then
    echo "build-wheel: seeding the cargo target dir from the addon's portable build" >&2
    cp -a "$ADDON_TARGET" "$DIR/target"
  fi
  rm -rf "$DIR/src" && mkdir -p "$DIR/src"
  (cd "$REPO" && git archive "$COMMIT") | tar -x -C "$DIR/src"
  rm -rf "$DIR/out" && mkdir -p "$DIR/out"
  # The environment `napi build --use-napi-cross` sets for a host-triple build (same variables,
  # so the compiled dependencies of the addon's build stay valid here).
  U=X86_64_UNKNOWN_LINUX_GNU; u=x86_64_unknown_linux_gnu
  export "CARGO_TARGET_${U}_LINKER=$TC/bin/$TRIPLE-gcc"
  export TARGET_SYSROOT="$TC/$TRIPLE/sysroot"
  export TARGET_AR="$TC/bin/$TRIPLE-ar" TARGET_RANLIB="$TC/bin/$TRIPLE-ranlib"
  export TARGET_READELF="$TC/bin/$TRIPLE-readelf" TARGET_C_INCLUDE_PATH="$TC/$TRIPLE/sysroot/usr/include/"
  export TARGET_CC="$TC/bin/$TRIPLE-gcc" TARGET_CXX="$TC/bin/$TRIPLE-g++"
  export BINDGEN_EXTRA_CLANG_ARGS="--sysroot=$TARGET_SYSROOT"
  export "CC_$u=$TARGET_CC" "CXX_$u=$TARGET_CXX" "AR_$u=$TARGET_AR" "RANLIB_$u=$TARGET_RANLIB"
  export PATH="$TC/bin:$PATH"
  export CARGO_TARGET_DIR="$DIR/target"
  echo "building the wheel of commit $(cd "$REPO" && git rev-parse --short HEAD)" >&2
  (cd "$DIR/src/openhands-runtime-py" && nice -n 10 "$DIR/tools/bin/maturin" build --release \
     --target "$TRIPLE" --features vendored-openssl --compatibility manylinux2014 -o "$DIR/out" >&2)
  (cd "$DIR/src/openhands-runtime-py" && "$DIR/tools/bin/maturin" sdist -o "$DIR/out" >&2)
  echo "$key" > "$DIR/out/SOURCE"
fi
cp "$DIR"/out/*.whl "$DIR"/out/*.tar.gz "$OUT/"
ls "$OUT"/openhands_vscode_runtime-*.whl | tail -1
