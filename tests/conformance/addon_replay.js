#!/usr/bin/env node
'use strict';
// `oh-executor replay` through the shipped path: the napi addon's `Executor.execute()` with the
// JavaScript filesystem callbacks of the headless executor (node:fs/promises), which is what the
// headless executor and VS Code run (VS Code passes workspace.fs instead). Same interface as
// `oh-executor replay`: action JSON lines on stdin, one observation JSON line on stdout each, in
// order. Selected by `tests/conformance/run.sh --driver addon` (CONFORMANCE_DRIVER=addon).
//
//   node tests/conformance/addon_replay.js --workspace WS --no-change-timeout N
const path = require('node:path');
const readline = require('node:readline');

const repo = path.resolve(__dirname, '../..');
const { Executor } = require(path.join(repo, 'npm/executor/index.js'));
const { nodeFs } = require(path.join(repo, 'npm/executor/bin/openhands-vscode-executor.js'));

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
    nodeFs,
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
