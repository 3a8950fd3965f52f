"""Finding and spawning the headless executor: the native binary this distribution carries
(`crates/oh-headless`, installed as the `openhands-vscode-executor` script), or in a source
checkout `npm/executor/bin/openhands-vscode-executor.js`."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from openhands_vscode_runtime.agent_env import agent_environment
from openhands_vscode_runtime.settings import (
    RuntimeSettings,
)

_REPO_RELATIVE = Path('npm') / 'executor' / 'bin' / 'openhands-vscode-executor.js'
DISTRIBUTION = 'openhands-vscode-runtime'
BINARY_NAME = 'openhands-vscode-executor'


def find_executor(settings: RuntimeSettings | None = None) -> list[str] | None:
    """The command line prefix that starts the headless executor, or None.

    `OH_VSCODE_EXECUTOR` wins: a `.js` path (run with node), or any command line. Then the native
    executor installed with this distribution (the wheel's `openhands-vscode-executor` script).
    Last, in a source checkout, the repository's Node CLI. An editable install skips the binary it
    copied at install time, which goes stale as the crates change: set `OH_VSCODE_EXECUTOR` to use
    a native build from a checkout. `settings`: this process's environment when None.
    """
    settings = settings or RuntimeSettings.from_env()
    configured = settings.executor_command
    node = settings.node or shutil.which('node') or 'node'
    if configured:
        if configured.endswith(('.js', '.mjs', '.cjs')) and os.path.isfile(configured):
            return [node, configured]
        return shlex.split(configured)
    installed = installed_binary()
    if installed is not None:
        return [str(installed)]
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / _REPO_RELATIVE
        if candidate.is_file():
            return [node, str(candidate)]
    return None


def installed_binary() -> Path | None:
    """The native executor installed with this distribution (not for editable installs), or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    direct_url = dist.read_text('direct_url.json')
    if direct_url:
        try:
            if json.loads(direct_url).get('dir_info', {}).get('editable'):
                return None
        except ValueError:
            pass
    for file in dist.files or ():
        if file.name == BINARY_NAME and file.parent.name in ('bin', 'scripts', 'Scripts'):
            path = Path(str(dist.locate_file(file))).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return path
    return None


def key_pipe(key: str) -> int:
    """The read end of a pipe holding `key` and then end of file, for a child to inherit
    (`pass_fds`) and read with `--session-api-key-fd`. The write end is closed here: a key is far
    smaller than a pipe's buffer, so the write never blocks and the child reads to end of file."""
    data = key.encode()
    if len(data) >= 4096:  # POSIX guarantees at least PIPE_BUF (4096 on Linux) without blocking
        raise ValueError('a session key is shorter than 4096 bytes')
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    return read_fd


class ExecutorProcess:
    """A headless executor child process; its output goes to a log file."""

    def __init__(
        self,
        command: list[str],
        *,
        url: str,
        conversation_id: str,
        session_api_key: str | None,
        workspace: str,
        no_change_timeout: float | None,
        on_exit: Callable[[int], None] | None = None,
        base_env: dict[str, str] | None = None,
        ca_file: str | None = None,
    ) -> None:
        args = [
            *command,
            '--url',
            url,
            '--conversation',
            conversation_id,
            '--workspace',
            workspace,
        ]
        # The key goes through a pipe the executor reads and closes (`--session-api-key-fd`):
        # never on the command line (any local user reads another process's arguments: ps,
        # /proc/PID/cmdline), never in the environment (its owner, and so the agent's shell, reads
        # the executor's initial environment in /proc/PID/environ for the executor's whole life).
        # `base_env`: the environment to start from (default: this process's); the V1 tools pass
        # OpenHands V1's sanitised terminal environment.
        # Credentials of this process (in server mode: the OpenHands server's) stay out of the
        # executor and so out of the agent's shell (agent_env.py).
        env = agent_environment(os.environ if base_env is None else base_env)
        key_fd = None
        if session_api_key:
            key_fd = key_pipe(session_api_key)
            args += ['--session-api-key-fd', str(key_fd)]
        if no_change_timeout is not None:
            args += ['--no-change-timeout', f'{no_change_timeout:g}']
        if ca_file:
            args += ['--ca-file', ca_file]
        # The executor runs in its own session (a signal to our group must not reach its shell),
        # so nothing else ends it when this process dies without `stop()` (SIGKILL, a hung
        # shutdown). It gets a pipe as stdin that only we hold the write end of (close_fds, and
        # Python's fds are non-inheritable): when this process ends, however it ends, the kernel
        # closes that end and the executor, told by the flag, stops at end of file.
        args.append('--exit-on-stdin-eof')
        self.args = args
        fd, self.log_path = tempfile.mkstemp(prefix='oh-executor-', suffix='.log')
        self._log = os.fdopen(fd, 'wb')
        self._closing = False
        try:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.PIPE,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                cwd=workspace,
                env=env,
                start_new_session=True,
                pass_fds=() if key_fd is None else (key_fd,),
            )
        finally:
            # The child has its copy; ours goes (the pipe then holds the key for the child only).
            if key_fd is not None:
                os.close(key_fd)
        self._on_exit = on_exit
        self._watcher = threading.Thread(
            target=self._watch, name=f'oh-executor-watch-{self.proc.pid}', daemon=True
        )
        self._watcher.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _watch(self) -> None:
        rc = self.proc.wait()
        if not self._closing and self._on_exit is not None:
            self._on_exit(rc)

    def log_tail(self, max_chars: int = 2000) -> str:
        try:
            text = Path(self.log_path).read_text(errors='replace')
        except OSError:
            return ''
        return text[-max_chars:]

    def stop(self, timeout: float = 3.0) -> None:
        self._closing = True
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:  # pragma: no cover
                    pass
        else:
            # The executor is gone; clean up what it may have left in its process group.
            self._signal(signal.SIGKILL)
        self._close_stdin()
        try:
            self._log.close()
        except OSError:  # pragma: no cover
            pass

    def _close_stdin(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:  # pragma: no cover - a broken pipe: the executor is gone already
            pass

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass

    def remove_log(self) -> None:
        try:
            os.unlink(self.log_path)
        except OSError:
            pass
