import * as fs from 'fs';
import * as path from 'path';
import { DiscoveryError, readChannel, type ExecutorChannel } from './executorDiscovery';
import { remoteChannel, remoteChannels, type RemoteFiles } from './remote';

/** What the pool needs of one conversation's executor (an `ExecutorService` serving one channel). */
export interface PooledExecutor {
  readonly snapshot: { state: string; message?: string; conversationId?: string; workspaceRoot?: string };
  start(): Promise<void>;
  stop(reason?: string): Promise<void>;
  execute(actionJson: string): Promise<string>;
  onDidChange(listener: () => void): { dispose(): void };
  dispose(): void;
}

/** Where a conversation's executor may work: the window's folder or a worktree of its repository. */
/** `folder`: for a worktree, the window's folder whose repository it belongs to. */
export type WorkspaceVerdict = { root: string; worktree?: boolean; folder?: string } | { refused: string };

export interface ExecutorPoolDeps {
  /** The folder the agent-server's V1 tools write their discovery files to (undefined: none yet). */
  discoveryDir: () => string | undefined;
  /**
   * An agent-server on another machine (remote.ts): its discovery files are read through its file
   * API instead of the folder (no watch, the poll only). Undefined: the folder.
   */
  remote?: () => RemoteFiles | undefined;
  /** Whether the workspace a discovery file names is this window's (or a worktree of its repository). */
  checkWorkspace: (workspace: string) => Promise<WorkspaceVerdict>;
  /**
   * A new executor for conversation `key` (its channel id, `v1-<hex>`), working in `root`;
   * `channel()` re-reads the discovery file when it connects.
   */
  create: (key: string, root: string, channel: () => Promise<ExecutorChannel>) => PooledExecutor;
  /** How many executors may run at once (`openhands.v1.maxParallelConversations`). */
  limit: () => number;
  log: { info(m: string): void; warn(m: string): void; error(m: string): void };
  /** A conversation this window will not serve, said once per discovery file (a notification). */
  refused?: (key: string, reason: string) => void;
  /** Something changed (an executor started, stopped, changed state). */
  changed?: () => void;
  /** Whether process `pid` (the one that wrote a discovery file) is alive; default: `kill(pid, 0)`. */
  alive?: (pid: number) => boolean;
  /** The backstop poll, for a watch event that never comes (default 2 s). */
  pollMs?: number;
}

/** A discovery file's name: `v1-<conversation UUID, hex>.json`. */
const DISCOVERY_FILE = /^(v1-[0-9a-f]{32})\.json$/;
/** States in which an executor holds (or is about to hold) a shell: what the limit counts. */
const RUNNING = new Set(['starting', 'connecting', 'connected', 'executing']);

interface Entry {
  executor: PooledExecutor;
  /** The discovery file's identity (inode, mtime) when the executor was started for it. */
  identity: string;
  subscription: { dispose(): void };
}

/**
 * Every V1 conversation of this window's agent-server gets its own executor, whoever created it
 * (the tab, a script, Agent Canvas): the pool watches the discovery folder (`fs.watch`, and a slow
 * poll as a backstop) and starts one executor per discovery file whose conversation's tools wait,
 * each with its own shell, environment, undo history and checkpoints. An executor ends when its
 * discovery file goes (the V1 tools remove it when the conversation is closed or deleted). A file
 * is taken only when `readChannel` accepts it, the process that wrote it is alive and it names
 * this window's workspace (`checkWorkspace`); anything else is refused once per file (by identity:
 * a rewritten file is looked at again). At most `limit()` executors run at once; a conversation
 * over the limit is refused, and taken when a slot frees while its file is still there.
 */
export class ExecutorPool {
  private readonly entries = new Map<string, Entry>();
  /** Files refused (or released by the tab), by key: the identity they had. */
  private readonly passed = new Map<string, string>();
  private watcher: fs.FSWatcher | undefined;
  private watchedDir: string | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private scanning: Promise<void> | undefined;
  private again = false;
  private active = false;
  /** A remote agent-server's discovery files at the last look, by key. */
  private remoteSeen = new Map<string, { channel?: ExecutorChannel; identity: string; refused?: string }>();

  constructor(private readonly deps: ExecutorPoolDeps) {}

  /** The executor of conversation `key` (`v1-<hex>`), if one was started for it. */
  get(key: string): PooledExecutor | undefined {
    return this.entries.get(key)?.executor;
  }

  get keys(): string[] {
    return [...this.entries.keys()];
  }

  /** How many executors run (or start) now. */
  get running(): number {
    let n = 0;
    for (const e of this.entries.values()) if (RUNNING.has(e.executor.snapshot.state)) n++;
    return n;
  }

  get watching(): boolean {
    return this.active;
  }

  /** Starts watching (idempotent) and restarts executors that stopped (trust granted, a retry). */
  async start(): Promise<void> {
    if (!this.active) this.deps.log.info('V1 executor pool: watching for conversations');
    this.active = true;
    if (!this.timer) {
      this.timer = setInterval(() => void this.scan(), this.deps.pollMs ?? 2000);
      this.timer.unref?.();
    }
    for (const e of this.entries.values()) if (!RUNNING.has(e.executor.snapshot.state)) void e.executor.start();
    await this.scan();
  }

  /** Stops every executor and the watch. */
  async stop(reason = 'stopped'): Promise<void> {
    if (this.active) this.deps.log.info(`V1 executor pool: ${reason}`);
    this.active = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.unwatch();
    const all = [...this.entries.entries()];
    this.entries.clear();
    this.passed.clear();
    await Promise.all(all.map(([key, e]) => this.end(key, e, reason)));
    this.deps.changed?.();
  }

  /**
   * Stops conversation `key`'s executor and leaves its discovery file alone until it changes or
   * goes (the tab deleted the conversation: its file goes once the agent-server closed it).
   */
  async release(key: string): Promise<void> {
    const e = this.entries.get(key);
    this.entries.delete(key);
    this.passed.set(key, e?.identity ?? this.identity(key) ?? '');
    if (e) await this.end(key, e, `stopped: conversation ${key} released`);
    this.deps.changed?.();
  }

  /** Serves `key` again after a `release` (the tab shows it again) and looks for its file now. */
  async want(key: string): Promise<void> {
    this.passed.delete(key);
    await this.scan();
  }

  /** One look at the folder; a look asked for while one runs is made right after it. */
  scan(): Promise<void> {
    if (!this.active) return Promise.resolve();
    if (this.scanning) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.again = false;
        try {
          await this.scanOnce();
        } catch (e) {
          this.deps.log.warn(`V1 executor pool: ${(e as Error).message}`);
        }
      } while (this.again && this.active);
    })().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    const remote = this.deps.remote?.();
    if (remote) return this.scanRemote(remote);
    this.remoteSeen.clear();
    const dir = this.deps.discoveryDir();
    if (dir !== this.watchedDir) this.watch(dir);
    const present = new Set<string>();
    if (dir) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(dir);
      } catch {
        // not created yet: the V1 tools create it with their first file
      }
      for (const name of names) {
        const m = DISCOVERY_FILE.exec(name);
        if (m) present.add(m[1]);
      }
    }
    // A file that went: its conversation was closed or deleted.
    for (const [key, e] of [...this.entries]) {
      if (present.has(key)) continue;
      this.entries.delete(key);
      await this.end(key, e, `stopped: conversation ${key} closed`);
      this.deps.changed?.();
    }
    for (const key of [...this.passed.keys()]) if (!present.has(key)) this.passed.delete(key);
    for (const key of present) {
      if (!this.active) return;
      if (this.entries.has(key)) continue;
      const identity = this.identity(key);
      if (identity === undefined || this.passed.get(key) === identity) continue;
      await this.consider(dir!, key, identity);
    }
  }

  /** Starts an executor for the discovery file of `key`, or refuses it once (by identity). */
  private async consider(dir: string, key: string, identity: string): Promise<void> {
    const file = path.join(dir, `${key}.json`);
    const refuse = (reason: string, quiet = false) => {
      this.passed.set(key, identity);
      if (quiet) {
        this.deps.log.info(`V1 executor pool: ${key} not served: ${reason}`);
      } else {
        this.deps.log.warn(`V1 executor pool: ${key} refused: ${reason}`);
        this.deps.refused?.(key, reason);
      }
    };
    let channel: ExecutorChannel;
    try {
      channel = await readChannel(file, key.slice(3));
    } catch (e) {
      return refuse(`its discovery file was not accepted: ${(e as Error).message}`);
    }
    const alive = this.deps.alive ?? processAlive;
    if (channel.pid !== undefined && !alive(channel.pid)) return refuse(`the process that wrote it (${channel.pid}) is gone`, true);
    return this.take(key, identity, channel, refuse, () => readChannel(file, key.slice(3)));
  }

  /**
   * A remote agent-server: its conversations' discovery files through its file API (remote.ts);
   * the rest as for the folder (a file that went ends its executor, one refused once by identity).
   */
  private async scanRemote(src: RemoteFiles): Promise<void> {
    if (this.watchedDir !== undefined) this.unwatch();
    const found = await remoteChannels(src);
    const seen = [...found.keys()].sort().join(',');
    if (seen !== [...this.remoteSeen.keys()].sort().join(',')) this.deps.log.info(`V1 executor pool: ${src.agentServerUrl} has discovery files for ${found.size} conversation(s)${found.size ? `: ${seen}` : ''}`);
    this.remoteSeen = found;
    for (const [key, e] of [...this.entries]) {
      if (found.has(key)) continue;
      this.entries.delete(key);
      await this.end(key, e, `stopped: conversation ${key} closed`);
      this.deps.changed?.();
    }
    for (const key of [...this.passed.keys()]) if (!found.has(key)) this.passed.delete(key);
    for (const [key, f] of found) {
      if (!this.active) return;
      if (this.entries.has(key) || this.passed.get(key) === f.identity) continue;
      const refuse = (reason: string) => {
        this.passed.set(key, f.identity);
        this.deps.log.warn(`V1 executor pool: ${key} refused: ${reason}`);
        this.deps.refused?.(key, reason);
      };
      if (!f.channel) {
        refuse(`its discovery file on ${src.agentServerUrl} was not accepted: ${f.refused}`);
        continue;
      }
      const file = `${(await src.discoveryDir()).replace(/\/+$/, '')}/${key}.json`;
      await this.take(key, f.identity, f.channel, refuse, async () => {
        const info = await src.readJson(file);
        if (info === undefined) throw new DiscoveryError(`the discovery file of ${key} is gone from ${src.agentServerUrl}`);
        return remoteChannel(info, key.slice(3), src.agentServerUrl);
      });
    }
  }

  /** Starts an executor for `channel` when a slot is free and the workspace is this window's. */
  private async take(key: string, identity: string, channel: ExecutorChannel, refuse: (reason: string) => void, reread: () => Promise<ExecutorChannel>): Promise<void> {
    const limit = Math.max(1, Math.floor(this.deps.limit()));
    if (this.running >= limit) {
      // Not remembered: taken at a later scan once a slot is free, if its tools still wait.
      if (this.passed.get(key) !== `limit:${identity}`) {
        this.passed.set(key, `limit:${identity}`);
        const reason = `${limit} conversation(s) already run at once in this window (openhands.v1.maxParallelConversations)`;
        this.deps.log.warn(`V1 executor pool: ${key} waits: ${reason}`);
        this.deps.refused?.(key, reason);
      }
      return;
    }
    const verdict = await this.deps.checkWorkspace(channel.workspace);
    if ('refused' in verdict) return refuse(verdict.refused);
    if (!this.active || this.entries.has(key) || this.identity(key) !== identity) return;
    const executor = this.deps.create(key, verdict.root, reread);
    const entry: Entry = { executor, identity, subscription: executor.onDidChange(() => this.deps.changed?.()) };
    this.entries.set(key, entry);
    this.passed.delete(key);
    this.deps.log.info(`V1 executor pool: serving ${key} in ${verdict.root}${verdict.worktree ? ' (a worktree of this window\'s repository)' : ''}`);
    this.deps.changed?.();
    void executor.start();
  }

  private identity(key: string): string | undefined {
    if (this.deps.remote?.()) return this.remoteSeen.get(key)?.identity;
    const dir = this.deps.discoveryDir();
    if (!dir) return undefined;
    try {
      const st = fs.lstatSync(path.join(dir, `${key}.json`));
      return `${st.ino}:${st.mtimeMs}`;
    } catch {
      return undefined;
    }
  }

  private async end(key: string, e: Entry, reason: string): Promise<void> {
    e.subscription.dispose();
    try {
      await e.executor.stop(reason);
    } catch (err) {
      this.deps.log.warn(`V1 executor pool: stopping ${key}: ${(err as Error).message}`);
    }
    e.executor.dispose();
  }

  private watch(dir: string | undefined): void {
    this.unwatch();
    this.watchedDir = dir;
    if (!dir) return;
    try {
      this.watcher = fs.watch(dir, () => void this.scan());
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // the folder does not exist yet: the poll looks again and watches it then
      this.watchedDir = undefined;
    }
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedDir = undefined;
  }

  dispose(): void {
    void this.stop('disposed');
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
