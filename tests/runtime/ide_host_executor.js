#!/usr/bin/env node
// A STAND-IN IDE host for tests/runtime/test_ide_tools.py: the real executor addon
// (npm/executor), started with the headless CLI's arguments, announcing two IDE tools and
// answering their calls the way the VS Code extension does (MCP CallToolResult JSON). It stands in
// for VS Code only; the executor, the channel and the runtime are the real ones. The real host is
// tested in tests/vscode (session 10 of run.sh).
'use strict';
const path = require('node:path');
const { Executor } = require(path.join(__dirname, '../../npm/executor/index.js'));

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
// The key, as the real CLIs take it from the runtime: an inherited pipe, read to its end and closed.
function sessionKey() {
  const fd = arg('--session-api-key-fd');
  if (fd === undefined) return undefined;
  const fs = require('node:fs');
  const key = fs.readFileSync(Number(fd), 'utf8').replace(/[\r\n]+$/, '');
  fs.closeSync(Number(fd));
  return key;
}
let calls = 0;
const tools = [
  {
    name: 'where_am_i',
    description: 'Stand-in tool: echoes its arguments and counts the calls it ran.',
    inputSchema: { type: 'object', properties: { line: { type: 'integer' } } },
  },
  { name: 'broken', description: 'Stand-in tool whose host call rejects.', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'wait_for_user',
    description: 'Stand-in for open_diff: waits until the call is cancelled, then answers "cancelled".',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'cancelled_calls',
    description: 'The calls this host saw cancelled (waits up to 10 s for the first one).',
    inputSchema: { type: 'object', properties: {} },
  },
];
// callId -> {name, abort}: calls that can be cancelled (as extension/src/ide does).
const running = new Map();
const cancelled = [];
let firstCancel;
const cancelSeen = new Promise((resolve) => {
  firstCancel = resolve;
});
const result = (value, isError = false) =>
  JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(value) }], isError });
function nodeFs() {
  const fsp = require('node:fs/promises');
  const kind = (s) => (s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other');
  return {
    readFile: (p) => fsp.readFile(p),
    writeFile: (p, d) => fsp.writeFile(p, d),
    stat: async (p) => {
      const s = await fsp.stat(p);
      return { type: kind(s), size: s.size, mtimeMs: s.mtimeMs };
    },
    readDirectory: async (p) => (await fsp.readdir(p, { withFileTypes: true })).map((e) => ({ name: e.name, type: kind(e) })),
    createDirectory: (p) => fsp.mkdir(p, { recursive: true }),
    delete: (p) => fsp.unlink(p),
    rename: (a, b) => fsp.rename(a, b),
  };
}
const executor = new Executor(
  {
    serverUrl: arg('--url'),
    conversationId: arg('--conversation'),
    sessionApiKey: sessionKey(),
    workspaceRoot: path.resolve(arg('--workspace')),
    clientName: 'ide-host-standin/0',
    ideTools: tools,
  },
  // OH_STANDIN_JS_FS=1 (bench_ide_tools.py --js-fs): file actions through JS callbacks over node's
  // fs, the extension's fsBridge without VS Code: what the addon's round trips into JS cost.
  process.env.OH_STANDIN_JS_FS === '1' ? nodeFs() : null,
  {
    onIdeTool: async (name, argumentsJson, callId) => {
      if (name === 'broken') throw new Error('the stand-in host refuses');
      if (name === 'wait_for_user') {
        const abort = new AbortController();
        running.set(callId, { name, abort });
        await new Promise((resolve) => abort.signal.addEventListener('abort', resolve, { once: true }));
        running.delete(callId);
        return result({ cancelled: true }, true);
      }
      if (name === 'cancelled_calls') {
        await Promise.race([cancelSeen, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        return result({ cancelled });
      }
      calls += 1;
      const text = JSON.stringify({ name, arguments: JSON.parse(argumentsJson), calls });
      return JSON.stringify({ content: [{ type: 'text', text }], isError: false });
    },
    onIdeToolCancel: (callId) => {
      const call = running.get(callId);
      cancelled.push({ callId, name: call ? call.name : null });
      if (call) call.abort.abort();
      firstCancel();
    },
    onLog: (level, target, message) => process.stderr.write(`${level} ${target}: ${message}\n`),
  },
);
process.on('SIGTERM', () => executor.stop().then(() => process.exit(0)));
executor
  .start()
  .then(() => executor.waitUntilClosed())
  .then(() => process.exit(0))
  .catch((e) => {
    process.stderr.write(`ide host stand-in: ${e.message}\n`);
    process.exit(2);
  });
