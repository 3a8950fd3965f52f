import * as vscode from 'vscode';
import type { ActivityEntry } from './activity';
import type { ExecutorSnapshot } from './executorService';
import { fixLabel, runFix, type Fix } from './userErrors';

export const VIEW_ID = 'openhands.view';

/** What the webview renders: a plain, serialisable model (unit-tested without a webview). */
export interface ViewModel {
  state: ExecutorSnapshot['state'];
  stateLabel: string;
  message?: string;
  /** What is executing right now, e.g. "run npm test". */
  activity?: string;
  fixes: Array<{ fix: Fix; label: string }>;
  serverUrl: string;
  conversationId?: string;
  workspaceRoot?: string;
  hasKey: boolean;
  actions: Array<Pick<ActivityEntry, 'id' | 'kind' | 'summary' | 'status' | 'result'> & { duration?: string }>;
}

const STATE_LABELS: Record<ExecutorSnapshot['state'], string> = {
  stopped: 'Stopped',
  starting: 'Starting…',
  connecting: 'Connecting…',
  connected: 'Connected',
  executing: 'Executing',
  error: 'Error',
  blocked: 'Not allowed',
};

export function buildViewModel(s: ExecutorSnapshot, actions: readonly ActivityEntry[], hasKey: boolean): ViewModel {
  return {
    state: s.state,
    stateLabel: STATE_LABELS[s.state],
    message: s.message,
    activity: s.state === 'executing' ? s.activity : undefined,
    fixes: (s.fixes ?? []).map((fix) => ({ fix, label: fixLabel(fix) })),
    serverUrl: s.serverUrl,
    conversationId: s.conversationId,
    workspaceRoot: s.workspaceRoot,
    hasKey,
    actions: actions.slice(0, 30).map((a) => ({
      id: a.id,
      kind: a.kind,
      summary: relativize(a.summary, s.workspaceRoot),
      status: a.status,
      result: a.result === undefined ? undefined : relativize(a.result, s.workspaceRoot),
      duration: a.finishedAt !== undefined ? formatDuration(a.finishedAt - a.startedAt) : undefined,
    })),
  };
}

/** Shows paths inside the workspace relative to it (`/ws/src/a.py` -> `src/a.py`, `/ws` -> `.`). */
export function relativize(text: string, root: string | undefined): string {
  if (!root) return text;
  const r = root.replace(/\/+$/, '');
  return text.split(`${r}/`).join('').replace(new RegExp(`${r.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=$|[\\s·])`, 'g'), '.');
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

type Message = { type: 'command'; command: string } | { type: 'fix'; fix: Fix } | { type: 'ready' };

const ALLOWED_COMMANDS = new Set([
  'openhands.start', 'openhands.stop', 'openhands.reconnect', 'openhands.setSessionApiKey',
  'openhands.showLogs', 'openhands.showTerminal',
]);

/**
 * The OpenHands tab: a WebviewView showing the connection, the conversation and recent actions.
 * Resolving it (the user opened the tab) calls `onResolved`, which starts the executor.
 */
export class OpenHandsViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private model: ViewModel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly onResolved: () => void) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [] };
    view.webview.html = renderHtml(makeNonce(), view.webview.cspSource);
    this.disposables.push(
      view.webview.onDidReceiveMessage((m: Message) => this.onMessage(m)),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
      view.onDidChangeVisibility(() => this.post()),
    );
    this.post();
    this.onResolved();
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  update(model: ViewModel): void {
    this.model = model;
    this.post();
  }

  private post(): void {
    if (this.view && this.model) void this.view.webview.postMessage({ type: 'model', model: this.model });
  }

  private onMessage(m: Message): void {
    if (m?.type === 'ready') this.post();
    else if (m?.type === 'command' && ALLOWED_COMMANDS.has(m.command)) void vscode.commands.executeCommand(m.command);
    else if (m?.type === 'fix') void runFix(m.fix);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

/** The static page; the script renders each model it receives (textContent only, no innerHTML of data). */
export function renderHtml(nonce: string, cspSource: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
  body { padding: 8px 12px; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
  .state { display: flex; align-items: center; gap: 8px; font-weight: 600; font-size: 1.1em; margin: 4px 0 8px; }
  .dot { width: 10px; height: 10px; border-radius: 50%; background: var(--vscode-disabledForeground); flex: none; }
  .dot.connected { background: var(--vscode-testing-iconPassed, #73c991); }
  .dot.executing { background: var(--vscode-charts-blue, #3794ff); animation: pulse 1s infinite; }
  .dot.starting, .dot.connecting { background: var(--vscode-charts-yellow, #cca700); animation: pulse 1s infinite; }
  .dot.error { background: var(--vscode-errorForeground, #f14c4c); }
  .dot.blocked { background: var(--vscode-editorWarning-foreground, #cca700); }
  @keyframes pulse { 50% { opacity: .35; } }
  .message { margin: 0 0 8px; padding: 6px 8px; border-left: 3px solid var(--vscode-inputValidation-warningBorder, #cca700); background: var(--vscode-textBlockQuote-background); white-space: pre-wrap; word-break: break-word; }
  .message.error { border-left-color: var(--vscode-errorForeground, #f14c4c); }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; margin: 0 0 10px; }
  dt { color: var(--vscode-descriptionForeground); }
  dd { margin: 0; word-break: break-all; font-family: var(--vscode-editor-font-family); font-size: .95em; }
  .buttons { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 12px; }
  button { border: none; padding: 4px 10px; border-radius: 2px; cursor: pointer; color: var(--vscode-button-foreground); background: var(--vscode-button-background); font-family: inherit; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
  button.secondary:hover { background: var(--vscode-button-secondaryHoverBackground); }
  h3 { font-size: .85em; text-transform: uppercase; letter-spacing: .04em; color: var(--vscode-descriptionForeground); margin: 14px 0 6px; font-weight: 600; }
  ul { list-style: none; padding: 0; margin: 0; }
  li { padding: 5px 0; border-bottom: 1px solid var(--vscode-widget-border, rgba(128,128,128,.2)); }
  .row { display: flex; gap: 6px; align-items: baseline; }
  .icon { width: 1.1em; flex: none; text-align: center; }
  .icon.ok { color: var(--vscode-testing-iconPassed, #73c991); }
  .icon.error { color: var(--vscode-errorForeground, #f14c4c); }
  .icon.running { color: var(--vscode-charts-blue, #3794ff); }
  .kind { font-size: .8em; padding: 0 4px; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); flex: none; }
  .summary { font-family: var(--vscode-editor-font-family); font-size: .95em; word-break: break-all; }
  .result { color: var(--vscode-descriptionForeground); font-size: .9em; margin-left: 1.6em; word-break: break-word; }
  .activity { margin: -4px 0 8px 18px; font-family: var(--vscode-editor-font-family); font-size: .95em; color: var(--vscode-descriptionForeground); word-break: break-all; }
  .empty { color: var(--vscode-descriptionForeground); font-style: italic; }
</style>
</head>
<body>
  <div class="state"><span id="dot" class="dot"></span><span id="state">Loading…</span></div>
  <div id="activity" class="activity" hidden></div>
  <div id="message" class="message" hidden></div>
  <div id="fixes" class="buttons"></div>
  <dl>
    <dt>Server</dt><dd id="server">–</dd>
    <dt>Conversation</dt><dd id="conversation">–</dd>
    <dt>Workspace</dt><dd id="workspace">–</dd>
    <dt>API key</dt><dd id="key">–</dd>
  </dl>
  <div class="buttons">
    <button id="start" data-command="openhands.start">Start</button>
    <button id="stop" data-command="openhands.stop" class="secondary">Stop</button>
    <button data-command="openhands.reconnect" class="secondary">Reconnect</button>
    <button data-command="openhands.showTerminal" class="secondary">Agent Terminal</button>
    <button data-command="openhands.showLogs" class="secondary">Logs</button>
  </div>
  <h3>Recent actions</h3>
  <ul id="actions"><li class="empty">No actions yet.</li></ul>
<script nonce="${nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  document.querySelectorAll('button[data-command]').forEach((b) => b.addEventListener('click', () => vscode.postMessage({ type: 'command', command: b.dataset.command })));
  const ICONS = { ok: '✓', error: '✗', running: '●' };
  function render(m) {
    $('dot').className = 'dot ' + m.state;
    $('state').textContent = m.stateLabel;
    document.body.dataset.state = m.state;
    const act = $('activity');
    act.hidden = !m.activity;
    act.textContent = m.activity || '';
    const msg = $('message');
    msg.hidden = !m.message;
    msg.textContent = m.message || '';
    msg.className = 'message' + (m.state === 'error' ? ' error' : '');
    const fixes = $('fixes');
    fixes.replaceChildren(...m.fixes.map((f) => { const b = el('button', '', f.label); b.addEventListener('click', () => vscode.postMessage({ type: 'fix', fix: f.fix })); return b; }));
    $('server').textContent = m.serverUrl;
    $('conversation').textContent = m.conversationId || '–';
    $('workspace').textContent = m.workspaceRoot || '–';
    $('key').textContent = m.hasKey ? 'set (secret storage)' : 'not set';
    const active = ['starting', 'connecting', 'connected', 'executing'].includes(m.state);
    $('start').hidden = active;
    $('stop').hidden = !active;
    const list = $('actions');
    if (m.actions.length === 0) { list.replaceChildren(el('li', 'empty', 'No actions yet.')); return; }
    list.replaceChildren(...m.actions.map((a) => {
      const li = el('li');
      li.dataset.status = a.status;
      const row = el('div', 'row');
      row.append(el('span', 'icon ' + a.status, ICONS[a.status] || '?'), el('span', 'kind', a.kind), el('span', 'summary', a.summary));
      li.append(row);
      const r = [a.result, a.duration].filter(Boolean).join(' · ');
      if (r) li.append(el('div', 'result', r));
      return li;
    }));
  }
  window.addEventListener('message', (e) => { if (e.data && e.data.type === 'model') render(e.data.model); });
  vscode.postMessage({ type: 'ready' });
})();
</script>
</body>
</html>`;
}
