#!/usr/bin/env python3
"""Builds the pure-Python wheel of openhands-vscode-runtime that the VSIX carries.

    extension/scripts/build-pure-wheel.py OUT_DIR      # prints the wheel's path

The release wheel (scripts/build-wheel.sh, maturin) is a linux-x86_64 wheel because it carries
the headless executor binary. In VS Code the executor is the extension's addon and the managed
agent-server runs with OH_VSCODE_SPAWN_EXECUTOR=0, so the binary is never used there: this wheel
holds the same Python package (openhands-runtime-py/src, committed files only) and the same
metadata (name, version, dependencies and extras read from pyproject.toml: one definition), tagged
py3-none-any. "OpenHands: Set Up V1 Environment" installs it with its `[v1]` extra.
Reproducible: fixed file order and timestamps, so its hash (part of the environment's stamp)
changes only with its contents.
"""

import base64
import hashlib
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG_ROOT = REPO / "openhands-runtime-py"
EPOCH = (1980, 1, 1, 0, 0, 0)


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata(project: dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        f"License: {project['license']['text']}",
    ]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    return "\n".join(lines) + "\n"


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    project = tomllib.loads((PKG_ROOT / "pyproject.toml").read_text())["project"]
    name, version = project["name"].replace("-", "_"), project["version"]
    files = subprocess.run(
        ["git", "ls-files", "src/openhands_vscode_runtime"], cwd=PKG_ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    entries: list[tuple[str, bytes]] = []
    for rel in sorted(files):
        arc = rel.removeprefix("src/")
        if arc.endswith("README.md"):
            continue
        entries.append((arc, (PKG_ROOT / rel).read_bytes()))
    dist_info = f"{name}-{version}.dist-info"
    entries.append((f"{dist_info}/METADATA", metadata(project).encode()))
    entries.append(
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: openhands-tab build-pure-wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    )
    record = "".join(f"{arc},{digest(data)},{len(data)}\n" for arc, data in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(wheel)


if __name__ == "__main__":
    main()
