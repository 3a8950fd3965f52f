/**
 * The OpenHands tab's page script (bundled to dist/webview.js, loaded with the CSP nonce). It
 * renders what the extension host posts (`protocol.ts`) and posts the user's intents back.
 */
import { ChatList, el, formatDuration } from './render';
import { conversationLabel, placeText, type HostToView, type TabStatus, type ViewToHost } from './protocol';

declare function acquireVsCodeApi(): { postMessage(m: ViewToHost): void };

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const post = (m: ViewToHost) => vscode.postMessage(m);

const chat = new ChatList(document, $('chat'), $('scroll'));
const input = $<HTMLTextAreaElement>('input');
let status: TabStatus | undefined;
let sending = false;

function send(): void {
  const text = input.value.trim();
  if (!text || sending || !status?.canSend) return;
  sending = true;
  $('pending').hidden = false;
  $('pending').textContent = `Sending: ${text.length > 80 ? `${text.slice(0, 80)}…` : text}`;
  post({ type: 'send', text });
  renderComposer();
}

$('send').addEventListener('click', send);
// One listener for every message's revert button (messages are re-rendered by patches).
$('chat').addEventListener('click', (e) => {
  const button = (e.target as HTMLElement).closest<HTMLElement>('button.revert');
  if (button?.dataset.revert) post({ type: 'revert', key: button.dataset.revert });
});
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
$('stop').addEventListener('click', () => post({ type: 'stop' }));
$('confirm-yes').addEventListener('click', () => post({ type: 'confirm', accept: true }));
$('confirm-no').addEventListener('click', () => post({ type: 'confirm', accept: false }));
$('continue').addEventListener('click', () => post({ type: 'continue' }));
$('new').addEventListener('click', () => post({ type: 'new' }));
$('refresh').addEventListener('click', () => post({ type: 'refresh' }));
$<HTMLSelectElement>('conversation').addEventListener('change', (e) => {
  const id = (e.target as HTMLSelectElement).value;
  if (id) post({ type: 'switch', id });
});
$('llm-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const key = $<HTMLInputElement>('llm-key');
  post({ type: 'saveLlm', model: $<HTMLInputElement>('llm-model').value, baseUrl: $<HTMLInputElement>('llm-base').value, apiKey: key.value });
  key.value = '';
});
$('llm-cancel').addEventListener('click', () => post({ type: 'cancelLlm' }));
$('llm-edit').addEventListener('click', () => post({ type: 'editLlm' }));
document.querySelectorAll<HTMLButtonElement>('button[data-command]').forEach((b) =>
  b.addEventListener('click', () => post({ type: 'command', command: b.dataset.command! })),
);

function renderComposer(): void {
  const s = status;
  $<HTMLButtonElement>('send').disabled = sending || !s?.canSend;
  input.placeholder = !s ? 'Loading…' : s.canSend ? (s.conversationId ? 'Message the agent (Enter to send, Shift+Enter for a new line)' : 'Describe a task to start a new conversation') : 'The agent cannot take a message right now';
  $('stop').hidden = !s?.canStop;
  $('continue').hidden = !s?.canContinue;
}

function renderConfirmation(s: TabStatus): void {
  const c = s.confirmation;
  $('confirm-bar').hidden = !c;
  if (!c) return;
  $('confirm-what').textContent = c.kind === 'command' ? 'The agent wants to run this command:' : c.kind === 'edit' ? 'The agent wants to make this edit:' : 'The agent wants to do this:';
  $('confirm-title').textContent = c.title;
  $('confirm-diff').hidden = !c.diffShown;
  $('confirm-done').hidden = !c.alreadyDone;
  $<HTMLButtonElement>('confirm-yes').disabled = c.sending;
  $<HTMLButtonElement>('confirm-no').disabled = c.sending;
}

// The agent's edits since the last message: a file opens in VS Code's diff editor, hunk by hunk.
function renderChanges(s: TabStatus): void {
  const files = s.changes?.files ?? [];
  const undone = s.changes?.undone ?? 0;
  $('changes-section').hidden = !files.length && !undone;
  $('changes-count').textContent = `${files.length} file${files.length === 1 ? '' : 's'}`;
  $('changes').replaceChildren(...files.map((f) => {
    const li = el(document, 'li');
    const open = el(document, 'button', 'file', f.label);
    open.title = `${f.path}: ${f.hunks} change${f.hunks === 1 ? '' : 's'} to review (opens the diff; Keep / Undo above each)`;
    open.addEventListener('click', () => post({ type: 'command', command: 'openhands.changes.openFile', path: f.path }));
    li.append(open, el(document, 'span', 'add', `+${f.added}`), el(document, 'span', 'del', `−${f.removed}`));
    return li;
  }));
  $('changes-undone').hidden = !undone;
  $('changes-undone').textContent = `${undone} undone change${undone === 1 ? '' : 's'}: the agent is told with your next message.`;
  $('changes-send').hidden = !undone;
}

function renderStatus(s: TabStatus): void {
  renderConfirmation(s);
  renderChanges(s);
  status = s;
  const ex = s.executor;
  $('dot').className = `dot ${ex.state}`;
  const agent = s.agentStateLabel ? `Agent: ${s.agentStateLabel}` : s.conversationId ? (s.joined ? 'Agent: starting…' : 'Joining…') : 'No conversation';
  $('state').textContent = agent;
  document.body.dataset.state = ex.state;
  document.body.dataset.agentState = s.agentState ?? '';
  $('executor').textContent = `Executor: ${ex.label}${ex.message ? ` — ${ex.message}` : ''}`;
  $('runtime').textContent = s.runtimeStatus ? `Runtime: ${s.runtimeStatus}` : '';
  $('usage').textContent = s.usage ? `Cost: ${s.usage.text}` : '';
  $('usage').classList.toggle('over', Boolean(s.usage?.budgetUsd && s.usage.costUsd >= s.usage.budgetUsd));
  $('server').textContent = s.serverUrl;
  $('place').textContent = s.place ?? '';

  const select = $<HTMLSelectElement>('conversation');
  const options = s.conversations.map((c) => {
    const o = el(document, 'option', undefined, conversationLabel(c));
    o.value = c.id;
    if (c.workingDir) o.title = c.workingDir;
    return o;
  });
  if (!s.conversationId) {
    const o = el(document, 'option', undefined, s.conversations.length ? 'Pick a conversation…' : 'No conversations yet');
    o.value = '';
    options.unshift(o);
  } else if (!s.conversations.some((c) => c.id === s.conversationId)) {
    const o = el(document, 'option', undefined, s.conversationId.slice(0, 12));
    o.value = s.conversationId;
    options.unshift(o);
  }
  select.replaceChildren(...options);
  select.value = s.conversationId ?? '';
  const shown = s.conversations.find((c) => c.id === s.conversationId);
  $('where').textContent = shown ? placeText(shown.place, shown.origin) : '';
  $('worktree-actions').hidden = shown?.place?.kind !== 'worktree';
  select.disabled = s.attachMode;
  $<HTMLButtonElement>('new').disabled = s.attachMode;

  $('problems').replaceChildren(...s.problems.map((p) => {
    const box = el(document, 'div', 'problem');
    box.dataset.problem = p.id;
    box.append(el(document, 'div', 'problem-text', p.message));
    const buttons = el(document, 'div', 'buttons');
    for (const f of p.fixes) {
      const b = el(document, 'button', 'fix', f.label);
      b.dataset.fix = f.fix;
      b.addEventListener('click', () => post({ type: 'fix', fix: f.fix }));
      buttons.append(b);
    }
    box.append(buttons);
    return box;
  }));

  const form = $('llm-form');
  const f = s.llmForm;
  if (f && form.hidden) {
    $<HTMLInputElement>('llm-model').value = f.model;
    $<HTMLInputElement>('llm-base').value = f.baseUrl;
    $<HTMLInputElement>('llm-key').placeholder = f.apiKeySet ? 'unchanged (a key is set)' : 'the model provider\'s API key';
  }
  form.hidden = !f;
  $('llm-cancel').hidden = !f || f.required;
  $('empty').hidden = chat.size > 0 || Boolean(f);
  renderComposer();
  // Without a conversation of its own (attach mode) the executor's actions are what there is to see.
  const section = $<HTMLDetailsElement>('activity-section');
  if (s.attachMode && !section.dataset.auto) {
    section.dataset.auto = '1';
    section.open = true;
  }
  const acts = ex.actions ?? [];
  $('activity-count').textContent = String(acts.length);
  $('activity').replaceChildren(...acts.map((a) => {
    const li = el(document, 'li');
    li.dataset.status = a.status;
    li.append(el(document, 'span', `icon ${a.status}`, a.status === 'ok' ? '✓' : a.status === 'error' ? '✗' : '●'), el(document, 'span', 'kind', a.kind), el(document, 'span', 'summary', a.summary));
    const r = [a.result, a.durationMs !== undefined ? formatDuration(a.durationMs) : undefined].filter(Boolean).join(' · ');
    if (r) li.append(el(document, 'div', 'result', r));
    return li;
  }));
  $('key').textContent = ex.hasKey ? 'session API key: set' : 'session API key: not set';
}

window.addEventListener('message', (e: MessageEvent<HostToView>) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  switch (m.type) {
    case 'status':
      renderStatus(m.status);
      break;
    case 'reset':
      chat.reset(m.items);
      $('empty').hidden = chat.size > 0;
      break;
    case 'add':
      chat.add(m.items);
      $('empty').hidden = true;
      break;
    case 'patch':
      chat.patch(m.item);
      break;
    case 'sent':
      sending = false;
      input.value = '';
      $('pending').hidden = true;
      renderComposer();
      break;
    case 'sendFailed':
      sending = false;
      $('pending').hidden = true;
      if (!input.value) input.value = m.text;
      renderComposer();
      break;
  }
});
post({ type: 'ready' });
