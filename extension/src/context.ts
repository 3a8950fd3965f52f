import * as vscode from 'vscode';
import { ActivityLog } from './activity';
import { AgentTerminal } from './agentTerminal';
import { loadNative } from './bootstrap';
import { Config } from './config';
import { Consent } from './consent';
import { findExecutorCredential } from './credentials';
import { ConversationResolver } from './conversation';
import { ExecutorService } from './executorService';
import { createFsBridge } from './fsBridge';
import { Logger } from './logging';
import { SessionKeyStore } from './secrets';
import { StatusBar } from './statusBar';
import { Notifier } from './userErrors';
import { buildViewModel, OpenHandsViewProvider } from './view';

/**
 * The one object that holds the extension's parts; built in `activate`, disposed in
 * `deactivate`. Nothing lives in module globals.
 */
export class OpenHandsContext implements vscode.Disposable {
  readonly config = new Config();
  readonly log = new Logger('OpenHands');
  readonly secrets: SessionKeyStore;
  readonly consent: Consent;
  readonly conversations: ConversationResolver;
  readonly activity = new ActivityLog();
  readonly terminal: AgentTerminal;
  readonly notifier = new Notifier();
  readonly statusBar = new StatusBar();
  readonly executor: ExecutorService;
  readonly view: OpenHandsViewProvider;
  private hasKey = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly vscodeContext: vscode.ExtensionContext) {
    this.secrets = new SessionKeyStore(vscodeContext.secrets);
    this.consent = new Consent(vscodeContext.workspaceState);
    this.conversations = new ConversationResolver(vscodeContext.workspaceState);
    this.terminal = new AgentTerminal({ revealOnCommand: () => this.config.current.revealOnCommand });
    const version = String(vscodeContext.extension?.packageJSON?.version ?? '0.0.0');
    this.executor = new ExecutorService({
      config: () => this.config.current,
      sessionKey: () => this.executorCredential(),
      consent: (label, url) => this.consent.ensure(label, url),
      resolveConversation: (config, key) => this.conversations.resolve(config, key),
      forgetConversation: (url) => this.conversations.forget(url),
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
        const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
        return folder ? { root: folder.uri.fsPath, label: folder.name } : undefined;
      },
      log: this.log,
      terminal: this.terminal,
      activity: this.activity,
      notify: (error) => void this.notifier.error(error),
      logLevel: () => (this.log.channel.logLevel <= vscode.LogLevel.Debug && this.log.channel.logLevel !== vscode.LogLevel.Off ? 'debug' : 'info'),
      clientName: `openhands-tab/${version} vscode/${vscode.version}`,
    });
    this.terminal.onPrompt = (exitCode) => this.executor.promptSeen(exitCode);
    this.view = new OpenHandsViewProvider(() => void this.executor.start());
    this.disposables.push(
      this.config,
      this.log,
      this.activity,
      this.terminal,
      this.statusBar,
      this.executor,
      this.view,
      vscode.window.registerWebviewViewProvider('openhands.view', this.view, { webviewOptions: { retainContextWhenHidden: true } }),
      this.executor.onDidChange(() => this.refresh()),
      this.activity.onDidChange(() => this.refresh()),
      this.secrets.onDidChange(() => void this.refreshKey()),
      this.config.onDidChange((e) => {
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
    const found = await findExecutorCredential(await this.secrets.get(), this.config.current.serverUrl);
    this.log.info(`executor credential: ${found.detail}`);
    return found.key;
  }

  private async refreshKey(): Promise<void> {
    this.hasKey = Boolean(await this.secrets.get());
    this.refresh();
  }

  refresh(): void {
    const snap = this.executor.snapshot;
    this.statusBar.update(snap);
    this.view.update(buildViewModel(snap, this.activity.items, this.hasKey));
    void vscode.commands.executeCommand('setContext', 'openhands.state', snap.state);
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
