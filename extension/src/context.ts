import * as vscode from 'vscode';
import { ActivityLog } from './activity';
import { AgentTerminal } from './agentTerminal';
import { loadNative } from './bootstrap';
import { Config } from './config';
import { Consent } from './consent';
import { findExecutorCredential } from './credentials';
import { ExecutorService, type RuntimeIdeTools, type TabExecutor } from './executorService';
import { createFsBridge } from './fsBridge';
import { Logger } from './logging';
import { SessionKeyStore } from './secrets';
import { StatusBar } from './statusBar';
import { coalesce } from './coalesce';
import { problemOf } from './fixes';
import { runFix, type Fix } from './userErrors';
import { Notifier } from './userErrors';
import { ALLOWED_COMMANDS, buildViewModel, executorDetails, OpenHandsViewProvider } from './view';
import { CHECKPOINT_SCHEME, CheckpointDocuments, revertToBefore, vscodeRevertUi } from './revert';
import type { ViewToHost } from './webview/protocol';
import type { AgentServerEndpoint } from './v1/agentServerClient';
import { defaultDiscoveryDir, waitForChannel, type ExecutorChannel } from './v1/executorDiscovery';
import { ExecutorPool } from './v1/executorPool';
import { PoolTabExecutor } from './v1/poolTabExecutor';
import { checkWorkspace } from './v1/workspaceCheck';
import { ConversationPlaces } from './v1/conversationPlace';
import { BackgroundAttention } from './v1/attentionUi';
import { registerWorktreeCommands } from './v1/worktreeUi';
import { EndpointProblem, V1Backend } from './v1/v1Backend';
import { V0Backend } from './v0/v0Backend';
import { TabSession } from './tab/tabSession';
import { ManagedAgentServer } from './v1/agentServer';
import { AgentServerClient } from './v1/agentServerClient';
import { agentPlace, placeLine, remoteChannel, remoteDefaultDiscoveryDir, RemoteUrlError, type AgentPlace, type RemoteFiles } from './v1/remote';
import { trustFetch, trustOf, trustSocketFactory, TlsTrustError, type TlsTrust } from './v1/tlsClient';
import { channelId, DiscoveryError } from './v1/executorDiscovery';
import * as path from 'path';

/** How long the executor waits for a V1 conversation's tools to ask for it (its channel's discovery file). */
const V1_CHANNEL_WAIT_MS = 10 * 60 * 1000;
/**
 * What consent is asked for in managed mode: the agent-server this window runs gets a new port
 * each start, so its origin would ask again every time; the server is this extension's own.
 */
export const MANAGED_AGENT_SERVER_CONSENT = "this window's own agent-server (127.0.0.1)";

/**
 * The one object that holds the extension's parts; built in `activate`, disposed in
 * `deactivate`. Nothing lives in module globals.
 */
export class OpenHandsContext implements vscode.Disposable {
  readonly config = new Config();
  readonly log = new Logger('OpenHands');
  readonly secrets: SessionKeyStore;
  readonly consent: Consent;
  /** The tab's conversation, over the V0 server or a V1 agent-server (tab/tabSession.ts). */
  readonly chat: TabSession;
  /** Whether the tab is a V1 client (an agent-server: `openhands.v1.url` or this window's own). */
  readonly v1: boolean;
  /** This window's IDE tools endpoint and its token (set by `activate`), for V1 agents' MCP configuration. */
  ideEndpoint: (() => Promise<{ url: string; headers: Record<string, string> } | undefined>) | undefined;
  readonly activity = new ActivityLog();
  readonly terminal: AgentTerminal;
  readonly notifier = new Notifier();
  readonly statusBar = new StatusBar();
  /** The UI follows the executor's state and activity at most every 50 ms (coalesce.ts says why). */
  private readonly refreshSoon = coalesce(() => this.refresh(), 50);
  /**
   * What the tab and the commands drive: V0, the one executor; V1, the pool's view of the
   * conversation shown (every conversation of the agent-server has its own executor in `pool`),
   * or the one executor attached by hand (`conversation.mode` `attach` with an id).
   */
  readonly executor: TabExecutor;
  /** V1: one executor per conversation of this window's agent-server (v1/executorPool.ts). */
  readonly pool: ExecutorPool | undefined;
  /** The agent terminal of each pool executor, by its channel id. */
  private readonly poolTerminals = new Map<string, AgentTerminal>();
  /** The conversations the pool served at its last change (the list is refreshed when they change). */
  private poolKeys = '';
  readonly view: OpenHandsViewProvider;
  /** V1 mode: the agent-server this window runs (v1/agentServer.ts). */
  readonly agentServer: ManagedAgentServer;
  /** The IDE tools the executor offers the agent (set by `activate` once they are registered). */
  ideTools: RuntimeIdeTools | undefined;
  private hasKey = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** The captured side of a revert's diffs. */
  private readonly checkpointDocs = new CheckpointDocuments();
  /** V1: where each listed conversation works (the workspace, a worktree and its branch). */
  private readonly places = new ConversationPlaces(() => this.windowFolders());
  private shownInWorktree = false;
  /** V1: background conversations that need the user (the view's badge, notifications). */
  readonly attention: BackgroundAttention | undefined;
  /** V1 attach: where `openhands.v1.url` is (this machine or another), as last checked. */
  private place: AgentPlace | undefined;
  /** V1 attach to another machine: its discovery files through its file API, and its certificate trust. */
  private remote: { files: RemoteFiles; trust: TlsTrust | undefined } | undefined;

  /** `opts.v1`: the tab is a V1 client whatever the settings say (tests). */
  constructor(readonly vscodeContext: vscode.ExtensionContext, opts: { v1?: boolean } = {}) {
    this.secrets = new SessionKeyStore(vscodeContext.secrets);
    this.consent = new Consent(vscodeContext.workspaceState);
    this.terminal = new AgentTerminal({ revealOnCommand: () => this.config.current.revealOnCommand });
    const version = String(vscodeContext.extension?.packageJSON?.version ?? '0.0.0');
    // The backend is chosen once per window (`openhands.mode`; `auto` is V1 unless the user set a
    // V0 server): an agent-server given in `openhands.v1.url` (attach), else the one this window runs.
    const useV1 = opts.v1 === true || this.config.current.v1Url !== '' || this.config.current.backend === 'v1';
    const single = new ExecutorService({
      // V1: the executor follows the tab's conversation, unless the user attached it by hand to a
      // conversation the tab does not show (`conversation.mode` `attach` with an id).
      config: () => {
        const c = this.config.current;
        return useV1 && !(c.conversationMode === 'attach' && c.conversationId) ? { ...c, conversationMode: 'tab' } : c;
      },
      sessionKey: () => this.executorCredential(),
      consent: (label, url, conversation) => this.consent.ensure(label, url, conversation),
      route: useV1
        ? {
            consentUrl: () => this.config.current.v1Url || MANAGED_AGENT_SERVER_CONSENT,
            resolve: async (conversationId, signal) => {
              const endpoint = await this.agentServerEndpoint();
              if (!endpoint) throw new Error('The OpenHands agent-server is not running (see the OpenHands Agent Server output).');
              if (this.remote) return this.waitForRemoteChannel(this.remote, conversationId, signal);
              const channel = await waitForChannel(endpoint.discoveryDir, conversationId, { timeoutMs: V1_CHANNEL_WAIT_MS, signal });
              return { serverUrl: channel.url, conversationId: channel.conversationId, sessionApiKey: channel.sessionApiKey };
            },
          }
        : undefined,
      // attach mode: the configured id; else the conversation the tab shows (or showed last).
      conversation: (config) => (config.conversationMode === 'attach' ? config.conversationId || undefined : this.chat.currentConversationId ?? this.chat.remembered()),
      loadNative: () => loadNative(vscodeContext.extensionPath),
      fsBridge: () => this.fsBridge(),
      workspace: () => {
        const [folder, ...others] = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
        return folder ? { root: folder.uri.fsPath, label: folder.name, extraRoots: others.map((f) => f.uri.fsPath) } : undefined;
      },
      log: this.log,
      terminal: this.terminal,
      activity: this.activity,
      notify: (error) => void this.notifier.error(error),
      logLevel: () => (this.log.channel.logLevel <= vscode.LogLevel.Debug && this.log.channel.logLevel !== vscode.LogLevel.Off ? 'debug' : 'info'),
      clientName: `openhands-tab/${version} vscode/${vscode.version}`,
      ideTools: () => this.ideTools,
    });
    this.v1 = useV1;
    // V1: unless the user attached the executor by hand, every conversation gets its own.
    const byHand = () => {
      const c = this.config.current;
      return c.conversationMode === 'attach' && c.conversationId !== '';
    };
    this.pool = useV1 ? this.createPool(version) : undefined;
    this.executor = this.pool
      ? new PoolTabExecutor({
          pool: this.pool,
          gate: () => {
            const folder = this.windowFolders()[0];
            return this.consent.ensure(folder ? path.basename(folder) : '', this.v1ConsentUrl());
          },
          shown: () => this.chat.currentConversationId ?? this.chat.remembered(),
          byHand: { active: byHand, executor: single },
        })
      : single;
    const backend = useV1
      ? new V1Backend({
          endpoint: () => this.agentServerEndpoint(),
          state: vscodeContext.workspaceState,
          llmState: vscodeContext.globalState,
          secrets: vscodeContext.secrets,
          executor: this.executor,
          workspaceRoot: () => vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath,
          confirmation: () => this.config.current.v1Confirmation,
          worktreeByDefault: () => this.config.current.v1NewConversationInWorktree,
          ideTools: async () => this.ideEndpoint?.(),
          locate: (dir) => this.places.get(dir),
        })
      : new V0Backend({
          serverUrl: () => this.config.current.serverUrl,
          attachedConversation: () => {
            const c = this.config.current;
            return c.conversationMode === 'attach' && c.conversationId ? c.conversationId : undefined;
          },
          sessionKey: () => this.secrets.get(this.config.current.serverUrl),
          state: vscodeContext.workspaceState,
          secrets: vscodeContext.secrets,
          executor: this.executor,
        });
    this.chat = new TabSession({
      backend,
      executor: this.executor,
      post: (m) => this.view.post(m),
      log: this.log,
      workspaceFolders: () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
      executorDetails: () => executorDetails(buildViewModel(this.executor.snapshot, this.activity.items, this.hasKey)),
      budgetUsd: () => this.config.current.budgetPerConversation,
      place: () => (this.v1 ? placeLine(this.place, !this.config.current.v1Url) : ''),
      listed: (list, shown) => {
        this.attention?.listed(list, shown);
        // The view's menu offers the worktree actions when the conversation shown has one.
        const worktree = list.find((c) => c.id === shown)?.place?.kind === 'worktree';
        if (worktree !== this.shownInWorktree) {
          this.shownInWorktree = worktree;
          void vscode.commands.executeCommand('setContext', 'openhands.worktree', worktree);
        }
      },
    });
    this.attention = useV1
      ? new BackgroundAttention({
          setBadge: (count, tooltip) => this.view?.setBadge(count, tooltip),
          open: (id) => this.chat.switchTo(id),
          poll: () => this.chat.pollConversations(),
          busy: () => (this.pool?.keys.length ?? 0) > 0 || this.chat.conversationList.some((c) => c.status === 'running' || c.status === 'waiting_for_confirmation'),
          log: this.log,
        })
      : undefined;
    this.agentServer = new ManagedAgentServer({ context: vscodeContext, config: () => this.config.current, log: this.log });
    this.view = new OpenHandsViewProvider(vscodeContext.extensionUri, (m) => this.onViewMessage(m), () => {
      // Opening the tab loads the conversation (V1 managed mode: which starts this window's
      // agent-server); in attach mode (or with a remembered conversation) the executor starts
      // right away.
      void this.chat.open();
      void this.executor.start();
    });
    this.disposables.push(
      this.config,
      this.log,
      this.activity,
      this.terminal,
      this.statusBar,
      this.executor,
      single,
      this.agentServer,
      this.view,
      vscode.window.registerWebviewViewProvider('openhands.view', this.view, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this.checkpointDocs),
      ...(this.attention ? [this.attention] : []),
      ...registerWorktreeCommands({
        shown: () => this.chat.conversationList.find((c) => c.id === this.chat.currentConversationId),
        changed: async () => {
          this.places.forget();
          await this.chat.refreshConversations();
        },
        log: this.log,
      }),
      this.refreshSoon,
      this.executor.onDidChange(this.refreshSoon),
      // V1: the executor attached by hand changes the snapshot the pool's view shows.
      ...(this.executor !== single ? [single.onDidChange(this.refreshSoon)] : []),
      // A restarted agent-server has a new port and key: the V1 tab reloads against it.
      this.agentServer.onDidChange((state) => {
        if (state === 'running' && this.v1 && !this.config.current.v1Url) void this.chat.open();
        // Conversations a script or Agent Canvas creates on it are served too.
        if (state === 'running' && this.pool) void this.executor.start();
      }),
      this.activity.onDidChange(this.refreshSoon),
      this.secrets.onDidChange(() => {
        void this.refreshKey();
        void this.chat.open();
      }),
      this.chat,
      this.config.onDidChange((e) => {
        if (e.affectsConfiguration('openhands.v1.url') && (this.config.current.v1Url !== '') !== this.v1) {
          void vscode.window.showInformationMessage('OpenHands: the tab switches between the V0 server and a V1 agent-server after a window reload.', 'Reload Window').then((a) => {
            if (a) void vscode.commands.executeCommand('workbench.action.reloadWindow');
          });
        }
        // The tab first: it drops the old server's conversation before the executor reconnects.
        if (Config.affectsConnection(e)) void this.chat.open();
        // Keys are per server origin: another server may have none.
        if (Config.affectsConnection(e)) void this.refreshKey();
        if (Config.affectsConnection(e) && this.executor.running) {
          this.log.info('connection settings changed: reconnecting');
          void this.executor.reconnect();
        } else {
          this.refresh();
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        if (this.executor.snapshot.state === 'blocked' || this.config.current.autoStart) void this.executor.start();
      }),
    );
    void this.refreshKey();
    this.refresh();
  }

  /** The window's file folders (the first is where the tab's conversations work). */
  private windowFolders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  }

  /** What consent is asked for on V1: the agent-server's URL (attach), else this window's own. */
  private v1ConsentUrl(): string {
    return this.config.current.v1Url || MANAGED_AGENT_SERVER_CONSENT;
  }

  /**
   * The V1 pool: each conversation whose tools wait in the agent-server's discovery folder gets
   * an executor of its own (its own addon `Executor`: bash, environment, undo history,
   * checkpoints) and an agent terminal named after it.
   */
  private createPool(version: string): ExecutorPool {
    return new ExecutorPool({
      discoveryDir: () => {
        const c = this.config.current;
        if (!c.v1Url) return this.agentServer.discoveryDir;
        // Not this machine's folder until the URL is known to be this machine (by address).
        return this.place && !this.place.remote ? c.v1DiscoveryDir || defaultDiscoveryDir() : undefined;
      },
      remote: () => (this.config.current.v1Url ? this.remote?.files : undefined),
      checkWorkspace: (workspace) => checkWorkspace(workspace, this.windowFolders()),
      limit: () => this.config.current.v1MaxParallel,
      log: this.log,
      // The managed agent-server's folder is this window's own: whatever is refused there concerns
      // it. An attached agent-server's folder may be shared with other projects' scripts: the log.
      refused: (key, reason) => {
        if (!this.config.current.v1Url) void this.notifier.warn(`OpenHands: conversation ${key.slice(3, 11)}… is not served in this window: ${reason}.`);
      },
      changed: () => {
        (this.executor as PoolTabExecutor | undefined)?.changed?.();
        // A conversation started or ended (a script, Agent Canvas): the tab's list shows it.
        const keys = this.pool?.keys.sort().join(',') ?? '';
        if (keys !== this.poolKeys) {
          this.poolKeys = keys;
          void this.chat.refreshConversations().catch(() => undefined);
        }
      },
      create: (key, root, channel) => this.poolExecutor(version, key, root, channel),
    });
  }

  private poolExecutor(version: string, key: string, root: string, channel: () => Promise<ExecutorChannel>): ExecutorService {
    const terminal = new AgentTerminal({ revealOnCommand: () => this.config.current.revealOnCommand, name: `OpenHands Agent ${key.slice(3, 11)}` });
    this.poolTerminals.set(key, terminal);
    const folders = this.windowFolders();
    return new ExecutorService({
      config: () => ({ ...this.config.current, conversationMode: 'tab' }),
      sessionKey: async () => undefined,
      consent: (label, url) => this.consent.ensure(label, url),
      route: {
        consentUrl: () => this.v1ConsentUrl(),
        resolve: async () => {
          const c = await channel();
          // A remote agent-server: the executor checks its hub's certificate as the tab does.
          const trust = this.remote?.trust;
          return { serverUrl: c.url, conversationId: c.conversationId, sessionApiKey: c.sessionApiKey, caFile: trust?.caFile, certSha256: trust?.certSha256 };
        },
      },
      conversation: () => key,
      loadNative: () => loadNative(this.vscodeContext.extensionPath),
      fsBridge: () => this.fsBridge(),
      // The window's folder: the other folders too (multi-root); a worktree: itself only.
      workspace: () => ({ root, label: path.basename(root), extraRoots: folders.includes(root) ? folders.filter((f) => f !== root) : [] }),
      log: this.log,
      terminal,
      activity: this.activity,
      // A conversation that was closed ends its channel before its discovery file goes: no error for that.
      notify: (error) => {
        if (this.pool?.get(key)) void this.notifier.error(error);
      },
      logLevel: () => (this.log.channel.logLevel <= vscode.LogLevel.Debug && this.log.channel.logLevel !== vscode.LogLevel.Off ? 'debug' : 'info'),
      clientName: `openhands-tab/${version} vscode/${vscode.version}`,
      ideTools: () => this.ideTools,
      disposeWith: [terminal, { dispose: () => this.poolTerminals.delete(key) }],
    });
  }

  /** File actions through `vscode.workspace.fs`, a conflict with unsaved changes shown with Compare. */
  private fsBridge() {
    return createFsBridge({
      log: this.log,
      onDirtyConflict: (uri) =>
        void this.notifier.warn(`The agent changed ${vscode.workspace.asRelativePath(uri)} on disk while it has unsaved changes in an editor.`, [
          { label: 'Compare', run: () => vscode.commands.executeCommand('workbench.files.action.compareWithSaved', uri) },
        ]),
    });
  }

  /** The agent terminal of the conversation shown (V1 pool), else the window's. */
  showTerminal(): void {
    const id = this.chat.currentConversationId;
    const own = id && this.pool ? this.poolTerminals.get(`v1-${id.replace(/-/g, '').toLowerCase()}`) : undefined;
    (own ?? this.terminal).show(false);
  }

  /**
   * The agent-server of the V1 tab: the one in `openhands.v1.url` (attach) with the session API key
   * stored for its origin, else the one this window runs (managed mode: started here when it is
   * not running; a failure to start is shown with its fix and answers undefined).
   */
  async agentServerEndpoint(): Promise<AgentServerEndpoint | undefined> {
    const c = this.config.current;
    if (c.v1Url) return this.attachedEndpoint(c.v1Url, c.v1DiscoveryDir, c.v1CaFile, c.v1CertSha256);
    try {
      return await this.agentServer.connection();
    } catch (e) {
      // The tab says what fixes it: no environment yet (one button sets it up and starts the
      // server), or why the server did not start.
      if (this.agentServer.needsSetup(e)) {
        throw new EndpointProblem(problemOf('setup', `${(e as Error).message} Set Up and Start creates it in this extension's storage from the package and lock the extension carries (the packages come from your package index; under a minute), starts this window's agent-server, and allows the agent to run commands and edit files in this workspace.`, ['setup', 'settings']));
      }
      this.agentServer.showStartError(e as Error);
      throw new EndpointProblem(problemOf('server', `The OpenHands agent-server did not start: ${(e as Error).message.split('\n')[0]}`, ['retry', 'logs']));
    }
  }

  /**
   * `openhands.v1.url`: on this machine, its discovery folder here; on another machine, https only
   * (plain http refused with why), its certificate checked by the system's store or the CA file /
   * pin the user set, its discovery files read through its file API (v1/remote.ts).
   */
  private async attachedEndpoint(url: string, dir: string, caFile: string, certSha256: string): Promise<AgentServerEndpoint> {
    const sessionApiKey = (await this.secrets.get(url)) || undefined;
    let trust: TlsTrust | undefined;
    try {
      this.place = await agentPlace(url);
      trust = this.place.remote ? trustOf(caFile, certSha256) : undefined;
    } catch (e) {
      this.remote = undefined;
      if (e instanceof RemoteUrlError) throw new EndpointProblem(problemOf('server', e.message, ['settings']));
      if (e instanceof TlsTrustError) throw new EndpointProblem(problemOf('server', e.message, ['certificate']));
      throw e;
    }
    if (!this.place.remote) {
      this.remote = undefined;
      return { baseUrl: url, sessionApiKey, discoveryDir: dir || defaultDiscoveryDir() };
    }
    const fetchImpl = trust ? trustFetch(trust) : undefined;
    const client = new AgentServerClient(url, sessionApiKey, fetchImpl);
    let folder: string | undefined = dir || undefined;
    this.remote = {
      trust,
      files: {
        agentServerUrl: url,
        conversationIds: async () => (await client.listConversations(100)).map((x) => x.id),
        readJson: (p) => client.readJsonFile(p),
        discoveryDir: async () => (folder ??= remoteDefaultDiscoveryDir(await client.home())),
      },
    };
    this.refresh();
    return { baseUrl: url, sessionApiKey, discoveryDir: dir, fetch: fetchImpl, socketFactory: trust ? trustSocketFactory(trust) : undefined };
  }

  /** An executor attached by hand to a conversation of a remote agent-server: its discovery file, when its tools write it. */
  private async waitForRemoteChannel(remote: { files: RemoteFiles; trust: TlsTrust | undefined }, conversationId: string, signal: AbortSignal) {
    const deadline = Date.now() + V1_CHANNEL_WAIT_MS;
    const file = `${(await remote.files.discoveryDir()).replace(/\/+$/, '')}/${channelId(conversationId)}.json`;
    for (;;) {
      if (signal.aborted) throw new DiscoveryError('cancelled');
      const info = await remote.files.readJson(file);
      if (info !== undefined) {
        const c = remoteChannel(info, conversationId, remote.files.agentServerUrl);
        return { serverUrl: c.url, conversationId: c.conversationId, sessionApiKey: c.sessionApiKey, caFile: remote.trust?.caFile, certSha256: remote.trust?.certSha256 };
      }
      if (Date.now() > deadline) throw new DiscoveryError(`no executor channel for conversation ${conversationId} on ${remote.files.agentServerUrl} after ${V1_CHANNEL_WAIT_MS / 1000} s (${file})`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** The tab's **Set Up and Start**: the set-up command, its steps shown in the tab as they go. */
  private async setUpFromTab(): Promise<void> {
    // The click is the user's yes to execution here too (the problem's text says so): one prompt
    // fewer from an installed VSIX to a first task. Never in an untrusted workspace.
    if (!this.config.current.v1Url) await this.consent.grant(MANAGED_AGENT_SERVER_CONSENT);
    const step = this.agentServer.onDidSetupStep((text) => {
      this.chat.problem('setup', `Setting up the OpenHands V1 environment: ${text}…`, []);
      this.chat.publish();
    });
    try {
      await vscode.commands.executeCommand('openhands.v1.setUpEnvironment');
    } catch (e) {
      this.chat.problem('setup', `The set-up failed: ${(e as Error).message.split('\n')[0]}`, ['setup', 'logs']);
      this.chat.publish();
      return;
    } finally {
      step.dispose();
    }
    await this.chat.open();
  }

  /**
   * The server whose session API key "Set Session API Key" sets: the agent-server the V1 tab
   * attaches to (`openhands.v1.url`), else the server in `openhands.server.url` (V0, or a V1
   * conversation's executor channel attached by hand; the managed agent-server's key is the
   * extension's own).
   */
  keyServerUrl(): string {
    const c = this.config.current;
    return this.v1 && c.v1Url ? c.v1Url : c.serverUrl;
  }

  /** SecretStorage, else the runtime's token file when the server is on this machine (credentials.ts). */
  private async executorCredential(): Promise<string | undefined> {
    const found = await findExecutorCredential(await this.secrets.get(this.config.current.serverUrl), this.config.current.serverUrl);
    this.log.info(`executor credential: ${found.detail}`);
    return found.key;
  }

  private async refreshKey(): Promise<void> {
    this.hasKey = Boolean(await this.secrets.get(this.keyServerUrl()));
    this.refresh();
  }

  refresh(): void {
    const snap = this.executor.snapshot;
    this.statusBar.update(snap);
    this.chat.executorChanged();
    void vscode.commands.executeCommand('setContext', 'openhands.state', snap.state);
    void vscode.commands.executeCommand('setContext', 'openhands.backend', this.v1 ? 'v1' : 'v0');
  }

  /** What the tab's page asks for. */
  private onViewMessage(m: ViewToHost): void {
    const report = (p: Promise<unknown>) => p.catch((e: Error) => this.log.error(`OpenHands tab: ${e.message}`));
    switch (m.type) {
      case 'ready':
        this.chat.publish();
        this.view.post({ type: 'reset', conversationId: this.chat.currentConversationId, items: [...this.chat.items] });
        break;
      case 'send':
        void report(this.chat.send(String(m.text ?? '')));
        break;
      case 'stop':
        this.chat.stop();
        break;
      case 'confirm':
        this.chat.confirm(m.accept === true);
        break;
      case 'continue':
        void report(this.chat.continueConversation());
        break;
      case 'new':
        void report(this.chat.newConversation());
        break;
      case 'switch':
        if (typeof m.id === 'string' && m.id) void report(this.chat.switchTo(m.id));
        break;
      case 'refresh':
        void report(this.chat.refreshConversations());
        break;
      case 'saveLlm':
        void report(this.chat.saveLlmSettings(String(m.model ?? ''), String(m.baseUrl ?? ''), String(m.apiKey ?? '')));
        break;
      case 'editLlm':
        this.chat.showLlmForm();
        break;
      case 'cancelLlm':
        this.chat.hideLlmForm();
        break;
      case 'fix':
        if (m.fix === 'llm') this.chat.showLlmForm();
        else if (m.fix === 'budget') void report(this.chat.raiseBudget());
        else if (m.fix === 'setup') void report(this.setUpFromTab());
        else if (m.fix === 'retry') void report(this.chat.open().then(() => (this.executor.snapshot.state === 'error' ? this.executor.reconnect() : undefined)));
        else void runFix(m.fix as Fix);
        break;
      case 'command':
        if (ALLOWED_COMMANDS.has(m.command)) void vscode.commands.executeCommand(m.command, ...(typeof m.path === 'string' ? [m.path] : []));
        break;
      case 'revert':
        void report(this.revert(String(m.key ?? '')));
        break;
    }
  }

  /** "Revert files to before this" on a user message of the conversation shown (revert.ts). */
  async revert(key: string): Promise<void> {
    const conversationId = this.chat.currentConversationId;
    // The checkpoint's key: V0, the message's event id (VsCodeRuntime took it); V1, the message's
    // number among the conversation's user messages (the tab took it before posting the message).
    const messageId = this.chat.checkpointKey(key);
    if (!conversationId || messageId === undefined) return;
    const item = this.chat.items.find((i) => i.key === key);
    const text = item && item.kind === 'message' ? item.text : '';
    await revertToBefore(
      this.executor,
      vscodeRevertUi(this.checkpointDocs),
      conversationId,
      messageId,
      text,
      () => vscode.workspace.textDocuments,
      (note) => {
        this.log.info(`conversation ${conversationId}: ${note}`);
        this.chat.note(conversationId, 'info', note);
      },
    );
  }

  dispose(): void {
    for (const d of this.disposables.reverse()) {
      try {
        d.dispose();
      } catch {
        // keep disposing the rest
      }
    }
  }
}
