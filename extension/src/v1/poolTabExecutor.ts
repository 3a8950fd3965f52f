import type { ConsentResult } from '../consent';
import type { ExecutorSnapshot, TabExecutor } from '../executorService';
import type { Fix } from '../userErrors';
import { channelId } from './executorDiscovery';
import type { ExecutorPool, PooledExecutor } from './executorPool';

/** How long the tab waits for a conversation's tools to ask for an executor. */
const SERVE_WAIT_MS = 10 * 60 * 1000;

export interface PoolTabExecutorDeps {
  pool: ExecutorPool;
  /** Trust and consent for this window's agent-server, asked once per workspace. */
  gate: () => Promise<ConsentResult>;
  /** The conversation the tab shows (or showed last) when none was asked for yet. */
  shown: () => string | undefined;
  /**
   * The executor the user attached by hand (`conversation.mode` `attach` with an id: docs/v1.md,
   * "Attaching the executor by hand"): while `active()`, everything goes to it, as before the pool.
   */
  byHand?: { active: () => boolean; executor: TabExecutor };
}

type Listener = (s: ExecutorSnapshot) => void;

/**
 * The executor as the V1 tab sees it when every conversation has its own (`ExecutorPool`): the
 * snapshot, checkpoints and release of the conversation shown, served by its pool executor. The
 * tab switching to another conversation stops nothing: `retarget` only waits until the pool serves
 * the one shown. `start`/`stop`/`reconnect` (the commands, trust granted, a retry) act on the pool.
 */
export class PoolTabExecutor implements TabExecutor {
  private target: string | undefined;
  /** The conversation shown was released (deleted) by the tab. */
  private released = false;
  private blocked: { message: string; fixes: Fix[] } | undefined;
  /** The trust and consent check in progress (shared by concurrent starts). */
  private gating: Promise<void> | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly since = Date.now();

  constructor(private readonly deps: PoolTabExecutorDeps) {}

  private get hand(): TabExecutor | undefined {
    return this.deps.byHand?.active() ? this.deps.byHand.executor : undefined;
  }

  private get key(): string | undefined {
    const id = this.target ?? this.deps.shown();
    return id ? channelId(id) : undefined;
  }

  private get shownExecutor(): PooledExecutor | undefined {
    const key = this.key;
    return key ? this.deps.pool.get(key) : undefined;
  }

  get snapshot(): ExecutorSnapshot {
    if (this.hand) return this.hand.snapshot;
    const id = this.target ?? this.deps.shown();
    const own = this.shownExecutor?.snapshot as ExecutorSnapshot | undefined;
    if (own) return { ...own, conversationId: id };
    const base = { serverUrl: '', conversationId: id, since: this.since };
    if (this.gating) return { ...base, state: 'starting', message: 'Checking workspace trust and your permission to execute here…' };
    if (this.blocked) return { ...base, state: 'blocked', ...this.blocked };
    if (!this.deps.pool.watching) return { ...base, state: 'stopped' };
    if (!id) return { ...base, state: 'stopped', message: 'No conversation yet: type a task in the OpenHands tab.' };
    if (this.released) return { ...base, state: 'stopped' };
    return { ...base, state: 'connecting', message: "Waiting for the conversation's tools to start…" };
  }

  get running(): boolean {
    if (this.hand) return this.hand.running;
    return this.deps.pool.watching;
  }

  onDidChange = (listener: Listener): { dispose(): void } => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  /** Something in the pool changed: the tab reads the snapshot again. */
  changed(): void {
    const s = this.snapshot;
    for (const l of [...this.listeners]) l(s);
  }

  /** Trust and consent, then the pool watches the discovery folder. */
  start(): Promise<void> {
    if (this.hand) return this.hand.start();
    if (!this.gating) {
      this.gating = this.gateThenWatch().finally(() => {
        this.gating = undefined;
        this.changed();
      });
      this.changed();
    }
    return this.gating;
  }

  private async gateThenWatch(): Promise<void> {
    const consent = await this.deps.gate();
    if (consent === 'untrusted') {
      this.blocked = { message: 'This workspace is not trusted: OpenHands never executes in an untrusted workspace.', fixes: ['trust'] };
    } else if (consent === 'declined') {
      this.blocked = { message: 'Execution was not allowed for this workspace.', fixes: ['consent'] };
    } else {
      this.blocked = undefined;
      await this.deps.pool.start();
    }
  }

  async stop(reason = 'stopped'): Promise<void> {
    if (this.deps.byHand) await this.deps.byHand.executor.stop(reason);
    await this.deps.pool.stop(reason);
    this.changed();
  }

  async reconnect(): Promise<void> {
    if (this.hand) return this.hand.reconnect();
    // A start under way ends first: its `pool.start()` would otherwise set the pool watching before
    // this stop and resolve after it, and the start below would join it, leaving the pool stopped
    // (seen with a remote agent-server, whose first look takes a few requests).
    await this.gating?.catch(() => undefined);
    await this.stop('stopped for reconnect');
    await this.start();
  }

  /** The tab shows `conversationId`: resolves once the pool serves it, rejects when it cannot. */
  async retarget(conversationId: string): Promise<void> {
    if (this.hand) return this.hand.retarget(conversationId);
    this.target = conversationId;
    this.released = false;
    const key = channelId(conversationId);
    this.changed();
    if (!this.deps.pool.watching || this.blocked) await this.start();
    if (this.blocked) throw new Error(this.blocked.message);
    await this.deps.pool.want(key);
    const deadline = Date.now() + SERVE_WAIT_MS;
    for (;;) {
      if (this.target !== conversationId) throw new Error('the tab moved on to another conversation');
      const s = this.deps.pool.get(key)?.snapshot;
      if (s && (s.state === 'connected' || s.state === 'executing')) return;
      if (s && (s.state === 'error' || s.state === 'blocked')) throw new Error(s.message ?? `executor ${s.state}`);
      if (!this.deps.pool.watching) throw new Error('the executors were stopped');
      if (Date.now() > deadline) throw new Error(`no executor channel for conversation ${conversationId} after ${SERVE_WAIT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The tab deleted `conversationId`: its executor stops. */
  async release(conversationId: string): Promise<void> {
    if (this.hand) await this.hand.release(conversationId);
    if (this.target === conversationId || (!this.target && this.deps.shown() === conversationId)) this.released = true;
    await this.deps.pool.release(channelId(conversationId));
    this.changed();
  }

  /** A checkpoint action, run by the executor of the conversation shown. */
  execute(actionJson: string): Promise<string> {
    if (this.hand) return this.hand.execute(actionJson);
    const ex = this.shownExecutor;
    if (!ex) return Promise.reject(new Error('the executor is not running: connect it to a conversation first'));
    return ex.execute(actionJson);
  }

  dispose(): void {
    this.listeners.clear();
    this.deps.pool.dispose();
  }
}
