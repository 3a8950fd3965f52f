'use strict';
// The addon without a server: real actions through the JS fs callbacks.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { addon, countingFs, tmpdir, runAction } = require('./helpers');

test('actions run through the JS fs callbacks and the bash session', async (t) => {
  const { Executor, PROTOCOL_VERSION } = addon();
  assert.strictEqual(PROTOCOL_VERSION, 3);
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

test('stat and readDirectory results are typed: a malformed one is an I/O error', async (t) => {
  const { Executor } = addon();
  const ws = tmpdir();
  const file = path.join(ws, 'x.txt');
  fs.writeFileSync(file, 'x\n');
  const { fs: real } = countingFs();
  // vscode.FileType numbers and [name, type] pairs instead of the contract's objects and words.
  const malformed = { ...real, stat: async () => ({ type: 1, size: 2 }), readDirectory: async () => [['x.txt', 1]] };
  const view = async (callbacks, id, p) => {
    const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: ws }, callbacks);
    try {
      return JSON.parse(await ex.execute(JSON.stringify({ id, action: 'edit', args: { path: p, command: 'view', impl_source: 'oh_aci' } }))).content;
    } finally {
      await ex.stop();
    }
  };
  assert.match(await view(real, 1, file), /1\tx/);
  assert.match(await view(malformed, 2, file), /does not exist/);
  assert.match(await view(real, 3, ws), /x\.txt/);
  assert.match(await view({ ...malformed, stat: real.stat }, 4, ws), /find: .*Input\/output error/);
});

test('fs null: Rust LocalFs gives the same observations as the JS callbacks', async (t) => {
  const { Executor } = addon();
  const actions = (ws) => [
    { action: 'write', args: { path: path.join(ws, 'd/a.txt'), content: 'one\ntwo\n' } },
    { action: 'read', args: { path: path.join(ws, 'd/a.txt') } },
    { action: 'edit', args: { path: path.join(ws, 'd/a.txt'), command: 'str_replace', old_str: 'two', new_str: 'three', impl_source: 'oh_aci' } },
    { action: 'edit', args: { path: path.join(ws, 'd/b.txt'), command: 'create', file_text: 'b\n', impl_source: 'oh_aci' } },
    { action: 'edit', args: { path: path.join(ws, 'd'), command: 'view', impl_source: 'oh_aci' } },
    { action: 'edit', args: { path: path.join(ws, 'd/a.txt'), command: 'undo_edit', impl_source: 'oh_aci' } },
    { action: 'read', args: { path: path.join(ws, 'missing.txt') } },
    { action: 'edit', args: { path: path.join(ws, 'd'), command: 'create', file_text: 'x', impl_source: 'oh_aci' } },
  ];
  const observe = async (fsCallbacks) => {
    // The same path on both sides (observations name it): one workspace, emptied in between.
    const ws = path.join(tmpdir(), 'ws');
    fs.mkdirSync(ws);
    const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'none', workspaceRoot: ws }, fsCallbacks);
    try {
      const out = [];
      for (const [i, a] of actions(ws).entries()) {
        const o = JSON.parse(await ex.execute(JSON.stringify({ id: i + 1, ...a })));
        out.push(JSON.stringify(o).split(ws).join('<ws>'));
      }
      const mode = (fs.statSync(path.join(ws, 'd/a.txt')).mode & 0o777).toString(8);
      return { out, mode };
    } finally {
      await ex.stop();
    }
  };
  const { fs: jsfs, calls } = countingFs();
  const viaJs = await observe(jsfs);
  assert.ok(calls.writeFile > 0 && calls.readDirectory > 0, JSON.stringify(calls));
  const native = await observe(null);
  assert.deepStrictEqual(native.out, viaJs.out);
  assert.strictEqual(native.mode, '664');
});
