import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostToView } from '../webview/protocol';
import type { SocketLike, V1Event } from './agentServerClient';
import { V1Session, type V1SessionDeps } from './v1Session';

// Recorded from the real agent-server 1.58.2 (see the file's `about`).
const fixture = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'agent-server-events.json'), 'utf8'));

class FakeSocket implements SocketLike {
  onopen: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  sent: string[] = [];
  closed = false;
  constructor(readonly url: string) {}
  send(d: string) { this.sent.push(d); }
  close() { this.closed = true; }
  open() { this.onopen?.({}); }
  emit(e: V1Event) { this.onmessage?.({ data: JSON.stringify(e) }); }
}

function store() {
  const m = new Map<string, unknown>();
  return { get: <T>(k: string) => m.get(k) as T | undefined, update: async (k: string, v: unknown) => { m.set(k, v); }, m };
}

function setup(opts: { llm?: boolean; confirmation?: 'never' | 'always' } = {}) {
  const requests: Array<{ method: string; url: string; headers: Record<string, string>; body?: unknown }> = [];
  const sockets: FakeSocket[] = [];
  const posted: HostToView[] = [];
  const retargeted: string[] = [];
  const released: string[] = [];
  const llmState = store();
  if (opts.llm !== false) llmState.m.set('openhands.v1.llm', { model: 'openai/scripted', baseUrl: 'http://127.0.0.1:9/v1' });
  const secrets = new Map<string, string>([['openhands.v1.llmApiKey', 'sk-llm']]);
  const answers: Record<string, unknown> = {};
  const deps: V1SessionDeps = {
    endpoint: () => ({ baseUrl: 'http://127.0.0.1:8000', sessionApiKey: 'ask', discoveryDir: '/d' }),
    state: store(),
    llmState,
    secrets: { get: async (k) => secrets.get(k), store: async (k, v) => { secrets.set(k, v); } },
    executor: {
      snapshot: { state: 'stopped' },
      retarget: async (id) => { retargeted.push(id); },
      release: async (id) => { released.push(id); },
    },
    post: (m) => posted.push(m),
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    workspaceRoot: () => '/ws',
    confirmation: () => opts.confirmation ?? 'never',
    ideTools: async () => ({ url: 'http://127.0.0.1:7777/mcp', headers: { Authorization: 'Bearer tok' } }),
    fetch: async (url, init) => {
      requests.push({ method: init.method, url, headers: init.headers, body: init.body ? JSON.parse(init.body) : undefined });
      const path = new URL(url).pathname;
      const body = answers[`${init.method} ${path}`] ?? (path.endsWith('/search') ? { items: [] } : { success: true });
      return { ok: true, status: 200, statusText: 'OK', text: async () => JSON.stringify(body) };
    },
    socketFactory: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  };
  return { session: new V1Session(deps), requests, sockets, posted, retargeted, released, answers, secrets };
}

describe('V1Session', () => {
  it('first message: creates the conversation with our tools, the LLM, the IDE tools and the policy; the executor follows it', async () => {
    const t = setup({ confirmation: 'always' });
    await t.session.open();
    expect(t.requests[0]).toMatchObject({ method: 'GET', url: 'http://127.0.0.1:8000/api/conversations/search?limit=50', headers: { 'X-Session-API-Key': 'ask' } });
    await t.session.send('fix the bug');
    const create = t.requests.find((r) => r.method === 'POST' && r.url.endsWith('/api/conversations'))!;
    const id = t.session.currentConversationId!;
    expect(create.body).toEqual({
      conversation_id: id,
      agent: {
        kind: 'Agent',
        llm: { model: 'openai/scripted', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-llm', usage_id: 'agent' },
        tools: [{ name: 'terminal' }, { name: 'file_editor' }],
        mcp_config: { vscode: { url: 'http://127.0.0.1:7777/mcp', transport: 'http', headers: { Authorization: 'Bearer tok' } } },
      },
      workspace: { working_dir: '/ws' },
      confirmation_policy: { kind: 'AlwaysConfirm' },
      initial_message: { role: 'user', content: [{ type: 'text', text: 'fix the bug' }], run: true },
    });
    expect(t.retargeted).toEqual([id]);
    // The event stream: the key in the first frame, never in the URL.
    expect(t.sockets[0].url).toBe(`ws://127.0.0.1:8000/sockets/events/${id}?resend_mode=all`);
    t.sockets[0].open();
    expect(JSON.parse(t.sockets[0].sent[0])).toEqual({ type: 'auth', session_api_key: 'ask' });
  });

  it('ConfirmRisky comes with the LLM security analyzer (the risk it decides by)', async () => {
    const { startRequest } = await import('./agentServerClient');
    const base = { conversationId: 'c', workingDir: '/ws', llm: { model: 'm' } };
    expect(startRequest({ ...base, confirmation: 'risky' })).toMatchObject({ confirmation_policy: { kind: 'ConfirmRisky' }, security_analyzer: { kind: 'LLMSecurityAnalyzer' } });
    expect(startRequest({ ...base, confirmation: 'never' })).not.toHaveProperty('security_analyzer');
  });

  it('without an LLM the form is required and nothing is created', async () => {
    const t = setup({ llm: false });
    await t.session.open();
    expect(t.session.status().llmForm).toMatchObject({ required: true });
    expect(t.session.status().canSend).toBe(false);
    await t.session.saveLlmSettings('openai/gpt-4o', '', 'sk-new');
    expect(t.secrets.get('openhands.v1.llmApiKey')).toBe('sk-new');
    expect(t.session.status()).toMatchObject({ llmForm: undefined, canSend: true });
  });

  it('renders the streamed events; confirm answers over REST once; stop pauses; continue runs a paused conversation', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    const s = t.sockets[0];
    s.open();
    const events = fixture.confirm as V1Event[];
    const firstWait = events.findIndex((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' && e.value === 'waiting_for_confirmation');
    for (const e of events.slice(0, firstWait + 1)) s.emit(e);
    expect(t.session.status().confirmation).toMatchObject({ kind: 'command', title: 'echo hi; exit 3', alreadyDone: false });
    t.session.confirm(false);
    t.session.confirm(false);
    const answers = t.requests.filter((r) => r.url.endsWith('/respond_to_confirmation'));
    expect(answers).toHaveLength(1);
    expect(answers[0].body).toMatchObject({ accept: false });
    t.session.stop();
    expect(t.requests.at(-1)).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:8000/api/conversations/c1/pause' });
    s.emit({ kind: 'ConversationStateUpdateEvent', id: 'p1', key: 'execution_status', value: 'paused' });
    expect(t.session.status()).toMatchObject({ agentState: 'paused', canContinue: true });
    await t.session.continueConversation();
    expect(t.requests.at(-1)).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:8000/api/conversations/c1/run' });
  });

  it('reopen replays the history and sends nothing to the agent', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    for (const e of fixture.finished as V1Event[]) t.sockets[0].emit(e);
    const shown = t.session.items.length;
    const before = t.requests.length;
    await t.session.reopen();
    expect(t.session.currentConversationId).toBe('c1');
    const s2 = t.sockets.at(-1)!;
    expect(s2).not.toBe(t.sockets[0]);
    s2.open();
    for (const e of fixture.finished as V1Event[]) s2.emit(e);
    expect(t.session.items.length).toBe(shown);
    expect(t.requests.slice(before).every((r) => r.method === 'GET')).toBe(true);
  });

  it('delete releases the executor and removes the conversation', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    await t.session.deleteConversation('c1');
    expect(t.released).toEqual(['c1']);
    expect(t.requests.at(-1)).toMatchObject({ method: 'DELETE', url: 'http://127.0.0.1:8000/api/conversations/c1' });
    expect(t.session.currentConversationId).toBeUndefined();
    expect(t.sockets[0].closed).toBe(true);
  });

  it('a refused LLM key offers the LLM form', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    t.posted.length = 0;
    t.sockets[0].emit({ kind: 'ConversationErrorEvent', id: 'e1', code: 'AuthenticationError', detail: 'litellm.AuthenticationError: OpenAIException - Incorrect API key provided' });
    expect(t.session.status().problems).toContainEqual(expect.objectContaining({ id: 'llm-auth', fixes: [{ fix: 'llm', label: 'Set LLM Model and Key' }] }));
    // The page is told (not only the API): the error event changes no state.
    const shown = t.posted.filter((m) => m.type === 'status').at(-1);
    expect(shown && shown.type === 'status' && shown.status.problems.map((p) => p.id)).toContain('llm-auth');
    // Opening again (the view shown again, a key stored) keeps it: only a new LLM setting clears it.
    await t.session.open();
    expect(t.session.status().problems).toContainEqual(expect.objectContaining({ id: 'llm-auth' }));
    await t.session.saveLlmSettings('openai/scripted', '', 'sk-right');
    expect(t.session.status().problems.map((p) => p.id)).not.toContain('llm-auth');
  });
});
