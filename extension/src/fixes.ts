/**
 * What the user can do about a problem, and the label of its button. Free of `vscode` so the
 * tab's session logic (chatSession.ts) and the notifications (userErrors.ts) share one list; the
 * commands behind each fix live in userErrors.ts.
 */
export type Fix = 'settings' | 'key' | 'retry' | 'trust' | 'consent' | 'logs' | 'llm' | 'start';

export const FIX_LABELS: Record<Fix, string> = {
  settings: 'Open Settings',
  key: 'Set Session API Key',
  retry: 'Retry',
  trust: 'Manage Workspace Trust',
  consent: 'Allow',
  logs: 'Show Logs',
  llm: 'Set LLM Model and Key',
  start: 'Start Executor',
};
