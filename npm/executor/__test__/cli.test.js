'use strict';
// The headless CLI, as the Python runtime spawns it, against the real test server.
// OH_EXECUTOR_CLI names another implementation to run the same cases against (the native
// binary of crates/oh-headless, or an installed package's bin); default: this package's Node CLI.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { tmpdir, PyServer, runAction, NODE_CLI, CLI, COMMAND, spawnWithKey } = require('./helpers');

// The test server's default key (server.py), on descriptor 3 as the runtime passes it (a pipe the
// CLI reads to its end): never on the command line nor in the environment.
function run(args, key = 'test-key') {
  const child = spawnWithKey(args, key, 'ignore');
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // 'close': after the exit and the end of its output (a short stderr may still be in flight at 'exit').
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr: () => stderr })));
  return { child, exited, stderr: () => stderr };
}

test('headless round trip and clean exit on SIGTERM', async (t) => {
  const server = await PyServer.start(['--key', 'sekret']);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const ws = tmpdir();
  const p = run(['--url', server.url, '--conversation', 'conv1', '--workspace', ws, '--no-change-timeout', '2.5'], 'sekret');
  t.after(() => p.child.kill('SIGKILL'));
  const reg = await server.expect('registered', () => true, 20000);
  assert.match(reg.auth.client, /^openhands-vscode-executor-cli\//);
  server.send(runAction(1, 'echo hi && pwd'));
  const r1 = await server.reply(1);
  assert.strictEqual(r1.observation, 'run', JSON.stringify(r1));
  assert.strictEqual(r1.content.trim(), `hi\n${ws}`);
  server.send({ id: 2, action: 'write', args: { path: path.join(ws, 'out.txt'), content: 'x' } });
  assert.strictEqual((await server.reply(2)).observation, 'write');
  assert.ok(fs.existsSync(path.join(ws, 'out.txt')));
  // A long command is still running when SIGTERM arrives: the shell and children are killed.
  server.send(runAction(3, 'sleep 31.4159'));
  const pgrep = () => require('node:child_process').spawnSync('pgrep', ['-f', 'sleep 31.4159']).stdout.toString().trim();
  // Wait for the command to be running (an event: the process exists), bounded.
  for (const t = Date.now(); pgrep() === '' && Date.now() - t < 10000; ) await new Promise((r) => setTimeout(r, 20));
  assert.notStrictEqual(pgrep(), '', 'the command started');
  const t0 = Date.now();
  p.child.kill('SIGTERM');
  const { code } = await p.exited;
  assert.strictEqual(code, 0, p.stderr());
  assert.ok(Date.now() - t0 < 5000, 'stopped promptly');
  // SIGKILL of the shell's children is asynchronous: wait until it is gone, bounded.
  for (const t = Date.now(); pgrep() !== '' && Date.now() - t < 10000; ) await new Promise((r) => setTimeout(r, 20));
  assert.strictEqual(pgrep(), '', 'the running command was killed with the shell');
  await server.expect('disconnected');
});

test('the key is never taken from the command line', async () => {
  const p = run(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir(), '--session-api-key', 'sekret']);
  const { code } = await p.exited;
  assert.strictEqual(code, 64);
  assert.match(p.stderr(), /--session-api-key is gone: a key on the command line is readable by every local user/);
});

test('refused connection: clear message, non-zero exit', async (t) => {
  const server = await PyServer.start([]);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const p = run(['--url', server.url, '--conversation', 'unknown-conv', '--workspace', tmpdir()]);
  const { code } = await p.exited;
  assert.strictEqual(code, 2);
  assert.match(p.stderr(), /no VsCodeRuntime for conversation unknown-conv/);
  // Both CLIs print the binding's code names (classified once, in oh-transport).
  assert.match(p.stderr(), /openhands-vscode-executor: ENORUNTIME: /);

  const mismatch = await PyServer.start(['--welcome-protocol', '7']);
  t.after(() => mismatch.close());
  const q = run(['--url', mismatch.url, '--conversation', 'conv1', '--workspace', tmpdir()]);
  const r = await q.exited;
  assert.strictEqual(r.code, 2);
  assert.match(q.stderr(), /protocol mismatch/);
  assert.match(q.stderr(), /openhands-vscode-executor: EPROTOCOL: /);
});

test('a failure after registration: the exit status comes from the failure\'s code, not its message', async (t) => {
  // Registered, then the runtime comes back speaking another protocol: the reconnect fails for
  // good with EPROTOCOL, whose message does not say "refused". Both CLIs exit 2, as for a
  // protocol mismatch at the first registration.
  const server = await PyServer.start([]);
  t.after(() => server.close());
  const p = run(['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()]);
  t.after(() => p.child.kill('SIGKILL'));
  await server.expect('registered', () => true, 20000);
  server.close();
  await new Promise((r) => server.child.on('exit', r));
  const other = await PyServer.start(['--welcome-protocol', '7'], server.port);
  t.after(() => other.close());
  const { code } = await p.exited;
  assert.match(p.stderr(), /connection closed \(.*protocol mismatch/);
  assert.strictEqual(code, 2, p.stderr());
});

test('usage errors', async () => {
  const p = run(['--url', 'http://127.0.0.1:1']);
  const { code } = await p.exited;
  assert.strictEqual(code, 64);
  assert.match(p.stderr(), /missing --conversation, --workspace/);
});

test('flags: --version, --help, unknown argument, bad timeout, missing workspace', async () => {
  const version = require('../package.json').version;
  const v = spawnSyncCli(['--version']);
  assert.strictEqual(v.status, 0);
  assert.strictEqual(v.stdout.trim(), version);
  const h = spawnSyncCli(['--help']);
  assert.strictEqual(h.status, 0);
  assert.match(h.stdout, /^usage: openhands-vscode-executor --url URL/);
  if (CLI !== NODE_CLI) {
    // One usage text (crates/oh-front/src/args.rs) for both programs: the runs against a native
    // binary (test.sh, tests/cross) check that this package's shim prints the very same bytes.
    const nodeHelp = require('node:child_process').spawnSync(process.execPath, [NODE_CLI, '--help'], { encoding: 'utf8' });
    assert.strictEqual(h.stdout, nodeHelp.stdout);
  }
  const u = spawnSyncCli(['--bogus']);
  assert.strictEqual(u.status, 64);
  assert.match(u.stderr, /unknown argument --bogus/);
  const t = spawnSyncCli(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir(), '--no-change-timeout', 'soon']);
  assert.strictEqual(t.status, 64);
  assert.match(t.stderr, /--no-change-timeout must be a number of seconds/);
  const w = spawnSyncCli(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', path.join(tmpdir(), 'nope')]);
  assert.strictEqual(w.status, 66);
  assert.match(w.stderr, /workspace .*nope/);
  // A multi-root workspace's other folders (--root) must exist too.
  const r = spawnSyncCli(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir(), '--root', path.join(tmpdir(), 'nope')]);
  assert.strictEqual(r.status, 66);
  assert.match(r.stderr, /root .*nope/);
  const e = spawnSyncCli(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir(), '--root']);
  assert.strictEqual(e.status, 64);
  assert.match(e.stderr, /--root needs a value/);
});

test('the link: plain http to a host that is not loopback is refused at once (2); bad certificate settings are usage errors', async () => {
  const started = Date.now();
  // TEST-NET-1 (RFC 5737): nothing answers there; without the check this waits out the connect timeout.
  const p = run(['--url', 'http://192.0.2.1:3000', '--conversation', 'c', '--workspace', tmpdir()]);
  const { code } = await p.exited;
  assert.strictEqual(code, 2, p.stderr());
  assert.match(p.stderr(), /refusing plain http to http:\/\/192\.0\.2\.1:3000/);
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  const base = ['--url', 'https://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir()];
  const both = spawnSyncCli([...base, '--ca-file', '/ca.pem', '--cert-sha256', 'ab'.repeat(32)]);
  assert.strictEqual(both.status, 64);
  assert.match(both.stderr, /--ca-file \/ --cert-sha256: a CA file and a certificate fingerprint: give one/);
  const bad = spawnSyncCli([...base, '--cert-sha256', 'abcd']);
  assert.strictEqual(bad.status, 64);
  assert.match(bad.stderr, /not a SHA-256 fingerprint/);
});

test('unreachable runtime: exit 2 after the initial connect timeout, with a reason', async () => {
  // Port 1 on loopback: connection refused at once; the transport retries until its deadline.
  const p = run(['--url', 'http://127.0.0.1:1', '--conversation', 'c', '--workspace', tmpdir()]);
  const { code } = await p.exited;
  assert.strictEqual(code, 2, p.stderr());
  assert.match(p.stderr(), /EUNREACHABLE/);
});

test('logs: status changes and the registration, in the shared line format', async (t) => {
  const server = await PyServer.start([]);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const p = run(['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()]);
  t.after(() => p.child.kill('SIGKILL'));
  await server.expect('registered', () => true, 20000);
  const deadline = Date.now() + 5000;
  while (!/executor: registered with/.test(p.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const line = p.stderr().split('\n').find((l) => l.includes('executor: registered with'));
  assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO  executor: registered with http:\/\/127\.0\.0\.1:\d+ for conversation conv1 \(executor [0-9a-f-]{36}\)$/);
  assert.match(p.stderr(), /INFO  executor: status connected/);
  p.child.kill('SIGINT');
  const { code } = await p.exited;
  assert.strictEqual(code, 0, p.stderr());
  assert.match(p.stderr(), /SIGINT: stopping/);
});

test('--exit-on-stdin-eof: closing stdin stops a registered executor (status 0, a log line)', async (t) => {
  const server = await PyServer.start([]);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const child = spawnWithKey(['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir(), '--exit-on-stdin-eof'], 'test-key', 'pipe');
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await server.expect('registered', () => true, 20000);
  // Input before the end is read and ignored: the executor stays registered.
  child.stdin.write('ignored input\n');
  server.send(runAction(1, 'echo still-here'));
  assert.strictEqual((await server.reply(1)).content.trim(), 'still-here');
  child.stdin.end();
  const { code, signal } = await exited;
  assert.strictEqual(signal, null, stderr);
  assert.strictEqual(code, 0, stderr);
  assert.match(stderr, /INFO  executor: end of stdin \(--exit-on-stdin-eof\): stopping/);
  await server.expect('disconnected');
});

test('without --exit-on-stdin-eof, end of stdin changes nothing', async (t) => {
  const server = await PyServer.start([]);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const child = spawnWithKey(['--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()], 'test-key', 'pipe');
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await server.expect('registered', () => true, 20000);
  child.stdin.end();
  // An action after the end of stdin is still answered: the executor did not stop.
  server.send(runAction(1, 'echo after-eof'));
  assert.strictEqual((await server.reply(1)).content.trim(), 'after-eof');
  assert.strictEqual(child.exitCode, null, stderr);
  assert.doesNotMatch(stderr, /stopping/);
  child.kill('SIGTERM');
  assert.strictEqual(await exited, 0, stderr);
});

function spawnSyncCli(args) {
  return require('node:child_process').spawnSync(COMMAND[0], [...COMMAND.slice(1), ...args], { encoding: 'utf8', timeout: 10000 });
}
