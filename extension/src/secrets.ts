import * as vscode from 'vscode';

const KEY = 'openhands.sessionApiKey';

/** The session API key, kept in VS Code's SecretStorage (never in settings). */
export class SessionKeyStore {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(): Thenable<string | undefined> {
    return this.secrets.get(KEY);
  }

  async set(value: string): Promise<void> {
    const trimmed = value.trim();
    if (trimmed === '') await this.secrets.delete(KEY);
    else await this.secrets.store(KEY, trimmed);
  }

  clear(): Thenable<void> {
    return this.secrets.delete(KEY);
  }

  /** Fires when the key is changed from this or another window. */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => {
      if (e.key === KEY) listener();
    });
  }

  /** Asks the user for the key (password box) and stores it. Returns false when cancelled. */
  async prompt(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: 'OpenHands: Session API Key',
      prompt: 'The key the OpenHands server expects (X-Session-API-Key). Leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (value === undefined) return false;
    await this.set(value);
    return true;
  }
}
