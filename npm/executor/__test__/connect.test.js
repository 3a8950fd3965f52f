'use strict';
// The addon against a real python-socketio server implementing docs/protocol.md.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { addon, countingFs, tmpdir, PyServer, runAction } = require('./helpers');

test('registers, executes delegated actions through JS callbacks, reports status', async (t) => {
  const server = await PyServer.start(['--no-change-timeout', '2']);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const { Executor, setLogHandler } = addon();
  const ws = tmpdir();
  const { fs: jsfs, calls } = countingFs();
  const statuses = [];
  const logs = [];
  const actions = [];
  const observations = [];
  const ex = new Executor({ serverUrl: server.url, conversationId: 'conv1', sessionApiKey: 'test-key', workspaceRoot: ws, logLevel: 'info' }, jsfs, {
    onStatus: (s, m) => statuses.push([s, m]),
    onLog: (level, target, message) => logs.push({ level, target, message }),
    onAction: (json) => actions.push(JSON.parse(json)),
    onObservation: (json) => observations.push(JSON.parse(json)),
  });
  t.after(() => setLogHandler(null));
  await ex.start();
  assert.strictEqual(ex.status, 'connected');
  const reg = await server.expect('registered');
  assert.strictEqual(reg.auth.protocol, 3);
  // The key never crosses the wire (the handshake proves it).
  assert.ok(!JSON.stringify(reg).includes('test-key'), JSON.stringify(reg));
  assert.strictEqual(reg.auth.workspace, ws);
  assert.strictEqual(reg.auth.executor_id, ex.executorId);
  assert.strictEqual(reg.query.conversation_id, 'conv1');

  server.send(runAction(1, 'echo hi'));
  const r1 = await server.reply(1);
  assert.strictEqual(r1.observation, 'run');
  assert.strictEqual(r1.content.trim(), 'hi');
  assert.strictEqual(r1.cause, 1);
  assert.ok(!('id' in r1));

  const file = path.join(ws, 'f.txt');
  server.send({ id: 2, action: 'write', args: { path: file, content: 'via js' } });
  assert.strictEqual((await server.reply(2)).observation, 'write');
  server.send({ id: 3, action: 'read', args: { path: file } });
  const r3 = await server.reply(3);
  assert.match(r3.content, /via js/);
  assert.ok(calls.writeFile >= 1 && calls.readFile >= 1, JSON.stringify(calls));
  assert.strictEqual(fs.readFileSync(file, 'utf8').replace(/\n$/, ''), 'via js');

  // Not delegated (no id) / not runnable: nothing executed, refusal for the one with an id.
  server.send({ action: 'run', args: { command: 'touch should-not-exist' } });
  server.send({ id: 4, action: 'message', args: { content: 'hello' } });
  assert.strictEqual((await server.reply(4)).observation, 'error');
  assert.ok(!fs.existsSync(path.join(ws, 'should-not-exist')));

  assert.deepStrictEqual(actions.map((a) => a.id), [1, 2, 3]);
  assert.deepStrictEqual(observations.map((o) => o.cause), [1, 2, 3]);
  await ex.stop();
  assert.strictEqual(ex.status, 'disconnected');
  const seen = statuses.map((s) => s[0]);
  assert.deepStrictEqual(seen.slice(0, 2), ['connecting', 'connected']);
  assert.ok(seen.includes('executing'), JSON.stringify(statuses));
  assert.ok(logs.some((l) => /registered/.test(l.message)), JSON.stringify(logs.slice(0, 5)));
});

test('refusals reject start() with a code: EAUTH, ENORUNTIME, EPROTOCOL', async (t) => {
  const server = await PyServer.start(['--key', 'k']);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const { Executor } = addon();
  const { fs: jsfs } = countingFs();
  const ex = new Executor({ serverUrl: server.url, conversationId: 'conv1', sessionApiKey: 'bad', workspaceRoot: tmpdir() }, jsfs);
  // A wrong key: the server's proof does not match it, so the executor leaves the server.
  await assert.rejects(ex.start(), { code: 'EAUTH', message: /could not prove it holds the session key/ });
  assert.strictEqual(ex.status, 'error');
  assert.match(ex.statusMessage, /could not prove it holds the session key/);
  await ex.stop();

  const unknown = new Executor({ serverUrl: server.url, conversationId: 'nobody', sessionApiKey: 'k', workspaceRoot: tmpdir() }, jsfs);
  await assert.rejects(unknown.start(), { code: 'ENORUNTIME', message: /no VsCodeRuntime for conversation nobody/ });
  // The failure the transport recorded, not the status text, gives waitUntilClosed its code.
  const closed = await unknown.waitUntilClosed();
  assert.strictEqual(closed.reason, 'failed');
  assert.strictEqual(closed.code, 'ENORUNTIME');
  assert.match(closed.message, /no VsCodeRuntime for conversation nobody/);
  await unknown.stop();

  const mismatch = await PyServer.start(['--welcome-protocol', '7']);
  t.after(() => mismatch.close());
  const ex2 = new Executor({ serverUrl: mismatch.url, conversationId: 'conv1', sessionApiKey: 'test-key', workspaceRoot: tmpdir() }, jsfs);
  await assert.rejects(ex2.start(), { code: 'EPROTOCOL', message: /protocol mismatch/ });
  await ex2.stop();
});

test('waitUntilClosed says why: replaced by a newer executor, or stopped', async (t) => {
  const server = await PyServer.start([]);
  if (!server) return t.skip('no python with python-socketio');
  t.after(() => server.close());
  const { Executor } = addon();
  const options = { serverUrl: server.url, conversationId: 'conv1', sessionApiKey: 'test-key', workspaceRoot: tmpdir() };
  const first = new Executor(options, null);
  t.after(() => first.stop());
  await first.start();
  const firstClosed = first.waitUntilClosed();
  const second = new Executor(options, null);
  t.after(() => second.stop());
  await second.start();
  const why = await firstClosed;
  assert.strictEqual(why.reason, 'replaced', JSON.stringify(why));
  assert.strictEqual(why.code, undefined);
  const secondClosed = second.waitUntilClosed();
  await second.stop();
  const stopped = await secondClosed;
  assert.strictEqual(stopped.reason, 'stopped', JSON.stringify(stopped));
  assert.strictEqual(stopped.code, undefined);
});

test('an impostor server on the configured port learns nothing and runs nothing (the addon of the VS Code extension)', async (t) => {
  const { Executor } = addon();
  for (const mode of ['challenge', 'welcome']) {
    const ws = tmpdir();
    const marker = path.join(ws, 'owned');
    const server = await PyServer.start(['--impostor', '--impostor-mode', mode, '--marker', marker]);
    if (!server) return t.skip('no python with python-socketio');
    t.after(() => server.close());
    const key = 'the-real-session-key-addon-0123456789';
    const ex = new Executor({ serverUrl: server.url, conversationId: 'conv1', sessionApiKey: key, workspaceRoot: ws }, null);
    await assert.rejects(ex.start(), { code: 'EAUTH', message: /could not prove it holds the session key: not the OpenHands you configured\?/ });
    await ex.stop();
    await server.expect('received', (ev) => ev.what === 'connect');
    // Whatever else arrives after the executor left.
    await new Promise((r) => setTimeout(r, 1500));
    const received = server.log.filter((ev) => ev.ev === 'received');
    const text = JSON.stringify(received);
    assert.ok(!text.includes(key), `${mode}: the impostor received the key: ${text}`);
    assert.ok(!received.some((ev) => ev.what === 'oh_executor_auth' || ev.what === 'oh_event'), `${mode}: ${text}`);
    assert.ok(!fs.existsSync(marker), `${mode}: the impostor's action ran`);
  }
});
