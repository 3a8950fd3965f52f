#!/usr/bin/env bash
# The toolchains of the cross builds (scripts/build-cross.sh) and of their tests under emulation
# (tests/cross/run.sh), from Debian: the compiler and the standard library's source (rustc-web,
# cargo-web, rust-web-src: `-Zbuild-std` builds `std` for any target, since rustup's servers are
# not reachable from every build machine), the arm64 glibc (the sysroot qemu runs the arm64
# programs of tests/cross with), libstdc++ for arm64 (the arm64 Node of tests/cross needs it),
# llvm-14 (its objcopy strips the macOS builds), qemu-user-static (runs the arm64 binaries here).
# linux-arm64, musl and macOS link with zig (PyPI, installed by scripts/build-cross.sh).
# Idempotent: apt runs only when a package is missing.
set -euo pipefail
pkgs=(rustc-web cargo-web rust-web-src libc6-arm64-cross libstdc++6-arm64-cross llvm-14 qemu-user-static)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "setup-cross: installing ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
