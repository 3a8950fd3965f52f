'use strict';
// Test helpers: the addon, JS fs callbacks with call counters, and the python-socketio test
// server of crates/oh-transport (a real server implementing docs/protocol.md).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.resolve(__dirname, '../../..');
const SERVER_PY = path.join(ROOT, 'crates/oh-transport/tests/support/server.py');

function addon() {
  return require('../index.js');
}

function python() {
  if (process.env.OH_TEST_PYTHON) return process.env.OH_TEST_PYTHON;
  const venv = process.env.OH_VENV || path.join(os.homedir(), '.cache/openhands-vscode-runtime/venv');
  const p = path.join(venv, 'bin/python');
  return fs.existsSync(p) ? p : null;
}

/** node:fs/promises callbacks that count their calls. */
function countingFs() {
  const calls = {};
  const count = (name, f) => (...a) => {
    calls[name] = (calls[name] || 0) + 1;
    return f(...a);
  };
  const kind = (s) => (s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other');
  return {
    calls,
    fs: {
      readFile: count('readFile', (p) => fsp.readFile(p)),
      writeFile: count('writeFile', (p, d) => fsp.writeFile(p, d)),
      stat: count('stat', async (p) => {
        const s = await fsp.stat(p);
        return { type: kind(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode };
      }),
      readDirectory: count('readDirectory', async (p) =>
        (await fsp.readdir(p, { withFileTypes: true })).map((e) => ({ name: e.name, type: kind(e) })),
      ),
      createDirectory: count('createDirectory', (p) => fsp.mkdir(p, { recursive: true })),
      delete: count('delete', (p) => fsp.unlink(p)),
      rename: count('rename', (a, b) => fsp.rename(a, b)),
    },
  };
}

function tmpdir(prefix = 'oh-node-') {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

class PyServer {
  /** null (the test skips) only with OH_ALLOW_SKIP=1 outside CI; otherwise a missing python fails
   *  (a skip under CI=true, which .ci/run sets, would hide the missing venv). */
  /** `port`: listen there (a server restarted on the port an executor reconnects to). */
  static async start(extra = [], port = undefined) {
    const py = python();
    if (!py) {
      if (process.env.OH_ALLOW_SKIP && !process.env.CI) return null;
      throw new Error(
        'no python with python-socketio: run `make test-node` (it installs the venv), or set OH_VENV / ' +
          'OH_TEST_PYTHON to a python with python-socketio and uvicorn; OH_ALLOW_SKIP=1 skips these tests instead, except under CI',
      );
    }
    port ??= await freePort();
    const child = spawn(py, [SERVER_PY, '--port', String(port), ...extra], { stdio: ['pipe', 'pipe', 'inherit'] });
    const s = new PyServer(child, port);
    await s.expect('listening', () => true, 20000);
    return s;
  }

  constructor(child, port) {
    this.child = child;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.queue = [];
    this.waiters = [];
    this.log = [];
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let ev;
      try {
        ev = JSON.parse(line);
      } catch {
        return;
      }
      this.log.push(ev);
      this.queue.push(ev);
      this.pump();
    });
  }

  pump() {
    for (const w of [...this.waiters]) {
      const i = this.queue.findIndex((ev) => ev.ev === w.kind && w.pred(ev));
      if (i >= 0) {
        const [ev] = this.queue.splice(i, 1);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(ev);
      }
    }
  }

  expect(kind, pred = () => true, timeout = 15000) {
    return new Promise((resolve, reject) => {
      const w = { kind, pred, resolve };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no ${kind} event within ${timeout} ms; seen ${JSON.stringify(this.log).slice(0, 2000)}`));
      }, timeout);
      this.waiters.push(w);
      this.pump();
    });
  }

  async reply(id, timeout) {
    return (await this.expect('reply', (ev) => ev.data && ev.data.cause === id, timeout)).data;
  }

  cmd(obj) {
    this.child.stdin.write(`${JSON.stringify(obj)}\n`);
  }

  send(payload) {
    this.cmd({ cmd: 'send', payload });
  }

  close() {
    this.child.kill('SIGKILL');
  }
}

function runAction(id, command, extra = {}) {
  return {
    id,
    action: 'run',
    args: { command, is_input: false, thought: '', blocking: false, is_static: false, cwd: null, hidden: false, confirmation_state: 'confirmed', security_risk: -1, ...extra },
    timeout: 120.0,
  };
}

// The headless CLI under test: OH_EXECUTOR_CLI names another implementation (the native binary of
// crates/oh-headless, or an installed package's bin); default: this package's Node CLI.
const NODE_CLI = path.join(__dirname, '..', 'bin', 'openhands-vscode-executor.js');
const CLI = process.env.OH_EXECUTOR_CLI || NODE_CLI;
const COMMAND = CLI.endsWith('.js') ? [process.execPath, CLI] : [CLI];

/** The CLI with `key` on descriptor 3 (`--session-api-key-fd 3`, written and closed at once), as
 * the runtime passes it: in neither its arguments nor its environment. `env`: extra variables. */
function spawnWithKey(args, key, stdin = 'ignore', env = {}) {
  const childEnv = { ...process.env, ...env };
  delete childEnv.OH_SESSION_API_KEY;
  const child = spawn(COMMAND[0], [...COMMAND.slice(1), ...args, '--session-api-key-fd', '3'], {
    stdio: [stdin, 'pipe', 'pipe', 'pipe'],
    env: childEnv,
  });
  child.stdio[3].on('error', () => {}); // a CLI that exits before reading (a usage error)
  child.stdio[3].end(key);
  return child;
}

module.exports = { addon, countingFs, tmpdir, PyServer, python, runAction, ROOT, NODE_CLI, CLI, COMMAND, spawnWithKey };
