import * as vscode from 'vscode';
import { FIX_LABELS, isCertificateRefusal, type Fix } from './fixes';
import type { ErrorCode } from './native';
import { EXTENSION_ID } from './config';

/** What the user can do about an error; each maps to a button on the notification. */
export type { Fix } from './fixes';

/** The Settings editor's query that shows `openhands.v1.caFile` and `openhands.v1.certSha256`. */
export const CERTIFICATE_SETTINGS_QUERY = `@ext:${EXTENSION_ID} certificate`;

export interface UserError {
  message: string;
  fixes: Fix[];
}

/** The fixes for an error of the executor addon, by its code. */
export function executorError(code: ErrorCode | undefined, message: string): UserError {
  switch (code) {
    case 'EAUTH':
      // EAUTH is also the executor's refusal of a certificate: a key would not fix that.
      return { message, fixes: isCertificateRefusal(message) ? ['certificate', 'retry'] : ['key', 'retry'] };
    case 'ENORUNTIME':
    case 'EREFUSED':
    case 'EUNREACHABLE':
      return { message, fixes: ['settings', 'retry'] };
    case 'EPROTOCOL':
    case 'ESHELL':
      return { message, fixes: ['logs'] };
    case 'ESTOPPED':
    case undefined:
      return { message, fixes: ['retry', 'logs'] };
  }
}

/**
 * Decides which fixes to offer for an error message of the OpenHands server's HTTP API (which
 * has no error codes) or of our own code.
 */
export function classify(message: string): UserError {
  const m = message.toLowerCase();
  if (m.includes('session_api_key') || m.includes('session api key') || /\b(401|403)\b/.test(m)) {
    return { message, fixes: ['key', 'retry'] };
  }
  if (m.includes('not a valid url') || m.includes('must start with http') || m.includes('conversation mode')) {
    return { message, fixes: ['settings'] };
  }
  if (m.includes('cannot reach') || m.includes('econnrefused') || m.includes('connect') || m.includes('timed out') || m.includes('timeout')) {
    return { message, fixes: ['settings', 'retry'] };
  }
  return { message, fixes: ['retry', 'logs'] };
}

const COMMANDS: Record<Fix, () => Thenable<unknown>> = {
  settings: () => vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${EXTENSION_ID}`),
  // The two settings a remote agent-server's certificate is trusted by (user settings only).
  certificate: () => vscode.commands.executeCommand('workbench.action.openSettings', CERTIFICATE_SETTINGS_QUERY),
  key: () => vscode.commands.executeCommand('openhands.setSessionApiKey'),
  retry: () => vscode.commands.executeCommand('openhands.reconnect'),
  trust: () => vscode.commands.executeCommand('workbench.trust.manage'),
  consent: () => vscode.commands.executeCommand('openhands.start'),
  logs: () => vscode.commands.executeCommand('openhands.showLogs'),
  llm: () => vscode.commands.executeCommand('openhands.setLlmSettings'),
  start: () => vscode.commands.executeCommand('openhands.start'),
  // The tab handles its own `budget` button (TabSession.raiseBudget); elsewhere: the setting.
  budget: () => vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.budgetPerConversation'),
  setup: () => vscode.commands.executeCommand('openhands.v1.setUpEnvironment'),
};

export function fixLabel(fix: Fix): string {
  return FIX_LABELS[fix];
}

export function runFix(fix: Fix): Thenable<unknown> {
  return COMMANDS[fix]();
}

/**
 * Shows an error notification with one button per fix, at most once per distinct message at a
 * time (a reconnect loop must not stack up notifications).
 */
export class Notifier {
  private readonly showing = new Set<string>();

  async error(error: UserError): Promise<void> {
    if (this.showing.has(error.message)) return;
    this.showing.add(error.message);
    try {
      const labels = error.fixes.map(fixLabel);
      const picked = await vscode.window.showErrorMessage(`OpenHands: ${error.message}`, ...labels);
      const fix = error.fixes.find((f) => fixLabel(f) === picked);
      if (fix) await runFix(fix);
    } finally {
      this.showing.delete(error.message);
    }
  }

  async warn(message: string, actions: Array<{ label: string; run: () => Thenable<unknown> | void }> = []): Promise<void> {
    if (this.showing.has(message)) return;
    this.showing.add(message);
    try {
      const picked = await vscode.window.showWarningMessage(`OpenHands: ${message}`, ...actions.map((a) => a.label));
      await actions.find((a) => a.label === picked)?.run();
    } finally {
      this.showing.delete(message);
    }
  }
}
