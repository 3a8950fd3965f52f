"""What the hub needs from openhands-ai when it runs without it (an OpenHands V1 venv).

The hub resolves each delegated action's future with an observation object: with openhands-ai
(V0) that is OpenHands' own `Observation`; in a V1 venv these small stand-ins carry the reply:
`V1Reply` the executor's reply dict, `ErrorObservation` the hub's own failures ("Runtime
disconnected: ...", "Runtime closed: ...").
"""

from __future__ import annotations

from typing import Any


class Observation:
    """Base of the hub's reply objects in a V1 venv."""

    content: str = ''


class ErrorObservation(Observation):
    """A failure the hub reports itself (no executor, executor gone, runtime closed)."""

    def __init__(self, content: str) -> None:
        self.content = content

    def __repr__(self) -> str:
        return f'ErrorObservation({self.content!r})'


class V1Reply(Observation):
    """An executor's reply to a `v1_terminal` / `v1_file_editor` action."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.kind = data.get('observation')
        self.content = data.get('content', '') if isinstance(data.get('content'), str) else ''
        extras = data.get('extras')
        self.extras: dict[str, Any] = extras if isinstance(extras, dict) else {}

    def __repr__(self) -> str:
        return f'V1Reply({self.kind}, {self.content[:60]!r})'


def event_from_dict(data: dict[str, Any]) -> Observation:
    """An executor reply as a reply object (`error` replies: the executor refused the action)."""
    kind = data.get('observation')
    if kind in ('v1_terminal', 'v1_file_editor', 'v1_interrupt'):
        return V1Reply(data)
    if kind == 'error':
        return ErrorObservation(str(data.get('content', '')))
    raise ValueError(f'unexpected observation kind {kind!r} for an OpenHands V1 action')
