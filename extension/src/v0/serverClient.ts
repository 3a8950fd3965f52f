import type { LlmSettings } from '../tab/backend';
import { requestJson, ServerError, type FetchLike } from '../tab/http';
import type { ServerEvent } from '../tab/eventModel';
import type { ConversationSummary } from '../webview/protocol';

/**
 * The OpenHands server as its web UI uses it: the REST API (`/api/conversations`, `/api/settings`,
 * the event history) and, per conversation, the default Socket.IO namespace (`conversationSocket.ts`).
 */

export class ServerClient {
  // An ES private field, not a TypeScript `private` one: neither `util.inspect` (a log line, a
  // debugger's view) nor `JSON.stringify` shows it.
  readonly #sessionApiKey: string | undefined;

  constructor(
    readonly baseUrl: string,
    sessionApiKey: string | undefined,
    private readonly fetchImpl: FetchLike = globalThis.fetch as unknown as FetchLike,
    private readonly timeoutMs = 15000,
  ) {
    this.#sessionApiKey = sessionApiKey;
  }

  private request(method: string, path: string, body?: unknown): Promise<unknown> {
    return requestJson({
      fetchImpl: this.fetchImpl, baseUrl: this.baseUrl, sessionApiKey: this.#sessionApiKey, timeoutMs: this.timeoutMs,
      serverName: 'OpenHands server',
      // V0's answer when the user has saved no LLM settings: the tab shows its LLM form.
      classify: (detail) => (/SETTINGS_NOT_FOUND|Settings not found/i.test(detail) ? 'no_settings' : undefined),
    }, method, path, body);
  }

  /** The server's conversations, newest first (`GET /api/conversations`). */
  async listConversations(limit = 50): Promise<ConversationSummary[]> {
    const r = (await this.request('GET', `/api/conversations?limit=${limit}`)) as { results?: unknown[] };
    const out: ConversationSummary[] = [];
    for (const raw of r.results ?? []) {
      const c = raw as Record<string, unknown>;
      const id = typeof c.conversation_id === 'string' ? c.conversation_id : '';
      if (!id) continue;
      out.push({
        id,
        title: typeof c.title === 'string' && c.title ? c.title : id.slice(0, 8),
        status: typeof c.status === 'string' ? c.status : undefined,
        updated: typeof c.last_updated_at === 'string' ? c.last_updated_at : undefined,
      });
    }
    return out;
  }

  /**
   * The status of one conversation's agent loop (`GET /api/conversations/{id}`: `RUNNING`,
   * `STARTING`, `STOPPED`, ...); undefined when the server does not say.
   */
  async conversationStatus(conversationId: string): Promise<string | undefined> {
    const r = (await this.request('GET', `/api/conversations/${encodeURIComponent(conversationId)}`)) as Record<string, unknown> | null;
    return r && typeof r.status === 'string' ? r.status : undefined;
  }

  /**
   * Creates a conversation without a first message (`POST /api/conversations`): the server starts
   * its agent loop and runtime, which then waits for this window's executor.
   */
  async createConversation(): Promise<string> {
    const r = (await this.request('POST', '/api/conversations', {})) as { conversation_id?: unknown };
    if (typeof r.conversation_id !== 'string' || r.conversation_id === '') {
      throw new ServerError('server', `POST /api/conversations answered without a conversation_id: ${JSON.stringify(r).slice(0, 200)}`);
    }
    return r.conversation_id;
  }

  /**
   * The LLM settings (`GET /api/settings`); undefined when the server has none (404) or no model.
   * The key itself never comes back, only whether one is set.
   */
  async llmSettings(): Promise<LlmSettings | undefined> {
    let r: Record<string, unknown>;
    try {
      r = (await this.request('GET', '/api/settings')) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof ServerError && (e.kind === 'not_found' || e.kind === 'no_settings')) return undefined;
      throw e;
    }
    const model = typeof r.llm_model === 'string' ? r.llm_model : '';
    if (!model) return undefined;
    return { model, baseUrl: typeof r.llm_base_url === 'string' ? r.llm_base_url : '', apiKeySet: r.llm_api_key_set === true };
  }

  /** Stores model, base URL and key with `POST /api/settings` (the server keeps what is not sent). */
  async storeLlmSettings(s: { model: string; baseUrl: string; apiKey?: string }): Promise<void> {
    const body: Record<string, unknown> = { llm_model: s.model, llm_base_url: s.baseUrl };
    if (s.apiKey) body.llm_api_key = s.apiKey;
    await this.request('POST', '/api/settings', body);
  }

  /** Events of a conversation after `afterId`, in order, paging through `GET .../events`. */
  async history(conversationId: string, afterId = -1, max = 5000): Promise<ServerEvent[]> {
    const out: ServerEvent[] = [];
    let start = afterId + 1;
    while (out.length < max) {
      const r = (await this.request('GET', `/api/conversations/${encodeURIComponent(conversationId)}/events?start_id=${start}&limit=100`)) as {
        events?: ServerEvent[];
        has_more?: boolean;
      };
      const events = r.events ?? [];
      out.push(...events);
      const last = events.length ? events[events.length - 1].id : undefined;
      if (!r.has_more || typeof last !== 'number') break;
      start = last + 1;
    }
    return out;
  }
}
