"""What the agent's shell may see of this process's environment, and how a secret is exported to it.

A spawned executor starts from this process's environment and its bash inherits the executor's.
In server mode this process is the OpenHands server, whose environment holds the server's own
credentials (`SESSION_API_KEY`, the LLM's key, provider keys for LiteLLM, ...): the agent is
driven by whoever talks to that server and must not read them with `env`. OpenHands' own
sandboxes start from an empty environment; the agent gets secrets only through the explicit
secret exports (`add_env_vars`), which stay as they are.

The rule is a strip-list of credential names, not an allow-list: the agent's shell is meant to be
the user's own environment (PATH, toolchains, virtualenvs, proxies, locale), and an allow-list
would silently drop whatever the list did not foresee. A name is stripped when it is one of
OpenHands' server credentials or looks like a credential (docs/security.md, "Secrets kept out of
the agent's shell"). The executor's own key never goes into an environment (the spawner passes it on
a pipe); `OH_SESSION_API_KEY` is stripped here all the same (the executor refuses to start with it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# OpenHands' server credentials (V0 server and V1 agent-server) and the executor's own key.
_EXACT = frozenset(
    {
        'SESSION_API_KEY',
        'OH_SESSION_API_KEY',
        'JWT_SECRET',
        'OH_SECRET_KEY',
    }
)
# `LLM_*`: OpenHands' LLM configuration (`LLM_API_KEY`, `LLM_AWS_SECRET_ACCESS_KEY`, ...);
# `OH_SESSION_API_KEYS_*`: the V1 agent-server's accepted keys.
_PREFIXES = ('LLM_', 'OH_SESSION_API_KEYS_')
# Names that look like a credential: `OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
# `DB_PASSWORD`, `FOO_CREDENTIALS`, `CLIENT_SECRETS`, `PGPASSWORD` (PASSWORD anywhere),
# `STRIPE_KEY`, `AZURE_OPENAI_KEY`, `LITELLM_MASTER_KEY` (a last word KEY), `GITHUB_PAT`,
# `MYSQL_PWD` (PAT and PWD only after an underscore: `PATH`, `PWD` and `OLDPWD` are no
# credentials), `DATABASE_URL` (it carries the database's password), `SENTRY_DSN`. The same pattern
# masks exports in the extension (extension/src/secretMask.ts); a test keeps the two equal.
CREDENTIAL_PATTERN = (
    r'(^|_)(API_?KEYS?|TOKENS?|SECRETS?|SECRET_ACCESS_KEY|SECRET_KEY|PASSWD|PASSPHRASE|CREDENTIALS?|'
    r'PRIVATE_KEY|ACCESS_KEY|DATABASE_UR[LI]|DSN)(_|$)|PASSWORD|_(PAT|PWD)(_|$)|_KEYS?$'
)
_CREDENTIAL_NAME = re.compile(CREDENTIAL_PATTERN, re.IGNORECASE)


def is_credential_name(name: str) -> bool:
    """True for an environment variable the agent's shell must not inherit."""
    upper = name.upper()
    return (
        upper in _EXACT
        or upper.startswith(_PREFIXES)
        or _CREDENTIAL_NAME.search(upper) is not None
    )


def agent_environment(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of `env` without the credentials (see the module's docstring)."""
    return {k: v for k, v in env.items() if not is_credential_name(k)}


_ENV_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def bash_export(name: str, value: str) -> str:
    """`export NAME=<value>` where bash reads the value verbatim: ANSI-C quoting (`$'...'`) with
    every backslash, quote and control character escaped, so `$(...)`, backticks and `$VAR` stay
    text, and no raw control byte reaches the terminal (the command is typed into a PTY, where
    `\\x03` would be a Ctrl-C and a newline would end the command)."""
    if not _ENV_NAME.match(name):
        raise ValueError(f'not a valid environment variable name: {name!r}')
    return f'export {name}={ansi_c_quote(value)}'


# The short escapes V1's own terminal tool writes for these three (openhands-tools'
# `TerminalExecutor._bash_quote`), which writes every other control byte raw: `ansi_c_quote` escapes
# those too.
_NAMED_ESCAPES = {'\n': '\\n', '\r': '\\r', '\t': '\\t'}


def ansi_c_quote(value: str, *, named_escapes: bool = False) -> str:
    """`$'...'` that bash reads as exactly `value`, with no raw control byte in it (see
    `bash_export`). `named_escapes`: newline, CR and tab as `\\n`, `\\r`, `\\t` (V1's export
    form) instead of `\\x0a`, `\\x0d`, `\\x09`."""
    out = []
    for ch in value:
        if ch == '\\':
            out.append('\\\\')
        elif ch == "'":
            out.append("\\'")
        elif named_escapes and ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f'\\x{ord(ch):02x}')
        else:
            out.append(ch)
    return f"$'{''.join(out)}'"
