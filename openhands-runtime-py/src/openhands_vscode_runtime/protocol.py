"""The wire vocabulary and cryptography of `oh-executor/3` (docs/protocol.md), once in Python.

The hub (hub.py) and every Python test peer (the transport's test server, the stand-in executor,
the VS Code tests' fake backend, the raw clients of tests/runtime) import this module, so the
names, the version, the proof labels, the session keys, the message MACs and the refusal codes
have one Python copy; the Rust copy is crates/oh-transport/src/handshake.rs and session.rs, and
`tests/runtime/test_protocol.py` pins the two to the same bytes.

Standard library only: the test peers import it without openhands-ai or the SDK.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Sequence
from typing import Any

PROTOCOL_VERSION = 3
NAMESPACE = '/oh-executor'

# Events. Before the handshake: challenge, auth, refused (unsealed). After the server's proof every
# message is sealed (see SessionBinding): waiting, welcome, refused, replaced, oh_event, cancel, ack.
EV_EVENT = 'oh_event'
EV_CANCEL = 'oh_executor_cancel'
EV_WELCOME = 'oh_executor_welcome'
EV_REPLACED = 'oh_executor_replaced'
EV_CHALLENGE = 'oh_executor_challenge'
EV_AUTH = 'oh_executor_auth'
EV_REFUSED = 'oh_executor_refused'
EV_WAITING = 'oh_executor_waiting'
EV_ACK = 'oh_executor_ack'

SERVER_PROOF_LABEL = 'oh-executor/3 server'
EXECUTOR_PROOF_LABEL = 'oh-executor/3 executor'
SESSION_KEY_LABEL = 'oh-executor/3 session key'
# The two directions of a session; each has its own key and its own sequence.
TO_EXECUTOR = 'server->executor'
TO_SERVER = 'executor->server'

# Refusal codes: what the executor maps (to its error codes and to its own words). The message
# beside a code is for logs; an executor shows a server's words only inside a proven session.
R_ORIGIN = 'origin'
R_TRANSPORT = 'transport'
R_NO_CONVERSATION = 'no_conversation'
R_PROTOCOL = 'protocol'
R_NO_KEY = 'no_key'
R_NO_RUNTIME = 'no_runtime'
R_WAITING_ROOM_FULL = 'waiting_room_full'
R_BUSY = 'busy'
R_INVALID_PROOF = 'invalid_proof'
R_AUTH_TIMEOUT = 'auth_timeout'
R_WAITING_TIMEOUT = 'waiting_timeout'
R_SESSION = 'session'

_NONCE = re.compile(r'[0-9a-f]{64}')
_HEX = re.compile(r'[0-9a-f]*')


def refusal(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The payload of a refusal: `{code, message}` (a connect refusal carries it as its data)."""
    return {'code': code, 'message': message, **extra}


def new_nonce() -> str:
    """32 random bytes, lowercase hex."""
    return secrets.token_hex(32)


def is_nonce(value: object) -> bool:
    return isinstance(value, str) and _NONCE.fullmatch(value) is not None


def _mac(key: bytes, parts: Sequence[str]) -> hmac.HMAC:
    return hmac.new(key, '\n'.join(parts).encode(), hashlib.sha256)


def handshake_proof(key: str, label: str, conversation_id: str, first: str, second: str,
                    signed_auth: str | None = None) -> str:
    """HMAC-SHA256(key, label \\n conversation_id \\n first \\n second [\\n auth text]), lowercase
    hex. The nonces are fixed-length hex and the auth text comes last, so the message reads back
    one way only. The executor's proof covers its auth text (what the hub registers)."""
    parts = [label, conversation_id, first, second]
    if signed_auth is not None:
        parts.append(signed_auth)
    return _mac(key.encode(), parts).hexdigest()


def executor_proof(key: str, conversation_id: str, server_nonce: str, client_nonce: str,
                   signed_auth: str) -> str:
    return handshake_proof(key, EXECUTOR_PROOF_LABEL, conversation_id, server_nonce, client_nonce,
                           signed_auth)


def server_proof(key: str, conversation_id: str, client_nonce: str, server_nonce: str) -> str:
    return handshake_proof(key, SERVER_PROOF_LABEL, conversation_id, client_nonce, server_nonce)


def server_proved(key: str, conversation_id: str, client_nonce: str, challenge: object) -> bool:
    """Whether a challenge holds a server proof made with `key` (every proof compared in constant
    time, none skipped after a match)."""
    if not isinstance(challenge, dict) or not is_nonce(challenge.get('server_nonce')):
        return False
    mine = server_proof(key, conversation_id, client_nonce, challenge['server_nonce'])
    ok = False
    for p in list(challenge.get('server_proofs') or [])[:16]:
        ok |= isinstance(p, str) and hmac.compare_digest(p.encode(), mine.encode())
    return ok


def proving_key(proof: object, accepted: Sequence[str], conversation_id: str,
                server_nonce: str, client_nonce: str, signed_auth: str) -> str | None:
    """The accepted key the executor's proof was made with, or None. Every key is compared in
    constant time, with no early exit."""
    if not isinstance(proof, str):
        return None
    found = None
    for key in accepted:
        expected = executor_proof(key, conversation_id, server_nonce, client_nonce, signed_auth)
        if hmac.compare_digest(proof.encode(), expected.encode()) and found is None:
            found = key
    return found


def session_key(key: str, direction: str, conversation_id: str, client_nonce: str,
                server_nonce: str) -> bytes:
    """One direction's key: HMAC(proven key, session label | direction | conversation | client
    nonce | server nonce). New nonces on every connection give new keys."""
    return _mac(key.encode(),
                [SESSION_KEY_LABEL, direction, conversation_id, client_nonce, server_nonce]).digest()


def message_mac(direction_key: bytes, direction: str, seq: int, event: str, body: str) -> str:
    """HMAC(direction key, direction | seq | event | body text), lowercase hex."""
    return _mac(direction_key, [direction, str(seq), event, body]).hexdigest()


class BindingError(Exception):
    """A sealed message failed its check; the session must end (reported as EAUTH)."""


class SessionBinding:
    """Both directions of one proven connection: seals what this side sends, opens what it
    receives (MAC, then the sequence number: exactly the next one expected).

    `side` is 'server' or 'executor'. The sequence of each direction starts at 0.
    """

    def __init__(self, key: str, conversation_id: str, client_nonce: str, server_nonce: str,
                 side: str) -> None:
        if side not in ('server', 'executor'):
            raise ValueError(side)
        self.send_dir, self.recv_dir = (
            (TO_EXECUTOR, TO_SERVER) if side == 'server' else (TO_SERVER, TO_EXECUTOR)
        )
        args = (conversation_id, client_nonce, server_nonce)
        self._send_key = session_key(key, self.send_dir, *args)
        self._recv_key = session_key(key, self.recv_dir, *args)
        self.send_seq = 0
        self.recv_seq = 0

    def seal(self, event: str, payload: Any) -> dict[str, Any]:
        """The envelope of `payload`: `{"seq", "body": <its JSON text>, "mac"}`. The MAC covers
        the text itself, so no canonical form of the JSON is needed."""
        body = json.dumps(payload, separators=(',', ':'), ensure_ascii=False)
        seq = self.send_seq
        self.send_seq += 1
        return {'seq': seq, 'body': body,
                'mac': message_mac(self._send_key, self.send_dir, seq, event, body)}

    def open(self, event: str, envelope: object) -> Any:
        """The payload of a received envelope, or BindingError saying what was wrong."""
        if not isinstance(envelope, dict) or not isinstance(envelope.get('body'), str):
            raise BindingError(f'an unauthenticated {event} (no sealed envelope) arrived in a '
                               f'proven session: injected by a party between the two ends')
        seq, mac = envelope.get('seq'), envelope.get('mac')
        if (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0 or not isinstance(mac, str)
                or len(mac) != 64 or not _HEX.fullmatch(mac)):
            raise BindingError(f'a {event} with a malformed seq or MAC arrived: tampered with')
        expected = message_mac(self._recv_key, self.recv_dir, seq, event, envelope['body'])
        if not hmac.compare_digest(mac.encode(), expected.encode()):
            raise BindingError(f'bad MAC on {event} seq {seq}: the message was forged or changed '
                               f'on its way (not made with this session\'s key)')
        if seq < self.recv_seq:
            raise BindingError(f'replayed {event}: seq {seq} was already received (next expected '
                               f'{self.recv_seq})')
        if seq > self.recv_seq:
            raise BindingError(f'out of order {event}: seq {seq} arrived while {self.recv_seq} was '
                               f'expected ({seq - self.recv_seq} message(s) missing: dropped or '
                               f'held back)')
        self.recv_seq += 1
        try:
            return json.loads(envelope['body'])
        except (ValueError, RecursionError):
            return None  # authentic but unreadable: dropped like any payload that cannot be decoded


def signed_auth_text(auth: dict[str, Any]) -> str:
    """The auth text an executor signs in its proof (any JSON text works; this is the form the
    Python peers use)."""
    return json.dumps(auth, separators=(',', ':'), ensure_ascii=False)
