import * as vscode from 'vscode';
import type { ActivityEntry } from './activity';
import type { ExecutorSnapshot } from './executorService';
import { fixLabel, type Fix } from './userErrors';
import type { HostToView, TabStatus, ViewToHost } from './webview/protocol';
import { makeNonce, webviewPage } from './webviewPage';

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
  actions: Array<Pick<ActivityEntry, 'id' | 'kind' | 'summary' | 'status' | 'result'> & { duration?: string; durationMs?: number }>;
}

export const STATE_LABELS: Record<ExecutorSnapshot['state'], string> = {
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
      durationMs: a.finishedAt !== undefined ? a.finishedAt - a.startedAt : undefined,
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

/** The executor part of the tab's status (state label, recent actions of this window's executor). */
export function executorDetails(m: ViewModel): Partial<TabStatus['executor']> {
  return {
    label: m.stateLabel + (m.activity ? ` (${m.activity.length > 48 ? `${m.activity.slice(0, 48)}…` : m.activity})` : ''),
    hasKey: m.hasKey,
    actions: m.actions.map((a) => ({ kind: a.kind, summary: a.summary, status: a.status, result: a.result, durationMs: a.durationMs })),
  };
}

/** Commands the page may run (its buttons); anything else it posts is ignored. */
export const ALLOWED_COMMANDS = new Set([
  'openhands.start', 'openhands.stop', 'openhands.reconnect', 'openhands.setSessionApiKey',
  'openhands.showLogs', 'openhands.showTerminal',
  'openhands.v1.reviewWorktree', 'openhands.v1.applyWorktree', 'openhands.v1.discardWorktree',
  // The "Changes" list (review/hunkReview.ts); openFile takes a path, and opens only a file of the turn.
  'openhands.changes.openFile', 'openhands.changes.keepAll', 'openhands.changes.undoAll', 'openhands.changes.sendUndone',
]);

/**
 * The OpenHands tab: a WebviewView with the conversation (chat, event stream, Stop/Continue,
 * first-use LLM settings, problems with their fixes) and this window's executor. The page is
 * `dist/webview.js`; this class only relays messages (`webview/protocol.ts`).
 */
export class OpenHandsViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private badge: vscode.ViewBadge | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (m: ViewToHost) => void,
    private readonly onResolved: () => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist] };
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString();
    view.webview.html = renderHtml(makeNonce(), view.webview.cspSource, script);
    view.badge = this.badge;
    this.disposables.push(
      view.webview.onDidReceiveMessage((m: ViewToHost) => {
        if (m && typeof m === 'object' && typeof m.type === 'string') this.onMessage(m);
      }),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
    this.onResolved();
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** The view's badge: how many background conversations need the user (0: none). */
  setBadge(count: number, tooltip: string): void {
    this.badge = count > 0 ? { value: count, tooltip } : undefined;
    if (this.view) this.view.badge = this.badge;
  }

  get badgeValue(): number {
    return this.badge?.value ?? 0;
  }

  /** Posts to the page if it exists (it asks for everything again with "ready" when it loads). */
  post(message: HostToView): void {
    if (this.view) void this.view.webview.postMessage(message);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** The tab's static page (shell and CSP in webviewPage.ts): the script fills it in. */
export function renderHtml(nonce: string, cspSource: string, scriptUri: string): string {
  return webviewPage({ nonce, cspSource, scriptUri, style: VIEW_STYLE, body: VIEW_BODY });
}

const VIEW_STYLE = `  html, body { height: 100%; }
  body { margin: 0; padding: 0; display: flex; flex-direction: column; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
  header { padding: 6px 10px 4px; border-bottom: 1px solid var(--vscode-widget-border, rgba(128,128,128,.25)); }
  .state { display: flex; align-items: center; gap: 8px; font-weight: 600; margin: 2px 0 6px; }
  .dot { width: 9px; height: 9px; border-radius: 50%; background: var(--vscode-disabledForeground); flex: none; }
  .dot.connected { background: var(--vscode-testing-iconPassed, #73c991); }
  .dot.executing { background: var(--vscode-charts-blue, #3794ff); animation: pulse 1s infinite; }
  .dot.starting, .dot.connecting { background: var(--vscode-charts-yellow, #cca700); animation: pulse 1s infinite; }
  .dot.error { background: var(--vscode-errorForeground, #f14c4c); }
  .dot.blocked { background: var(--vscode-editorWarning-foreground, #cca700); }
  @keyframes pulse { 50% { opacity: .35; } }
  .row { display: flex; gap: 4px; align-items: center; }
  select { flex: 1; min-width: 0; background: var(--vscode-dropdown-background); color: var(--vscode-dropdown-foreground); border: 1px solid var(--vscode-dropdown-border, transparent); padding: 2px; font-family: inherit; }
  .meta { color: var(--vscode-descriptionForeground); font-size: .9em; margin-top: 4px; word-break: break-word; }
  .meta div { margin: 1px 0; }
  button { border: none; padding: 3px 10px; border-radius: 2px; cursor: pointer; color: var(--vscode-button-foreground); background: var(--vscode-button-background); font-family: inherit; }
  button:hover { background: var(--vscode-button-hoverBackground); }
  button:disabled { opacity: .5; cursor: default; }
  button.link { padding: 0 4px; font-size: .9em; }
  button.secondary { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
  .buttons { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 6px; }
  /* A display rule (.buttons) would otherwise show an element the page hides. */
  [hidden] { display: none !important; }
  #problems { padding: 0 10px; }
  .problem { margin: 6px 0; padding: 6px 8px; border-left: 3px solid var(--vscode-errorForeground, #f14c4c); background: var(--vscode-inputValidation-errorBackground, rgba(241,76,76,.1)); white-space: pre-wrap; word-break: break-word; }
  form { margin: 6px 10px; padding: 8px; border: 1px solid var(--vscode-widget-border, rgba(128,128,128,.35)); }
  form label { display: block; margin: 6px 0 2px; color: var(--vscode-descriptionForeground); }
  input, textarea { width: 100%; box-sizing: border-box; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, transparent); padding: 4px; font-family: inherit; font-size: inherit; }
  #scroll { flex: 1; overflow-y: auto; padding: 4px 10px; }
  .empty { color: var(--vscode-descriptionForeground); font-style: italic; margin: 12px 0; }
  .item { margin: 6px 0; word-break: break-word; }
  .msg { padding: 4px 8px; border-radius: 4px; }
  .msg.user { background: var(--vscode-textBlockQuote-background); }
  .msg.finish { border-left: 3px solid var(--vscode-testing-iconPassed, #73c991); }
  .who { font-size: .8em; font-weight: 600; color: var(--vscode-descriptionForeground); }
  .md p { margin: 4px 0; } .md ul, .md ol { margin: 4px 0; padding-left: 20px; }
  code { font-family: var(--vscode-editor-font-family); font-size: .95em; background: var(--vscode-textCodeBlock-background); padding: 0 2px; }
  pre { font-family: var(--vscode-editor-font-family); font-size: .9em; background: var(--vscode-textCodeBlock-background); padding: 6px; overflow-x: auto; white-space: pre-wrap; margin: 4px 0; max-height: 320px; overflow-y: auto; }
  pre code { background: none; padding: 0; }
  .thought { color: var(--vscode-descriptionForeground); font-style: italic; }
  details.action summary { cursor: pointer; display: flex; gap: 6px; align-items: baseline; list-style: none; }
  details.action summary::-webkit-details-marker { display: none; }
  .icon { width: 1em; flex: none; text-align: center; }
  .icon.ok { color: var(--vscode-testing-iconPassed, #73c991); }
  .icon.error { color: var(--vscode-errorForeground, #f14c4c); }
  .icon.running { color: var(--vscode-charts-blue, #3794ff); }
  .kind { font-size: .8em; padding: 0 4px; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); flex: none; }
  .title { font-family: var(--vscode-editor-font-family); word-break: break-all; flex: 1; }
  .meta-r, summary .meta { color: var(--vscode-descriptionForeground); font-size: .85em; flex: none; }
  .diff .add { color: var(--vscode-gitDecoration-addedResourceForeground, #81b88b); }
  .diff .del { color: var(--vscode-gitDecoration-deletedResourceForeground, #c74e39); }
  .error { color: var(--vscode-errorForeground, #f14c4c); white-space: pre-wrap; }
  .state-change, .status { color: var(--vscode-descriptionForeground); font-size: .85em; text-align: center; }
  .status.error { color: var(--vscode-errorForeground, #f14c4c); }
  footer { padding: 6px 10px 8px; border-top: 1px solid var(--vscode-widget-border, rgba(128,128,128,.25)); }
  #pending { color: var(--vscode-descriptionForeground); font-size: .85em; margin-bottom: 4px; }
  textarea { resize: vertical; min-height: 3.2em; }
  #confirm-bar { border: 1px solid var(--vscode-editorWarning-foreground, #cca700); padding: 6px 8px; margin-bottom: 6px; }
  #confirm-title { font-family: var(--vscode-editor-font-family); word-break: break-all; margin: 4px 0; white-space: pre-wrap; max-height: 120px; overflow-y: auto; }
  #activity-section { margin-top: 6px; font-size: .9em; }
  #changes-section { margin-bottom: 6px; font-size: .9em; }
  #changes { list-style: none; padding: 0; margin: 4px 0; max-height: 160px; overflow-y: auto; }
  #changes button.file { background: none; color: var(--vscode-textLink-foreground); padding: 0 2px; font-family: var(--vscode-editor-font-family); word-break: break-all; text-align: left; }
  #changes .add { color: var(--vscode-gitDecoration-addedResourceForeground, #81b88b); margin-left: .5em; }
  #changes .del { color: var(--vscode-gitDecoration-deletedResourceForeground, #c74e39); margin-left: .3em; }
  #changes-undone { color: var(--vscode-descriptionForeground); }
  #usage.over { color: var(--vscode-errorForeground); }
  #activity { list-style: none; padding: 0; margin: 4px 0; max-height: 160px; overflow-y: auto; }
  #activity li { padding: 2px 0; }
  #activity .summary { font-family: var(--vscode-editor-font-family); word-break: break-all; }
  #activity .result { color: var(--vscode-descriptionForeground); margin-left: 1.6em; }`;

const VIEW_BODY = `  <header>
    <div class="state"><span id="dot" class="dot"></span><span id="state">Loading…</span></div>
    <div class="row">
      <select id="conversation" title="Conversation"></select>
      <button id="new" title="Start a new conversation">New</button>
      <button id="refresh" class="secondary" title="Reload conversations">↻</button>
    </div>
    <div class="meta">
      <div id="where"></div>
      <div id="worktree-actions" class="buttons" hidden><button class="secondary" data-command="openhands.v1.reviewWorktree" title="The worktree's changes against its base, file by file">Review changes</button><button class="secondary" data-command="openhands.v1.applyWorktree" title="Carry the worktree's changes onto the workspace folder">Apply to workspace</button><button class="secondary" data-command="openhands.v1.discardWorktree" title="Remove the worktree and its branch">Discard</button></div>
      <div id="place" title="Where the agent runs; its commands and file edits run in this window"></div>
      <div id="executor"></div>
      <div id="runtime"></div>
      <div id="usage" title="What this conversation has cost and how full its context is, as the server reports it"></div>
      <div><span id="server"></span> · <span id="key"></span> · <button id="llm-edit" class="secondary link">LLM settings</button></div>
    </div>
  </header>
  <div id="problems"></div>
  <form id="llm-form" hidden>
    <strong>LLM settings of the OpenHands server</strong>
    <label for="llm-model">Model (LiteLLM name)</label>
    <input id="llm-model" placeholder="e.g. anthropic/claude-sonnet-4-20250514 or openai/gpt-4o" autocomplete="off">
    <label for="llm-base">Base URL (optional)</label>
    <input id="llm-base" placeholder="only for OpenAI-compatible servers, e.g. http://127.0.0.1:8000/v1" autocomplete="off">
    <label for="llm-key">API key</label>
    <input id="llm-key" type="password" autocomplete="off">
    <div class="buttons"><button type="submit" id="llm-save">Save</button><button type="button" id="llm-cancel" class="secondary">Cancel</button></div>
  </form>
  <div id="scroll"><div id="empty" class="empty">Type a task below: the agent works in this VS Code (its commands in the OpenHands Agent terminal, its edits in your editors).</div><div id="chat"></div></div>
  <footer>
    <details id="changes-section" hidden open><summary>Changes since your last message (<span id="changes-count">0</span>)</summary>
      <ul id="changes"></ul>
      <div id="changes-undone" hidden></div>
      <div class="buttons"><button class="secondary" data-command="openhands.changes.keepAll" title="Accept every change listed">Keep all</button><button class="secondary" data-command="openhands.changes.undoAll" title="Put back what was there; the agent is told with your next message">Undo all</button><button id="changes-send" class="secondary" data-command="openhands.changes.sendUndone" title="Tell the agent now which changes you undid" hidden>Tell the agent now</button></div>
    </details>
    <div id="confirm-bar" hidden>
      <div><strong id="confirm-what">The agent waits for your confirmation</strong></div>
      <div id="confirm-title"></div>
      <div id="confirm-done" class="meta" hidden>OpenHands did not hold this action back (it does so only for commands): it has already been done. Confirm lets the agent go on; Reject stops it and waits for you.</div>
      <div id="confirm-diff" class="meta" hidden>The proposed edit is open in VS Code's diff editor (Accept / Reject in its title bar, or answer here).</div>
      <div class="buttons"><button id="confirm-yes">Confirm</button><button id="confirm-no" class="secondary">Reject</button></div>
    </div>
    <div id="pending" hidden></div>
    <textarea id="input" rows="3" placeholder="Loading…"></textarea>
    <div class="buttons">
      <button id="send">Send</button>
      <button id="stop" class="secondary" hidden>Stop</button>
      <button id="continue" class="secondary" hidden>Continue</button>
      <button class="secondary" data-command="openhands.showTerminal">Agent Terminal</button>
      <button class="secondary" data-command="openhands.showLogs">Logs</button>
    </div>
    <details id="activity-section"><summary>This window's executor: recent actions (<span id="activity-count">0</span>)</summary>
      <ul id="activity"></ul>
      <div class="buttons"><button class="secondary" data-command="openhands.start">Start</button><button class="secondary" data-command="openhands.stop">Stop</button><button class="secondary" data-command="openhands.reconnect">Reconnect</button><button class="secondary" data-command="openhands.setSessionApiKey">Session API Key</button></div>
    </details>
  </footer>`;
