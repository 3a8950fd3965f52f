import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecutorPool, type PooledExecutor, type WorkspaceVerdict } from './executorPool';
import { PoolTabExecutor } from './poolTabExecutor';
import { checkWorkspace } from './workspaceCheck';

/**
 * A stand-in for one conversation's executor (an `ExecutorService` over the addon, which needs
 * the agent-server's channel): it records what the pool asks of it. The discovery files, their
 * checks and the git worktree checks are real.
 */
class StandInExecutor implements PooledExecutor {
  snapshot: { state: string; message?: string; conversationId?: string; workspaceRoot?: string } = { state: 'stopped' };
  stops = 0;
  disposed = false;
  private readonly listeners = new Set<() => void>();
  constructor(readonly key: string, readonly root: string) {}
  async start() {
    this.snapshot = { state: 'connected', conversationId: this.key, workspaceRoot: this.root };
    for (const l of this.listeners) l();
  }
  async stop() {
    this.stops++;
    this.snapshot = { state: 'stopped' };
  }
  async execute(json: string) {
    return `${this.key}:${json}`;
  }
  onDidChange(l: () => void) {
    this.listeners.add(l);
    return { dispose: () => this.listeners.delete(l) };
  }
  dispose() {
    this.disposed = true;
  }
}

const hex = (n: number) => n.toString(16).padStart(32, '0');
const key = (n: number) => `v1-${hex(n)}`;
const uuid = (n: number) => hex(n).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

let tmp: string;
let dir: string;
let ws: string;

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-pool-'));
  dir = path.join(tmp, 'discovery');
  ws = path.join(tmp, 'ws');
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.mkdirSync(ws);
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** What the V1 tools write for a conversation waiting for its executor. */
function writeDiscovery(n: number, workspace = ws, extra: Record<string, unknown> = {}, mode = 0o600): string {
  const file = path.join(dir, `${key(n)}.json`);
  const tmpFile = path.join(dir, `.discovery-${n}.tmp`);
  fs.writeFileSync(tmpFile, JSON.stringify({ url: 'http://127.0.0.1:45678', namespace: '/oh-executor', conversation_id: key(n), session_api_key: `k${n}`, workspace, pid: process.pid, ...extra }), { mode });
  fs.chmodSync(tmpFile, mode);
  fs.renameSync(tmpFile, file);
  return file;
}

function setup(opts: { limit?: number; check?: (w: string) => Promise<WorkspaceVerdict> } = {}) {
  const created: StandInExecutor[] = [];
  const refused: { key: string; reason: string }[] = [];
  const logs: string[] = [];
  const pool = new ExecutorPool({
    discoveryDir: () => dir,
    checkWorkspace: opts.check ?? ((w) => checkWorkspace(w, [ws])),
    create: (k, root) => {
      const e = new StandInExecutor(k, root);
      created.push(e);
      return e;
    },
    limit: () => opts.limit ?? 4,
    log: { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) },
    refused: (k, reason) => refused.push({ key: k, reason }),
    pollMs: 50,
  });
  return { pool, created, refused, logs };
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('ExecutorPool', () => {
  it('gives every waiting conversation its own executor, whoever created it, and ends it when its file goes', async () => {
    const { pool, created } = setup();
    writeDiscovery(1);
    await pool.start();
    expect(pool.keys).toEqual([key(1)]);
    // A conversation created later (a script, Agent Canvas) is found by the watch.
    const second = writeDiscovery(2);
    await until('the second executor', () => pool.keys.length === 2);
    expect(created.map((e) => e.key).sort()).toEqual([key(1), key(2)]);
    expect(created[0]).not.toBe(created[1]);
    expect(pool.running).toBe(2);
    // Closed or deleted: the V1 tools remove its file; its executor stops, the other runs on.
    fs.unlinkSync(second);
    await until('the second executor to stop', () => pool.keys.length === 1);
    const b = created.find((e) => e.key === key(2))!;
    expect([b.stops, b.disposed]).toEqual([1, true]);
    expect(created.find((e) => e.key === key(1))!.snapshot.state).toBe('connected');
    await pool.stop();
    expect(created.every((e) => e.disposed)).toBe(true);
  });

  it('runs at most `limit` executors at once, says so for the one over it, and serves it once a slot frees', async () => {
    const { pool, created, refused } = setup({ limit: 2 });
    const first = writeDiscovery(1);
    writeDiscovery(2);
    writeDiscovery(3);
    await pool.start();
    expect(pool.running).toBe(2);
    expect(refused).toHaveLength(1);
    expect(refused[0].reason).toMatch(/2 conversation\(s\) already run at once .*maxParallelConversations/);
    await pool.scan();
    expect(refused).toHaveLength(1); // said once, not at every look
    fs.unlinkSync(first);
    await until('the waiting conversation to be served', () => pool.keys.length === 2 && !pool.keys.includes(key(1)));
    expect(created).toHaveLength(3);
    await pool.stop();
  });

  it('refuses a conversation that works outside this window, once per file, and serves none of it', async () => {
    const { pool, created, refused } = setup();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-other-'));
    try {
      writeDiscovery(1, elsewhere);
      await pool.start();
      await pool.scan();
      expect(created).toHaveLength(0);
      expect(refused).toHaveLength(1);
      expect(refused[0].reason).toMatch(/neither a folder of this window nor a git worktree/);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
      await pool.stop();
    }
  });

  it('takes a discovery file only when its checks pass (mode, a living writer)', async () => {
    const { pool, created, refused, logs } = setup();
    writeDiscovery(1, ws, {}, 0o644);
    writeDiscovery(2, ws, { pid: 2 ** 22 + 12345 });
    await pool.start();
    expect(created).toHaveLength(0);
    expect(refused.map((r) => r.key)).toEqual([key(1)]);
    expect(refused[0].reason).toMatch(/readable by others/);
    expect(logs.some((l) => l.includes(key(2)) && /is gone/.test(l))).toBe(true);
    await pool.stop();
  });

  it('leaves a released conversation alone until its file is written again', async () => {
    const { pool, created } = setup();
    writeDiscovery(1);
    await pool.start();
    await pool.release(key(1));
    await pool.scan();
    expect(pool.keys).toEqual([]);
    await new Promise((r) => setTimeout(r, 20)); // a new mtime
    writeDiscovery(1); // the agent-server restarted and resumed it: a new file
    await until('the conversation served again', () => pool.keys.length === 1);
    expect(created).toHaveLength(2);
    await pool.stop();
  });
});

describe('checkWorkspace', () => {
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });

  it("accepts the window's folders and a git worktree of its repository, nothing else", async () => {
    git(ws, 'init', '-q');
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a');
    git(ws, 'add', '.');
    git(ws, 'commit', '-qm', 'a');
    const wt = path.join(tmp, 'conversation-worktrees', uuid(7), 'ws');
    git(ws, 'worktree', 'add', '-q', '-b', `openhands/${uuid(7)}`, wt);
    expect(await checkWorkspace(ws, [ws])).toEqual({ root: ws });
    expect(await checkWorkspace(wt, [ws])).toEqual({ root: fs.realpathSync(wt), worktree: true, folder: ws });
    // Another repository with a worktree at a path spelt like the agent-server's: refused.
    const other = path.join(tmp, 'other');
    fs.mkdirSync(other);
    git(other, 'init', '-q');
    fs.writeFileSync(path.join(other, 'b.txt'), 'b');
    git(other, 'add', '.');
    git(other, 'commit', '-qm', 'b');
    const foreign = path.join(tmp, 'conversation-worktrees', uuid(8), 'ws');
    git(other, 'worktree', 'add', '-q', '-b', `openhands/${uuid(8)}`, foreign);
    expect(await checkWorkspace(foreign, [ws])).toHaveProperty('refused');
    // A plain folder inside the repository is not a worktree of it.
    fs.mkdirSync(path.join(ws, 'sub'));
    expect(await checkWorkspace(path.join(ws, 'sub'), [ws])).toHaveProperty('refused');
    expect(await checkWorkspace('relative/path', [ws])).toHaveProperty('refused');
    expect(await checkWorkspace(path.join(tmp, 'missing'), [ws])).toHaveProperty('refused');
  });
});

describe('PoolTabExecutor', () => {
  it("switching the tab's conversation stops nothing; deleting the one shown stops only it", async () => {
    const { pool, created } = setup();
    let shown: string | undefined;
    const tab = new PoolTabExecutor({ pool, gate: async () => 'granted', shown: () => shown });
    writeDiscovery(1);
    writeDiscovery(2);
    shown = uuid(1);
    await tab.retarget(uuid(1));
    expect(tab.snapshot.conversationId).toBe(uuid(1));
    expect(await tab.execute('x')).toBe(`${key(1)}:x`);
    shown = uuid(2);
    await tab.retarget(uuid(2));
    expect(created.map((e) => e.snapshot.state)).toEqual(['connected', 'connected']);
    expect(await tab.execute('y')).toBe(`${key(2)}:y`);
    await tab.release(uuid(2));
    expect(tab.snapshot.state).toBe('stopped');
    expect(created.find((e) => e.key === key(1))!.snapshot.state).toBe('connected');
    tab.dispose();
  });

  it('an untrusted or refused workspace starts nothing', async () => {
    const { pool, created } = setup();
    writeDiscovery(1);
    let answer: (r: 'untrusted') => void = () => undefined;
    let asked = 0;
    const tab = new PoolTabExecutor({ pool, gate: () => (asked++ ? Promise.resolve('untrusted' as const) : new Promise((r) => { answer = r; })), shown: () => uuid(1) });
    const starting = tab.start();
    // While the user is asked, the tab says so (the host suites wait for this to click Allow).
    expect(tab.snapshot).toMatchObject({ state: 'starting', message: expect.stringMatching(/permission to execute/) });
    answer('untrusted');
    await starting;
    expect(tab.snapshot.state).toBe('blocked');
    await expect(tab.retarget(uuid(1))).rejects.toThrow(/not trusted/);
    expect([pool.watching, created.length]).toEqual([false, 0]);
  });

  it('a reconnect asked while the first look is under way (a slow remote agent-server; Set Session API Key, a settings change) leaves the pool watching', async () => {
    let release: () => void = () => undefined;
    let checks = 0;
    const { pool } = setup({ check: async (w) => {
      // The first look waits here until the reconnect was asked.
      if (checks++ === 0) await new Promise<void>((r) => { release = r; });
      return { root: w };
    } });
    writeDiscovery(1);
    const tab = new PoolTabExecutor({ pool, gate: async () => 'granted', shown: () => undefined });
    const starting = tab.start();
    await until('the first look to reach the workspace check', () => checks === 1);
    const reconnecting = tab.reconnect();
    release();
    await Promise.all([starting, reconnecting]);
    expect(pool.watching).toBe(true);
    await tab.stop();
  });
});
