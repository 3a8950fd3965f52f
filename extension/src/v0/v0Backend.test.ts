import { beforeEach, describe, expect, it, vi } from 'vitest';
import { TabSession } from '../tab/tabSession';
import { FakeSocket } from '../test/fakeSocket';
import type { HostToView } from '../webview/protocol';
import { V0Backend, type V0BackendDeps } from './v0Backend';

const reply = (status: number, body: unknown) => ({
  ok: status >= 200 && status < 300, status, statusText: String(status),
  text: async () => JSON.stringify(body),
});

/** A scripted OpenHands REST API: routes "METHOD /path" to replies; records the calls. */
function server(routes: Record<string, (body: any) => [number, unknown]>) {
  const calls: Array<{ method: string; path: string; body: any }> = [];
  const fetch = vi.fn(async (url: string, init: { method: string; body?: string }) => {
    const path = url.replace('http://s', '');
    const body = init.body ? JSON.parse(init.body) : undefined;
    calls.push({ method: init.method, path, body });
    const route = Object.keys(routes).find((k) => `${init.method} ${path}`.startsWith(k));
    if (!route) return reply(404, { detail: 'Not Found' });
    const [status, b] = routes[route](body);
    return reply(status, b);
  });
  return { fetch, calls };
}

const settings = { 'GET /api/settings': () => [200, { llm_model: 'openai/scripted', llm_base_url: 'http://llm/v1', llm_api_key_set: true }] as [number, unknown] };

function setup(routes: Record<string, (body: any) => [number, unknown]>, over: Partial<V0BackendDeps> = {}, budgetUsd = 0) {
  const srv = server(routes);
  const posted: HostToView[] = [];
  const order: string[] = [];
  const store = new Map<string, unknown>();
  const secrets = new Map<string, string>();
  const executor = {
    snapshot: { state: 'stopped' as string, conversationId: undefined as string | undefined },
    retarget: vi.fn(async (id: string) => {
      order.push(`retarget ${id}`);
      executor.snapshot = { state: 'connected', conversationId: id };
    }),
  };
  const origFactory = FakeSocket.factory;
  const deps: V0BackendDeps = {
    serverUrl: () => 'http://s',
    attachedConversation: () => undefined,
    sessionKey: async () => 'sk',
    state: { get: (k) => store.get(k) as any, update: async (k, v) => void store.set(k, v) },
    secrets: { get: async (k) => secrets.get(k), store: async (k, v) => void secrets.set(k, v) },
    executor,
    fetch: srv.fetch as any,
    socketFactory: (url, opts) => {
      order.push('join');
      return origFactory(url, opts);
    },
    ...over,
  };
  const session = new TabSession({ backend: new V0Backend(deps), executor, post: (m) => posted.push(m), log: { info: () => {}, warn: () => {}, error: () => {} }, budgetUsd: () => budgetUsd });
  const status = () => [...posted].reverse().find((m) => m.type === 'status') as Extract<HostToView, { type: 'status' }>;
  return { session, srv, posted, order, store, secrets, executor, status: () => status().status };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe('the tab on a V0 server (TabSession over V0Backend)', () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });

  it('first use: no LLM settings -> the form; the key goes to SecretStorage and the settings API', async () => {
    let stored: any;
    const t = setup({
      'GET /api/settings': () => (stored ? [200, { llm_model: stored.llm_model, llm_base_url: stored.llm_base_url, llm_api_key_set: true }] : [404, { error: 'Settings not found' }]),
      'POST /api/settings': (b) => ((stored = b), [200, { message: 'Settings stored' }]),
      'GET /api/conversations': () => [200, { results: [] }],
    });
    await t.session.open();
    expect(t.status()).toMatchObject({ llmForm: { required: true }, canSend: false, problems: [{ id: 'llm', fixes: [{ fix: 'llm' }] }] });
    await t.session.saveLlmSettings('openai/scripted', 'http://llm/v1', '  sk-secret ');
    expect(stored).toEqual({ llm_model: 'openai/scripted', llm_base_url: 'http://llm/v1', llm_api_key: 'sk-secret' });
    expect(t.secrets.get('openhands.llmApiKey:http://s')).toBe('sk-secret');
    expect(JSON.stringify([...t.store.values()])).not.toContain('sk-secret');
    expect(t.status()).toMatchObject({ llmForm: undefined, canSend: true, problems: [] });
  });

  it('a task typed with no conversation: create, retarget the executor, then join, then send once when the agent is ready', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] });
    await t.session.open();
    const sending = t.session.send('Fix the greeting');
    await flush();
    await sending;
    expect(t.order).toEqual(['retarget c1', 'join']);
    const sock = FakeSocket.last;
    expect(sock.options.query).toMatchObject({ conversation_id: 'c1', latest_event_id: '-1', session_api_key: 'sk' });
    sock.open();
    sock.fire('oh_event', { id: 0, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'loading' } });
    expect(sock.emitted).toEqual([]); // not before the agent can take it
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    expect(sock.emitted).toEqual([['oh_user_action', expect.objectContaining({ action: 'message', args: expect.objectContaining({ content: 'Fix the greeting' }) })]]);
    expect(t.posted.some((m) => m.type === 'sent')).toBe(true);
    // A reconnect and a replay send nothing again.
    sock.drop();
    sock.open();
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'running' } });
    expect(sock.emitted).toHaveLength(1);
    expect(t.store.get('openhands.tab.conversation:http://s')).toBe('c1');
    expect(t.status()).toMatchObject({ conversationId: 'c1', agentState: 'running', canStop: true });
    t.session.stop();
    expect(sock.emitted[1]).toEqual(['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'stopped' } }]);
  });

  it('cost from the events\' llm_metrics (openhands-ai 1.6.0); at the budget the agent is stopped once, as Stop does', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] }, {}, 0.5);
    await t.session.open();
    const sending = t.session.send('Fix the greeting');
    await flush();
    await sending;
    const sock = FakeSocket.last;
    sock.open();
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'running' } });
    const metrics = (cost: number) => ({ accumulated_cost: cost, max_budget_per_task: null, accumulated_token_usage: { model: 'm', prompt_tokens: 12000, completion_tokens: 300, cache_read_tokens: 0, cache_write_tokens: 0, context_window: 200000, per_turn_token: 6100, response_id: 'r' }, costs: [], response_latencies: [], token_usages: [] });
    sock.fire('oh_event', { id: 3, source: 'agent', action: 'run', args: { command: 'ls' }, llm_metrics: metrics(0.2) });
    expect(t.status().usage).toEqual({ text: '$0.2000 of $0.5000 · 12k in, 300 out · context 3% of 200k', costUsd: 0.2, contextPercent: 3, budgetUsd: 0.5 });
    expect(sock.emitted).toHaveLength(1);
    sock.fire('oh_event', { id: 4, source: 'agent', action: 'run', args: { command: 'ls -l' }, llm_metrics: metrics(0.55) });
    expect(sock.emitted.slice(1)).toEqual([['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'stopped' } }]]);
    expect(t.status().problems.map((p) => p.id)).toContain('budget');
    sock.fire('oh_event', { id: 5, source: 'agent', action: 'run', args: { command: 'pwd' }, llm_metrics: metrics(0.56) });
    expect(sock.emitted).toHaveLength(2);
  });

  it('confirmation mode: an awaited command shows Confirm/Reject; the answer is the web UI\'s agent-state change, sent once', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] });
    await t.session.open();
    await t.session.send('List the files');
    await flush();
    const sock = FakeSocket.last;
    sock.open();
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    // The controller announces the state first, then adds the awaited action.
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    sock.fire('oh_event', { id: 3, source: 'agent', action: 'run', args: { command: 'rm -rf build', confirmation_state: 'awaiting_confirmation', security_risk: 2 } });
    expect(t.status().confirmation).toMatchObject({ kind: 'command', title: 'rm -rf build', action: 'run', sending: false, alreadyDone: false });
    t.session.confirm(true);
    t.session.confirm(true); // a double click sends nothing more
    expect(sock.emitted.slice(1)).toEqual([['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'user_confirmed' } }]]);
    expect(t.status().confirmation).toMatchObject({ sending: true });
    // The controller re-adds the action with the answer under a new id; its output belongs to the same item.
    // (as AgentController.set_agent_state_to does: the re-added action first, then the state)
    sock.fire('oh_event', { id: 4, source: 'agent', action: 'run', args: { command: 'rm -rf build', confirmation_state: 'confirmed' } });
    sock.fire('oh_event', { id: 5, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'user_confirmed' } });
    sock.fire('oh_event', { id: 6, source: 'agent', observation: 'run', cause: 4, content: 'done', extras: { command: 'rm -rf build', metadata: { exit_code: 0 } } });
    expect(t.status().confirmation).toBeUndefined();
    const items = t.session.items.filter((i) => i.kind === 'action');
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ confirmation: 'confirmed', status: 'ok', output: 'done' });
    // Rejected: the answer and the item's end.
    sock.fire('oh_event', { id: 7, source: 'agent', action: 'run', args: { command: 'curl x | sh', confirmation_state: 'awaiting_confirmation' } });
    sock.fire('oh_event', { id: 8, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    t.session.confirm(false);
    expect(sock.emitted.at(-1)).toEqual(['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'user_rejected' } }]);
    sock.fire('oh_event', { id: 9, source: 'agent', action: 'run', args: { command: 'curl x | sh', confirmation_state: 'rejected' } });
    expect(t.session.items.filter((i) => i.kind === 'action').at(-1)).toMatchObject({ confirmation: 'rejected', status: 'error', output: 'Rejected by the user.' });
  });

  it('confirmation mode (OpenHands 1.6.0): an edit arriving without confirmation_state while awaiting is the awaited action, already done: no diff, the bar says so', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] });
    const calls: unknown[] = [];
    t.session.setEditReviewer(async (args) => {
      calls.push(args);
      return undefined;
    });
    await t.session.open();
    await t.session.send('Edit');
    await flush();
    const sock = FakeSocket.last;
    sock.open();
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    sock.fire('oh_event', { id: 3, source: 'agent', action: 'edit', args: { command: 'str_replace', path: '/ws/a.py', old_str: 'a', new_str: 'b' } });
    sock.fire('oh_event', { id: 4, source: 'agent', observation: 'edit', cause: 3, content: 'The file /ws/a.py has been edited.', extras: { path: '/ws/a.py' } });
    expect(t.status().confirmation).toMatchObject({ kind: 'edit', alreadyDone: true, diffShown: false });
    expect(calls).toHaveLength(0);
    t.session.confirm(false);
    expect(sock.emitted.at(-1)).toEqual(['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'user_rejected' } }]);
  });

  it('confirmation mode: an awaited edit goes to the edit reviewer once; its answer is sent; a state change withdraws it', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] });
    const calls: Array<{ args: Record<string, unknown>; signal: AbortSignal; answer: (v: boolean | undefined) => void }> = [];
    t.session.setEditReviewer((args, signal) => new Promise((answer) => calls.push({ args, signal, answer })));
    await t.session.open();
    await t.session.send('Edit');
    await flush();
    const sock = FakeSocket.last;
    sock.open();
    sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    sock.fire('oh_event', { id: 2, source: 'agent', action: 'edit', args: { command: 'str_replace', path: '/ws/a.py', old_str: 'a', new_str: 'b', confirmation_state: 'awaiting_confirmation' } });
    sock.fire('oh_event', { id: 3, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    sock.fire('oh_event', { id: 4, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    expect(calls).toHaveLength(1);
    expect(calls[0].args).toMatchObject({ path: '/ws/a.py', old_str: 'a' });
    expect(t.status().confirmation).toMatchObject({ kind: 'edit', diffShown: true });
    calls[0].answer(false);
    await flush();
    expect(sock.emitted.at(-1)).toEqual(['oh_user_action', { action: 'change_agent_state', args: { agent_state: 'user_rejected' } }]);
    expect(calls[0].signal.aborted).toBe(true);
    // Another awaited edit, then the user stops the agent: the diff is withdrawn, nothing is answered.
    sock.fire('oh_event', { id: 5, source: 'agent', action: 'edit', args: { command: 'create', path: '/ws/b.py', file_text: 'x', confirmation_state: 'awaiting_confirmation' } });
    sock.fire('oh_event', { id: 6, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
    expect(calls).toHaveLength(2);
    const sent = sock.emitted.length;
    sock.fire('oh_event', { id: 7, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'stopped' } });
    expect(calls[1].signal.aborted).toBe(true);
    calls[1].answer(undefined);
    await flush();
    expect(sock.emitted).toHaveLength(sent);
  });

  it('reopening resumes the remembered conversation from its history and latest_event_id', async () => {
    const t = setup({
      ...settings,
      'GET /api/conversations?': () => [200, { results: [{ conversation_id: 'c7', title: 'Old task' }] }],
      'GET /api/conversations/c7/events': () => [200, { events: [
        { id: 0, source: 'user', action: 'message', args: { content: 'hello' } },
        { id: 1, source: 'agent', action: 'message', args: { content: 'hi **there**' } },
        { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } },
      ], has_more: false }],
    });
    t.store.set('openhands.tab.conversation:http://s', 'c7');
    await t.session.open();
    expect(t.executor.retarget).toHaveBeenCalledWith('c7');
    const reset = [...t.posted].reverse().find((m) => m.type === 'reset') as any;
    expect(reset.items.map((i: any) => i.text ?? i.state)).toEqual(['hello', 'hi **there**', 'awaiting_user_input']);
    expect(FakeSocket.last.options.query.latest_event_id).toBe('2');
    FakeSocket.last.open();
    expect(t.status()).toMatchObject({ conversationId: 'c7', agentState: 'awaiting_user_input', canSend: true });
  });

  it('a message typed while the loop restarts (server restarted) waits for the restarted loop\'s own agent state, then goes once', async () => {
    const loop = 'STOPPED'; // before the join: the restarted server runs no loop
    const t = setup({
      ...settings,
      'GET /api/conversations?': () => [200, { results: [{ conversation_id: 'c9', title: 'Task' }] }],
      'GET /api/conversations/c9/events': () => [200, { events: [
        { id: 0, source: 'user', action: 'message', args: { content: 'first' } },
        { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'finished' } },
      ], has_more: false }],
      'GET /api/conversations/c9': () => [200, { conversation_id: 'c9', status: loop }],
    });
    t.store.set('openhands.tab.conversation:http://s', 'c9');
    await t.session.open();
    const sock = FakeSocket.last;
    sock.open();
    await flush();
    // What OpenHands 1.6.0 replays and sends after a restart: the closing server's `stopped`,
    // the new session's `loading`; its controller does not exist yet.
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'stopped' } });
    await t.session.send('second');
    sock.fire('oh_event', { id: 3, source: 'agent', observation: 'agent_state_changed', extras: { agent_state: 'loading' } });
    await flush();
    expect(sock.emitted).toEqual([]);
    expect(t.status()).toMatchObject({ canSend: false });
    // The restarted controller's first state: now the message goes, once.
    sock.fire('oh_event', { id: 4, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    sock.fire('oh_event', { id: 5, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    expect(sock.emitted).toEqual([['oh_user_action', expect.objectContaining({ action: 'message', args: expect.objectContaining({ content: 'second' }) })]]);
  });

  it('joining a loop that is already running: a message goes at once (no new agent state needed)', async () => {
    const t = setup({
      ...settings,
      'GET /api/conversations?': () => [200, { results: [{ conversation_id: 'c8', title: 'Task' }] }],
      'GET /api/conversations/c8/events': () => [200, { events: [
        { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } },
      ], has_more: false }],
      'GET /api/conversations/c8': () => [200, { conversation_id: 'c8', status: 'RUNNING' }],
    });
    t.store.set('openhands.tab.conversation:http://s', 'c8');
    await t.session.open();
    FakeSocket.last.open();
    await flush();
    await flush();
    await t.session.send('go on');
    expect(FakeSocket.last.emitted).toEqual([['oh_user_action', expect.objectContaining({ action: 'message' })]]);
  });

  it('after a reconnect: a loop that ran through the drop takes a message at once; a server that went away waits for its restarted loop', async () => {
    let loop: [number, unknown] = [200, { conversation_id: 'c6', status: 'RUNNING' }];
    const t = setup({
      ...settings,
      'GET /api/conversations?': () => [200, { results: [{ conversation_id: 'c6', title: 'Task' }] }],
      'GET /api/conversations/c6/events': () => [200, { events: [
        { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } },
      ], has_more: false }],
      'GET /api/conversations/c6': () => loop,
    });
    t.store.set('openhands.tab.conversation:http://s', 'c6');
    await t.session.open();
    const sock = FakeSocket.last;
    sock.open();
    await flush();
    // A connection blip: the loop was RUNNING when the socket dropped.
    sock.drop();
    await flush();
    sock.open();
    await flush();
    await t.session.send('one');
    expect(sock.emitted).toHaveLength(1);
    // The server goes away (restart): unreachable when the socket drops, so the loop behind the
    // reconnect is a new one; the message waits for its first state.
    loop = [502, 'Bad Gateway'];
    sock.drop();
    await flush();
    loop = [200, { conversation_id: 'c6', status: 'RUNNING' }];
    sock.open();
    await flush();
    await t.session.send('two');
    await flush();
    expect(sock.emitted).toHaveLength(1);
    sock.fire('oh_event', { id: 2, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'stopped' } });
    sock.fire('oh_event', { id: 3, source: 'agent', observation: 'agent_state_changed', extras: { agent_state: 'loading' } });
    expect(sock.emitted).toHaveLength(1);
    sock.fire('oh_event', { id: 4, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
    expect(sock.emitted).toHaveLength(2);
    expect(sock.emitted[1]).toEqual(['oh_user_action', expect.objectContaining({ args: expect.objectContaining({ content: 'two' }) })]);
  });

  it('a server that cannot list conversations (V1 sandbox needs Docker: HTTP 500) still opens the remembered one', async () => {
    const t = setup({ ...settings, 'GET /api/conversations?': () => [500, 'Internal Server Error'], 'GET /api/conversations/c3/events': () => [200, { events: [], has_more: false }] });
    t.store.set('openhands.tab.conversation:http://s', 'c3');
    await t.session.open();
    expect(t.status()).toMatchObject({ problems: [], conversationId: 'c3', conversations: [{ id: 'c3' }] });
  });

  it('another server URL leaves the old server\'s conversation', async () => {
    let url = 'http://s';
    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'GET /api/conversations/c1/events': () => [200, { events: [], has_more: false }] }, { serverUrl: () => url });
    t.store.set('openhands.tab.conversation:http://s', 'c1');
    await t.session.open();
    const sock = FakeSocket.last;
    sock.open();
    expect(t.session.currentConversationId).toBe('c1');
    url = 'http://other';
    const opening = t.session.open();
    expect(t.session.currentConversationId).toBeUndefined();
    expect(sock.connected).toBe(false);
    await opening;
  });

  it('errors the user must act on appear with their fix', async () => {
    const down = setup({}, { fetch: vi.fn().mockRejectedValue(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })) as any });
    await down.session.open();
    expect(down.status().problems).toEqual([expect.objectContaining({ id: 'server', message: expect.stringContaining('Cannot reach'), fixes: [{ fix: 'settings', label: 'Open Settings' }, { fix: 'retry', label: 'Retry' }] })]);
    expect(down.status().canSend).toBe(false);

    const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [{ conversation_id: 'c1', title: 't' }] }], 'GET /api/conversations/c1/events': () => [200, { events: [], has_more: false }] });
    t.store.set('openhands.tab.conversation:http://s', 'c1');
    t.executor.retarget.mockImplementation(async () => {});
    await t.session.open();
    const sock = FakeSocket.last;
    sock.open();
    sock.fire('oh_event', { status_update: true, type: 'info', message: 'c1', conversation_title: 'Fix the greeting' });
    expect(t.status().conversations[0].title).toBe('Fix the greeting');
    expect(t.posted.some((m) => m.type === 'add' && m.items.some((i) => i.kind === 'status'))).toBe(false);
    sock.fire('oh_event', { status_update: true, type: 'info', id: 'STATUS$STARTING_RUNTIME', message: 'Starting runtime...' });
    expect(t.status().problems.map((p) => [p.id, p.fixes.map((f) => f.fix)])).toEqual([['runtime', ['start']]]);
    sock.fire('oh_event', { status_update: true, type: 'error', id: 'STATUS$ERROR_LLM_AUTHENTICATION', message: 'AuthenticationError' });
    expect(t.status().problems.find((p) => p.id === 'llm-auth')!.fixes.map((f) => f.fix)).toEqual(['llm']);
    (t.executor as any).snapshot = { state: 'error', message: 'oh-executor: invalid session_api_key', fixes: ['key', 'retry'] };
    t.session.executorChanged();
    expect(t.status().problems.find((p) => p.id === 'executor')!.fixes.map((f) => f.fix)).toEqual(['key', 'retry']);
    sock.fire('connect_error', new Error('invalid_session_api_key'));
    expect(t.status().problems.find((p) => p.id === 'socket')!.fixes.map((f) => f.fix)).toEqual(['key', 'retry']);
  });

  // Where the V0 and V1 sessions disagreed, the one TabSession decides; each case fails on the old V0 ChatSession.
  describe('one session for both backends', () => {
    async function awaitingSession() {
      const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }], 'GET /api/conversations/c2/events': () => [200, { events: [], has_more: false }] });
      const calls: Array<{ args: Record<string, unknown>; signal: AbortSignal }> = [];
      t.session.setEditReviewer((args, signal) => new Promise(() => calls.push({ args, signal })));
      await t.session.open();
      await t.session.send('Edit');
      await flush();
      const sock = FakeSocket.last;
      sock.open();
      sock.fire('oh_event', { id: 1, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_input' } });
      return { ...t, calls, sock };
    }

    it('whatever the server holds back is confirmable: an IPython cell is a command (its code), a write an edit', async () => {
      const t = await awaitingSession();
      t.sock.fire('oh_event', { id: 2, source: 'agent', action: 'run_ipython', args: { code: 'print(1)\nprint(2)', confirmation_state: 'awaiting_confirmation' } });
      t.sock.fire('oh_event', { id: 3, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
      expect(t.status().confirmation).toMatchObject({ kind: 'command', action: 'run_ipython', title: 'print(1)\nprint(2)' });
      t.session.confirm(true);
      t.sock.fire('oh_event', { id: 4, source: 'agent', action: 'run_ipython', args: { code: 'print(1)\nprint(2)', confirmation_state: 'confirmed' } });
      t.sock.fire('oh_event', { id: 5, source: 'agent', action: 'write', args: { path: '/ws/w.txt', content: 'x', confirmation_state: 'awaiting_confirmation' } });
      t.sock.fire('oh_event', { id: 6, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
      expect(t.status().confirmation).toMatchObject({ kind: 'edit', action: 'write', title: 'Wrote /ws/w.txt', alreadyDone: false });
    });

    it('an awaited `view` is no proposal: no diff is shown for it', async () => {
      const t = await awaitingSession();
      t.sock.fire('oh_event', { id: 2, source: 'agent', action: 'edit', args: { command: 'view', path: '/ws/a.py', confirmation_state: 'awaiting_confirmation' } });
      t.sock.fire('oh_event', { id: 3, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
      expect(t.status().confirmation).toMatchObject({ kind: 'edit', diffShown: false });
      expect(t.calls).toHaveLength(0);
    });

    it('switching to another conversation withdraws the diff of the one left; so does closing the tab', async () => {
      const t = await awaitingSession();
      t.sock.fire('oh_event', { id: 2, source: 'agent', action: 'edit', args: { command: 'create', path: '/ws/a.py', file_text: 'x', confirmation_state: 'awaiting_confirmation' } });
      t.sock.fire('oh_event', { id: 3, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
      expect(t.calls).toHaveLength(1);
      await t.session.switchTo('c2');
      expect(t.calls[0].signal.aborted).toBe(true);
      expect(t.status().confirmation).toBeUndefined();
      const u = await awaitingSession();
      u.sock.fire('oh_event', { id: 2, source: 'agent', action: 'edit', args: { command: 'create', path: '/ws/a.py', file_text: 'x', confirmation_state: 'awaiting_confirmation' } });
      u.sock.fire('oh_event', { id: 3, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'awaiting_user_confirmation' } });
      u.session.dispose();
      expect(u.calls[0].signal.aborted).toBe(true);
    });

    it('reloading keeps a refused LLM key and the executor\'s error (a reload cannot find them out again)', async () => {
      const t = await awaitingSession();
      t.sock.fire('oh_event', { status_update: true, type: 'error', id: 'STATUS$ERROR_LLM_AUTHENTICATION', message: 'AuthenticationError' });
      (t.executor as any).snapshot = { state: 'error', message: 'oh-executor: invalid session_api_key', fixes: ['key', 'retry'] };
      t.session.executorChanged();
      await t.session.open();
      expect(t.status().problems.map((p) => p.id).sort()).toEqual(['executor', 'llm-auth']);
    });

    it('Continue with no conversation shown does nothing (it created one with "Please continue.")', async () => {
      const t = setup({ ...settings, 'GET /api/conversations?': () => [200, { results: [] }], 'POST /api/conversations': () => [200, { conversation_id: 'c1' }] });
      await t.session.open();
      await t.session.continueConversation();
      expect(t.srv.calls.filter((c) => c.method === 'POST')).toEqual([]);
      expect(t.status()).toMatchObject({ conversationId: undefined, canSend: true });
    });

    it('an agent that waits for the user can be told to continue', async () => {
      const t = await awaitingSession();
      expect(t.status()).toMatchObject({ agentState: 'awaiting_user_input', canContinue: true });
    });
  });
});
