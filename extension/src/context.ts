import * as vscode from 'vscode';
import { ActivityLog } from './activity';
import { AgentTerminal } from './agentTerminal';
import { loadNative } from './bootstrap';
import { Config } from './config';
import { Consent } from './consent';
import { ChatSession } from './chatSession';
import { findExecutorCredential } from './credentials';
import { ExecutorService, type RuntimeIdeTools } from './executorService';
import { createFsBridge } from './fsBridge';
import { Logger } from './logging';
import { SessionKeyStore } from './secrets';
import { StatusBar } from './statusBar';
import { runFix, type Fix } from './userErrors';
import { Notifier } from './userErrors';
import { ALLOWED_COMMANDS, buildViewModel, executorDetails, OpenHandsViewProvider } from './view';
import { CHECKPOINT_SCHEME, CheckpointDocuments, messageIdOfKey, revertToBefore, vscodeRevertUi } from './revert';
import type { ViewToHost } from './webview/protocol';

/**
 * The one object that holds the extension's parts; built in `activate`, disposed in
 * `deactivate`. Nothing lives in module globals.
 */
export class OpenHandsContext implements vscode.Disposable {
  readonly config = new Config();
  readonly log = new Logger('OpenHands');
  readonly secrets: SessionKeyStore;
  readonly consent: Consent;
  readonly chat: ChatSession;
  readonly activity = new ActivityLog();
  readonly terminal: AgentTerminal;
  readonly notifier = new Notifier();
  readonly statusBar = new StatusBar();
  readonly executor: ExecutorService;
  readonly view: OpenHandsViewProvider;
  /** The IDE tools the executor offers the agent (set by `activate` once they are registered). */
  ideTools: RuntimeIdeTools | undefined;
  private hasKey = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** The captured side of a revert's diffs. */
  private readonly checkpointDocs = new CheckpointDocuments();

  constructor(readonly vscodeContext: vscode.ExtensionContext) {
    this.secrets = new SessionKeyStore(vscodeContext.secrets);
    this.consent = new Consent(vscodeContext.workspaceState);
    this.terminal = new AgentTerminal({ revealOnCommand: () => this.config.current.revealOnCommand });
    const version = String(vscodeContext.extension?.packageJSON?.version ?? '0.0.0');
    this.executor = new ExecutorService({
      config: () => this.config.current,
      sessionKey: () => this.executorCredential(),
      consent: (label, url) => this.consent.ensure(label, url),
      // attach mode: the configured id; else the conversation the tab shows (or showed last).
      conversation: (config) => (config.conversationMode === 'attach' ? config.conversationId || undefined : this.chat.currentConversationId ?? this.chat.remembered()),
      loadNative: () => loadNative(vscodeContext.extensionPath),
      fsBridge: () =>
        createFsBridge({
          log: this.log,
          onDirtyConflict: (uri) =>
            void this.notifier.warn(`The agent changed ${vscode.workspace.asRelativePath(uri)} on disk while it has unsaved changes in an editor.`, [
              { label: 'Compare', run: () => vscode.commands.executeCommand('workbench.files.action.compareWithSaved', uri) },
            ]),
        }),
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
    this.chat = new ChatSession({
      serverUrl: () => this.config.current.serverUrl,
      attachedConversation: () => {
        const c = this.config.current;
        return c.conversationMode === 'attach' && c.conversationId ? c.conversationId : undefined;
      },
      sessionKey: () => this.secrets.get(this.config.current.serverUrl),
      state: vscodeContext.workspaceState,
      secrets: vscodeContext.secrets,
      executor: this.executor,
      post: (m) => this.view.post(m),
      log: this.log,
      workspaceRoot: () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
      executorDetails: () => executorDetails(buildViewModel(this.executor.snapshot, this.activity.items, this.hasKey)),
    });
    this.view = new OpenHandsViewProvider(vscodeContext.extensionUri, (m) => this.onViewMessage(m), () => {
      // Opening the tab loads the conversation; in attach mode (or with a remembered
      // conversation) the executor starts right away.
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
      this.view,
      vscode.window.registerWebviewViewProvider('openhands.view', this.view, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this.checkpointDocs),
      this.executor.onDidChange(() => this.refresh()),
      this.activity.onDidChange(() => this.refresh()),
      this.secrets.onDidChange(() => {
        void this.refreshKey();
        void this.chat.open();
      }),
      this.chat,
      this.config.onDidChange((e) => {
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

  /** SecretStorage, else the runtime's token file when the server is on this machine (credentials.ts). */
  private async executorCredential(): Promise<string | undefined> {
    const found = await findExecutorCredential(await this.secrets.get(this.config.current.serverUrl), this.config.current.serverUrl);
    this.log.info(`executor credential: ${found.detail}`);
    return found.key;
  }

  private async refreshKey(): Promise<void> {
    this.hasKey = Boolean(await this.secrets.get(this.config.current.serverUrl));
    this.refresh();
  }

  refresh(): void {
    const snap = this.executor.snapshot;
    this.statusBar.update(snap);
    this.chat.executorChanged();
    void vscode.commands.executeCommand('setContext', 'openhands.state', snap.state);
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
        else if (m.fix === 'retry') void report(this.chat.open().then(() => (this.executor.snapshot.state === 'error' ? this.executor.reconnect() : undefined)));
        else void runFix(m.fix as Fix);
        break;
      case 'command':
        if (ALLOWED_COMMANDS.has(m.command)) void vscode.commands.executeCommand(m.command);
        break;
      case 'revert':
        void report(this.revert(String(m.key ?? '')));
        break;
    }
  }

  /** "Revert files to before this" on a user message of the conversation shown (revert.ts). */
  async revert(key: string): Promise<void> {
    const conversationId = this.chat.currentConversationId;
    const messageId = messageIdOfKey(key);
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
