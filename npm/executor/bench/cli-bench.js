'use strict';
// Benchmark (not a test): the native headless executor (crates/oh-headless) beside the Node CLI,
// in the same run, against the python-socketio test server:
//   connect    process start -> registered (median of 5 starts)
//   echo hi    delegated `echo hi` round trip (median of 50)
//   idle RSS   the executor process after registering and one command (bash not counted)
//   peak RSS   VmHWM after a command printing 100 MB
// Usage: node bench/cli-bench.js NATIVE_BINARY [NODE_CLI_JS]
//   (default NODE_CLI_JS: this package's bin/, with whatever addon build sits in this folder;
//   tests/dist/bench.sh passes release builds of both: the wheel's binary and the npm package's)
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { tmpdir, PyServer, runAction } = require('../__test__/helpers');

const NATIVE = process.argv[2];
const NODE_CLI = process.argv[3] || path.join(__dirname, '..', 'bin', 'openhands-vscode-executor.js');

function status(pid, field) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(label, command) {
  const server = await PyServer.start(['--no-change-timeout', '30']);
  if (!server) throw new Error('no python with python-socketio (set OH_VENV)');
  try {
    const connects = [];
    let child;
    for (let i = 0; i < 5; i++) {
      if (child) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        await server.expect('disconnected', () => true, 10000).catch(() => {});
      }
      const t0 = process.hrtime.bigint();
      child = spawn(command[0], [...command.slice(1), '--url', server.url, '--conversation', 'conv1', '--workspace', tmpdir()], { stdio: 'ignore' });
      await server.expect('registered', () => true, 20000);
      connects.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    let id = 1;
    server.send(runAction(id, 'true'));
    await server.reply(id++);
    const rtts = [];
    for (let i = 0; i < 50; i++) {
      const t0 = process.hrtime.bigint();
      server.send(runAction(id, 'echo hi'));
      const r = await server.reply(id++);
      if (r.content.trim() !== 'hi') throw new Error(`unexpected reply ${JSON.stringify(r)}`);
      rtts.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const idle = status(child.pid, 'VmRSS');
    server.send(runAction(id, 'yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijkl | head -c 100000000'));
    await server.reply(id++, 120000);
    const peak = status(child.pid, 'VmHWM');
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    return { label, connect: median(connects), rtt: median(rtts), idle, peak };
  } finally {
    server.close();
  }
}

(async () => {
  if (!NATIVE) throw new Error('usage: node bench/cli-bench.js NATIVE_BINARY');
  const node = await measure('node CLI', [process.execPath, NODE_CLI]);
  const native = await measure('native', [NATIVE]);
  const row = (r) => `| ${r.label.padEnd(9)} | ${r.connect.toFixed(0).padStart(6)} ms | ${r.rtt.toFixed(2).padStart(6)} ms | ${r.idle.toFixed(1).padStart(6)} MiB | ${r.peak.toFixed(1).padStart(6)} MiB |`;
  console.log('| executor  | connect   | echo hi   | idle RSS   | peak RSS (100 MB out) |');
  console.log('|---|---|---|---|---|');
  console.log(row(node));
  console.log(row(native));
  console.log(`| native/node | ${(native.connect / node.connect).toFixed(2)} | ${(native.rtt / node.rtt).toFixed(2)} | ${(native.idle / node.idle).toFixed(2)} | ${(native.peak / node.peak).toFixed(2)} |`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
