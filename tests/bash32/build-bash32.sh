#!/usr/bin/env bash
# Builds macOS' bash (Apple's bash-3.2, 3.2.57 with Apple's patches) for Linux from a checkout of
# github.com/apple-oss-distributions/bash (no registry this project's CI reaches serves it, so this
# is a by-hand check: see README.md). Usage: build-bash32.sh APPLE_BASH_CHECKOUT OUT_DIR
# Prints the path of the built bash. Needs gcc, make and bison.
set -euo pipefail
src="$1" out="$2"
mkdir -p "$out"
if [ -d "$src/.git" ] || git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
  git -C "$src" archive HEAD:bash-3.2 | tar -x -C "$out"
else
  cp -a "$src/bash-3.2/." "$out/"
fi
cd "$out"
# Three macOS-only details that do not build on Linux: EBADEXEC (a Mach-O errno), <xlocale.h>,
# and BSD libc's fmtcheck() (used by printf and test; an identity stand-in is enough here). Its
# prototype goes into every file (-include): without one, C's implicit `int fmtcheck()` cuts the
# returned pointer to 32 bits, and every `printf` with a conversion (`printf '%3s'`) crashed.
sed -i 's/if (i != ENOEXEC \&\& i != EBADEXEC)/if (i != ENOEXEC)/' execute_cmd.c
sed -i 's/#include <xlocale.h>/#include <locale.h>/' lib/glob/smatch.c
echo 'const char *fmtcheck(const char *f, const char *d) { (void)d; return f; }' > fmtcheck.c
echo 'const char *fmtcheck(const char *, const char *);' > fmtcheck.h
CFLAGS="-O1 -std=gnu99 -include $PWD/fmtcheck.h -Wno-implicit-function-declaration -Wno-int-conversion -Wno-incompatible-pointer-types -Wno-return-type" \
  ./configure --without-bash-malloc > configure.log 2>&1
rm -f y.tab.c y.tab.h  # generated from another parse.y: bison makes them anew
gcc -c fmtcheck.c -o fmtcheck.o
make -j1 LOCAL_LIBS=fmtcheck.o > make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
./bash -c 'echo "$BASH_VERSION"' | grep -q '^3\.2\.' || { echo "not bash 3.2: $(./bash --version | head -1)" >&2; exit 1; }
[ "$(./bash -c 'printf "%3s|%d|%s\n" a 7 "$(printf "%2s" | tr " " "*")"')" = '  a|7|**' ] \
  || { echo "bash 3.2 built, but its printf is broken" >&2; exit 1; }
echo "$out/bash"
