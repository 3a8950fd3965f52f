'use strict';
// The addon without a server: real actions through the JS fs callbacks.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { addon, countingFs, tmpdir, runAction } = require('./helpers');

test('actions run through the JS fs callbacks and the bash session', async (t) => {
  const { Executor, PROTOCOL_VERSION } = addon();
  assert.strictEqual(PROTOCOL_VERSION, 1);
  const ws = tmpdir();
  const { fs: jsfs, calls } = countingFs();
  const chunks = [];
  const ex = new Executor(
    { serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: ws, noChangeTimeoutSeconds: 5 },
    jsfs,
    { onTerminalData: (d) => chunks.push(Buffer.from(d)) },
  );
  t.after(() => ex.stop());

  const file = path.join(ws, 'a.txt');
  const w = JSON.parse(await ex.execute(JSON.stringify({ id: 1, action: 'write', args: { path: file, content: 'hello\nworld' } })));
  assert.strictEqual(w.observation, 'write', JSON.stringify(w));
  assert.strictEqual(w.cause, 1);
  assert.ok(!('id' in w));
  assert.ok(calls.writeFile >= 1, JSON.stringify(calls));
  assert.ok(fs.readFileSync(file, 'utf8').startsWith('hello\nworld'));

  const r = JSON.parse(await ex.execute(JSON.stringify({ id: 2, action: 'read', args: { path: file } })));
  assert.strictEqual(r.observation, 'read', JSON.stringify(r));
  assert.match(r.content, /hello/);
  assert.ok(calls.readFile >= 1, JSON.stringify(calls));

  const e = JSON.parse(
    await ex.execute(JSON.stringify({ id: 3, action: 'edit', args: { path: file, command: 'str_replace', old_str: 'world', new_str: 'there', impl_source: 'oh_aci' } })),
  );
  assert.strictEqual(e.observation, 'edit', JSON.stringify(e));
  assert.match(fs.readFileSync(file, 'utf8'), /hello\nthere/);

  const missing = JSON.parse(await ex.execute(JSON.stringify({ id: 4, action: 'read', args: { path: path.join(ws, 'nope.txt') } })));
  assert.strictEqual(missing.observation, 'error', JSON.stringify(missing));
  assert.strictEqual(missing.cause, 4);

  const run = JSON.parse(await ex.execute(JSON.stringify(runAction(5, 'echo hi'))));
  assert.strictEqual(run.observation, 'run', JSON.stringify(run));
  assert.strictEqual(run.content.trim(), 'hi');
  assert.strictEqual(run.extras.metadata.exit_code, 0);
  assert.match(Buffer.concat(chunks).toString(), /hi/);

  const bad = JSON.parse(await ex.execute('{"id": 6, "action": "browse", "args": {}}'));
  assert.strictEqual(bad.observation, 'error');
  const notJson = JSON.parse(await ex.execute('{nope'));
  assert.strictEqual(notJson.observation, 'error');
});

test('a throwing or rejecting callback becomes an error observation, never a crash', async (t) => {
  const { Executor } = addon();
  const ws = tmpdir();
  const { fs: jsfs } = countingFs();
  const vscodeLike = Object.assign(new Error('EntryNotFound (FileSystemError): gone'), { code: 'FileNotFound' });
  const broken = {
    ...jsfs,
    readFile: () => {
      throw new Error('sync throw from readFile');
    },
    stat: () => Promise.reject(vscodeLike),
  };
  const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: ws }, broken);
  t.after(() => ex.stop());
  fs.writeFileSync(path.join(ws, 'x.txt'), 'x\n');
  for (const id of [1, 2]) {
    const r = JSON.parse(await ex.execute(JSON.stringify({ id, action: 'read', args: { path: path.join(ws, 'x.txt') } })));
    assert.strictEqual(r.observation, 'error', JSON.stringify(r));
    assert.strictEqual(r.cause, id);
  }
});

test('constructor validates options', () => {
  const { Executor } = addon();
  const { fs: jsfs } = countingFs();
  assert.throws(() => new Executor({ serverUrl: 'x', conversationId: 'c', workspaceRoot: 'relative' }, jsfs), /absolute/);
});

test('rejections keep their code: Node codes, `code` properties, vscode FileSystemErrors', async (t) => {
  const { Executor } = addon();
  const ws = tmpdir();
  const missing = path.join(ws, 'missing.txt');
  const read = async (fsCallbacks, id) => {
    const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: ws }, fsCallbacks);
    try {
      return JSON.parse(await ex.execute(JSON.stringify({ id, action: 'read', args: { path: missing } })));
    } finally {
      await ex.stop();
    }
  };
  const { fs: real } = countingFs();
  const reference = await read(real, 1);
  assert.strictEqual(reference.observation, 'error');
  const rejectAll = (makeError) => {
    const f = () => Promise.reject(makeError());
    return { ...real, readFile: f, stat: f, readDirectory: f };
  };
  // A wrapper error whose message lost the code, with `code` set (what the extension's fs bridge throws).
  const coded = await read(rejectAll(() => Object.assign(new Error(`stat ${missing}: file:///gone`), { code: 'ENOENT' })), 2);
  assert.strictEqual(coded.content, reference.content);
  // A vscode.FileSystemError: code FileNotFound, name "EntryNotFound (FileSystemError)".
  const vscodeLike = () => {
    const e = new Error('file:///gone');
    e.name = 'EntryNotFound (FileSystemError)';
    e.code = 'FileNotFound';
    return e;
  };
  const fromVscode = await read(rejectAll(vscodeLike), 3);
  assert.strictEqual(fromVscode.content, reference.content);
  // A non-Error rejection still becomes an error observation.
  const odd = await read(rejectAll(() => 42), 4);
  assert.strictEqual(odd.observation, 'error');
});
