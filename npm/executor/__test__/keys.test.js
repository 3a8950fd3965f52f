'use strict';
// Where the executor's key lives: it comes on an inherited descriptor, never in the environment,
// and the agent's bash cannot find it in any ancestor's /proc/PID/environ or cmdline. Against the
// CLI (OH_EXECUTOR_CLI: the native binary too, test.sh) and the addon in this Node process (as the
// extension host runs it: the key in the options only).
const test = require('node:test');
const assert = require('node:assert');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { addon, tmpdir, PyServer, runAction, COMMAND, spawnWithKey } = require('./helpers');

function exited(child) {
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

// Run as the agent: from its own shell up to pid 1, every process's environ and cmdline, base64
// (they hold NUL bytes), into a file of the workspace (a reply could be cut short).
const WALK =
  'p=$$; while [ -n "$p" ] && [ "$p" -gt 1 ]; do ' +
  'printf "%s %s %s\\n" "$p" "$(base64 -w0 < /proc/$p/environ 2>/dev/null || echo -)" "$(base64 -w0 < /proc/$p/cmdline 2>/dev/null || echo -)"; ' +
  "p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done > walk.txt; wc -l < walk.txt";

/** Runs WALK through `server` and returns [{pid, environ, cmdline}], the agent's shell first. */
async function walkAncestors(server, ws) {
  server.send(runAction(1, WALK));
  const reply = await server.reply(1, 30000);
  assert.strictEqual(reply.observation, 'run', JSON.stringify(reply));
  return fs
    .readFileSync(path.join(ws, 'walk.txt'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [pid, environ, cmdline] = line.split(' ');
      const decode = (b) => (b === '-' ? null : Buffer.from(b, 'base64'));
      return { pid: Number(pid), environ: decode(environ), cmdline: decode(cmdline) };
    });
}

/** The key's bytes are in no environ or cmdline of the walk, which did read the processes in `mustRead`. */
function assertKeyNowhere(walk, key, mustRead) {
  for (const pid of mustRead) {
    const p = walk.find((w) => w.pid === pid);
    assert.ok(p && p.environ && p.environ.length > 0, `the walk read /proc/${pid}/environ: ${JSON.stringify(walk.map((w) => w.pid))}`);
  }
  for (const p of walk) {
    for (const [what, bytes] of [['environ', p.environ], ['cmdline', p.cmdline]]) {
      assert.ok(!bytes || !bytes.includes(key), `the key is in /proc/${p.pid}/${what}`);
    }
  }
}

test('the CLI takes its key from a descriptor; a key in the environment is refused; a bad descriptor says why', async (t) => {
  const server = await PyServer.start(['--key', 'fd-key']);
  t.after(() => server.close());
  const ok = spawnWithKey(['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()], 'fd-key\n');
  t.after(() => ok.kill('SIGKILL'));
  await server.expect('registered', () => true, 20000);
  ok.kill('SIGTERM');
  assert.strictEqual((await exited(ok)).code, 0);

  const { spawn } = require('node:child_process');
  const base = ['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()];
  // The old way: refused before anything connects, with what to do instead.
  const env = spawn(COMMAND[0], [...COMMAND.slice(1), ...base], { env: { ...process.env, OH_SESSION_API_KEY: 'fd-key' } });
  const e = await exited(env);
  assert.strictEqual(e.code, 66, e.stderr);
  assert.match(e.stderr, /\$OH_SESSION_API_KEY is set: a key in the environment stays readable in \/proc\/PID\/environ/);
  assert.match(e.stderr, /--session-api-key-fd N/);
  // Descriptor 3 not passed; passed but empty.
  const closed = spawn(COMMAND[0], [...COMMAND.slice(1), ...base, '--session-api-key-fd', '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const c = await exited(closed);
  assert.strictEqual(c.code, 66, c.stderr);
  assert.match(c.stderr, /--session-api-key-fd 3: .*the launcher did not pass it open/);
  const empty = await exited(spawnWithKey(base, ''));
  assert.strictEqual(empty.code, 66, empty.stderr);
  assert.match(empty.stderr, /--session-api-key-fd 3: no key \(empty up to end of file\)/);
  // Only the first one registered (the refused ones stopped before connecting).
  assert.strictEqual(server.log.filter((ev) => ev.ev === 'registered').length, 1, JSON.stringify(server.log));
});

test("the agent's bash finds the CLI's key in no ancestor's /proc/PID/environ or cmdline", async (t) => {
  const key = crypto.randomBytes(24).toString('base64url');
  // `--key=`, joined: one base64url key in 64 starts with '-', which argparse takes for an option.
  const server = await PyServer.start([`--key=${key}`]);
  t.after(() => server.close());
  const ws = tmpdir();
  const child = spawnWithKey(['--url', server.url, '--conversation', 'conv1', '--workspace', ws], key, 'ignore', {
    OH_TEST_VISIBLE: 'a plain variable',
  });
  t.after(() => child.kill('SIGKILL'));
  await server.expect('registered', () => true, 20000);
  const walk = await walkAncestors(server, ws);
  // The executor (the bash's parent) and this test process (the launcher) were read.
  assert.strictEqual(walk[1].pid, child.pid, JSON.stringify(walk.map((w) => w.pid)));
  assert.ok(walk[1].environ.includes('OH_TEST_VISIBLE=a plain variable'), "the walk reads the executor's environ");
  assertKeyNowhere(walk, key, [child.pid, process.pid]);
});

test("the agent's bash finds the addon's key in no ancestor's /proc/PID/environ or cmdline (the extension host's case)", async (t) => {
  const key = crypto.randomBytes(24).toString('base64url');
  const server = await PyServer.start([`--key=${key}`]);
  t.after(() => server.close());
  const ws = tmpdir();
  const { Executor } = addon();
  // As extension/src/executorService.ts passes it: in the options, nowhere else.
  const ex = new Executor({ serverUrl: server.url, conversationId: 'conv1', sessionApiKey: key, workspaceRoot: ws }, null, {});
  t.after(() => ex.stop());
  await ex.start();
  const walk = await walkAncestors(server, ws);
  assert.strictEqual(walk[1].pid, process.pid, JSON.stringify(walk.map((w) => w.pid)));
  assertKeyNowhere(walk, key, [process.pid]);
});
