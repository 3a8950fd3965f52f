import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentServerProcess, agentServerArgs, type CrashInfo } from './agentServerProcess';

// A real child process: the stand-in (__fixtures__/standin_agent_server.py, a tiny Python HTTP
// server) in place of the agent-server, which takes 20-40 s to start and cannot crash on request.
// The real agent-server is started by the extension in tests/vscode (suite/v1-managed.js).
const FIXTURES = path.join(__dirname, '__fixtures__');
const running: AgentServerProcess[] = [];
const dirs: string[] = [];

function server(extraArgs: string[] = [], extra: Partial<ConstructorParameters<typeof AgentServerProcess>[0]> = {}): AgentServerProcess {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-v1-state-'));
  dirs.push(stateDir);
  const s = new AgentServerProcess({
    python: 'python3',
    stateDir: path.join(stateDir, 'agent-server'),
    secretKey: 'persisted-secret',
    readyTimeoutSeconds: 20,
    env: { PYTHONPATH: FIXTURES },
    command: { module: 'standin_agent_server', extraArgs },
    ...extra,
  });
  running.push(s);
  return s;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie has ended
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function grandchildPid(s: AgentServerProcess): number | undefined {
  const line = s.logTail.find((l) => l.startsWith('grandchild '));
  return line ? Number(line.split(' ')[1]) : undefined;
}

/**
 * Another local process listening on 127.0.0.1: answers every request 200 (so `/ready` says
 * "ready") and records what it was sent.
 */
async function squatter(port = 0): Promise<{ port: number; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const srv = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve());
  });
  squatters.push(srv);
  return { port: (srv.address() as { port: number }).port, received, close: () => new Promise((r) => srv.close(() => r())) };
}
const squatters: http.Server[] = [];

/** What the V1 client does first with a connection: an API call with the key. */
async function clientCall(c: { baseUrl: string; sessionApiKey: string }): Promise<number> {
  return (await fetch(`${c.baseUrl}/api/conversations/search`, { headers: { 'X-Session-API-Key': c.sessionApiKey } })).status;
}

afterEach(async () => {
  for (const q of squatters.splice(0)) q.closeAllConnections(), q.close();
  for (const s of running.splice(0)) await s.stop(500);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('AgentServerProcess', () => {
  it('the real command line: the launcher, our V1 tools loaded, no port and no secret', () => {
    expect(agentServerArgs(undefined)).toEqual([
      '-m', 'openhands_vscode_runtime.v1.launch', '--secrets-fd', '3', '--port-fd', '4',
      '--import-modules', 'openhands_vscode_runtime.v1.register,openhands_vscode_runtime.v1.exit_with_parent',
    ]);
  });

  it('starts on 127.0.0.1 with a fresh key given over a pipe: in neither its arguments nor its environment; private folders', async () => {
    // A key inherited from a parent process (an OpenHands sandbox, a test) must not become a second accepted key.
    const inherited = { keys: process.env.OH_SESSION_API_KEYS_0, secret: process.env.OH_SECRET_KEY };
    process.env.OH_SESSION_API_KEYS_0 = 'inherited-from-a-parent';
    process.env.OH_SECRET_KEY = 'inherited-secret';
    try {
      const s = server();
      const c = await s.start();
      expect(s.state).toBe('running');
      expect(c.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(c.sessionApiKey.length).toBeGreaterThanOrEqual(43);
      const cmdline = fs.readFileSync(`/proc/${s.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      expect(cmdline.join(' ')).not.toContain(c.sessionApiKey);
      expect(cmdline).not.toContain(new URL(c.baseUrl).port);
      // What another process of this user (the agent's bash) reads of the server: no key.
      const environ = fs.readFileSync(`/proc/${s.pid}/environ`, 'utf8');
      expect(environ).not.toContain(c.sessionApiKey);
      expect(environ).not.toContain('persisted-secret');
      const env = Object.fromEntries(environ.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
      expect(env.SESSION_API_KEY).toBeUndefined();
      expect(env.OH_SECRET_KEY).toBeUndefined();
      expect(env.OH_SESSION_API_KEYS_0).toBeUndefined();
      expect(env.OH_VSCODE_SPAWN_EXECUTOR).toBe('0');
      expect(env.OH_VSCODE_V1_DISCOVERY_DIR).toBe(c.discoveryDir);
      expect(env.OH_ENABLE_VSCODE).toBe('false');
      expect(env.LITELLM_LOCAL_MODEL_COST_MAP).toBe('True');
      expect(env.OH_VSCODE_EXIT_ON_STDIN_EOF).toBe('1');
      expect(fs.readlinkSync(`/proc/${s.pid}/fd/0`)).toMatch(/^(pipe|socket):/);
      expect(fs.statSync(c.discoveryDir).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.dirname(c.discoveryDir)).mode & 0o777).toBe(0o700);
      expect(fs.readlinkSync(`/proc/${s.pid}/cwd`)).toBe(path.dirname(c.discoveryDir));
      // the key is what the server accepts (the stand-in checks it as the agent-server does)
      expect((await fetch(`${c.baseUrl}/api/conversations/search`)).status).toBe(401);
      expect((await fetch(`${c.baseUrl}/api/conversations/search`, { headers: { 'X-Session-API-Key': c.sessionApiKey } })).status).toBe(200);
      // a second start gets another key
      await s.stop();
      const again = await s.start();
      expect(again.sessionApiKey).not.toBe(c.sessionApiKey);
    } finally {
      for (const [k, v] of [['OH_SESSION_API_KEYS_0', inherited.keys], ['OH_SECRET_KEY', inherited.secret]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('a squatter that takes the port named in the command line before the server binds it gets nothing', { timeout: 30000 }, async () => {
    // The attack on a supervisor that picks a free port, lets it go and passes it as `--port N`:
    // N is readable in /proc/<pid>/cmdline by every local user, and the real agent-server binds it
    // only after 20-40 s of imports (here --serve-delay 2). The squatter watches the child's
    // command line, binds N first and answers /ready.
    const s = server(['--serve-delay', '2']);
    let taken: Awaited<ReturnType<typeof squatter>> | undefined;
    let scanning = true;
    const scan = (async () => {
      while (scanning && !taken) {
        const pid = s.pid;
        if (pid !== undefined) {
          const args = (() => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'); } catch { return []; } })();
          const i = args.indexOf('--port');
          if (i >= 0 && args[i + 1]) taken = await squatter(Number(args[i + 1])).catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const outcome = await s.start().then(async (c) => `started, the client call answered ${await clientCall(c)}`, (e: Error) => `refused: ${e.message}`);
    scanning = false;
    await scan;
    expect(taken?.received ?? []).toEqual([]);
    // The server we started is the one that answered, with the key it was given.
    expect(outcome).toBe('started, the client call answered 200');
  });

  it('a port the child reports but another process listens on is refused before anything is sent (Linux: /proc ownership)', { timeout: 30000 }, async () => {
    // --report-port: a stand-in for a race the launcher cannot lose (it binds before it reports),
    // so that the ownership check is shown on its own: the squatter holds the port reported.
    const q = await squatter();
    const s = server(['--report-port', String(q.port)]);
    const outcome = await s.start().then(async (c) => `started, the client call answered ${await clientCall(c)}`, (e: Error) => `refused: ${e.message}`);
    expect(q.received).toEqual([]);
    expect(outcome).toMatch(new RegExp(`^refused: the agent-server reported port ${q.port}, but port ${q.port} has a listening socket \\(inode \\d+\\) that process \\d+ does not hold: refused, nothing was sent there`));
    expect(s.state).toBe('stopped');
  });

  it('stop() ends the whole process group and reports no crash', async () => {
    const s = server(['--grandchild']);
    const crashes: CrashInfo[] = [];
    s.onCrash((c) => crashes.push(c));
    await s.start();
    await until('the grandchild line', () => grandchildPid(s) !== undefined);
    const pid = s.pid!;
    const grandchild = grandchildPid(s)!;
    expect(alive(grandchild)).toBe(true);
    await s.stop();
    expect(s.state).toBe('stopped');
    await until('the server to end', () => !alive(pid));
    await until('the grandchild to end', () => !alive(grandchild));
    expect(crashes).toEqual([]);
  });

  it('kill() (what dispose does) ends the process group at once', async () => {
    const s = server(['--grandchild']);
    await s.start();
    await until('the grandchild line', () => grandchildPid(s) !== undefined);
    const grandchild = grandchildPid(s)!;
    const pid = s.pid!;
    s.kill();
    await until('the server to end', () => !alive(pid));
    await until('the grandchild to end', () => !alive(grandchild));
  });

  it('the server ends with the extension host: its stdin closing (the host gone, even by SIGKILL) ends its group', async () => {
    const s = server(['--grandchild']);
    await s.start();
    await until('the grandchild line', () => grandchildPid(s) !== undefined);
    const [pid, grandchild] = [s.pid!, grandchildPid(s)!];
    // What the OS does to the pipe when this process dies.
    (s as unknown as { child: { stdin: { destroy(): void } } }).child.stdin.destroy();
    await until('the server to end', () => !alive(pid), 20000);
    await until('the grandchild to end', () => !alive(grandchild), 20000);
  });

  it('a crash fires onCrash with the log tail, ends what it started, and start() brings it back', async () => {
    const s = server(['--grandchild']);
    const crashes: CrashInfo[] = [];
    s.onCrash((c) => crashes.push(c));
    await s.start();
    await until('the grandchild line', () => grandchildPid(s) !== undefined);
    const grandchild = grandchildPid(s)!;
    process.kill(s.pid!, 'SIGKILL'); // the server alone, not its group: as an OOM kill would
    await until('the crash report', () => crashes.length === 1);
    expect(s.state).toBe('crashed');
    expect(crashes[0].signal).toBe('SIGKILL');
    expect(crashes[0].logTail.join('\n')).toContain('stand-in listening on 127.0.0.1');
    await until('the orphaned grandchild to end', () => !alive(grandchild));
    const c = await s.start();
    expect(s.state).toBe('running');
    expect((await fetch(`${c.baseUrl}/ready`)).status).toBe(200);
  });

  it('a server that exits during start-up rejects start() with its exit code and output, not a crash', async () => {
    const s = server(['--exit-at-start', '3']);
    const crashes: CrashInfo[] = [];
    s.onCrash((c) => crashes.push(c));
    await expect(s.start()).rejects.toThrow(/exit code 3[\s\S]*failing at start as asked/);
    expect(s.state).toBe('crashed');
    expect(crashes).toEqual([]);
  });

  it('a server that never gets ready: start() gives up after the timeout and ends it', { timeout: 20000 }, async () => {
    const s = server(['--never-ready', '--grandchild'], { readyTimeoutSeconds: 2 });
    const crashes: CrashInfo[] = [];
    s.onCrash((c) => crashes.push(c));
    let pid: number | undefined;
    const watching = setInterval(() => (pid = pid ?? s.pid), 20);
    await expect(s.start()).rejects.toThrow(/did not answer http:\/\/127\.0\.0\.1:\d+\/ready within 2 s/);
    clearInterval(watching);
    expect(s.state).toBe('stopped');
    await until('the server to end', () => pid !== undefined && !alive(pid));
    const grandchild = grandchildPid(s);
    expect(grandchild).toBeDefined();
    await until('the grandchild to end', () => !alive(grandchild!));
    expect(crashes).toEqual([]);
  });

  it('a missing interpreter rejects start() with the reason', async () => {
    const s = server([], { python: '/nonexistent/python3' });
    await expect(s.start()).rejects.toThrow(/ENOENT|cannot start/);
  });
});
