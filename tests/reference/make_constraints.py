"""Print the pip constraints of openhands-ai 1.6.0: one `name==version` per package of the
`poetry.lock` the openhands-ai wheel ships inside its `openhands` package.

    make reference-constraints          # the installed openhands-ai, into constraints.txt
    python tests/reference/make_constraints.py [WHEEL_OR_LOCK] > tests/reference/constraints.txt

Without an argument it reads the lock of the `openhands` package installed in this interpreter
(found without importing it: that takes ~15 s). An argument may be the wheel
(`pip download --no-deps openhands-ai==1.6.0`) or a `poetry.lock`.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
import zipfile
from pathlib import Path


def read_lock(source: str | None) -> str:
    if source is None:
        spec = importlib.util.find_spec('openhands')
        if spec is None or not spec.submodule_search_locations:
            sys.exit('make_constraints: openhands is not installed here; pass the wheel')
        return (Path(list(spec.submodule_search_locations)[0]) / 'poetry.lock').read_text()
    if source.endswith('.whl'):
        return zipfile.ZipFile(source).read('openhands/poetry.lock').decode()
    return Path(source).read_text()


def main() -> None:
    lock = tomllib.loads(read_lock(sys.argv[1] if len(sys.argv) > 1 else None))
    print('# Generated from the poetry.lock shipped inside the openhands-ai 1.6.0 wheel.')
    print('# Regenerate with: make reference-constraints')
    for line in sorted((f"{p['name']}=={p['version']}" for p in lock['package']), key=str.lower):
        print(line)


if __name__ == '__main__':
    main()
