"""Workspace checkpoints through the executor (docs/checkpoints.md, docs/protocol.md).

The executor answers its `checkpoint_*` actions with a `checkpoint` observation, which is this
project's own and unknown to OpenHands' `event_from_dict`: the hub hands such replies to the
runtime as a `CheckpointReply` (the JSON result as it came). Used by V0 (`VsCodeRuntime` takes a
checkpoint before each user message) and by anything else holding a channel.
"""

from __future__ import annotations

from typing import Any

# The observation kind of every checkpoint reply (oh-protocol CHECKPOINT_OBSERVATION).
CHECKPOINT_OBSERVATION = 'checkpoint'


def before_message_args(conversation_id: str, message_id: int) -> dict[str, Any]:
    """`checkpoint_take`'s arguments for the checkpoint before user message `message_id` (its
    event id): `before_message` says which message of which conversation it precedes (the tab
    finds it by that: docs/checkpoints.md), the label says it to people."""
    return {
        'label': f'before message {message_id} of conversation {conversation_id}',
        'before_message': {'conversation_id': conversation_id, 'message': message_id},
    }


class CheckpointReply:
    """An executor's reply to a `checkpoint_*` action: `op` (`take`, `plan`, ...), `result`
    (the operation's JSON result) and `content` (the sentence a conversation can show)."""

    def __init__(self, data: dict[str, Any]) -> None:
        extras = data.get('extras')
        extras = extras if isinstance(extras, dict) else {}
        self.op = extras.get('op') if isinstance(extras.get('op'), str) else ''
        result = extras.get('result')
        self.result: dict[str, Any] = result if isinstance(result, dict) else {}
        content = data.get('content')
        self.content = content if isinstance(content, str) else ''

    def __repr__(self) -> str:
        return f'CheckpointReply({self.op}, {self.content!r})'


def checkpoint_payload(kind: str, args: dict[str, Any], timeout: float) -> dict[str, Any]:
    """The action payload of `checkpoint_<kind>` (event_to_dict form, without an id)."""
    return {'action': f'checkpoint_{kind}', 'args': dict(args), 'timeout': timeout}
