import * as vscode from 'vscode';
import { serverOrigin } from './config';

/** SecretStorage keys: one per server origin (`openhands.sessionApiKey@http://127.0.0.1:3000`). */
const PREFIX = 'openhands.sessionApiKey@';
/** Before keys were per origin: one key for whatever server the settings named. */
const LEGACY_KEY = 'openhands.sessionApiKey';

export const sessionKeyName = (serverUrl: string) => `${PREFIX}${serverOrigin(serverUrl)}`;

/**
 * The session API key, kept in VS Code's SecretStorage (never in settings), per server origin: a
 * key given for one server is never sent to another, and a server the user never gave a key to
 * gets none (the user is asked again).
 */
export class SessionKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /**
   * The key for `serverUrl`'s origin. A key stored before keys were per origin is moved to the
   * origin it is first asked for: the server URL is a user setting only (config.ts), so that is
   * the server the user configured.
   */
  async get(serverUrl: string): Promise<string | undefined> {
    const name = sessionKeyName(serverUrl);
    const key = await this.secrets.get(name);
    if (key !== undefined) return key;
    const legacy = await this.secrets.get(LEGACY_KEY);
    if (legacy === undefined) return undefined;
    await this.secrets.store(name, legacy);
    await this.secrets.delete(LEGACY_KEY);
    return legacy;
  }

  async set(serverUrl: string, value: string): Promise<void> {
    const trimmed = value.trim();
    if (trimmed === '') await this.secrets.delete(sessionKeyName(serverUrl));
    else await this.secrets.store(sessionKeyName(serverUrl), trimmed);
  }

  clear(serverUrl: string): Thenable<void> {
    return this.secrets.delete(sessionKeyName(serverUrl));
  }

  /** Fires when a session key is changed from this or another window. */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => {
      if (e.key.startsWith(PREFIX)) listener();
    });
  }

  /** Asks the user for `serverUrl`'s key (password box) and stores it. Returns false when cancelled. */
  async prompt(serverUrl: string): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: 'OpenHands: Session API Key',
      prompt: `The key the OpenHands server at ${serverOrigin(serverUrl)} expects (X-Session-API-Key). Leave empty to remove it.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    await this.set(serverUrl, value);
    return true;
  }
}
