#!/usr/bin/env node
'use strict';
// `oh-executor replay` through the shipped path: the napi addon's `Executor.execute()` with
// JavaScript filesystem callbacks (node:fs/promises below), the path VS Code runs with its
// workspace.fs callbacks. Same interface as `oh-executor replay`: action JSON lines on stdin, one
// observation JSON line on stdout each, in order. Selected by `tests/conformance/run.sh --driver
// addon` (CONFORMANCE_DRIVER=addon). CONFORMANCE_ADDON_FS=native passes no callbacks instead:
// the addon's own LocalFs, what the headless CLI runs.
//
//   node tests/conformance/addon_replay.js --workspace WS --no-change-timeout N
const fsp = require('node:fs/promises');
const path = require('node:path');
const readline = require('node:readline');

const repo = path.resolve(__dirname, '../..');
const { Executor } = require(path.join(repo, 'npm/executor/index.js'));

const kind = (s) => (s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other');

/** The addon's FsCallbacks over node:fs/promises (symlinks followed, as the contract says). */
const nodeFs = {
  readFile: (p) => fsp.readFile(p),
  writeFile: (p, data) => fsp.writeFile(p, data),
  stat: async (p) => {
    const s = await fsp.stat(p);
    return { type: kind(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode };
  },
  readDirectory: async (p) => {
    const entries = await fsp.readdir(p, { withFileTypes: true });
    return Promise.all(
      entries.map(async (e) => {
        let type = kind(e);
        if (e.isSymbolicLink()) type = await fsp.stat(path.join(p, e.name)).then(kind, () => 'other');
        return { name: e.name, type };
      }),
    );
  },
  createDirectory: (p) => fsp.mkdir(p, { recursive: true }),
  delete: (p) => fsp.unlink(p),
  rename: (from, to) => fsp.rename(from, to),
  setMode: (p, mode) => fsp.chmod(p, mode),
};

function arg(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const workspace = arg('--workspace');
  if (!workspace) throw new Error('--workspace is required');
  const nct = arg('--no-change-timeout');
  const executor = new Executor(
    {
      // Never contacted: execute() runs actions without a server.
      serverUrl: 'http://127.0.0.1:9',
      conversationId: 'conformance',
      workspaceRoot: path.resolve(workspace),
      noChangeTimeoutSeconds: nct === undefined ? undefined : Number(nct),
      logLevel: 'warn',
    },
    process.env.CONFORMANCE_ADDON_FS === 'native' ? null : nodeFs,
    { onLog: (level, target, message) => process.stderr.write(`${level} ${target}: ${message}\n`) },
  );
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One action at a time, in order (the harness writes the next line only after the reply).
  for await (const line of rl) {
    if (!line.trim()) continue;
    const obs = await executor.execute(line);
    process.stdout.write(`${obs}\n`);
  }
  await executor.stop();
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`addon_replay: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  },
);
