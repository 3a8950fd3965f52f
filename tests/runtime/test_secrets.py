"""Secrets on their way to the agent's shell (docs/security.md, "Threats, defences and their
tests"): a secret exported to the shell arrives verbatim and runs nothing; the credentials of the
process that spawns the executor never reach the agent's shell; the executor's log is removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import load_runtime, real_executor_only

from openhands.events.action import CmdRunAction

from openhands_vscode_runtime.agent_env import agent_environment, bash_export, is_credential_name

TRICKY = (
    "a$(touch {m1})b`touch {m2}`c$HOME d${{HOME}} 'single' \"double\" back\\slash\n"
    "second line\ttab \x01ctl \x03 end $'ansi' ;exit; #"
)


@real_executor_only
def test_secret_export_arrives_verbatim_and_runs_nothing(temp_dir):
    rt, config = load_runtime(temp_dir)
    try:
        ws = Path(config.workspace_base)
        m1, m2 = ws / 'marker-subst', ws / 'marker-backtick'
        value = TRICKY.format(m1=m1, m2=m2)
        rt.add_env_vars({'tricky_secret': value, 'github_token': 'ghp_plain'})
        obs = rt.run_action(CmdRunAction('printf %s "$TRICKY_SECRET" > out.bin; echo "$GITHUB_TOKEN"'))
        assert obs.exit_code == 0, obs
        assert obs.content == 'ghp_plain'
        assert (ws / 'out.bin').read_bytes() == value.encode(), 'the value did not arrive verbatim'
        assert not m1.exists() and not m2.exists(), 'the secret ran a command'
        # The shell is still usable (a raw Ctrl-C or newline in the secret did not break it).
        assert rt.run_action(CmdRunAction('echo still-here')).content == 'still-here'
    finally:
        rt.close()


@real_executor_only
def test_agent_shell_environment_holds_no_credentials(temp_dir, monkeypatch):
    leaked = {
        'SESSION_API_KEY': 'sk-session-1111',
        'LLM_API_KEY': 'sk-llm-2222',
        'OPENAI_API_KEY': 'sk-openai-3333',
        'GITHUB_TOKEN': 'ghp-4444',
        'OH_SESSION_API_KEYS_0': 'agent-server-5555',
        'AWS_SECRET_ACCESS_KEY': 'aws-6666',
    }
    for k, v in leaked.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv('OH_TEST_PLAIN_SETTING', 'plain-visible-7777')
    rt, _ = load_runtime(temp_dir)
    try:
        executor_key = rt.session_api_key
        assert executor_key
        # Without `PS1` and the prompt function: both hold the prompt's markers, and a bare `env`
        # is then sometimes answered with an empty output (a defect of its own, seen in the Rust test).
        out = rt.run_action(CmdRunAction("env -u PS1 -u 'BASH_FUNC___oh_ps1%%'")).content
    finally:
        rt.close()
    assert 'OH_TEST_PLAIN_SETTING=plain-visible-7777' in out, 'the environment was not inherited at all'
    for k, v in leaked.items():
        assert v not in out and f'{k}=' not in out, f'{k} reached the agent shell'
    assert executor_key not in out and 'OH_SESSION_API_KEY=' not in out, 'the executor key reached the agent shell'


def test_credential_names():
    for name in ('SESSION_API_KEY', 'OH_SESSION_API_KEY', 'LLM_API_KEY', 'LLM_BASE_URL', 'OPENAI_API_KEY',
                 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'OH_SESSION_API_KEYS_3',
                 'JWT_SECRET', 'OH_SECRET_KEY', 'gitlab_token', 'PGPASSWORD', 'MYSQL_PWD', 'DATABASE_URL',
                 'GITHUB_PAT', 'STRIPE_KEY', 'AZURE_OPENAI_KEY', 'CLIENT_SECRETS', 'LITELLM_MASTER_KEY',
                 'SENTRY_DSN', 'GPG_PASSPHRASE', 'NPM_TOKENS'):
        assert is_credential_name(name), name
    for name in ('PATH', 'HOME', 'LANG', 'SSH_AUTH_SOCK', 'TOKENIZERS_PARALLELISM', 'VIRTUAL_ENV',
                 'OH_VSCODE_MODE', 'KEYBOARD', 'PWD', 'OLDPWD', 'MANPATH', 'LD_LIBRARY_PATH', 'PYTHONPATH',
                 'NODE_PATH', 'HOTKEY', 'DISPLAY', 'EDITOR', 'XDG_DATA_DIRS', 'PATTERN_DIR', 'GPG_TTY'):
        assert not is_credential_name(name), name
    assert agent_environment({'PATH': '/bin', 'LLM_API_KEY': 'x'}) == {'PATH': '/bin'}


def test_bash_export_refuses_a_name_that_is_not_one():
    with pytest.raises(ValueError):
        bash_export('A;touch x', 'v')


@real_executor_only
def test_executor_log_removed_when_the_runtime_closes(temp_dir):
    rt, _ = load_runtime(temp_dir)
    proc = rt.executor_process
    assert proc is not None
    log = proc.log_path
    try:
        assert os.path.exists(log)
    finally:
        rt.close()
    assert not os.path.exists(log), f'the executor log {log} was left behind'


def test_token_folder_left_open_to_others_is_made_private(tmp_path):
    from openhands_vscode_runtime.credentials import load_or_create_executor_token

    folder = tmp_path / 'state' / 'openhands-vscode-runtime'
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    token, path = load_or_create_executor_token(folder / 'executor-token')
    assert len(token) >= 32 and path.exists()
    assert (folder.stat().st_mode & 0o777) == 0o700


def test_token_folder_of_another_user_is_refused(as_root, tmp_path):
    from openhands_vscode_runtime.credentials import CredentialError, load_or_create_executor_token

    folder = tmp_path / 'state' / 'openhands-vscode-runtime'
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, 54321, 54321)
    with pytest.raises(CredentialError, match='belongs to another user'):
        load_or_create_executor_token(folder / 'executor-token')
    assert not (folder / 'executor-token').exists()


def test_endpoint_repr_hides_the_keys():
    from openhands_vscode_runtime.connection import Endpoint

    endpoint = Endpoint(hub=None, server_url='http://127.0.0.1:3000', session_api_key='k3y-not-to-print',
                        accepted_keys=('k3y-not-to-print', 'other-k3y-not-to-print'))
    text = repr(endpoint)
    assert 'k3y-not-to-print' not in text and 'other-k3y' not in text, text
    assert text == ("Endpoint(hub=None, server_url='http://127.0.0.1:3000', session_api_key=<redacted>, "
                    'accepted_keys=(<redacted>, <redacted>))')
    assert 'k3y-not-to-print' not in str(endpoint) and 'k3y-not-to-print' not in f'{endpoint!r}'
