"""The oldest supported V1 release runs a sample (README.md, "The oldest release"): the cases that
cover the code that differs between it and the newest, chosen from the SDK's own diff.

`oldest_sample.json` records the diff it was chosen from (its sha256, over the installed
`openhands` packages of both releases, `__pycache__` left out) and, per differing file, what
changed and which cases run that code. When the installed diff's hash is not the recorded one,
the suite fails: a release changed, and the mapping must be revisited (`diff_v1.py --sdk-diff
NEWEST_SITE` prints the diff and its hash)."""

from __future__ import annotations

import difflib
import hashlib
import json
import sysconfig
from pathlib import Path

SAMPLE_FILE = Path(__file__).with_name('oldest_sample.json')


def _files(site: Path) -> dict[str, Path]:
    root = site / 'openhands'
    return {str(p.relative_to(site)): p for p in sorted(root.rglob('*'))
            if p.is_file() and '__pycache__' not in p.parts}


def sdk_diff(oldest_site: Path, newest_site: Path) -> tuple[str, dict[str, str]]:
    """(sha256 of the whole diff, {relative path: its unified diff}) between two releases'
    installed `openhands` packages."""
    a, b = _files(oldest_site), _files(newest_site)
    per_file: dict[str, str] = {}
    for rel in sorted(set(a) | set(b)):
        ta = a[rel].read_text(errors='replace').splitlines(keepends=True) if rel in a else []
        tb = b[rel].read_text(errors='replace').splitlines(keepends=True) if rel in b else []
        if ta != tb:
            per_file[rel] = ''.join(difflib.unified_diff(ta, tb, f'oldest/{rel}', f'newest/{rel}'))
    digest = hashlib.sha256(''.join(per_file[k] for k in sorted(per_file)).encode()).hexdigest()
    return digest, per_file


def this_site() -> Path:
    return Path(sysconfig.get_paths()['purelib'])


def print_sdk_diff(newest_site: Path) -> int:
    digest, per_file = sdk_diff(this_site(), newest_site)
    for text in per_file.values():
        print(text)
    print(f'{len(per_file)} files differ; diff sha256 {digest}')
    return 0


def sample_ids(newest_site: Path) -> tuple[set[str], str | None]:
    """The sample's case ids, and a problem when the installed diff is not the one it was chosen
    from (or the newest release's packages are missing)."""
    sample = json.loads(SAMPLE_FILE.read_text())
    ids = {cid for f in sample['files'].values() for cid in f['cases']}
    if not (newest_site / 'openhands').is_dir():
        return ids, f'no openhands packages in {newest_site} (the newest release venv: scripts/setup-python-v1.sh)'
    digest, per_file = sdk_diff(this_site(), newest_site)
    if digest != sample['diff_sha256'] or set(per_file) != set(sample['files']):
        return ids, (f'the SDK diff between the releases changed (sha256 {digest}, files {sorted(per_file)}); '
                     f'oldest_sample.json was chosen from {sample["diff_sha256"]}: revisit its mapping '
                     '(README.md, "The oldest release")')
    return ids, None
