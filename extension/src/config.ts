import * as vscode from 'vscode';

/**
 * The extension's identifier (package.json publisher.name). `openhands.openhands-tab` was used
 * before; enyst/OpenHands-Tab has it too, and two extensions with one identifier cannot both be
 * installed.
 */
export const EXTENSION_ID = 'openhands-vscode-runtime.openhands-tab';

/** The settings section every key below lives in. */
export const SECTION = 'openhands';

/**
 * `tab`: the executor serves the conversation the OpenHands tab shows (created or picked there);
 * `attach`: it serves `openhands.conversation.id` (headless and CI use).
 */
export type ConversationMode = 'tab' | 'attach';

/**
 * Which OpenHands the tab talks to. `v1`: current OpenHands, through an agent-server the extension
 * runs itself (v1/agentServer.ts); `v0`: the OpenHands V0 server at `openhands.server.url`
 * (openhands-ai 1.6.0). The `auto` setting picks `v0` when the user set a server URL, else `v1`.
 */
export type Backend = 'v0' | 'v1';
export type BackendSetting = 'auto' | Backend;

/** A typed snapshot of the `openhands.*` settings. */
export interface OpenHandsConfig {
  readonly serverUrl: string;
  readonly conversationMode: ConversationMode;
  readonly conversationId: string;
  /**
   * True when attach mode or its conversation id comes from the workspace's settings (a
   * repository's `.vscode/settings.json`), not the user's: the consent prompt then names that
   * conversation and an answer for it is remembered apart (consent.ts).
   */
  readonly conversationFromWorkspace: boolean;
  readonly autoStart: boolean;
  readonly noChangeTimeoutSeconds: number;
  readonly revealOnCommand: boolean;
  /** A running V1 agent-server the tab attaches to (empty: the V0 server at `serverUrl`). */
  readonly v1Url: string;
  /** Where the V1 tools write their executor discovery files (empty: their default). */
  readonly v1DiscoveryDir: string;
  /** `openhands.v1.caFile`: a remote agent-server's certificate is checked with this CA (PEM) only (empty: the system's). */
  readonly v1CaFile: string;
  /** `openhands.v1.certSha256`: a remote agent-server's self-signed certificate, by its SHA-256 fingerprint (empty: none). */
  readonly v1CertSha256: string;
  /** V1 confirmation policy of the conversations the tab creates. */
  readonly v1Confirmation: 'never' | 'risky' | 'always';
  /** `openhands.mode` as set. */
  readonly backendSetting: BackendSetting;
  /** What `backendSetting` resolves to (see `Backend`). */
  readonly backend: Backend;
  /** `openhands.v1.python`: the interpreter of an environment with openhands-vscode-runtime[v1]; empty: the one the setup command made. */
  readonly v1Python: string;
  /** `openhands.v1.maxParallelConversations`: V1 conversations with an executor at once (the user's value only). */
  readonly v1MaxParallel: number;
  /** `openhands.v1.newConversationInWorktree`: new V1 conversations of the tab work in a git worktree. */
  readonly v1NewConversationInWorktree: boolean;
  /** `openhands.budgetPerConversation`: USD a conversation may cost before the tab pauses it; 0: none (the user's value only). */
  readonly budgetPerConversation: number;
}

export const DEFAULTS: OpenHandsConfig = {
  serverUrl: 'http://localhost:3000',
  conversationMode: 'tab',
  conversationId: '',
  conversationFromWorkspace: false,
  autoStart: false,
  noChangeTimeoutSeconds: 30,
  revealOnCommand: true,
  v1Url: '',
  v1DiscoveryDir: '',
  v1CaFile: '',
  v1CertSha256: '',
  v1Confirmation: 'never',
  backendSetting: 'auto',
  backend: 'v1',
  v1Python: '',
  v1MaxParallel: 4,
  v1NewConversationInWorktree: false,
  budgetPerConversation: 0,
};

/** Settings that, when changed, need the executor to reconnect to take effect. */
export const CONNECTION_KEYS = [
  'server.url',
  'conversation.mode',
  'conversation.id',
  'executor.noChangeTimeoutSeconds',
  'v1.url',
  'v1.discoveryDir',
  'v1.caFile',
  'v1.certSha256',
] as const;

interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

interface Getter {
  get<T>(key: string, defaultValue: T): T;
  inspect?<T>(key: string): Inspected<T> | undefined;
}

/**
 * Settings that say where the extension sends the session key, the executor credential and the
 * LLM key. A repository must not choose them: a committed `.vscode/settings.json` pointing
 * `openhands.server.url` elsewhere would receive the key before the user consents to anything.
 * They are `application`-scoped in package.json (VS Code then ignores workspace values) and read
 * here from the user's own value only, whatever the host does with the scope.
 */
export const USER_ONLY_KEYS = ['server.url', 'v1.url', 'v1.discoveryDir', 'v1.caFile', 'v1.certSha256', 'mode', 'v1.python', 'v1.maxParallelConversations', 'budgetPerConversation', 'v1.newConversationInWorktree'] as const;
// `v1.python` is what the extension runs; `mode` decides whether it runs it: neither is a
// repository's choice either, nor `v1.maxParallelConversations` and `budgetPerConversation`
// (guards: a workspace must not raise them), nor `v1.caFile` and `v1.certSha256` (which server
// certificate the keys and this window's shell are trusted to: a repository's CA could vouch for
// its own server); `v1.newConversationInWorktree` moves the agent's work out of the workspace
// folder (where git runs there: the user's call).

/**
 * The user's (global) value of a setting, or its default: never a workspace or folder value.
 * For the `application`/`machine` settings, whatever the host does with the scope (also used by
 * ide/index.ts for its allowlist and allowed origins).
 */
export function userValue<T>(section: Getter, key: string, fallback: T): T {
  if (!section.inspect) return section.get<T>(key, fallback);
  const i = section.inspect<T>(key);
  return i?.globalValue ?? i?.defaultValue ?? fallback;
}

/** A workspace or folder value of a user-only setting that is being ignored, for a warning. */
export function ignoredWorkspaceValues(section: Getter): { key: string; value: unknown }[] {
  const out: { key: string; value: unknown }[] = [];
  if (!section.inspect) return out;
  for (const key of USER_ONLY_KEYS) {
    const i = section.inspect<unknown>(key);
    const value = i?.workspaceFolderValue ?? i?.workspaceValue;
    if (value !== undefined) out.push({ key: `${SECTION}.${key}`, value });
  }
  return out;
}

/**
 * The origin (`scheme://host:port`, lower-case, default port dropped) the session key and the
 * execution consent are stored under: a key given for one server is never sent to another.
 */
export function serverOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url.trim().toLowerCase();
  }
}

/** The workspace's (folder's, else workspace's) own value of a setting, when it has one. */
function workspaceValue<T>(section: Getter, key: string): T | undefined {
  const i = section.inspect?.<T>(key);
  return i?.workspaceFolderValue ?? i?.workspaceValue;
}

const CONFIRMATION_ORDER = ['never', 'risky', 'always'] as const;

/**
 * The V1 confirmation policy: the strictest of every level's value (default, user, workspace,
 * folder). A repository may ask for more confirmation than the user, never for less: a committed
 * `"never"` does not override the user's `"always"`.
 */
function strictestConfirmation(section: Getter): OpenHandsConfig['v1Confirmation'] {
  const key = 'v1.confirmation';
  const i = section.inspect?.<string>(key);
  const values = i ? [i.defaultValue, i.globalValue, i.workspaceValue, i.workspaceFolderValue] : [section.get<string>(key, DEFAULTS.v1Confirmation)];
  let rank = 0;
  for (const v of values) if (v !== undefined) rank = Math.max(rank, CONFIRMATION_ORDER.indexOf(confirmationMode(v)));
  return CONFIRMATION_ORDER[rank];
}

/** Reads and normalises the settings from a configuration object. */
export function readConfig(section: Getter): OpenHandsConfig {
  const mode = section.get<string>('conversation.mode', DEFAULTS.conversationMode);
  const timeout = Number(section.get<number>('executor.noChangeTimeoutSeconds', DEFAULTS.noChangeTimeoutSeconds));
  const backendSetting = String(userValue<string>(section, 'mode', DEFAULTS.backendSetting));
  // auto: a server URL the user set means a V0 server they use; none means current OpenHands.
  const userServerUrl = section.inspect ? section.inspect<string>('server.url')?.globalValue : undefined;
  const backend: Backend = backendSetting === 'v0' || backendSetting === 'v1' ? backendSetting : userServerUrl !== undefined ? 'v0' : 'v1';
  return {
    serverUrl: normaliseServerUrl(userValue<string>(section, 'server.url', DEFAULTS.serverUrl)),
    // Anything but attach follows the tab.
    conversationMode: mode === 'attach' ? 'attach' : 'tab',
    conversationId: String(section.get<string>('conversation.id', '') ?? '').trim(),
    conversationFromWorkspace: mode === 'attach' && (workspaceValue(section, 'conversation.mode') !== undefined || workspaceValue(section, 'conversation.id') !== undefined),
    autoStart: Boolean(section.get<boolean>('executor.autoStart', DEFAULTS.autoStart)),
    noChangeTimeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULTS.noChangeTimeoutSeconds,
    revealOnCommand: Boolean(section.get<boolean>('terminal.revealOnCommand', DEFAULTS.revealOnCommand)),
    // Where the agent-server key and the executor secrets go: the user's own values only.
    v1Url: String(userValue<string>(section, 'v1.url', '') ?? '').trim().replace(/\/+$/, ''),
    v1DiscoveryDir: String(userValue<string>(section, 'v1.discoveryDir', '') ?? '').trim(),
    v1CaFile: String(userValue<string>(section, 'v1.caFile', '') ?? '').trim(),
    v1CertSha256: String(userValue<string>(section, 'v1.certSha256', '') ?? '').trim(),
    v1Confirmation: strictestConfirmation(section),
    backendSetting: backendSetting === 'v0' || backendSetting === 'v1' ? backendSetting : 'auto',
    backend,
    v1Python: String(userValue<string>(section, 'v1.python', DEFAULTS.v1Python) ?? '').trim(),
    v1MaxParallel: parallelLimit(userValue<number>(section, 'v1.maxParallelConversations', DEFAULTS.v1MaxParallel)),
    v1NewConversationInWorktree: userValue<boolean>(section, 'v1.newConversationInWorktree', DEFAULTS.v1NewConversationInWorktree) === true,
    // A guard on spending: a workspace's value could raise it, so only the user's counts.
    budgetPerConversation: budget(userValue<number>(section, 'budgetPerConversation', DEFAULTS.budgetPerConversation)),
  };
}

/** A non-negative amount of USD; anything else: no budget (0). */
function budget(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** A whole number from 1 to 64; anything else is the default. */
function parallelLimit(v: unknown): number {
  const n = Number(v);
  return Number.isInteger(n) && n >= 1 && n <= 64 ? n : DEFAULTS.v1MaxParallel;
}

function confirmationMode(v: unknown): OpenHandsConfig['v1Confirmation'] {
  return v === 'always' || v === 'risky' ? v : 'never';
}

/** Trims the URL and drops trailing slashes; an empty value falls back to the default. */
export function normaliseServerUrl(raw: string | undefined): string {
  const url = String(raw ?? '').trim().replace(/\/+$/, '');
  return url === '' ? DEFAULTS.serverUrl : url;
}

/** Returns a human-readable problem with the configuration, or undefined when it can be used. */
export function validateConfig(config: OpenHandsConfig): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(config.serverUrl);
  } catch {
    return `The OpenHands server URL "${config.serverUrl}" is not a valid URL.`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `The OpenHands server URL must start with http:// or https:// (got "${config.serverUrl}").`;
  }
  if (config.conversationMode === 'attach' && config.conversationId === '') {
    return 'Conversation mode is "attach" but no conversation id is set.';
  }
  return undefined;
}

/**
 * Live view of the settings: `current` is always fresh, `onDidChange` fires per relevant change.
 * `current` is read again only after a configuration change: reading it costs ~0.5-1 ms of the
 * extension host's thread (VS Code's `inspect` of each key), and the tab reads it on every change
 * of the executor's state, several times per agent action, on the thread the executor's file
 * callbacks wait for (docs/performance.md, "Where the rest went").
 */
export class Config implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.ConfigurationChangeEvent>();
  private readonly subscription: vscode.Disposable;
  readonly onDidChange = this.emitter.event;
  private cached: OpenHandsConfig | undefined;

  constructor() {
    // The extension host's configuration changes only with this event (fired after the change).
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      this.cached = undefined;
      if (e.affectsConfiguration(SECTION)) this.emitter.fire(e);
    });
  }

  private warned = new Set<string>();

  get current(): OpenHandsConfig {
    return (this.cached ??= this.read());
  }

  private read(): OpenHandsConfig {
    const section = vscode.workspace.getConfiguration(SECTION);
    for (const { key, value } of ignoredWorkspaceValues(section)) {
      const id = `${key}=${JSON.stringify(value)}`;
      if (this.warned.has(id)) continue;
      this.warned.add(id);
      void vscode.window.showWarningMessage(
        `OpenHands ignores "${key}" from this workspace's settings (${JSON.stringify(value)}): ` +
          'it is a user setting only (where keys go, what runs, its guards). Set it in your user settings if you trust this workspace.',
      );
    }
    return readConfig(section);
  }

  /** True when the change touches a setting the running executor was started with. */
  static affectsConnection(e: vscode.ConfigurationChangeEvent): boolean {
    return CONNECTION_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
  }

  /** Opens the Settings editor filtered to this extension's settings. */
  static openSettings(query = `@ext:${EXTENSION_ID}`): Thenable<unknown> {
    return vscode.commands.executeCommand('workbench.action.openSettings', query);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
