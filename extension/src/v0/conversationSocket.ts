import { io, type Socket } from 'socket.io-client';
import type { ServerEvent } from '../tab/eventModel';

/** `{"status_update": true, "type": "info"|"error", "id": <RuntimeStatus>, "message"}` from the server. */
export interface StatusUpdate {
  type?: string;
  id?: string;
  message?: string;
  /** Title updates carry the conversation id as `message` and the new title here. */
  conversationTitle?: string;
}

export interface SocketHandlers {
  onEvent(event: ServerEvent): void;
  onStatus(update: StatusUpdate): void;
  /** `{"error": true, "message"}` payloads. */
  onServerError(message: string): void;
  onConnected(): void;
  /** The server refused the connection (`invalid_session_api_key`, `Settings not found`, ...) or it dropped. */
  onDisconnected(reason: string, refused: boolean): void;
}

export type SocketFactory = (url: string, options: Record<string, unknown>) => Pick<Socket, 'on' | 'emit' | 'disconnect' | 'connected'> & {
  io: { opts: { query?: Record<string, unknown> }; on(event: string, f: (...a: unknown[]) => void): unknown };
};

const defaultFactory: SocketFactory = (url, options) => io(url, options) as unknown as ReturnType<SocketFactory>;

/**
 * One conversation on the server's default Socket.IO namespace, joined as the web UI does: the
 * connect query carries `conversation_id`, `latest_event_id` (the server replays only newer events)
 * and `session_api_key`. Reconnects (socket.io-client's own) ask only for events after the last
 * one received, so a replay never delivers an event twice.
 *
 * Sending is explicit: `send` emits now or throws; nothing is buffered for a later reconnect (a
 * message the user typed must reach the agent once or visibly fail, never arrive twice).
 */
export class ConversationSocket {
  private socket: ReturnType<SocketFactory> | undefined;
  private latest: number;
  private readonly initialLatest: number;
  private readonly seen = new Set<number>();

  // An ES private field, not a TypeScript `private` one: neither `util.inspect` (a log line, a
  // debugger's view) nor `JSON.stringify` shows it.
  readonly #sessionApiKey: string | undefined;

  constructor(
    readonly serverUrl: string,
    readonly conversationId: string,
    latestEventId: number,
    sessionApiKey: string | undefined,
    private readonly handlers: SocketHandlers,
    private readonly factory: SocketFactory = defaultFactory,
  ) {
    this.#sessionApiKey = sessionApiKey;
    this.latest = latestEventId;
    this.initialLatest = latestEventId;
  }

  get connected(): boolean {
    return this.socket?.connected ?? false;
  }

  get latestEventId(): number {
    return this.latest;
  }

  connect(): void {
    if (this.socket) return;
    const socket = this.factory(this.serverUrl, {
      path: '/socket.io',
      transports: ['websocket'],
      query: this.query(),
      reconnection: true,
      reconnectionDelay: 1000,
      reconnectionDelayMax: 10000,
      autoConnect: true,
    });
    this.socket = socket;
    socket.on('connect', () => this.handlers.onConnected());
    socket.on('disconnect', (reason: unknown) => this.handlers.onDisconnected(String(reason), false));
    socket.on('connect_error', (err: unknown) => {
      const message = (err as Error)?.message ?? String(err);
      // A refusal by the server's connect handler is final for this query; a transport error is retried.
      const refused = !/xhr poll error|websocket error|timeout|ECONNREFUSED/i.test(message);
      this.handlers.onDisconnected(message, refused);
      if (refused) this.close();
    });
    socket.on('oh_event', (data: unknown) => this.onData(data));
    // Each reconnect asks only for what was not received yet.
    socket.io.on('reconnect_attempt', () => {
      socket.io.opts.query = this.query();
    });
  }

  private query(): Record<string, string> {
    const q: Record<string, string> = { conversation_id: this.conversationId, latest_event_id: String(this.latest) };
    if (this.#sessionApiKey) q.session_api_key = this.#sessionApiKey;
    return q;
  }

  private onData(data: unknown): void {
    if (!data || typeof data !== 'object') return;
    const d = data as Record<string, unknown>;
    if (d.status_update === true) {
      const update: StatusUpdate = { type: str(d.type), id: str(d.id), message: str(d.message) };
      if (typeof d.conversation_title === 'string') update.conversationTitle = d.conversation_title;
      this.handlers.onStatus(update);
      return;
    }
    if (d.error === true) {
      this.handlers.onServerError(str(d.message) ?? 'the server reported an error');
      return;
    }
    const e = d as ServerEvent;
    if (typeof e.id === 'number') {
      // Already delivered: from the history this socket started after, or twice (replay overlap).
      // By id, not by order: a replay sends the last agent state after newer events.
      if (e.id <= this.initialLatest || this.seen.has(e.id)) return;
      this.seen.add(e.id);
      this.latest = Math.max(this.latest, e.id);
    }
    this.handlers.onEvent(e);
  }

  /** Emits a user action (`oh_user_action`) now; throws when not connected. */
  send(action: Record<string, unknown>): void {
    if (!this.socket || !this.socket.connected) throw new Error('not connected to the conversation');
    this.socket.emit('oh_user_action', action);
  }

  close(): void {
    const s = this.socket;
    this.socket = undefined;
    s?.disconnect();
  }
}

/** The user's chat message, as the web UI sends it. */
export function userMessage(text: string, now = new Date()): Record<string, unknown> {
  return { action: 'message', args: { content: text, image_urls: [], file_urls: [], timestamp: now.toISOString() } };
}

/** The agent-state change the web UI sends for its Stop button. */
export function stopAction(): Record<string, unknown> {
  return { action: 'change_agent_state', args: { agent_state: 'stopped' } };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
