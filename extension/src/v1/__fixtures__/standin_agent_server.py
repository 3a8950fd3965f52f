"""A stand-in for the agent-server in the supervisor's unit tests (agentServerProcess.test.ts),
used only where the real one cannot do what a test needs quickly: start in well under a second,
fail on request, and start a grandchild whose end proves the process-group stop. The real
agent-server runs in the host session (tests/vscode/suite/v1-managed.js).

    python -m standin_agent_server [--exit-at-start N] [--grandchild] [--never-ready] --host H --port P

Serves GET /ready (200; 503 with --never-ready, as while the agent-server initialises) and GET /api/conversations/search (200 with the X-Session-API-Key that
SESSION_API_KEY holds, 401 without), like the agent-server, and imports
openhands_vscode_runtime.v1.exit_with_parent as the real one does. --grandchild starts `sleep 600` in the
same process group and prints `grandchild <pid>`.
"""

import argparse
import http.server
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--host")
ap.add_argument("--port", type=int)
ap.add_argument("--exit-at-start", type=int)
ap.add_argument("--grandchild", action="store_true")
ap.add_argument("--never-ready", action="store_true")
a = ap.parse_args()
# The real server imports openhands_vscode_runtime.v1.exit_with_parent through --import-modules; the
# stand-in runs the same file (by path: the package's __init__ needs python-socketio, which the
# system python3 running these tests may not have). OH_VSCODE_EXIT_ON_STDIN_EOF comes from the supervisor.
import importlib.util  # noqa: E402
import pathlib  # noqa: E402

_src = pathlib.Path(__file__).resolve().parents[4] / "openhands-runtime-py/src/openhands_vscode_runtime/v1/exit_with_parent.py"
_spec = importlib.util.spec_from_file_location("exit_with_parent", _src)
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))
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


print(f"stand-in listening on {a.host}:{a.port}", flush=True)
http.server.HTTPServer((a.host, a.port), Handler).serve_forever()
