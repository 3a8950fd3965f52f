#!/usr/bin/env bash
# Static checks of Linux cross-built artifacts (tests/cross/run.sh):
#   tests/cross/check-elf.sh ARCH GLIBC_FLOOR FILE...    ARCH: aarch64 | x86_64; GLIBC_FLOOR: 2.NN,
#                                                        "static", or "musl" (dynamic, musl's libc)
# - the ELF machine is ARCH;
# - the shared libraries needed are the C runtime's only (no libssl/libcrypto: OpenSSL is linked
#   statically), or none at all for "static";
# - the newest glibc symbol version used is at most GLIBC_FLOOR (the oldest glibc it runs on);
# - no path of the build machine inside ($HOME, which holds the caches, and the repository),
#   OpenSSL's configured directories apart (see below).
set -euo pipefail
ARCH="$1" FLOOR="$2"; shift 2
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
case "$ARCH" in
  aarch64) MACHINE=AArch64 ;;
  x86_64) MACHINE="Advanced Micro Devices X86-64" ;;
  *) echo "check-elf: unknown arch $ARCH" >&2; exit 2 ;;
esac
fail=0
for f in "$@"; do
  m="$(LC_ALL=C readelf -h "$f" | sed -n 's/^ *Machine: *//p')"
  [ "$m" = "$MACHINE" ] || { echo "check-elf: $f: machine '$m', expected '$MACHINE'" >&2; fail=1; }
  needed="$(LC_ALL=C readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
  if [ "$FLOOR" = static ]; then
    [ -z "$needed" ] || { echo "check-elf: $f: expected no shared libraries, needs $needed" >&2; fail=1; }
    LC_ALL=C readelf -l "$f" | grep -q 'Requesting program interpreter' && { echo "check-elf: $f: has a program interpreter" >&2; fail=1; }
    echo "check-elf: $f: $m, needs ${needed:-nothing} (expected: static)"
  elif [ "$FLOOR" = musl ]; then
    # musl's C library is one shared object, soname libc.so; no glibc symbol version may appear.
    [ "$needed" = "libc.so " ] || { echo "check-elf: $f: expected musl's libc.so only, needs ${needed:-nothing}" >&2; fail=1; }
    LC_ALL=C readelf -V "$f" | grep -q 'GLIBC_' && { echo "check-elf: $f: uses glibc symbol versions" >&2; fail=1; }
    echo "check-elf: $f: $m, needs ${needed:-nothing}(expected: musl's libc.so)"
  else
    for lib in $needed; do
      case "$lib" in
        libc.so.6|libm.so.6|libdl.so.2|libpthread.so.0|librt.so.1|libutil.so.1|libgcc_s.so.1|ld-linux-*.so.*) ;;
        *) echo "check-elf: $f: needs $lib (only the C runtime is allowed)" >&2; fail=1 ;;
      esac
    done
    newest="$(LC_ALL=C readelf -V "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)"
    if [ "$(printf '%s\n%s\n' "$newest" "$FLOOR" | sort -V | tail -1)" != "$FLOOR" ]; then
      echo "check-elf: $f: uses GLIBC_$newest, newer than the floor $FLOOR" >&2; fail=1
    fi
    echo "check-elf: $f: $m, needs ${needed:-nothing}, newest glibc symbol $newest (floor $FLOOR)"
  fi
  # OpenSSL (linked statically) records its configured directories (OPENSSLDIR, ENGINESDIR,
  # MODULESDIR: its install folder in the build's cache) and its compiler flags for
  # OpenSSL_version(); the linux-x64 builds carry the same. Known, listed apart; any other path of
  # this machine fails. The paths looked for are $HOME (the caches, where the sources are built)
  # and the checkout; not the checkout's parent, which may be a shared folder such as /tmp/ (the
  # tools' descriptions name /tmp/run.py: a clone in /tmp/ failed here).
  for p in "$HOME/" "$REPO/"; do
    all="$(strings -a "$f" | grep -F "$p" || true)"
    openssl="$(grep -E 'openssl-build/install|^compiler: ' <<<"$all" || true)"
    other="$(grep -vE 'openssl-build/install|^compiler: ' <<<"$all" || true)"
    [ -n "$openssl" ] && echo "check-elf: $f: OpenSSL's configured directories and flags name $p ($(grep -c . <<<"$openssl") strings; known)"
    if [ -n "$other" ]; then
      echo "check-elf: $f: contains the build machine path $p: $(head -2 <<<"$other" | cut -c1-200 | tr '\n' ' ')" >&2; fail=1
    fi
  done
done
exit $fail
