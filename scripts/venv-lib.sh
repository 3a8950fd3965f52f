# Sourced by the setup-python*.sh scripts: the steps every project venv shares.
#   venv_prepare NAME VENV KEY  - exits the calling script at once when VENV already carries the
#                                 stamp for KEY (the hash of the caller's inputs); otherwise makes
#                                 sure VENV exists with Python 3.12 and a current pip.
#   venv_stamp                  - records KEY as done (call last, after every install succeeded).
#   v1_venv_path VERSION        - the V1 venv of an openhands-sdk/tools/agent-server release:
#                                 OH_VENV_V1 (default ~/.cache/openhands-vscode-runtime/venv-v1)
#                                 for V1_NEWEST, that path + `-VERSION` for any other.
#   uv_path                     - the path of uv UV_VERSION (installed from PyPI into a cache venv
#                                 on first use): scripts/lock-v1.sh and tests/dist/run.sh use it.
#   venv_install VENV ARGS...   - `pip install ARGS` into VENV, done by uv (bytecode compiled, as
#                                 pip does): the same packages as pip resolves, in seconds where
#                                 pip took minutes (openhands-ai 1.6.0: 145 s with pip, 43 s with
#                                 uv including the editable build of this package; 28 Nov 2026).
# The stamp is written only at the end, so an interrupted install is redone on the next run.

# The V1 releases the suites run (docs/v1.md, "Versions"): the newest is the default reference
# (`make test-v1`), the oldest runs in `make test-v1-oldest`.
V1_NEWEST=1.58.2
V1_OLDEST=1.58.0
# uv: the version the tab's set-up bootstraps (extension/src/v1/pythonEnv.ts, UV_BOOTSTRAP_VERSION;
# extension/src/v1/pythonEnv.test.ts checks that they agree).
UV_VERSION=0.13.9
# For every uv run by a script that sources this file: the system's certificate store and pip's
# patience, as pip is configured here (PIP_CERT, PIP_DEFAULT_TIMEOUT): an index reached through its
# own CA works for both.
export UV_NATIVE_TLS=${UV_NATIVE_TLS:-1} UV_HTTP_TIMEOUT=${UV_HTTP_TIMEOUT:-${PIP_DEFAULT_TIMEOUT:-180}}
# The OpenHands app (V1 app server + GUI) that tests/app runs (scripts/setup-python-app.sh).
APP_VERSION=1.11.0

v1_venv_path() {
  local base=${OH_VENV_V1:-$HOME/.cache/openhands-vscode-runtime/venv-v1}
  if [ "$1" = "$V1_NEWEST" ]; then echo "$base"; else echo "$base-$1"; fi
}

uv_path() {
  local tools="$HOME/.cache/openhands-vscode-runtime/uv-$UV_VERSION"
  if [ ! -x "$tools/bin/uv" ]; then
    "$("$(dirname "${BASH_SOURCE[0]}")/find-python312.sh")" -m venv "$tools" >&2
    "$tools/bin/pip" install -q "uv==$UV_VERSION" >&2
  fi
  echo "$tools/bin/uv"
}

venv_install() {
  local venv=$1 uv; shift
  if ! uv=$(uv_path); then
    echo "venv_install: uv $UV_VERSION could not be installed; pip installs instead (slower)" >&2
    "$venv/bin/python" -m pip install -q "$@"
    return
  fi
  "$uv" pip install -q --compile-bytecode --python "$venv/bin/python" "$@"
}

venv_prepare() {
  _venv_name=$1 _venv_dir=$2
  _venv_stamp="$_venv_dir/.stamp-$3"
  if [ -f "$_venv_stamp" ]; then exit 0; fi
  local py
  py=$("$(dirname "${BASH_SOURCE[0]}")/find-python312.sh")
  if [ ! -x "$_venv_dir/bin/python" ]; then
    echo "$_venv_name: creating $_venv_dir with $py" >&2
    "$py" -m venv "$_venv_dir"
  fi
  "$_venv_dir/bin/python" -m pip install -q --upgrade 'pip>=25'
}

venv_stamp() {
  rm -f "$_venv_dir"/.stamp-*
  touch "$_venv_stamp"
}
