/**
 * What the user can do about a problem, and the label of its button. Free of `vscode` so the
 * tab's session logic (tab/tabSession.ts) and the notifications (userErrors.ts) share one list; the
 * commands behind each fix live in userErrors.ts.
 */
import { ServerError } from './tab/http';
import type { Problem } from './webview/protocol';

export type Fix = 'settings' | 'certificate' | 'key' | 'retry' | 'trust' | 'consent' | 'logs' | 'llm' | 'start' | 'budget' | 'setup';

export const FIX_LABELS: Record<Fix, string> = {
  settings: 'Open Settings',
  certificate: 'Set Certificate Trust',
  key: 'Set Session API Key',
  retry: 'Retry',
  trust: 'Manage Workspace Trust',
  consent: 'Allow',
  logs: 'Show Logs',
  llm: 'Set LLM Model and Key',
  start: 'Start Executor',
  budget: 'Raise the Budget and Continue',
  setup: 'Set Up and Start',
};

/** A problem of the tab, with a button per fix. */
export function problemOf(id: string, message: string, fixes: Fix[]): Problem {
  return { id, message, fixes: fixes.map((fix) => ({ fix, label: FIX_LABELS[fix] })) };
}

/**
 * A request to the server failed (the V0 server or the V1 agent-server, same kinds): the `server`
 * problem and what fixes it. Unreachable: the URL setting; a refused certificate: the CA file and
 * pin settings; a refused key: the key.
 */
export function serverProblemOf(e: unknown): Problem {
  if (e instanceof ServerError) {
    if (e.kind === 'unreachable') return problemOf('server', e.message, ['settings', 'retry']);
    // The server answered with a certificate the settings do not trust: the CA / pin settings, not the key.
    if (e.kind === 'tls') return problemOf('server', e.message, ['certificate', 'retry']);
    if (e.kind === 'auth') return problemOf('server', e.message, ['key', 'retry']);
    return problemOf('server', e.message, ['retry', 'logs']);
  }
  return problemOf('server', (e as Error)?.message ?? String(e), ['retry', 'logs']);
}

/**
 * Whether an executor error (`EAUTH`) is its refusal of the server's certificate rather than of the
 * key: the addon's messages for both (crates/oh-transport, docs/remote.md).
 */
export function isCertificateRefusal(message: string): boolean {
  return /TLS certificate was not accepted|not the pinned|certificate's SHA-256 fingerprint/i.test(message);
}
