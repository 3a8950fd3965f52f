"""A stand-in for the agent-server in the supervisor's unit tests (agentServerProcess.test.ts),
used only where the real one cannot do what a test needs quickly: start in well under a second,
fail on request, and start a grandchild whose end proves the process-group stop. The real
agent-server runs in the host session (tests/vscode/suite/v1-managed.js) and, through the same
launcher, in tests/v1/test_managed_launch.py.

    python -m standin_agent_server --secrets-fd 3 --port-fd 4 [--exit-at-start N] [--grandchild]
        [--never-ready] [--serve-delay S] [--report-port P]

Takes its keys and binds its port with the real launcher's own functions
(openhands_vscode_runtime/v1/launch.py, loaded by path): the keys from the secrets pipe into
os.environ, a socket on 127.0.0.1 port 0, its port written to the port pipe. Serves GET /ready
(200; 503 with --never-ready, as while the agent-server initialises) and GET
/api/conversations/search (200 with the X-Session-API-Key that SESSION_API_KEY holds, 401
without), like the agent-server, and imports openhands_vscode_runtime.v1.exit_with_parent as the
real one does. --grandchild starts `sleep 600` in the same process group and prints
`grandchild <pid>`. --serve-delay waits S seconds between binding and serving (the real server
imports the SDK then, 20-40 s). --report-port reports P instead of the bound port: a stand-in for
a race the real launcher cannot lose (another process holding the port the child reports), to
show the extension's ownership check. `--host H --port P` instead of the two descriptors binds
P itself (how the extension started it before the launcher; kept to show that start-up's race).
"""

import argparse
import http.server
import os
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--host")
ap.add_argument("--port", type=int)
ap.add_argument("--secrets-fd", type=int)
ap.add_argument("--port-fd", type=int)
ap.add_argument("--serve-delay", type=float, default=0)
ap.add_argument("--report-port", type=int)
ap.add_argument("--exit-at-start", type=int)
ap.add_argument("--grandchild", action="store_true")
ap.add_argument("--never-ready", action="store_true")
a = ap.parse_args()
# The real server imports openhands_vscode_runtime.v1.exit_with_parent through --import-modules; the
# stand-in runs the same file (by path: the package's __init__ needs python-socketio, which the
# system python3 running these tests may not have). OH_VSCODE_EXIT_ON_STDIN_EOF comes from the supervisor.
import importlib.util  # noqa: E402
import pathlib  # noqa: E402

_v1 = pathlib.Path(__file__).resolve().parents[4] / "openhands-runtime-py/src/openhands_vscode_runtime/v1"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, _v1 / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_load("exit_with_parent")
launch = _load("launch")
sock = None
if a.secrets_fd is not None:
    os.environ.update(launch.read_secrets(a.secrets_fd))
    sock = launch.bind_loopback()
    launch.report_port(a.port_fd, a.report_port or sock.getsockname()[1])
if a.exit_at_start is not None:
    print("stand-in: failing at start as asked", file=sys.stderr, flush=True)
    sys.exit(a.exit_at_start)
if a.grandchild:
    p = subprocess.Popen(["sleep", "600"])
    print(f"grandchild {p.pid}", flush=True)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/ready":
            code = 503 if a.never_ready else 200
        elif self.path.startswith("/api/"):
            code = 200 if self.headers.get("X-Session-API-Key") == os.environ.get("SESSION_API_KEY") else 401
        else:
            code = 404
        self.send_response(code)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


time.sleep(a.serve_delay)
if sock is not None:
    server = http.server.HTTPServer(sock.getsockname(), Handler, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
else:
    server = http.server.HTTPServer((a.host, a.port), Handler)
print("stand-in listening on {}:{}".format(*server.socket.getsockname()), flush=True)
server.serve_forever()
