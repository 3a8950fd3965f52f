"""Text stubs (.tbd) of the macOS frameworks the executor links, for linking without an Apple SDK.

    python scripts/macos-framework-stubs.py CARGO_LOCK REGISTRY_SRC OUT_DIR

A macOS linker needs, for each framework a crate links (`-framework Security`), the list of the
symbols that framework exports and its install name; Apple ships both in the SDK as text stubs.
This machine has no SDK. The symbols the executor can reference are the ones the -sys crates
declare (their `extern` blocks); this writes, for each of those crates at its Cargo.lock version,
OUT_DIR/<Framework>.framework/<Framework>.tbd (TAPI text stub v4: install name, targets, exported
symbols). Passed to the linker with -F OUT_DIR (scripts/build-cross.sh).
What a real SDK also checks and this cannot: that each symbol exists on the deployment target
(the -sys crates declare only public API of the macOS releases they support).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

FRAMEWORKS = {
    'core-foundation-sys': 'CoreFoundation',
    'security-framework-sys': 'Security',
    'system-configuration-sys': 'SystemConfiguration',
}
DECL = re.compile(r'^\s*pub\s+(?:fn\s+(\w+)\s*\(|static\s+(?:mut\s+)?(\w+)\s*:)', re.M)
EXTERN_BLOCK = re.compile(r'extern\s+"C"\s*\{(.*?)^\}', re.S | re.M)


def symbols(crate_dir: Path) -> set[str]:
    out: set[str] = set()
    for f in sorted(crate_dir.rglob('*.rs')):
        if 'build.rs' == f.name:
            continue
        text = f.read_text(errors='replace')
        for block in EXTERN_BLOCK.findall(text):
            for fn, static in DECL.findall(block):
                out.add('_' + (fn or static))
    return out


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    lock, registry, out_dir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    packages = tomllib.loads(lock.read_text())['package']
    by_framework: dict[str, set[str]] = {}
    for p in packages:
        fw = FRAMEWORKS.get(p['name'])
        if fw:
            crate = registry / f'{p["name"]}-{p["version"]}'
            if not crate.is_dir():
                raise SystemExit(f'macos-framework-stubs: {crate} is not unpacked (cargo fetch first)')
            by_framework.setdefault(fw, set()).update(symbols(crate))
    for fw, syms in sorted(by_framework.items()):
        if not syms:
            raise SystemExit(f'macos-framework-stubs: no symbol found for {fw}')
        d = out_dir / f'{fw}.framework'
        d.mkdir(parents=True, exist_ok=True)
        listed = ',\n                     '.join(sorted(syms))
        (d / f'{fw}.tbd').write_text(
            '--- !tapi-tbd\n'
            'tbd-version:     4\n'
            'targets:         [ x86_64-macos, arm64-macos ]\n'
            f"install-name:    '/System/Library/Frameworks/{fw}.framework/Versions/A/{fw}'\n"
            'exports:\n'
            '  - targets:         [ x86_64-macos, arm64-macos ]\n'
            f'    symbols:         [ {listed} ]\n'
            '...\n'
        )
        print(f'macos-framework-stubs: {fw}: {len(syms)} symbols', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
