'use strict';
// Benchmarks of the transport and the addon (not timed tests): prints a table with ratios
// against baselines measured in the same run.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const { addon, countingFs, tmpdir, PyServer } = require('../__test__/helpers');

const CLI = path.join(__dirname, '..', 'bin', 'openhands-vscode-executor.js');
const N_ECHO = Number(process.env.BENCH_ECHO_N || 300);
const N_READ = Number(process.env.BENCH_READ_N || 2000);
const OUTPUT_MB = Number(process.env.BENCH_OUTPUT_MB || 100);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const rssKiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rows = [];
const row = (name, value, unit, baselineName, baseline, note = '') =>
  rows.push({ name, value, unit, baselineName, baseline, ratio: baseline ? value / baseline : null, note });

async function benchRoundTrip(server) {
  const ws = tmpdir('oh-bench-');
  const child = spawn(process.execPath, [CLI, '--url', server.url, '--conversation', 'conv1', '--workspace', ws, '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await server.expect('registered', () => true, 30000);
    await sleep(300);
    const idle = rssKiB(child.pid);
    // Warm-up, then measured sequential round trips.
    server.cmd({ cmd: 'bench', n: 20, first_id: 1 });
    await server.expect('bench', () => true, 60000);
    server.cmd({ cmd: 'bench', n: N_ECHO, first_id: 1000 });
    const { rtts } = await server.expect('bench', () => true, 120000);
    row('echo hi round trip p50 (server->executor->server)', pct(rtts, 50), 'ms', 'target', 2.0);
    row('echo hi round trip p90', pct(rtts, 90), 'ms', 'target', 2.0);
    // `true` through a fresh bash: what a shell spawn costs on this machine.
    const spawnTimes = [];
    for (let i = 0; i < 30; i++) {
      const t0 = process.hrtime.bigint();
      await new Promise((r) => spawn('bash', ['-c', 'echo hi'], { stdio: 'ignore' }).on('exit', r));
      spawnTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    row('echo hi round trip p50 vs `bash -c "echo hi"` spawn', pct(rtts, 50), 'ms', 'bash -c spawn p50', pct(spawnTimes, 50));

    // RSS while a command prints OUTPUT_MB.
    const bare = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 3000)'], { stdio: 'ignore' });
    await sleep(500);
    const bareRss = rssKiB(bare.pid);
    bare.kill();
    row('executor RSS idle (headless CLI)', idle / 1024, 'MiB', 'bare node RSS', bareRss / 1024);
    let peak = rssKiB(child.pid);
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssKiB(child.pid));
      } catch {}
    }, 20);
    const t0 = Date.now();
    server.send({
      id: 99,
      action: 'run',
      args: { command: `yes 'a line of output for the benchmark' | head -c ${OUTPUT_MB * 1000 * 1000} | wc -c >/dev/null; yes 'a line of output for the benchmark' | head -c ${OUTPUT_MB * 1000 * 1000}; echo; echo done`, blocking: true },
      timeout: 600,
    });
    const r = await server.reply(99, 600000);
    const secs = (Date.now() - t0) / 1000;
    clearInterval(sampler);
    row(`executor RSS peak while a command prints ${OUTPUT_MB} MB`, peak / 1024, 'MiB', 'idle RSS', idle / 1024, `${secs.toFixed(1)} s, reply ${r.content.length} chars`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
  }
}

async function benchReads() {
  const { Executor } = addon();
  const ws = tmpdir('oh-bench-read-');
  const file = path.join(ws, 'small.txt');
  fs.writeFileSync(file, 'line\n'.repeat(20));
  const { fs: jsfs, calls } = countingFs();
  const ex = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'bench', workspaceRoot: ws }, jsfs);
  const action = JSON.stringify({ id: 1, action: 'read', args: { path: file } });
  try {
    for (let i = 0; i < 200; i++) await ex.execute(action);
    const before = { ...calls };
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < N_READ; i++) await ex.execute(action);
    const viaAddon = Number(process.hrtime.bigint() - t0) / 1e3 / N_READ;
    const cbPerRead = (Object.values(calls).reduce((a, b) => a + b, 0) - Object.values(before).reduce((a, b) => a + b, 0)) / N_READ;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < N_READ; i++) {
      await fsp.stat(file);
      await fsp.readFile(file);
    }
    const direct = Number(process.hrtime.bigint() - t0) / 1e3 / N_READ;
    t0 = process.hrtime.bigint();
    for (let i = 0; i < N_READ; i++) await fsp.readFile(file);
    const directRead = Number(process.hrtime.bigint() - t0) / 1e3 / N_READ;
    row('read action (100 B file) through JS fs callbacks', viaAddon, 'us', 'node:fs stat+readFile', direct, `${cbPerRead.toFixed(1)} callbacks/read`);
    row('  same, vs a bare node:fs readFile', viaAddon, 'us', 'node:fs readFile', directRead);
    row('  addon overhead per read action (vs readFile)', Math.max(0, viaAddon - directRead), 'us', '', null, 'TSFN call + promise + action work');
    // The headless CLI's path: no callbacks, Rust's LocalFs.
    const native = new Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'bench', workspaceRoot: ws }, null);
    try {
      for (let i = 0; i < 200; i++) await native.execute(action);
      t0 = process.hrtime.bigint();
      for (let i = 0; i < N_READ; i++) await native.execute(action);
      const viaLocalFs = Number(process.hrtime.bigint() - t0) / 1e3 / N_READ;
      row('read action (100 B file), fs null (LocalFs, the CLI)', viaLocalFs, 'us', 'through JS fs callbacks', viaAddon);
    } finally {
      await native.stop();
    }
  } finally {
    await ex.stop();
  }
}

function print() {
  const fmt = (v) => (v == null || Number.isNaN(v) ? '' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  const w = Math.max(...rows.map((r) => r.name.length));
  console.log(`\n${'benchmark'.padEnd(w)} | ${'value'.padStart(8)} unit | ${'baseline'.padEnd(24)} ${'value'.padStart(8)} | ratio  | note`);
  console.log('-'.repeat(w + 80));
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(w)} | ${fmt(r.value).padStart(8)} ${r.unit.padEnd(4)} | ${r.baselineName.padEnd(24)} ${fmt(r.baseline).padStart(8)} | ${r.ratio == null ? '      ' : `${r.ratio.toFixed(2)}x`.padEnd(6)} | ${r.note}`,
    );
  }
  const node = fs.readdirSync(path.join(__dirname, '..')).find((f) => f.endsWith('.node'));
  console.log(`\naddon: ${node} (${process.env.BENCH_PROFILE || 'profile as built by build.sh'}), node ${process.version}`);
}

(async () => {
  const server = await PyServer.start([]);
  if (!server) {
    console.error('bench: no python with python-socketio; set OH_TEST_PYTHON');
    process.exit(1);
  }
  try {
    await benchRoundTrip(server);
  } finally {
    server.close();
  }
  await benchReads();
  print();
  process.exit(0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
