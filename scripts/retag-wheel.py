"""A platform wheel for another target from the linux-x64 wheel of the same commit.

    python scripts/retag-wheel.py X64_WHEEL EXECUTOR PLATFORM_TAG OUT_DIR   # prints the new wheel's path

The wheel's only native file is the headless executor (`<name>.data/scripts/openhands-vscode-executor`,
maturin's `bin` bindings); the Python package is the same on every platform. So the wheel of
another target is this one with that file replaced by the target's executor
(scripts/build-cross.sh), the WHEEL tags and the file name set to PLATFORM_TAG (e.g.
macosx_11_0_arm64), and RECORD recomputed. The CycloneDX SBOM maturin wrote describes the
linux-x64 build's dependencies (vendored OpenSSL among them), not this target's: it is left out.
Entries keep their order, dates and modes, so equal inputs give an equal wheel.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

EXECUTOR_NAME = 'openhands-vscode-executor'


def record_hash(data: bytes) -> str:
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    src, executor, tag, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    name, version = src.name.split('-')[:2]
    dist_info = f'{name}-{version}.dist-info'
    script = f'{name}-{version}.data/scripts/{EXECUTOR_NAME}'
    out = out_dir / f'{name}-{version}-py3-none-{tag}.whl'
    replaced = False
    with zipfile.ZipFile(src) as zin:
        entries = []
        for info in zin.infolist():
            if info.filename.startswith(f'{dist_info}/sboms/'):
                continue
            data = zin.read(info)
            if info.filename == script:
                data = executor.read_bytes()
                replaced = True
            elif info.filename == f'{dist_info}/WHEEL':
                lines = [ln for ln in data.decode().splitlines() if not ln.startswith('Tag:')]
                data = ('\n'.join(lines + [f'Tag: py3-none-{t}' for t in tag.split('.')]) + '\n').encode()
            entries.append((info, data))
    if not replaced:
        raise SystemExit(f'retag-wheel: {src} has no {script}')
    record_name = f'{dist_info}/RECORD'
    rows = [f'{i.filename},{record_hash(d)},{len(d)}' for i, d in entries if i.filename != record_name]
    rows.append(f'{record_name},,')
    out.unlink(missing_ok=True)
    with zipfile.ZipFile(out, 'w', compression=zipfile.ZIP_DEFLATED) as zout:
        for info, data in entries:
            if info.filename == record_name:
                data = ('\n'.join(rows) + '\n').encode()
            new = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            new.external_attr = info.external_attr
            new.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(new, data)
    print(out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
