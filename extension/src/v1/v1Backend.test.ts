import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostToView } from '../webview/protocol';
import type { V1Event } from './agentServerClient';
import { TabSession } from '../tab/tabSession';
import { V1Backend } from './v1Backend';
import { v1Tab as setup } from '../test/v1Tab';
import { revertToBefore, runCheckpoint, type BeforeMessage, type CheckpointExecutor, type CheckpointSummary, type RevertUi } from '../revert';

// Recorded from the real agent-server 1.58.2 (see the file's `about`).
const fixture = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'agent-server-events.json'), 'utf8'));


describe('the tab on a V1 agent-server (TabSession over V1Backend)', () => {
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
    });
    // The first message creates the conversation's tools (the executor attaches then): it is
    // posted without running, the checkpoint before it (message 1) is taken, then the agent runs.
    expect(t.actions.map((a) => a.action)).toEqual(['checkpoint_take']);
    expect(t.actions[0].args).toEqual({ label: `before message 1 of conversation ${id}`, before_message: { conversation_id: id, message: 1 } });
    const posts = t.requests.filter((r) => r.method === 'POST').map((r) => ({ url: r.url, body: r.body as Record<string, unknown> }));
    const conv = `http://127.0.0.1:8000/api/conversations/${id}`;
    expect(posts.map((p) => p.url)).toEqual(['http://127.0.0.1:8000/api/conversations', `${conv}/events`, `${conv}/run`]);
    expect(posts[1].body).toEqual({ role: 'user', content: [{ type: 'text', text: 'fix the bug' }], run: false });
    expect(t.retargeted).toEqual([id]);
    // The event stream: the key in the first frame, never in the URL.
    expect(t.sockets[0].url).toBe(`ws://127.0.0.1:8000/sockets/events/${id}?resend_mode=all`);
    t.sockets[0].open();
    expect(JSON.parse(t.sockets[0].sent[0])).toEqual({ type: 'auth', session_api_key: 'ask' });
  });

  it('review by hunk: an edit observation lists its hunks; an undone hunk goes with the next message, once', async () => {
    const t = setup();
    await t.session.open();
    await t.session.send('rename y');
    t.sockets[0].open();
    t.sockets[0].emit({ kind: 'ActionEvent', id: 'a1', source: 'agent', tool_name: 'file_editor', action: { kind: 'FileEditorAction', command: 'str_replace', path: '/ws/app.py', old_str: 'y = 2', new_str: 'y = 3' } });
    t.sockets[0].emit({ kind: 'ObservationEvent', id: 'o1', source: 'environment', action_id: 'a1', tool_name: 'file_editor', observation: { kind: 'FileEditorObservation', command: 'str_replace', path: '/ws/app.py', old_content: 'x = 1\ny = 2\n', new_content: 'x = 1\ny = 3\n', content: [{ type: 'text', text: 'edited' }] } });
    const [hunk] = t.session.changes.hunks('/ws/app.py', 'x = 1\ny = 3\n');
    expect(hunk).toEqual({ beforeStart: 1, beforeLines: ['y = 2'], afterStart: 1, afterLines: ['y = 3'] });
    t.session.changes.rejected('/ws/app.py', hunk);
    await t.session.send('go on');
    const texts = () => t.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/events')).map((r) => ((r.body as any).content[0].text as string));
    expect(texts()[1]).toMatch(/^go on\n\nI reviewed your edits and undid these changes\./);
    expect(texts()[1]).toContain('- app.py, lines 2-2 of your version: your change\n```\ny = 3\n```');
    // Told once; the next turn starts empty.
    expect(t.session.changes.paths()).toEqual([]);
    await t.session.send('and then');
    expect(texts()[2]).toBe('and then');
  });

  it('Continue on a pausing conversation: the agent-server\'s 409 (its run still winding down) is asked again until it takes the run', async () => {
    const statuses: Record<string, number> = {};
    const t = setup({ statuses });
    await t.session.open();
    await t.session.send('long task');
    const id = t.session.currentConversationId!;
    t.sockets[0].open();
    t.sockets[0].emit({ kind: 'ConversationStateUpdateEvent', id: 's1', key: 'execution_status', value: 'paused' });
    const run = `POST /api/conversations/${id}/run`;
    const runs = () => t.requests.filter((r) => r.method === 'POST' && r.url.endsWith(`/${id}/run`)).length;
    const before = runs();
    statuses[run] = 409;
    const going = t.session.continueConversation();
    await new Promise((r) => setTimeout(r, 700));
    expect(runs() - before).toBeGreaterThanOrEqual(2);
    statuses[run] = 200;
    await going;
    const after = runs();
    await new Promise((r) => setTimeout(r, 700));
    expect(runs()).toBe(after); // taken: asked no more
    expect(t.session.status().problems.some((p) => p.id === 'server')).toBe(false);
  });

  it('the list says each conversation\'s state and who started it: this tab, Agent Canvas or an automation by their tags, else "outside the tab"', async () => {
    const t = setup();
    await t.session.open();
    await t.session.send('fix the bug');
    const mine = t.session.currentConversationId!;
    const other = '0b7e9b2c-0000-4000-8000-000000000001';
    t.answers['GET /api/conversations/search'] = { items: [
      { id: mine, title: 'fix the bug', execution_status: 'waiting_for_confirmation' },
      { id: other, title: 'from a script', execution_status: 'running' },
      // As Agent Canvas 1.20.0 creates its conversations (agent-server-adapter.ts: `tags`).
      { id: 'c-canvas', title: 'from Canvas', execution_status: 'idle', tags: { clientsource: 'agentcanvas' } },
      { id: 'c-auto', title: 'nightly', execution_status: 'finished', tags: { automationid: 'a1', automationrunid: 'r1' } },
      { id: 'c-other', title: 'another client', execution_status: 'idle', tags: { clientsource: 'somethingelse' } },
    ] };
    await t.session.refreshConversations();
    const { conversationLabel } = await import('../webview/protocol');
    expect(t.session.status().conversations.map(conversationLabel)).toEqual([
      'fix the bug (waiting for your confirmation, started in the tab)',
      'from a script (running, started outside the tab)',
      'from Canvas (idle, started in Agent Canvas)',
      'nightly (finished, started by an automation)',
      'another client (idle, started outside the tab)',
    ]);
    expect(t.session.status().conversations.find((c) => c.id === 'c-canvas')).not.toHaveProperty('tags');
  });

  it('the list says where each conversation works: the workspace, its worktree and branch, or another folder', async () => {
    const t = setup();
    const asked: string[] = [];
    t.deps.locate = async (dir) => {
      asked.push(dir);
      if (dir === '/ws') return { kind: 'workspace', folder: '/ws' };
      if (dir.startsWith('/tmp/conversation-worktrees/')) return { kind: 'worktree', path: dir, branch: 'openhands/c2', folder: '/ws' };
      return { kind: 'elsewhere', path: dir };
    };
    t.answers['GET /api/conversations/search'] = { items: [
      { id: 'c1', title: 'here', execution_status: 'finished', workspace: { kind: 'LocalWorkspace', working_dir: '/ws' } },
      { id: 'c2', title: 'from Canvas', execution_status: 'running', workspace: { kind: 'LocalWorkspace', working_dir: '/tmp/conversation-worktrees/c2/ws' } },
      { id: 'c3', title: 'another project', execution_status: 'idle', workspace: { working_dir: '/elsewhere' } },
      { id: 'c4', title: 'no workspace said' },
    ] };
    await t.session.open();
    const { conversationLabel } = await import('../webview/protocol');
    const list = t.session.status().conversations;
    expect(list.map(conversationLabel)).toEqual([
      'here (finished, started outside the tab, in the workspace)',
      'from Canvas (running, started outside the tab, in worktree openhands/c2)',
      'another project (idle, started outside the tab, in /elsewhere)',
      'no workspace said (started outside the tab)',
    ]);
    expect(list[1]).toMatchObject({ workingDir: '/tmp/conversation-worktrees/c2/ws', place: { kind: 'worktree', path: '/tmp/conversation-worktrees/c2/ws' } });
    expect(asked).toEqual(['/ws', '/tmp/conversation-worktrees/c2/ws', '/elsewhere']);
  });

  it('a conversation in a worktree: its Changes list and action titles name paths relative to the worktree, not absolute', async () => {
    const t = setup();
    const wt = '/tmp/conversation-worktrees/c2/ws';
    t.deps.locate = async (dir) => (dir === wt ? { kind: 'worktree', path: wt, branch: 'openhands/c2', folder: '/ws' } : { kind: 'workspace', folder: '/ws' });
    t.answers['GET /api/conversations/search'] = { items: [{ id: 'c2', title: 'from Canvas', execution_status: 'running', workspace: { working_dir: wt } }] };
    await t.session.open();
    await t.session.switchTo('c2');
    const socket = t.sockets.at(-1)!;
    socket.open();
    socket.emit({ kind: 'ActionEvent', id: 'a1', source: 'agent', tool_name: 'file_editor', action: { kind: 'FileEditorAction', command: 'str_replace', path: `${wt}/src/app.py`, old_str: 'y = 2', new_str: 'y = 3' } });
    socket.emit({ kind: 'ObservationEvent', id: 'o1', source: 'environment', action_id: 'a1', tool_name: 'file_editor', observation: { kind: 'FileEditorObservation', command: 'str_replace', path: `${wt}/src/app.py`, old_content: 'y = 2\n', new_content: 'y = 3\n', content: [{ type: 'text', text: 'edited' }] } });
    expect(t.session.status().changes?.files.map((f) => f.label)).toEqual(['src/app.py']);
    const items = t.posted.flatMap((m) => (m.type === 'add' || m.type === 'reset' ? m.items : m.type === 'patch' ? [m.item] : []));
    const titles = items.flatMap((i) => (i.kind === 'action' ? [i.title] : []));
    expect(titles.some((x) => x.includes('src/app.py'))).toBe(true);
    expect(titles.filter((x) => x.includes(wt))).toEqual([]);
  });

  it('polling the list tells the page only when something changed, and every published list reaches `listed`', async () => {
    const t = setup();
    t.answers['GET /api/conversations/search'] = { items: [{ id: 'b', title: 'background', execution_status: 'running' }] };
    await t.session.open();
    const statuses = () => t.posted.filter((m) => m.type === 'status').length;
    const before = statuses();
    await t.session.pollConversations();
    expect(statuses()).toBe(before);
    t.answers['GET /api/conversations/search'] = { items: [{ id: 'b', title: 'background', execution_status: 'finished' }] };
    await t.session.pollConversations();
    expect(statuses()).toBe(before + 1);
    expect(t.listed.at(-1)).toEqual({ ids: ['b:finished'], shown: undefined });
    const { placeText } = await import('../webview/protocol');
    expect(placeText({ kind: 'worktree', path: '/wt/p', branch: 'openhands/x', folder: '/p' }, 'elsewhere')).toBe('Started outside the tab (a script or another client); works in a git worktree on branch openhands/x: /wt/p');
    expect(placeText({ kind: 'workspace', folder: '/p' }, 'canvas')).toBe('Started in Agent Canvas; works in the workspace (/p)');
    expect(placeText({ kind: 'workspace', folder: '/p' })).toBe('Works in the workspace (/p)');
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

  it('joined mid-step: a socket that brings no history (the agent-server holds it behind the step) is filled over REST, each event once', async () => {
    const t = setup();
    const history = fixture.finished as V1Event[];
    t.answers['GET /api/conversations/c1/events/search'] = { items: history, next_page_id: null };
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    await new Promise((r) => setTimeout(r, 1700));
    const shown = t.session.items.length;
    expect(shown).toBeGreaterThan(0);
    for (const e of history) t.sockets[0].emit(e); // the socket's replay once the step ends
    expect(t.session.items.length).toBe(shown);
    // A socket that replays at once is not read over REST.
    const before = t.requests.filter((r) => r.url.includes('/events/search')).length;
    await t.session.reopen();
    t.sockets.at(-1)!.open();
    for (const e of history) t.sockets.at(-1)!.emit(e);
    await new Promise((r) => setTimeout(r, 1700));
    expect(t.requests.filter((r) => r.url.includes('/events/search')).length).toBe(before);
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

  it('a multi-root window: the tab names the folder of each edit', async () => {
    const t = setup({ folders: ['/home/u/app', '/home/u/api'] });
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    const edit = (id: string, path: string) => ({ kind: 'ActionEvent', id, source: 'agent', tool_name: 'file_editor', action: { kind: 'FileEditorAction', command: 'str_replace', path, old_str: 'a', new_str: 'b' } });
    t.sockets[0].emit(edit('x1', '/home/u/api/src/a.py'));
    t.sockets[0].emit(edit('x2', '/home/u/app/main.py'));
    expect(t.session.items.map((i) => (i as { title?: string }).title)).toEqual(['Edited api/src/a.py', 'Edited app/main.py']);
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

describe('the tab on a V1 agent-server: cost, context and the budget', () => {
  // Recorded from the real agent-server 1.58.2 (see the file's `about`): three `stats` updates.
  const stats = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'agent-server-stats.json'), 'utf8')).stats_events as V1Event[];

  it('shows what the conversation has cost so far; at the budget it pauses the agent once and asks; raising it runs the conversation again', async () => {
    const t = setup({ budget: 0.02 });
    await t.session.open();
    await t.session.switchTo('c1');
    const s = t.sockets[0];
    s.open();
    s.emit({ kind: 'ConversationStateUpdateEvent', id: 'r1', key: 'execution_status', value: 'running' });
    s.emit(stats[0]);
    expect(t.session.status().usage).toEqual({ text: '$0.0010 of $0.0200 · 263 in, 35 out · context 0% of 128k', costUsd: 0.0010075000000000001, contextPercent: 0, budgetUsd: 0.02 });
    s.emit(stats[1]);
    expect(t.requests.some((r) => r.url.endsWith('/pause'))).toBe(false);
    s.emit(stats[2]); // $0.0210: over the budget
    expect(t.requests.filter((r) => r.url.endsWith('/pause')).map((r) => r.url)).toEqual(['http://127.0.0.1:8000/api/conversations/c1/pause']);
    const problem = t.session.status().problems.find((p) => p.id === 'budget')!;
    expect(problem.message).toBe('This conversation has cost $0.0210, its budget of $0.0200 (openhands.budgetPerConversation): the agent was paused. Continue raises the budget by $0.0200.');
    expect(problem.fixes.map((f) => f.fix)).toEqual(['budget', 'settings']);
    s.emit({ ...stats[2], id: 'again' }); // the same figure again: not paused twice
    expect(t.requests.filter((r) => r.url.endsWith('/pause'))).toHaveLength(1);
    s.emit({ kind: 'ConversationStateUpdateEvent', id: 'p1', key: 'execution_status', value: 'paused' });
    await t.session.raiseBudget();
    expect(t.requests.at(-1)).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:8000/api/conversations/c1/run' });
    expect(t.session.status().problems.map((p) => p.id)).not.toContain('budget');
    expect(t.session.status().usage?.budgetUsd).toBeCloseTo(0.0410275);
  });

  it('without a budget nothing is paused; another conversation starts from nothing', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    t.sockets[0].emit({ kind: 'ConversationStateUpdateEvent', id: 'r1', key: 'execution_status', value: 'running' });
    for (const e of stats) t.sockets[0].emit(e);
    expect(t.session.status().usage?.text).toBe('$0.0210 · 7.9k in, 123 out · context 3% of 128k');
    expect(t.requests.some((r) => r.url.endsWith('/pause'))).toBe(false);
    await t.session.switchTo('c2');
    expect(t.session.status().usage).toBeUndefined();
  });
});

describe('the tab on a V1 agent-server: one rule where V0 and V1 disagreed; several sessions per tab', () => {
  it('a conversation list the agent-server fails to give (HTTP 500) does not block the tab: the remembered conversation opens', async () => {
    const t = setup({ statuses: { 'GET /api/conversations/search': 500 } });
    await t.state.update('openhands.v1.conversation:http://127.0.0.1:8000', 'c4');
    await t.session.open();
    expect(t.session.status()).toMatchObject({ problems: [], conversationId: 'c4', conversations: [{ id: 'c4' }], canSend: false });
    t.sockets[0].open();
    expect(t.session.status().canSend).toBe(true);
  });

  it('whatever the SDK\'s policy holds back waits for the answer: an MCP tool call is confirmable too', async () => {
    const t = setup({ confirmation: 'always' });
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    t.sockets[0].emit({ kind: 'ActionEvent', id: 'm1', source: 'agent', tool_name: 'diagnostics', action: { kind: 'MCPToolAction', data: { uri: 'file:///ws/a.py' } } });
    t.sockets[0].emit({ kind: 'ConversationStateUpdateEvent', id: 's1', key: 'execution_status', value: 'waiting_for_confirmation' });
    expect(t.session.status().confirmation).toMatchObject({ kind: 'other', action: 'call_tool_mcp', title: 'Tool diagnostics', alreadyDone: false });
    t.session.confirm(true);
    expect(t.requests.filter((r) => r.url.endsWith('/respond_to_confirmation')).map((r) => r.body)).toEqual([{ accept: true }]);
  });

  it('two sessions in one tab (one per conversation, one agent-server, one workspace state) keep their own state', async () => {
    const t = setup({ confirmation: 'always' });
    const posted2: HostToView[] = [];
    const other = new TabSession({ backend: new V1Backend(t.deps), executor: t.deps.executor, post: (m) => posted2.push(m), log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
    await t.session.open();
    await other.open();
    await t.session.switchTo('c1');
    await other.switchTo('c2');
    const [s1, s2] = t.sockets;
    s1.open();
    s2.open();
    s1.emit({ kind: 'ActionEvent', id: 'a1', source: 'agent', tool_name: 'terminal', action: { kind: 'TerminalAction', command: 'echo one' } });
    s1.emit({ kind: 'ConversationStateUpdateEvent', id: 's1', key: 'execution_status', value: 'waiting_for_confirmation' });
    s2.emit({ kind: 'ConversationStateUpdateEvent', id: 's2', key: 'execution_status', value: 'running' });
    expect([t.session.currentConversationId, other.currentConversationId]).toEqual(['c1', 'c2']);
    expect(t.session.items.map((i) => (i as { title?: string }).title).filter(Boolean)).toEqual(['echo one']);
    expect(other.items.some((i) => i.kind === 'action')).toBe(false);
    expect([t.session.status().agentState, other.status().agentState]).toEqual(['awaiting_user_confirmation', 'running']);
    expect(other.status().confirmation).toBeUndefined();
    other.confirm(true);
    t.session.confirm(false);
    expect(t.requests.filter((r) => r.url.endsWith('/respond_to_confirmation')).map((r) => [r.url.split('/')[5], (r.body as { accept: boolean }).accept])).toEqual([['c1', false]]);
    expect(JSON.stringify(posted2)).not.toContain('echo one');
  });

  it('a paused conversation that waits for input (idle) can be continued; so can an error', async () => {
    const t = setup();
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    t.sockets[0].emit({ kind: 'ConversationStateUpdateEvent', id: 's1', key: 'execution_status', value: 'idle' });
    expect(t.session.status()).toMatchObject({ agentState: 'awaiting_user_input', canContinue: true });
    t.sockets[0].emit({ kind: 'ConversationStateUpdateEvent', id: 's2', key: 'execution_status', value: 'error' });
    expect(t.session.status()).toMatchObject({ agentState: 'error', canContinue: true });
  });
});

// The real executor addon (npm/executor, as revert.test.ts uses it): real checkpoints of a real folder.
const addon = createRequire(__filename)('../../../npm/executor/index.js') as {
  Executor: new (options: Record<string, unknown>, fs: null) => CheckpointExecutor & { stop(): Promise<void> };
};

describe('V1Backend: a checkpoint before each user message (real executor)', () => {
  let dir: string;
  let ws: string;
  let executor: CheckpointExecutor & { stop(): Promise<void> };
  const file = () => readFileSync(join(ws, 'a.txt'), 'utf8');

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oh-v1ckpt-'));
    ws = join(dir, 'ws');
    mkdirSync(ws);
    process.env.OH_CHECKPOINT_DIR = join(dir, 'store');
    writeFileSync(join(ws, 'a.txt'), 'before\n');
    executor = new addon.Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: 'c1', workspaceRoot: ws }, null);
  });

  afterEach(async () => {
    await executor.stop().catch(() => undefined);
    delete process.env.OH_CHECKPOINT_DIR;
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the agent does once it runs on the message (posted with `run`, or `/run`): the checkpoint must already exist. */
  function agentAnswers(seen: Array<Array<BeforeMessage | undefined>>) {
    return async (method: string, path: string, body: Record<string, unknown> | undefined) => {
      if (method !== 'POST' || !((path.endsWith('/events') && body?.run === true) || path.endsWith('/run'))) return;
      const list = await runCheckpoint<{ checkpoints: CheckpointSummary[] }>(executor, 'list', {});
      seen.push(list.checkpoints.map((c) => c.before_message));
      const reply = JSON.parse(await executor.execute(JSON.stringify({ id: 900 + seen.length, action: 'run', args: { command: `echo agent${seen.length} > a.txt` } })));
      expect(reply.extras.metadata.exit_code).toBe(0);
    };
  }

  it('takes it before posting the message (keyed by the message number), and the tab reverts to it', async () => {
    const seen: Array<Array<BeforeMessage | undefined>> = [];
    const t = setup({ executor, onRequest: agentAnswers(seen) });
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    // Two user messages are in the conversation already (the agent-server's count): this is the third.
    t.answers['GET /api/conversations/c1/events/count'] = 2;
    await t.session.send('change a.txt');
    expect(t.warnings).toEqual([]);
    expect(seen).toEqual([[{ conversation_id: 'c1', message: 3 }]]);
    expect(file()).toBe('agent1\n');

    // The history as the stream replays it: two earlier user messages, then this one.
    const user = (id: string, text: string) => ({ kind: 'MessageEvent', id, source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text }] } });
    t.sockets[0].emit(user('u1', 'first'));
    t.sockets[0].emit({ kind: 'MessageEvent', id: 'a1', source: 'agent', llm_message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] } });
    t.sockets[0].emit(user('u2', 'second'));
    t.sockets[0].emit(user('u3', 'change a.txt'));
    const third = t.session.items.find((i) => i.kind === 'message' && i.text === 'change a.txt')!;
    expect(t.session.checkpointKey(third.key)).toBe(3);
    expect(t.session.checkpointKey(t.session.items.find((i) => i.kind === 'message' && i.text === 'ok')!.key)).toBeUndefined();

    const picks: string[][] = [];
    const ui: RevertUi = {
      pick: async (plan) => { picks.push(plan.changes.map((c) => c.path)); return 'apply'; },
      diff: async () => undefined,
      info: async () => undefined,
      error: (m) => { throw new Error(m); },
    };
    const outcome = await revertToBefore(executor, ui, 'c1', t.session.checkpointKey(third.key)!, 'change a.txt', () => [], () => undefined);
    expect(picks).toEqual([['a.txt']]);
    expect(outcome?.note).toContain('Files reverted to before message 3');
    expect(file()).toBe('before\n');
  });

  it('first message: the checkpoint (message 1) is taken once the executor serves the new conversation, before the agent runs', async () => {
    const seen: Array<Array<BeforeMessage | undefined>> = [];
    const t = setup({ executor, onRequest: agentAnswers(seen) });
    await t.session.open();
    await t.session.send('start');
    const id = t.session.currentConversationId!;
    expect(t.warnings).toEqual([]);
    expect(seen).toEqual([[{ conversation_id: id, message: 1 }]]);
    expect(file()).toBe('agent1\n');
  });

  it('first message of a conversation created empty ("New conversation"): the same', async () => {
    const seen: Array<Array<BeforeMessage | undefined>> = [];
    const t = setup({ executor, onRequest: agentAnswers(seen) });
    await t.session.open();
    const id = await t.session.newConversation();
    t.sockets[0].open();
    t.answers[`GET /api/conversations/${id}/events/count`] = 0;
    await t.session.send('start');
    expect(t.warnings).toEqual([]);
    expect(seen).toEqual([[{ conversation_id: id, message: 1 }]]);
    const posts = t.requests.filter((r) => r.method === 'POST').map((r) => [new URL(r.url).pathname, (r.body as { run?: boolean } | undefined)?.run]);
    expect(posts).toEqual([['/api/conversations', undefined], [`/api/conversations/${id}/events`, false], [`/api/conversations/${id}/run`, undefined]]);
  });

  it('a new conversation in a worktree: `worktree: true` in the create request when asked or by the user\'s default; asked otherwise wins', async () => {
    const created = async (opts: { worktreeByDefault?: boolean }, ask?: { worktree?: boolean }) => {
      const t = setup(opts);
      await t.session.open();
      const id = await t.session.newConversation(undefined, ask);
      const create = t.requests.find((r) => r.method === 'POST' && r.url.endsWith('/api/conversations'))!;
      expect(t.retargeted).toEqual([id]);
      return create.body as Record<string, unknown>;
    };
    expect(await created({}, { worktree: true })).toMatchObject({ worktree: true, workspace: { working_dir: '/ws' } });
    expect(await created({ worktreeByDefault: true })).toMatchObject({ worktree: true });
    expect(await created({ worktreeByDefault: true }, { worktree: false })).not.toHaveProperty('worktree');
    expect(await created({ worktreeByDefault: false })).not.toHaveProperty('worktree');
    expect(await created({})).not.toHaveProperty('worktree');
  });

  it('a failing checkpoint is logged and the message is still sent', async () => {
    const failing: CheckpointExecutor = { execute: async () => { throw new Error('the executor is not running'); } };
    const t = setup({ executor: failing });
    await t.session.open();
    await t.session.switchTo('c1');
    t.sockets[0].open();
    t.answers['GET /api/conversations/c1/events/count'] = 1;
    await t.session.send('hello');
    expect(t.warnings).toEqual(['no checkpoint before message 2 of conversation c1: the executor is not running; the message is sent without one (it cannot be reverted)']);
    expect(t.requests.filter((r) => r.method === 'POST').map((r) => [r.url, r.body])).toEqual([['http://127.0.0.1:8000/api/conversations/c1/events', { role: 'user', content: [{ type: 'text', text: 'hello' }], run: true }]]);
  });
});
