#!/usr/bin/env bash
# One version everywhere: the Rust workspace, the npm packages (main + platform), the Python
# package, the extension, and a section of CHANGELOG.md. Exit 1 with the disagreeing files.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
python3 - <<'EOF'
import json, re, sys, pathlib, tomllib
root = pathlib.Path('.')
found = {}
found['Cargo.toml [workspace.package]'] = tomllib.loads((root / 'Cargo.toml').read_text())['workspace']['package']['version']
for crate in sorted((root / 'crates').glob('*/Cargo.toml')):
    pkg = tomllib.loads(crate.read_text())['package']
    v = pkg.get('version')
    found[str(crate)] = found['Cargo.toml [workspace.package]'] if isinstance(v, dict) and v.get('workspace') else v
found['openhands-runtime-py/pyproject.toml'] = tomllib.loads((root / 'openhands-runtime-py/pyproject.toml').read_text())['project']['version']
for p in [root / 'npm/executor/package.json', root / 'extension/package.json', *sorted((root / 'npm/executor/npm').glob('*/package.json'))]:
    found[str(p)] = json.loads(p.read_text())['version']
versions = set(found.values())
changelog = (root / 'CHANGELOG.md').read_text() if (root / 'CHANGELOG.md').exists() else ''
ok = len(versions) == 1
if not ok:
    print('check-versions: FAIL: the versions disagree:')
    for k, v in found.items():
        print(f'  {v:10} {k}')
    sys.exit(1)
(version,) = versions
if not re.search(rf'^## \[?{re.escape(version)}\]?', changelog, re.M):
    print(f'check-versions: FAIL: CHANGELOG.md has no "## {version}" section')
    sys.exit(1)
print(f'check-versions: {version} in {len(found)} manifests and CHANGELOG.md')
EOF
