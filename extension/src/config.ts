import * as vscode from 'vscode';

/** The settings section every key below lives in. */
export const SECTION = 'openhands';

/**
 * `tab`: the executor serves the conversation the OpenHands tab shows (created or picked there);
 * `attach`: it serves `openhands.conversation.id` (headless and CI use).
 */
export type ConversationMode = 'tab' | 'attach';

/** A typed snapshot of the `openhands.*` settings. */
export interface OpenHandsConfig {
  readonly serverUrl: string;
  readonly conversationMode: ConversationMode;
  readonly conversationId: string;
  readonly autoStart: boolean;
  readonly noChangeTimeoutSeconds: number;
  readonly revealOnCommand: boolean;
}

export const DEFAULTS: OpenHandsConfig = {
  serverUrl: 'http://localhost:3000',
  conversationMode: 'tab',
  conversationId: '',
  autoStart: false,
  noChangeTimeoutSeconds: 30,
  revealOnCommand: true,
};

/** Settings that, when changed, need the executor to reconnect to take effect. */
export const CONNECTION_KEYS = [
  'server.url',
  'conversation.mode',
  'conversation.id',
  'executor.noChangeTimeoutSeconds',
] as const;

interface Getter {
  get<T>(key: string, defaultValue: T): T;
}

/** Reads and normalises the settings from a configuration object. */
export function readConfig(section: Getter): OpenHandsConfig {
  const mode = section.get<string>('conversation.mode', DEFAULTS.conversationMode);
  const timeout = Number(section.get<number>('executor.noChangeTimeoutSeconds', DEFAULTS.noChangeTimeoutSeconds));
  return {
    serverUrl: normaliseServerUrl(section.get<string>('server.url', DEFAULTS.serverUrl)),
    // Anything but attach follows the tab.
    conversationMode: mode === 'attach' ? 'attach' : 'tab',
    conversationId: String(section.get<string>('conversation.id', '') ?? '').trim(),
    autoStart: Boolean(section.get<boolean>('executor.autoStart', DEFAULTS.autoStart)),
    noChangeTimeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULTS.noChangeTimeoutSeconds,
    revealOnCommand: Boolean(section.get<boolean>('terminal.revealOnCommand', DEFAULTS.revealOnCommand)),
  };
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

/** Live view of the settings: `current` is always fresh, `onDidChange` fires per relevant change. */
export class Config implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.ConfigurationChangeEvent>();
  private readonly subscription: vscode.Disposable;
  readonly onDidChange = this.emitter.event;

  constructor() {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SECTION)) this.emitter.fire(e);
    });
  }

  get current(): OpenHandsConfig {
    return readConfig(vscode.workspace.getConfiguration(SECTION));
  }

  /** True when the change touches a setting the running executor was started with. */
  static affectsConnection(e: vscode.ConfigurationChangeEvent): boolean {
    return CONNECTION_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`));
  }

  /** Opens the Settings editor filtered to this extension's settings. */
  static openSettings(query = `@ext:openhands.openhands-tab`): Thenable<unknown> {
    return vscode.commands.executeCommand('workbench.action.openSettings', query);
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }
}
