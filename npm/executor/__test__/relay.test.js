'use strict';
// The addon the VS Code extension loads, in this Node process, behind a relaying impostor
// (tests/runtime/relay_impostor.py: it passes the handshake through to a REAL embedded hub, then
// forwards or injects; issue 32). Forwarding only, the hub's actions run; whatever the relay
// injects never runs and the executor closes with EAUTH saying what arrived.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { addon, tmpdir, python, ROOT } = require('./helpers');

const RELAY = path.join(ROOT, 'tests/runtime/relay_impostor.py');

/** The real hub with one channel and the relay in front of it (a Python child). */
async function startRelay(mode, marker) {
  const py = python();
  if (!py) throw new Error('no python with openhands_vscode_runtime: set OH_VENV (make test-node installs it)');
  const child = spawn(py, [RELAY, '--mode', mode, '--marker', marker], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line));
    while (waiters.length && lines.length) waiters.shift()(lines.shift());
  });
  const next = (ms = 30000) =>
    new Promise((resolve, reject) => {
      if (lines.length) return resolve(lines.shift());
      const timer = setTimeout(() => reject(new Error(`no line from the relay within ${ms} ms`)), ms);
      waiters.push((v) => {
        clearTimeout(timer);
        resolve(v);
      });
    });
  const ready = await next();
  assert.equal(ready.ev, 'ready');
  return {
    ...ready,
    next,
    run: (command) => child.stdin.write(`${JSON.stringify({ cmd: 'run', command })}\n`),
    close: () => child.kill(),
  };
}

test('behind a relay that only forwards, the real hub\'s actions run', async (t) => {
  const { Executor } = addon();
  const ws = tmpdir();
  const marker = path.join(ws, 'MARKER');
  const relay = await startRelay('forward', marker);
  t.after(() => relay.close());
  const ex = new Executor({ serverUrl: relay.relay_url, conversationId: relay.conversation_id, sessionApiKey: relay.key, workspaceRoot: ws }, null);
  await ex.start();
  relay.run(`echo real && touch ${ws}/ran`);
  const result = await relay.next();
  assert.equal((result.content || '').trim(), 'real', JSON.stringify(result));
  assert.ok(fs.existsSync(path.join(ws, 'ran')));
  await ex.stop();
  assert.ok(!fs.existsSync(marker));
});

test('an action a relay injects never runs, and the executor closes with EAUTH', async (t) => {
  const { Executor } = addon();
  for (const [mode, says] of [
    ['inject', /an unauthenticated oh_event/],
    ['inject_sealed', /bad MAC on oh_event/],
  ]) {
    const ws = tmpdir();
    const marker = path.join(ws, 'MARKER');
    const relay = await startRelay(mode, marker);
    t.after(() => relay.close());
    const ex = new Executor({ serverUrl: relay.relay_url, conversationId: relay.conversation_id, sessionApiKey: relay.key, workspaceRoot: ws }, null);
    // The handshake passes (the relay forwards it); the injection right after the welcome ends it.
    await ex.start().catch(() => {});
    const closed = await ex.waitUntilClosed();
    assert.equal(closed.code, 'EAUTH', `${mode}: ${JSON.stringify(closed)}`);
    assert.match(closed.message, says, mode);
    assert.match(closed.message, /was tampered with/, mode);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(!fs.existsSync(marker), `${mode}: the relay's action ran`);
  }
});
