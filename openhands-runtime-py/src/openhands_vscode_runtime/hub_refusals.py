"""The hub's bounds and the words of its refusals (each sent with its code, protocol.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from socketio.exceptions import ConnectionRefusedError

from openhands_vscode_runtime.protocol import refusal
from openhands_vscode_runtime.settings import executor_token_file

# How long an executor has to answer the challenge (a real one answers in one round trip).
AUTH_TIMEOUT_SECONDS = 10.0
# Connections between their challenge and their proof, in all: beyond it the one waiting longest
# is dropped to make room (a flood of connections that never answer cannot lock executors out,
# and costs the hub at most this many entries, each for at most AUTH_TIMEOUT_SECONDS).
PENDING_CHALLENGES_MAX = 64
# The waiting room: executors that proved a standing key (server mode) for a conversation whose
# runtime is not open yet. Bounded per conversation, in total and in time.
WAITING_ROOM_PER_CONVERSATION = 4
WAITING_ROOM_TOTAL = 64
WAITING_ROOM_SECONDS = 120.0


def invalid_proof_message() -> str:
    return (
        'oh-executor: invalid session_api_key: the executor\'s proof matches no key this runtime '
        'accepts'
    )


def waiting_room_timeout_message(conversation_id: str, seconds: float) -> str:
    return (
        f'oh-executor: no VsCodeRuntime for conversation {conversation_id}: none opened within '
        f'{seconds:g} s of the executor\'s arrival (the waiting room keeps an executor that '
        f'arrives before its runtime that long)'
    )


def waiting_room_full_message(conversation_id: str) -> str:
    return (
        f'oh-executor: no VsCodeRuntime for conversation {conversation_id}, and the waiting room '
        f'for executors that arrive before their runtime is full ({WAITING_ROOM_PER_CONVERSATION} '
        f'per conversation, {WAITING_ROOM_TOTAL} in all)'
    )


def missing_key_message(token_file: Path | None = None) -> str:
    token_file = token_file or executor_token_file()
    return (
        'oh-executor: missing session_api_key: no executor registers without a credential. In '
        'VS Code run "OpenHands: Set Session API Key" and enter the OpenHands server\'s '
        'SESSION_API_KEY or, when it has none, the executor token from '
        f'{token_file} on the server\'s machine (VS Code on that machine reads the file '
        'by itself; see docs/security.md).'
    )



def refuse_connect(code: str, message: str, **extra: Any) -> ConnectionRefusedError:
    """A connect refusal: the client gets `{"message", "data": {"code", "message", ...}}`."""
    return ConnectionRefusedError(message, refusal(code, message, **extra))
