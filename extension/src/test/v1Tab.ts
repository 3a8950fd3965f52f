import type { HostToView } from '../webview/protocol';
import type { SocketLike, V1Event } from '../v1/agentServerClient';
import { TabSession } from '../tab/tabSession';
import { V1Backend, type V1BackendDeps } from '../v1/v1Backend';
import type { CheckpointExecutor } from '../revert';

/** A WebSocket whose frames the test sends (`emit`) and reads (`sent`). */
export class FakeSocket implements SocketLike {
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

export function store() {
  const m = new Map<string, unknown>();
  return { get: <T>(k: string) => m.get(k) as T | undefined, update: async (k: string, v: unknown) => { m.set(k, v); }, m };
}

/**
 * The tab on a V1 agent-server for unit tests: one TabSession over a V1Backend whose HTTP answers
 * (`answers`, by "METHOD path"), WebSockets (`sockets`) and executor are the test's; every request,
 * post, retarget and checkpoint action is recorded.
 */
export function v1Tab(opts: { worktreeByDefault?: boolean; budget?: number; llm?: boolean; confirmation?: 'never' | 'always'; executor?: CheckpointExecutor; folders?: string[]; statuses?: Record<string, number>; onRequest?: (method: string, path: string, body: Record<string, unknown> | undefined) => Promise<void> } = {}) {
  const requests: Array<{ method: string; url: string; headers: Record<string, string>; body?: unknown }> = [];
  const sockets: FakeSocket[] = [];
  const posted: HostToView[] = [];
  const retargeted: string[] = [];
  const released: string[] = [];
  const llmState = store();
  if (opts.llm !== false) llmState.m.set('openhands.v1.llm', { model: 'openai/scripted', baseUrl: 'http://127.0.0.1:9/v1' });
  const secrets = new Map<string, string>([['openhands.v1.llmApiKey', 'sk-llm']]);
  const answers: Record<string, unknown> = {};
  // Every action the tab ran in its executor (checkpoints), in order with the requests.
  const actions: Array<Record<string, unknown>> = [];
  const executor = opts.executor ?? {
    execute: async (json: string) => {
      const a = JSON.parse(json);
      actions.push(a);
      return JSON.stringify({ observation: 'checkpoint', cause: a.id, content: 'taken', extras: { result: { id: actions.length, label: a.args.label } } });
    },
  };
  const warnings: string[] = [];
  const listed: Array<{ ids: string[]; shown: string | undefined }> = [];
  const deps: V1BackendDeps = {
    endpoint: () => ({ baseUrl: 'http://127.0.0.1:8000', sessionApiKey: 'ask', discoveryDir: '/d' }),
    state: store(),
    llmState,
    secrets: { get: async (k) => secrets.get(k), store: async (k, v) => { secrets.set(k, v); } },
    executor: {
      snapshot: { state: 'stopped' },
      retarget: async (id) => { retargeted.push(id); },
      release: async (id) => { released.push(id); },
      execute: (json) => executor.execute(json),
    },
    workspaceRoot: () => '/ws',
    confirmation: () => opts.confirmation ?? 'never',
    worktreeByDefault: opts.worktreeByDefault === undefined ? undefined : () => opts.worktreeByDefault!,
    ideTools: async () => ({ url: 'http://127.0.0.1:7777/mcp', headers: { Authorization: 'Bearer tok' } }),
    fetch: async (url, init) => {
      requests.push({ method: init.method, url, headers: init.headers, body: init.body ? JSON.parse(init.body) : undefined });
      const path = new URL(url).pathname;
      await opts.onRequest?.(init.method, path, init.body ? JSON.parse(init.body) : undefined);
      const body = answers[`${init.method} ${path}`] ?? (path.endsWith('/search') ? { items: [] } : { success: true });
      const status = opts.statuses?.[`${init.method} ${path}`] ?? 200;
      return { ok: status < 300, status, statusText: String(status), text: async () => JSON.stringify(body) };
    },
    socketFactory: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
  };
  const session = new TabSession({
    backend: new V1Backend(deps),
    executor: deps.executor,
    post: (m) => posted.push(m),
    log: { info: () => undefined, warn: (m) => warnings.push(m), error: () => undefined },
    workspaceFolders: () => opts.folders ?? '/ws',
    budgetUsd: () => opts.budget ?? 0,
    listed: (list, shown) => listed.push({ ids: list.map((c) => `${c.id}:${c.status}`), shown }),
  });
  return { session, deps, requests, state: deps.state, sockets, posted, retargeted, released, answers, secrets, actions, warnings, listed };
}
