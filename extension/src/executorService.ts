import * as vscode from 'vscode';
import { summariseAction, type ActivityLog } from './activity';
import type { AgentTerminal } from './agentTerminal';
import { NativeBinaryError } from './bootstrap';
import { validateConfig, type OpenHandsConfig } from './config';
import type { ConsentResult } from './consent';
import type { Logger } from './logging';
import { errorCode, type ConnectionState, type ExecutorHooks, type ExecutorOptions, type FsCallbacks, type IdeToolInfo, type NativeExecutor, type NativeModule } from './native';
import { classify, executorError, type Fix, type UserError } from './userErrors';

export type ExecutorState = 'stopped' | 'starting' | 'connecting' | 'connected' | 'executing' | 'error' | 'blocked';

export interface ExecutorSnapshot {
  state: ExecutorState;
  /** What is executing right now ("run ls -la"), from the addon's status. */
  activity?: string;
  /** Why the state is what it is (an error, "waiting for consent", the reconnect reason...). */
  message?: string;
  fixes?: Fix[];
  serverUrl: string;
  conversationId?: string;
  workspaceRoot?: string;
  since: number;
}

/** Everything the service needs, injected so unit tests can replace each part. */
export interface ExecutorServiceDeps {
  config: () => OpenHandsConfig;
  sessionKey: () => Thenable<string | undefined>;
  /** `conversation`: set when the workspace's settings chose it (attach mode from `.vscode/settings.json`). */
  consent: (workspaceLabel: string, serverUrl: string, conversation?: string) => Promise<ConsentResult>;
  /**
   * The conversation to serve: `attach` mode's configured id, else the one the OpenHands tab shows
   * (undefined until the user starts or picks one).
   */
  conversation: (config: OpenHandsConfig) => string | undefined;
  loadNative: () => { module: NativeModule; file: string };
  fsBridge: () => FsCallbacks;
  /** The first file folder of the window (the shell starts there) and the others (multi-root). */
  workspace: () => { root: string; label: string; extraRoots?: string[] } | undefined;
  log: Logger;
  terminal: Pick<AgentTerminal, 'data' | 'notice'> & Partial<Pick<AgentTerminal, 'reveal'>>;
  activity: Pick<ActivityLog, 'action' | 'observation' | 'running'>;
  /** Level for the addon's log records (follows the output channel's level). */
  logLevel?: () => 'error' | 'warn' | 'info' | 'debug' | 'trace';
  notify: (error: UserError) => void;
  clientName: string;
  /**
   * The IDE tools this window runs for the agent (announced to the runtime at registration,
   * called through `call_tool_mcp` actions; docs/ide-tools.md). Absent: none are offered.
   */
  ideTools?: () => RuntimeIdeTools | undefined;
  /**
   * V1 (the tab on an agent-server): each conversation has its own executor channel, found once
   * the conversation's tools wait for it (v1/executorDiscovery.ts). Consent is asked for the
   * agent-server (`consentUrl`); `resolve` waits for the conversation's channel. An executor the
   * user attached by hand (`openhands.conversation.mode` `attach` with an id: docs/v1.md, "Attaching
   * the executor by hand") is served as configured, without the route.
   */
  route?: ExecutorRoute;
  /** Disposed with the service (a pool executor's own agent terminal). */
  disposeWith?: { dispose(): void }[];
}

/** What the tab, the commands and the extension's API drive: this service, or the V1 pool's view (v1/poolTabExecutor.ts). */
export interface TabExecutor {
  readonly snapshot: ExecutorSnapshot;
  readonly running: boolean;
  onDidChange(listener: (s: ExecutorSnapshot) => void): { dispose(): void };
  start(): Promise<void>;
  stop(reason?: string): Promise<void>;
  reconnect(): Promise<void>;
  retarget(conversationId: string): Promise<void>;
  release(conversationId: string): Promise<void>;
  execute(actionJson: string): Promise<string>;
  dispose(): void;
}

export interface ExecutorRoute {
  consentUrl(): string;
  resolve(conversationId: string, signal: AbortSignal): Promise<RoutedChannel>;
}

/** Where a routed executor connects; `caFile`/`certSha256`: how it checks a remote server's certificate. */
export interface RoutedChannel {
  serverUrl: string;
  conversationId: string;
  sessionApiKey: string;
  caFile?: string;
  certSha256?: string;
}

/**
 * What the executor needs of the IDE tools: their list and a call answering MCP `CallToolResult`
 * JSON. `signal` aborts when the runtime gives up on the call (its reply timeout passed): an
 * `open_diff` closes its diff, and the call answers at once.
 */
export interface RuntimeIdeTools {
  readonly list: readonly IdeToolInfo[];
  call(name: string, argumentsJson: string, signal?: AbortSignal): Promise<string>;
}

/**
 * The extension's state for each connection state of the addon; `disconnected` means it is
 * reconnecting (or was stopped, which the service knows itself). `error` is left to the coded
 * rejection of `start()` or the result of `waitUntilClosed()`, which always follow it.
 */
export function stateOf(state: ConnectionState): ExecutorState {
  switch (state) {
    case 'connecting':
    case 'disconnected':
      return 'connecting';
    case 'connected':
      return 'connected';
    case 'executing':
      return 'executing';
    case 'error':
      return 'error';
  }
}

/**
 * Owns the native executor's lifecycle: gate (trust, consent, config), conversation, key, then
 * `new Executor(...).start()`. `start()` is idempotent; `stop()` always leaves it stopped.
 */
export class ExecutorService implements vscode.Disposable {
  private executor: NativeExecutor | undefined;
  private starting: Promise<void> | undefined;
  private generation = 0;
  /** The conversation the tab asked for (tab mode); attach mode ignores it. */
  private target: string | undefined;
  private snap: ExecutorSnapshot;
  private readonly emitter = new vscode.EventEmitter<ExecutorSnapshot>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly deps: ExecutorServiceDeps) {
    this.snap = { state: 'stopped', serverUrl: deps.config().serverUrl, since: Date.now() };
  }

  get snapshot(): ExecutorSnapshot {
    return this.snap;
  }

  get running(): boolean {
    return this.executor !== undefined || this.starting !== undefined;
  }

  /** Starts the executor unless it is already starting or running. */
  start(): Promise<void> {
    if (this.starting) return this.starting;
    if (this.executor) return Promise.resolve();
    const generation = ++this.generation;
    this.starting = this.doStart(generation).finally(() => {
      if (this.generation === generation) this.starting = undefined;
    });
    return this.starting;
  }

  async stop(reason = 'stopped'): Promise<void> {
    this.generation++;
    this.starting = undefined;
    const executor = this.executor;
    this.executor = undefined;
    if (executor) {
      try {
        await executor.stop();
      } catch (e) {
        this.deps.log.warn(`stopping the executor failed: ${(e as Error).message}`);
      }
      this.deps.terminal.notice(`executor ${reason}`);
      this.deps.log.info(`executor ${reason}`);
    }
    this.update({ state: 'stopped', message: undefined, fixes: undefined });
  }

  /**
   * Serves `conversationId` from now on (the tab created or switched to it): stops serving another
   * one, starts, and resolves once registered (rejects with the reason when it could not).
   */
  async retarget(conversationId: string): Promise<void> {
    const config = this.deps.config();
    if (config.conversationMode === 'attach') {
      this.deps.log.info(`attach mode: the executor keeps serving ${config.conversationId}, not ${conversationId}`);
    } else {
      const same = this.target === conversationId && (this.snap.conversationId === conversationId || this.starting !== undefined);
      this.target = conversationId;
      if (!same && this.running) await this.stop('stopped: the tab switched conversation');
    }
    await this.start();
    const s = this.snap.state;
    if (s !== 'connected' && s !== 'executing') throw new Error(this.snap.message ?? `executor ${s}`);
  }

  /** Stops serving `conversationId` if this executor serves it (the conversation was deleted or closed). */
  async release(conversationId: string): Promise<void> {
    if (this.target !== conversationId) return;
    this.target = undefined;
    if (this.running || this.snap.state !== 'stopped') await this.stop(`stopped: conversation ${conversationId} closed`);
  }

  /** Runs one action in this window's executor, without the server (checkpoints: revert.ts). */
  execute(actionJson: string): Promise<string> {
    if (!this.executor) return Promise.reject(new Error('the executor is not running: connect it to a conversation first'));
    return this.executor.execute(actionJson);
  }

  async reconnect(): Promise<void> {
    await this.stop('stopped for reconnect');
    await this.start();
  }

  private async doStart(generation: number): Promise<void> {
    const d = this.deps;
    const config = d.config();
    const route = config.conversationMode === 'attach' ? undefined : d.route;
    this.update({ state: 'starting', message: undefined, fixes: undefined, serverUrl: config.serverUrl });
    const current = () => this.generation === generation;
    try {
      const ws = d.workspace();
      if (!ws) {
        this.update({ state: 'blocked', message: 'Open a folder: the agent needs a workspace to work in.', fixes: [] });
        return;
      }
      const problem = validateConfig(config);
      if (problem) return this.fail({ message: problem, fixes: ['settings'] });

      this.update({ message: 'Checking workspace trust and your permission to execute here…' });
      // A conversation the repository's settings chose is named in the prompt and consented to apart.
      const repoConversation = config.conversationMode === 'attach' && config.conversationFromWorkspace ? config.conversationId : undefined;
      const consent = await d.consent(ws.label, route?.consentUrl() ?? config.serverUrl, repoConversation);
      if (!current()) return;
      this.update({ message: undefined });
      if (consent === 'untrusted') {
        this.update({ state: 'blocked', message: 'This workspace is not trusted: OpenHands never executes in an untrusted workspace.', fixes: ['trust'] });
        return;
      }
      if (consent === 'declined') {
        this.update({ state: 'blocked', message: 'Execution was not allowed for this workspace.', fixes: ['consent'] });
        return;
      }

      const { module, file } = d.loadNative();
      d.log.info(`loaded executor binary ${file}`);
      let key = route ? undefined : (await d.sessionKey()) || undefined;
      const conversationId = d.conversation(config) ?? this.target;
      if (!conversationId) {
        this.update({ state: 'stopped', message: 'No conversation yet: type a task in the OpenHands tab.', fixes: undefined, workspaceRoot: ws.root });
        return;
      }
      this.target = conversationId;
      let serverUrl = config.serverUrl;
      let channel = conversationId;
      let tlsTrust: { caFile?: string; certSha256?: string } = {};
      if (route) {
        // V1: the conversation's own channel, once its tools wait for an executor.
        this.update({ state: 'connecting', conversationId, workspaceRoot: ws.root, message: 'Waiting for the conversation\'s tools to start…' });
        const abort = new AbortController();
        const watch = setInterval(() => { if (!current()) abort.abort(); }, 200);
        try {
          const r = await route.resolve(conversationId, abort.signal);
          tlsTrust = { caFile: r.caFile, certSha256: r.certSha256 };
          serverUrl = r.serverUrl;
          channel = r.conversationId;
          key = r.sessionApiKey;
        } finally {
          clearInterval(watch);
        }
        if (!current()) return;
      }
      d.log.info(`serving conversation ${conversationId} on ${serverUrl}`);
      this.update({ state: 'connecting', conversationId, workspaceRoot: ws.root, serverUrl, message: undefined });

      const options: ExecutorOptions = {
        serverUrl,
        conversationId: channel,
        workspaceRoot: ws.root,
        noChangeTimeoutSeconds: Math.round(config.noChangeTimeoutSeconds),
        clientName: d.clientName,
        logLevel: d.logLevel?.() ?? 'info',
      };
      // Every folder of a multi-root workspace: checkpoints cover them, the agent is told of them.
      if (ws.extraRoots?.length) options.extraRoots = ws.extraRoots;
      if (key) options.sessionApiKey = key;
      if (tlsTrust.caFile) options.caFile = tlsTrust.caFile;
      if (tlsTrust.certSha256) options.certSha256 = tlsTrust.certSha256;
      const ideTools = d.ideTools?.();
      if (ideTools) options.ideTools = [...ideTools.list];
      // An executor that arrives before the conversation's runtime waits in the server's waiting
      // room (docs/protocol.md) and is welcomed when the runtime opens: no retry loop here.
      const executor: NativeExecutor = new module.Executor(options, d.fsBridge(), this.hooks(generation, ideTools));
      this.executor = executor;
      await executor.start();
      if (!current()) {
        await executor.stop().catch(() => undefined);
        return;
      }
      if (this.snap.state === 'connecting' || this.snap.state === 'starting') this.update({ state: 'connected', message: undefined });
      d.terminal.notice(`connected to ${serverUrl} (conversation ${conversationId})`, true);
      void this.watchClose(executor, generation);
    } catch (e) {
      if (!current()) return;
      const executor = this.executor;
      this.executor = undefined;
      await executor?.stop().catch(() => undefined);
      const message = (e as Error).message ?? String(e);
      if (e instanceof NativeBinaryError) return this.fail({ message, fixes: ['logs'] });
      const code = errorCode(e);
      return this.fail(code ? executorError(code, message) : classify(message));
    }
  }

  /** When the connection ends for good without our stop (replaced, refused), say so. */
  private async watchClose(executor: NativeExecutor, generation: number): Promise<void> {
    let closed: Awaited<ReturnType<NativeExecutor['waitUntilClosed']>>;
    try {
      closed = await executor.waitUntilClosed();
    } catch (e) {
      closed = { reason: 'failed', message: (e as Error).message };
    }
    if (this.generation !== generation || this.executor !== executor) return; // we stopped it
    this.executor = undefined;
    await executor.stop().catch(() => undefined);
    const message = `The connection to the runtime ended: ${closed.reason}${closed.message ? ` (${closed.message})` : ''}`;
    this.deps.terminal.notice(message);
    if (closed.reason === 'failed') {
      this.fail(executorError(closed.code, message));
    } else {
      this.deps.log.warn(message);
      this.update({ state: 'stopped', message: closed.reason === 'replaced' ? 'Another VS Code window took over this conversation.' : 'The executor stopped.', fixes: ['retry'] });
    }
  }

  private hooks(generation: number, ideTools?: RuntimeIdeTools): ExecutorHooks {
    const d = this.deps;
    const live = () => this.generation === generation;
    // The IDE calls of this executor that are running, by the addon's call id (for the cancel).
    const ideCalls = new Map<number, AbortController>();
    return {
      ...(ideTools
        ? {
            onIdeTool: async (name: string, argumentsJson: string, callId: number) => {
              const abort = new AbortController();
              ideCalls.set(callId, abort);
              try {
                return await ideTools.call(name, argumentsJson, abort.signal);
              } finally {
                ideCalls.delete(callId);
              }
            },
            // An unknown id (finished already) is no error: the cancel and the answer crossed.
            onIdeToolCancel: (callId: number) => ideCalls.get(callId)?.abort(),
          }
        : {}),
      onTerminalData: (data) => {
        if (live()) d.terminal.data(data);
      },
      onLog: (level, target, message) => {
        d.log.record(level, target, String(message ?? ''));
      },
      onStatus: (status, message) => {
        if (live()) this.onNativeStatus(status, message ?? undefined);
      },
      onAction: (event) => {
        if (!live()) return;
        const e = toObject(event);
        if (!e) return;
        d.activity.action(e);
        if (e.action === 'run') d.terminal.reveal?.();
        // What runs, as the activity list words it (summariseAction, secret exports masked): the
        // one summary of an action. `executing`/`connected` come from onStatus only.
        const { kind, summary } = summariseAction(e);
        this.update({ activity: kind === 'run' || kind === 'v1_terminal' ? `run ${summary}` : summary });
      },
      onObservation: (event) => {
        if (!live()) return;
        const e = toObject(event);
        if (!e) return;
        d.activity.observation(e);
      },
    };
  }

  private onNativeStatus(status: ConnectionState, message: string | undefined): void {
    const state = stateOf(status);
    if (state === 'error') {
      this.deps.log.debug(`executor status error: ${message ?? ''}`);
      return;
    }
    if (state === 'connecting' && this.snap.state === 'stopped') return; // our own stop
    if (state === 'connecting' && this.snap.state !== 'connecting') this.deps.log.info(`executor ${status}${message ? `: ${message}` : ''}`);
    if (state === 'executing') {
      this.update({ state, message: undefined, fixes: undefined }); // the activity comes from onAction
      return;
    }
    this.update({ state, message: state === 'connected' ? undefined : message, fixes: undefined, activity: undefined });
  }

  private fail(error: UserError): void {
    this.deps.log.error(error.message);
    this.update({ state: 'error', message: error.message, fixes: error.fixes });
    this.deps.notify(error);
  }

  private update(patch: Partial<ExecutorSnapshot>): void {
    const stateChanged = patch.state !== undefined && patch.state !== this.snap.state;
    this.snap = { ...this.snap, ...patch, since: stateChanged ? Date.now() : this.snap.since };
    this.emitter.fire(this.snap);
  }

  dispose(): void {
    void this.stop('disposed');
    this.emitter.dispose();
    for (const d of this.deps.disposeWith ?? []) d.dispose();
  }
}

function toObject(json: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(json);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
