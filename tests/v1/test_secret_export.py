"""A V1 secret with control bytes reaches the agent's shell verbatim.

`VsCodeTerminalExecutor` exports a secret the command mentions by typing `export NAME=$'...'` into
the executor's PTY (as openhands-tools' own TerminalExecutor does). A control byte typed raw there
is a key press: `\\x03` is a Ctrl-C that throws away the export line. The secret registry is the
SDK's own; the conversation around it is a minimal stand-in (the executor reads only
`conversation.state.secret_registry`), so that the test needs no LLM.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

# Every control byte bash can hold in a variable except NUL, and the three V1 writes as \n \r \t.
SECRET = 'a\x03b\x04c\x1ad\x1be\x7ff\ng\rh\ti\'j\\k$(id)`id`$HOME'


def test_a_secret_with_control_bytes_is_exported_verbatim(tmp_path: Path) -> None:
    from openhands.sdk.conversation.secret_registry import SecretRegistry
    from openhands.tools.terminal.definition import TerminalAction
    from openhands_vscode_runtime.v1.connection import acquire, close_all
    from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor

    ws = tmp_path / 'ws'
    ws.mkdir()
    registry = SecretRegistry()
    registry.update_secrets({'CTRL_TOKEN': SECRET})
    conversation = SimpleNamespace(state=SimpleNamespace(secret_registry=registry))
    try:
        terminal = VsCodeTerminalExecutor(acquire('secret-export', str(ws)))
        dump = ws / 'dump.bin'
        obs = terminal(
            TerminalAction(command=f'printf %s "$CTRL_TOKEN" > {dump} && echo exported-ok', timeout=20),
            conversation,
        )
        assert not obs.is_error and obs.exit_code == 0, obs
        assert 'exported-ok' in obs.text, obs.text
        # The value bash holds is the secret, byte for byte (the export was not interrupted).
        assert dump.read_bytes() == SECRET.encode(), dump.read_bytes()
        # The shell was not interrupted either: the next command runs normally.
        after = terminal(TerminalAction(command='echo still-here', timeout=20), conversation)
        assert after.exit_code == 0 and 'still-here' in after.text, after
    finally:
        close_all()


def test_the_export_form_is_v1s_own_where_v1_escapes() -> None:
    """For a secret without other control bytes the export command is exactly the one
    openhands-tools' TerminalExecutor types (its `\\n`, `\\r`, `\\t` forms); only the bytes it types
    raw are escaped differently."""
    from openhands.tools.terminal.impl import TerminalExecutor
    from openhands_vscode_runtime.v1.tools import _bash_quote

    for value in ['plain', "it's a \\ back\\slash", 'multi\nline\r\n\ttabbed', '$(id) `id` $HOME "q"', 'ünï']:
        assert _bash_quote(value) == TerminalExecutor._bash_quote(value), value
    assert _bash_quote('a\x03b') == "$'a\\x03b'"
    assert TerminalExecutor._bash_quote('a\x03b') == "$'a\x03b'"  # V1's own: the raw byte
