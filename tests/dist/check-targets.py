"""Checks that `make dist` packaged each target's own binaries (tests/dist/run.sh).

    python tests/dist/check-targets.py DIST_DIR SCRATCH_DIR

For each target of scripts/build-dist.sh (linux-x64 and the cross ones), one of each artifact:
- the platform wheel: its single executor is a binary of the wheel tag's platform (ELF machine
  and, for musllinux, statically linked; Mach-O CPU type for macosx);
- the napi-rs platform npm package: its package.json names the platform's os/cpu (and libc on
  Linux), and its .node is a binary of that platform;
- the VSIX: its manifest's TargetPlatform is the VS Code target, and the addon it carries is the
  napi platform's, a binary of that platform.
The static musl executor runs here as it is: it must print the version of the wheel.
Exits 1 listing every problem.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

# wheel platform tag, napi platform, VS Code target, (os, cpu, libc), binary format
TARGETS = [
    ('manylinux_2_17_x86_64', 'linux-x64-gnu', 'linux-x64', ('linux', 'x64', 'glibc'), ('elf', 62)),
    ('manylinux_2_17_aarch64', 'linux-arm64-gnu', 'linux-arm64', ('linux', 'arm64', 'glibc'), ('elf', 183)),
    ('musllinux_1_2_x86_64', 'linux-x64-musl', 'alpine-x64', ('linux', 'x64', 'musl'), ('elf', 62)),
    ('macosx_11_0_arm64', 'darwin-arm64', 'darwin-arm64', ('darwin', 'arm64', None), ('macho', 0x0100000C)),
    ('macosx_10_15_x86_64', 'darwin-x64', 'darwin-x64', ('darwin', 'x64', None), ('macho', 0x01000007)),
]
EXECUTOR = 'openhands-vscode-executor'
problems: list[str] = []


def binary_kind(data: bytes) -> tuple[str, int] | None:
    if data[:4] == b'\x7fELF':
        return ('elf', struct.unpack_from('<H', data, 18)[0])
    if data[:4] == b'\xcf\xfa\xed\xfe':  # MH_MAGIC_64, little-endian
        return ('macho', struct.unpack_from('<I', data, 4)[0])
    return None


def elf_is_static(data: bytes) -> bool:
    # No PT_INTERP (nothing loads it) and no DT_NEEDED in its PT_DYNAMIC, if it has one: a static
    # executable, or a static PIE (its dynamic section only relocates itself; zig links the musl
    # executor so since it shares one build with the addon, scripts/build-cross.sh).
    phoff, = struct.unpack_from('<Q', data, 32)
    phentsize, phnum = struct.unpack_from('<HH', data, 54)
    for i in range(phnum):
        p_type, _flags, offset = struct.unpack_from('<IIQ', data, phoff + i * phentsize)
        if p_type == 3:  # PT_INTERP
            return False
        if p_type == 2:  # PT_DYNAMIC: its entries (d_tag, d_val) up to DT_NULL
            filesz, = struct.unpack_from('<Q', data, phoff + i * phentsize + 32)
            for at in range(offset, offset + filesz, 16):
                tag, = struct.unpack_from('<q', data, at)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    return False
    return True


def expect_kind(what: str, data: bytes, kind: tuple[str, int]) -> None:
    got = binary_kind(data)
    if got != kind:
        problems.append(f'{what}: binary {got}, expected {kind}')


def one(dist: Path, pattern: str) -> Path | None:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        problems.append(f'{pattern}: {len(found)} files in {dist}, expected 1')
        return None
    return found[0]


def main() -> int:
    dist, scratch = Path(sys.argv[1]), Path(sys.argv[2])
    for tag, napi, vscode, (os_, cpu, libc), kind in TARGETS:
        wheel = one(dist, f'openhands_vscode_runtime-*-py3-none-*{tag}.whl')
        if wheel:
            z = zipfile.ZipFile(wheel)
            bins = [n for n in z.namelist() if n.endswith(f'.data/scripts/{EXECUTOR}')]
            if len(bins) != 1:
                problems.append(f'{wheel.name}: {len(bins)} executors')
            else:
                data = z.read(bins[0])
                expect_kind(wheel.name, data, kind)
                if libc == 'musl':
                    if not elf_is_static(data):
                        problems.append(f'{wheel.name}: the musl executor is not static')
                    exe = scratch / f'{EXECUTOR}-{napi}'
                    exe.write_bytes(data)
                    exe.chmod(0o755)
                    version = re.search(r'-(\d+\.\d+\.\d+[^-]*)-py3', wheel.name).group(1)
                    out = subprocess.run([str(exe), '--version'], capture_output=True, text=True, timeout=30)
                    if out.stdout.strip() != version:
                        problems.append(f'{wheel.name}: its executor says {out.stdout.strip()!r} {out.stderr.strip()!r}, expected {version}')
                    else:
                        print(f'check-targets: {wheel.name}: the static musl executor runs here ({version})')
            print(f'check-targets: {wheel.name}: executor {kind[0]} {kind[1]:#x}')
        tgz = one(dist, f'{EXECUTOR}-{napi}-[0-9]*.tgz')
        if tgz:
            t = tarfile.open(tgz)
            pkg = json.load(t.extractfile('package/package.json'))
            want = {'os': [os_], 'cpu': [cpu]} | ({'libc': [libc]} if libc else {})
            got = {k: pkg.get(k) for k in want}
            if got != want:
                problems.append(f'{tgz.name}: package.json {got}, expected {want}')
            expect_kind(tgz.name, t.extractfile(f'package/{EXECUTOR}.{napi}.node').read(), kind)
            print(f'check-targets: {tgz.name}: {want}')
        vsix = one(dist, f'openhands-tab-*-{vscode}.vsix')
        if vsix:
            z = zipfile.ZipFile(vsix)
            manifest = z.read('extension.vsixmanifest').decode()
            if f'TargetPlatform="{vscode}"' not in manifest:
                problems.append(f'{vsix.name}: the manifest does not say TargetPlatform="{vscode}"')
            nodes = [n for n in z.namelist() if n.endswith('.node')]
            if nodes != [f'extension/dist/native/{EXECUTOR}.{napi}.node']:
                problems.append(f'{vsix.name}: addons {nodes}, expected only the {napi} one')
            else:
                expect_kind(vsix.name, z.read(nodes[0]), kind)
            print(f'check-targets: {vsix.name}: {nodes}')
    for p in problems:
        print(f'check-targets: FAIL: {p}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
