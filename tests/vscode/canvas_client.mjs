// Agent Canvas 1.20.0's own client code, run in Node 24, makes the calls Canvas makes against this
// window's agent-server (session v1-canvas, suite/v1-canvas.js). The stand-in is only for Canvas's
// browser page (React): the modules below are Canvas's compiled `dist/` (from its npm tarball),
// the same code its frontend bundles, with `@openhands/typescript-client` 1.49.1 inside it.
//   1. Add Backend: Canvas's backend registry gets {host, apiKey, kind: "local"} and selects it
//      (what its Manage Backends dialog stores);
//   2. the LLM: Canvas's SettingsService.saveSettings (PATCH /api/settings), as its settings page;
//   3. each task: AgentServerConversationService.createConversation with the window's folder as
//      the picked workspace and the "New worktree" mode (POST /api/conversations with Canvas's
//      agent_settings, client_tools, tags, worktree: true), all at once;
//   4. each conversation's events over the WebSocket as Canvas's conversation page opens it
//      (buildWebSocketUrl, `resend_mode=all`, sendWebSocketAuth's first frame), and Canvas's
//      conversation list polled (searchConversations) until every one finished.
// Usage: node canvas_client.mjs CANVAS_PACKAGE_DIR BACKEND_URL API_KEY WORKSPACE LLM_BASE_URL TASK...
// Prints one JSON line per event of note ({"created"...}, {"finished"...}) and last {"done"...}.
const [pkg, host, apiKey, workspace, llmBaseUrl, ...tasks] = process.argv.slice(2);
if (!tasks.length) {
  console.error('usage: canvas_client.mjs CANVAS_PACKAGE_DIR BACKEND_URL API_KEY WORKSPACE LLM_BASE_URL TASK...');
  process.exit(64);
}
const dist = `${pkg}/dist`;
const say = (o) => console.log(JSON.stringify(o));

// What a browser page gives Canvas's modules: its storages and its location.
class MemoryStorage {
  #m = new Map();
  get length() { return this.#m.size; }
  key(i) { return [...this.#m.keys()][i] ?? null; }
  getItem(k) { return this.#m.has(k) ? this.#m.get(k) : null; }
  setItem(k, v) { this.#m.set(k, String(v)); }
  removeItem(k) { this.#m.delete(k); }
  clear() { this.#m.clear(); }
}
globalThis.localStorage = new MemoryStorage();
globalThis.sessionStorage = new MemoryStorage();
globalThis.window ??= {
  localStorage: globalThis.localStorage,
  sessionStorage: globalThis.sessionStorage,
  location: { protocol: 'http:', host: 'localhost:8000', hostname: 'localhost', origin: 'http://localhost:8000', search: '' },
};

const registry = await import(`${dist}/api/backend-registry/active-store.js`);
const Settings = (await import(`${dist}/api/settings-service/settings-service.api.js`)).default;
const Conversations = (await import(`${dist}/api/conversation-service/agent-server-conversation-service.api.js`)).default;
const { buildWebSocketUrl } = await import(`${dist}/utils/websocket-url.js`);
const { sendWebSocketAuth } = await import(`${dist}/utils/websocket-auth.js`);

registry.setRegisteredBackends([{ id: 'vscode-window', name: 'VS Code window', host, apiKey, kind: 'local' }]);
registry.setActiveSelection({ backendId: 'vscode-window', orgId: null });
if (!(await Settings.saveSettings({ agent_settings_diff: { llm: { model: 'openai/scripted', base_url: llmBaseUrl, api_key: 'scripted-llm-key' } } }))) {
  throw new Error('Canvas could not save the LLM settings on the backend');
}

// Each conversation's events as Canvas's page receives them.
const sockets = new Map();
function watch(id, conversationUrl) {
  const state = { events: 0, finished: false, opened: false };
  const ws = new WebSocket(`${buildWebSocketUrl(id, conversationUrl)}?resend_mode=all`);
  ws.onopen = () => {
    state.opened = true;
    sendWebSocketAuth(ws, apiKey);
  };
  ws.onmessage = (m) => {
    state.events += 1;
    const e = JSON.parse(String(m.data));
    if (e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' && e.value === 'finished') state.finished = true;
  };
  ws.onclose = (e) => { state.closed = e.code; };
  sockets.set(id, { ws, state });
}

const created = await Promise.all(tasks.map(async (task) => {
  const peers = tasks.join(' ');
  const c = await Conversations.createConversation({
    initialUserMsg: `parallel task ${task} with tab ${peers}`,
    workingDirOverride: workspace,
    workspaceMode: 'new_worktree',
  });
  say({ created: c.id, task, at: Date.now() });
  // The conversation's URL as Canvas's list gives it (toConversationUrl: the backend's host).
  watch(c.id, `${host}/api/conversations/${c.id}`);
  return { id: c.id, task };
}));

// Canvas's conversation list, polled until each conversation finished (or failed).
const deadline = Date.now() + 240000;
let page;
for (;;) {
  page = await Conversations.searchConversations(50);
  const mine = created.map((c) => page.items.find((i) => i.id === c.id));
  const bad = mine.find((c) => c && ['error', 'stuck'].includes(c.execution_status));
  if (bad) throw new Error(`conversation ${bad.id} ${bad.execution_status}`);
  if (mine.every((c) => c?.execution_status === 'finished')) break;
  if (Date.now() > deadline) throw new Error(`not finished: ${JSON.stringify(mine.map((c) => c && [c.id, c.execution_status]))}`);
  await new Promise((r) => setTimeout(r, 1000));
}
await new Promise((r) => setTimeout(r, 1000));
for (const c of created) {
  const listed = page.items.find((i) => i.id === c.id);
  const { ws, state } = sockets.get(c.id);
  say({ finished: c.id, task: c.task, tags: listed.tags, working_dir: listed.workspace?.working_dir, socket: state });
  ws.close(1000);
}
say({ done: created.length });
process.exit(0);
