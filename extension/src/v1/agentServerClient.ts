import { requestJson, ServerError, type FetchLike } from '../tab/http';
import type { ConversationSummary } from '../webview/protocol';

/**
 * A V1 agent-server (openhands-agent-server 1.58) as the tab uses it: the REST API under `/api`
 * with the `X-Session-API-Key` header, and the per-conversation event stream
 * `/sockets/events/{id}` (a WebSocket; the key goes in the first frame, `{"type":"auth"}`, so it
 * never appears in a URL or a log line).
 */

/** One V1 event as the agent-server serialises it (`kind` names its class). */
export interface V1Event {
  kind: string;
  id: string;
  timestamp?: string;
  source?: string;
  [field: string]: unknown;
}

/** Where a running agent-server is and how to reach its executor discovery files. */
export interface AgentServerEndpoint {
  baseUrl: string;
  sessionApiKey: string | undefined;
  /** The folder the V1 tools write `v1-<conversation id hex>.json` into (OH_VSCODE_V1_DISCOVERY_DIR). */
  discoveryDir: string;
  /** A remote agent-server with a CA file or pin set: the tab's requests and event stream check its certificate so (tlsClient.ts). */
  fetch?: FetchLike;
  socketFactory?: SocketFactory;
}

/** What the tab puts into `POST /api/conversations`. */
export interface StartConversation {
  conversationId: string;
  workingDir: string;
  llm: { model: string; baseUrl?: string; apiKey?: string };
  /** `never`, `risky` (ConfirmRisky) or `always` (AlwaysConfirm). */
  confirmation: ConfirmationMode;
  /** The IDE tools this window serves, as an MCP server entry (fastmcp's `mcpServers` shape). */
  mcpServers?: Record<string, { url: string; transport?: string; headers?: Record<string, string> }>;
  firstMessage?: string;
  /**
   * Work in a git worktree the agent-server makes of the workspace's repository (its
   * `worktree: true`: under OH_CONVERSATION_WORKTREE_ROOT, on branch `openhands/<id>`). The
   * agent-server ignores it when the workspace is not in a git repository.
   */
  worktree?: boolean;
}

export type ConfirmationMode = 'never' | 'risky' | 'always';

export function confirmationPolicy(mode: ConfirmationMode): Record<string, unknown> {
  switch (mode) {
    case 'always':
      return { kind: 'AlwaysConfirm' };
    case 'risky':
      return { kind: 'ConfirmRisky' };
    default:
      return { kind: 'NeverConfirm' };
  }
}

/** A user message as `SendMessageRequest` (and `initial_message`) takes it. */
export function userMessage(text: string, run = true): Record<string, unknown> {
  return { role: 'user', content: [{ type: 'text', text }], run };
}

/** The body of `POST /api/conversations` for the tab's conversations. */
export function startRequest(s: StartConversation): Record<string, unknown> {
  const llm: Record<string, unknown> = { model: s.llm.model, usage_id: 'agent' };
  if (s.llm.baseUrl) llm.base_url = s.llm.baseUrl;
  if (s.llm.apiKey) llm.api_key = s.llm.apiKey;
  const agent: Record<string, unknown> = {
    kind: 'Agent',
    llm,
    // This package's executor-backed tools (the agent-server runs with
    // `--import-modules openhands_vscode_runtime.v1.register`, which makes these names ours).
    tools: [{ name: 'terminal' }, { name: 'file_editor' }],
  };
  // agent-server 1.58: `mcp_config` is the servers by name (not fastmcp's `{"mcpServers": …}` wrapper).
  if (s.mcpServers && Object.keys(s.mcpServers).length) agent.mcp_config = s.mcpServers;
  const body: Record<string, unknown> = {
    conversation_id: s.conversationId,
    agent,
    workspace: { working_dir: s.workingDir },
    confirmation_policy: confirmationPolicy(s.confirmation),
  };
  // ConfirmRisky decides by the risk the LLM rates each action (LLMSecurityAnalyzer); without an
  // analyzer every risk is UNKNOWN, which ConfirmRisky confirms: the same as AlwaysConfirm.
  if (s.confirmation === 'risky') body.security_analyzer = { kind: 'LLMSecurityAnalyzer' };
  if (s.worktree) body.worktree = true;
  if (s.firstMessage !== undefined) body.initial_message = userMessage(s.firstMessage);
  return body;
}

export class AgentServerClient {
  constructor(
    readonly baseUrl: string,
    private readonly sessionApiKey: string | undefined,
    private readonly fetchImpl: FetchLike = globalThis.fetch as unknown as FetchLike,
    private readonly timeoutMs = 30000,
  ) {}

  private request(method: string, path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<unknown> {
    return requestJson({
      fetchImpl: this.fetchImpl, baseUrl: this.baseUrl, sessionApiKey: this.sessionApiKey, timeoutMs: this.timeoutMs,
      serverName: 'OpenHands agent-server',
    }, method, path, body, timeoutMs);
  }

  /** The server's conversations, newest first (`GET /api/conversations/search`). */
  async listConversations(limit = 50): Promise<Array<ConversationSummary & { tags?: Record<string, unknown> }>> {
    const r = (await this.request('GET', `/api/conversations/search?limit=${limit}`)) as { items?: unknown[] };
    return (r.items ?? []).map((raw) => summary(raw as Record<string, unknown>)).filter((c) => c !== undefined);
  }

  /** One conversation (`GET /api/conversations/{id}`): its `execution_status` among the rest. */
  async conversation(id: string): Promise<Record<string, unknown>> {
    return (await this.request('GET', `/api/conversations/${encodeURIComponent(id)}`)) as Record<string, unknown>;
  }

  /**
   * Creates (and with a first message, starts) a conversation. The agent-server creates the
   * tools inside this request, and ours wait there for this window's executor, so the answer
   * may come only after the executor attached: hence the long timeout.
   */
  async startConversation(s: StartConversation, timeoutMs = 15 * 60 * 1000): Promise<Record<string, unknown>> {
    return (await this.request('POST', '/api/conversations', startRequest(s), timeoutMs)) as Record<string, unknown>;
  }

  /**
   * Posts a user message. `run: false` only stores it; the first message of a conversation also
   * creates its tools, which wait for the executor there (hence `timeoutMs`).
   */
  async sendMessage(id: string, text: string, run = true, timeoutMs = this.timeoutMs): Promise<void> {
    await this.request('POST', `/api/conversations/${encodeURIComponent(id)}/events`, userMessage(text, run), timeoutMs);
  }

  /**
   * How many user messages the conversation holds (`GET .../events/count`): the number of the next
   * one is this plus one, its checkpoint's key (docs/checkpoints.md).
   */
  async userMessageCount(id: string): Promise<number> {
    const n = await this.request('GET', `/api/conversations/${encodeURIComponent(id)}/events/count?kind=MessageEvent&source=user`);
    if (typeof n !== 'number') throw new Error(`the agent-server answered the message count with ${JSON.stringify(n)}`);
    return n;
  }

  /** Runs a paused (or idle) conversation again. 409: it is running already. */
  async run(id: string): Promise<void> {
    await this.request('POST', `/api/conversations/${encodeURIComponent(id)}/run`, {});
  }

  /** Pauses after the running step (`/pause`). */
  async pause(id: string): Promise<void> {
    await this.request('POST', `/api/conversations/${encodeURIComponent(id)}/pause`, {});
  }

  /** Confirmation mode: accepts or rejects the actions the agent waits to run. */
  async respondToConfirmation(id: string, accept: boolean, reason?: string): Promise<void> {
    const body: Record<string, unknown> = { accept };
    if (reason) body.reason = reason;
    await this.request('POST', `/api/conversations/${encodeURIComponent(id)}/events/respond_to_confirmation`, body);
  }

  async deleteConversation(id: string): Promise<void> {
    await this.request('DELETE', `/api/conversations/${encodeURIComponent(id)}`);
  }

  /**
   * A file of the agent-server's machine as JSON (`GET /api/file/download`); undefined when there
   * is none (404). How the tab reads a remote agent-server's executor discovery files (remote.ts).
   */
  async readJsonFile(path: string): Promise<unknown | undefined> {
    try {
      return await this.request('GET', `/api/file/download?path=${encodeURIComponent(path)}`);
    } catch (e) {
      if (e instanceof ServerError && e.kind === 'not_found') return undefined;
      throw e;
    }
  }

  /** The agent-server user's home folder (`GET /api/file/home`). */
  async home(): Promise<string> {
    const r = (await this.request('GET', '/api/file/home')) as { home?: unknown };
    if (typeof r.home !== 'string' || !r.home) throw new Error(`the agent-server answered /api/file/home with ${JSON.stringify(r).slice(0, 100)}`);
    return r.home;
  }

  /** Every event of a conversation in order (`GET .../events/search`, paged). */
  async events(id: string, max = 10000): Promise<V1Event[]> {
    const out: V1Event[] = [];
    let page: string | undefined;
    do {
      const q = `limit=100${page ? `&page_id=${encodeURIComponent(page)}` : ''}`;
      const r = (await this.request('GET', `/api/conversations/${encodeURIComponent(id)}/events/search?${q}`)) as { items?: V1Event[]; next_page_id?: string | null };
      out.push(...(r.items ?? []));
      page = r.next_page_id ?? undefined;
    } while (page && out.length < max);
    return out;
  }
}

function summary(c: Record<string, unknown>): (ConversationSummary & { tags?: Record<string, unknown> }) | undefined {
  const id = typeof c.id === 'string' ? c.id : '';
  if (!id) return undefined;
  const ws = c.workspace && typeof c.workspace === 'object' ? (c.workspace as Record<string, unknown>) : undefined;
  return {
    id,
    title: typeof c.title === 'string' && c.title ? c.title : id.slice(0, 8),
    status: typeof c.execution_status === 'string' ? c.execution_status : undefined,
    updated: typeof c.updated_at === 'string' ? c.updated_at : undefined,
    workingDir: typeof ws?.working_dir === 'string' && ws.working_dir ? ws.working_dir : undefined,
    tags: c.tags && typeof c.tags === 'object' ? (c.tags as Record<string, unknown>) : undefined,
  };
}

// Tags other clients put on the conversations they create (agent-server `tags`: lowercase keys):
// Agent Canvas 1.20 `clientsource: agentcanvas` on each; an automation run its `automation*` keys
// (the SDK's `RemoteWorkspace.default_conversation_tags`).
const CLIENT_SOURCE_TAG = 'clientsource';
const AGENT_CANVAS_SOURCE = 'agentcanvas';
const AUTOMATION_TAGS = ['automationtrigger', 'automationid', 'automationname', 'automationrunid'];

/** Who started a conversation this tab did not create, as far as its tags tell. */
export function startedBy(tags: Record<string, unknown> | undefined): 'canvas' | 'automation' | 'elsewhere' {
  if (tags?.[CLIENT_SOURCE_TAG] === AGENT_CANVAS_SOURCE) return 'canvas';
  if (AUTOMATION_TAGS.some((k) => typeof tags?.[k] === 'string')) return 'automation';
  return 'elsewhere';
}

/** The minimal WebSocket surface (the WHATWG one: Node's global and the `ws` package both have it). */
export interface SocketLike {
  onopen: ((e: unknown) => void) | null;
  onmessage: ((e: { data: unknown }) => void) | null;
  onclose: ((e: { code: number; reason: string }) => void) | null;
  onerror: ((e: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type SocketFactory = (url: string) => SocketLike;

const defaultSocketFactory: SocketFactory = (url) => {
  const G = (globalThis as { WebSocket?: new (u: string) => SocketLike }).WebSocket;
  if (G) return new G(url);
  // Older extension hosts (Node < 22) have no global WebSocket; `ws` is bundled.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Ws = require('ws') as new (u: string) => SocketLike;
  return new Ws(url);
};

export interface EventStreamHandlers {
  onEvent(e: V1Event): void;
  onOpen(): void;
  /** The stream ended; `refused`: the server will not take it again (bad key, no such conversation). */
  onClose(code: number, reason: string, refused: boolean): void;
}

/**
 * One conversation's event stream. Every (re)connect asks for the whole history again
 * (`resend_mode=all`): the receiver drops what it has by the events' ids, so nothing between a drop
 * and a reconnect is lost and nothing renders twice. Reconnects after a drop, not after a refusal.
 */
export class EventStream {
  private socket: SocketLike | undefined;
  private closed = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private delay = 500;
  connected = false;

  constructor(
    readonly baseUrl: string,
    readonly conversationId: string,
    private readonly sessionApiKey: string | undefined,
    private readonly handlers: EventStreamHandlers,
    private readonly factory: SocketFactory = defaultSocketFactory,
  ) {}

  connect(): void {
    if (this.closed || this.socket) return;
    const url = `${this.baseUrl.replace(/^http/, 'ws')}/sockets/events/${encodeURIComponent(this.conversationId)}?resend_mode=all`;
    const s = this.factory(url);
    this.socket = s;
    s.onopen = () => {
      if (this.socket !== s) return;
      // First-message auth: the key never goes into the URL.
      s.send(JSON.stringify({ type: 'auth', session_api_key: this.sessionApiKey ?? '' }));
      this.connected = true;
      this.delay = 500;
      this.handlers.onOpen();
    };
    s.onmessage = (m) => {
      if (this.socket !== s) return;
      let e: unknown;
      try {
        e = JSON.parse(typeof m.data === 'string' ? m.data : String(m.data));
      } catch {
        return;
      }
      if (e && typeof e === 'object' && typeof (e as V1Event).kind === 'string') this.handlers.onEvent(e as V1Event);
    };
    s.onerror = () => undefined;
    s.onclose = (c) => {
      if (this.socket !== s) return;
      this.socket = undefined;
      this.connected = false;
      // 4001: authentication failed; 4004: no such conversation.
      const refused = c.code === 4001 || c.code === 4004;
      this.handlers.onClose(c.code, c.reason, refused);
      if (!refused && !this.closed) {
        this.retry = setTimeout(() => this.connect(), this.delay);
        this.delay = Math.min(this.delay * 2, 10000);
      }
    };
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const s = this.socket;
    this.socket = undefined;
    this.connected = false;
    try {
      s?.close(1000, 'closed by the client');
    } catch {
      // already closed
    }
  }
}
