"""What the agent is told about a multi-root workspace (docs/multi-root.md): one sentence for
V0 (`VsCodeRuntime.additional_agent_instructions`) and V1 (the `terminal` tool's description),
built from the folders the executor announced at registration (`auth.roots`)."""

from __future__ import annotations

import os


def other_folders(roots: list[str], first: str) -> list[str]:
    """The folders of `roots` besides `first` (the shell's start folder), in their order."""
    first_real = os.path.realpath(first)
    return [r for r in roots if os.path.realpath(r) != first_real]


def folders_sentence(first: str, others: list[str]) -> str:
    """Every folder named, so the agent does not assume the first one is all there is."""
    return (
        f'The workspace open in the user\'s VS Code has {len(others) + 1} folders: {first} and '
        f'{", ".join(others)}. The shell starts in the first one, {first}; use absolute paths (or '
        'cd) for the others. Files in any of these folders are part of the task.'
    )
