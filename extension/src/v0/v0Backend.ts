import { messageIdOfKey } from '../revert';
import type { AwaitedAction, ConversationBackend, ExecutorPort, LlmSettings, SecretStore, SessionHost, StateStore } from '../tab/backend';
import { describeRuntimeStatus, statusItem, type ServerEvent } from '../tab/eventModel';
import type { FetchLike } from '../tab/http';
import type { Problem } from '../webview/protocol';
import { ConversationSocket, stopAction, userMessage, type SocketFactory, type StatusUpdate } from './conversationSocket';
import { ServerClient } from './serverClient';

export interface V0BackendDeps {
  serverUrl: () => string;
  /** `attach` mode: the conversation is fixed by settings (headless and CI use). */
  attachedConversation: () => string | undefined;
  sessionKey: () => Thenable<string | undefined>;
  state: StateStore;
  secrets: SecretStore;
  executor: ExecutorPort;
  fetch?: FetchLike;
  socketFactory?: SocketFactory;
  /** How long a new conversation waits for this window's executor before the first message. */
  executorWaitMs?: number;
}

const CURRENT_KEY = (server: string) => `openhands.tab.conversation:${server}`;
const LATEST_KEY = (server: string, id: string) => `openhands.tab.latestEvent:${server}:${id}`;
const LLM_SECRET = (server: string) => `openhands.llmApiKey:${server}`;
// The agent takes a message in every state but these.
const NOT_READY = new Set(['loading', 'init', '']);
// States that do not show a live agent loop after a (re)join: the last one a closing server
// wrote (`stopped`) can arrive in the replay of a loop that is restarting.
const NOT_LIVE = new Set([...NOT_READY, 'stopped']);

/**
 * The tab on the OpenHands V0 server (openhands-ai 1.6), as its web UI drives it: the REST API
 * (serverClient.ts), the conversation's Socket.IO stream with history and `latest_event_id`
 * (conversationSocket.ts), a message sent over the socket once the agent loop is live, Stop and
 * the confirmation answer as agent-state changes, the runtime's status lines. Everything the two
 * backends share is in `TabSession`.
 */
export class V0Backend implements ConversationBackend {
  readonly version = 'v0';
  readonly noLlmMessage = 'The OpenHands server has no LLM settings yet: choose a model and enter its API key below.';
  private host!: SessionHost;
  private client: ServerClient | undefined;
  private url = '';
  private socket: ConversationSocket | undefined;
  private isJoined = false;
  private runtime: string | undefined;
  private pending: string | undefined;
  /**
   * Whether the agent loop behind the current join is known to be live. A message sent while a
   * loop (re)starts (after a server restart, or joining an idle conversation) reaches OpenHands'
   * event stream before its AgentController subscribes, and the agent never sees it (docs/
   * reliability.md); so after every (re)join a message waits until the loop shows it is live: a
   * fresh agent state (newer than the join), or the server saying the loop was running before the
   * (re)join (asked before joining, and at each disconnect, before the socket's reconnect: once
   * joined, OpenHands reports RUNNING as soon as the runtime is up, before the controller is).
   */
  private loopLive = false;
  /** Whether the loop was RUNNING just before the current (re)join (see `loopLive`). */
  private runningBeforeJoin: Promise<boolean> = Promise.resolve(false);
  /** The newest event id known when the current socket (re)connected. */
  private joinedAfter = -1;
  private statusSeq = 0;
  private persistTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly deps: V0BackendDeps) {}

  bind(host: SessionHost): void {
    this.host = host;
  }

  get serverUrl(): string {
    return this.url;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  get linked(): boolean {
    return this.socket !== undefined;
  }

  get joined(): boolean {
    return this.isJoined;
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  get runtimeStatus(): string | undefined {
    return this.runtime;
  }

  get attachedConversation(): string | undefined {
    return this.deps.attachedConversation();
  }

  async connect(): Promise<Problem | undefined> {
    this.url = this.deps.serverUrl();
    const key = (await this.deps.sessionKey()) || undefined;
    this.client = new ServerClient(this.url, key, this.deps.fetch);
    return undefined;
  }

  remembered(): string | undefined {
    return this.deps.attachedConversation() ?? this.deps.state.get<string>(CURRENT_KEY(this.deps.serverUrl()));
  }

  remember(id: string | undefined): Thenable<void> {
    return this.deps.state.update(CURRENT_KEY(this.url), id);
  }

  loadLlm(): Promise<LlmSettings | undefined> {
    return this.client!.llmSettings();
  }

  /** The key goes to SecretStorage and to the server's settings API. */
  async saveLlm(model: string, baseUrl: string, apiKey: string, current: LlmSettings | undefined): Promise<void> {
    const client = this.client!;
    let key = apiKey;
    if (key) await this.deps.secrets.store(LLM_SECRET(client.baseUrl), key);
    else if (!current?.apiKeySet) key = (await this.deps.secrets.get(LLM_SECRET(client.baseUrl))) ?? '';
    await client.storeLlmSettings({ model, baseUrl, apiKey: key || undefined });
    this.host.log.info(`stored the LLM settings on ${client.baseUrl} (model ${model})`);
  }

  listConversations() {
    return this.client!.listConversations();
  }

  reset(dropMessage: boolean): void {
    this.runtime = undefined;
    if (dropMessage) this.pending = undefined;
  }

  /** The history first (without it, resume after what this window received before), then the stream. */
  async join(id: string): Promise<void> {
    const client = this.client!;
    const gen = this.host.generation;
    let history: ServerEvent[] = [];
    try {
      history = await client.history(id);
    } catch (e) {
      this.host.log.warn(`could not load the history of ${id}: ${(e as Error).message}`);
    }
    if (gen !== this.host.generation) return;
    this.host.showHistory(history);
    const persisted = this.deps.state.get<number>(LATEST_KEY(client.baseUrl, id));
    const latest = history.length ? history.reduce((max, e) => (typeof e.id === 'number' && e.id > max ? e.id : max), -1) : typeof persisted === 'number' ? persisted : -1;
    await this.openSocket(client, id, latest);
  }

  /** Creates a conversation, brings this window's executor to it, then joins it. */
  async newConversation(): Promise<string> {
    const client = this.client!;
    this.host.leaveShown();
    const gen = this.host.generation;
    const id = await client.createConversation();
    this.host.log.info(`created conversation ${id} on ${client.baseUrl}`);
    await this.host.showNew(id, 'STARTING');
    // The server is starting the runtime now; it waits (bounded) for an executor to register.
    // Register first, then join and send, so the agent never starts without its sandbox.
    const registered = await withTimeout(this.host.follow(id), this.deps.executorWaitMs ?? 90000, false);
    if (!registered) this.host.log.warn(`the executor did not register for ${id}`);
    if (gen !== this.host.generation) return id;
    await this.openSocket(client, id, -1);
    return id;
  }

  /** Sends now, or once the agent can take it (a new conversation first). */
  async send(message: string): Promise<void> {
    if (this.pending !== undefined) throw new Error('A message is already waiting to be sent.');
    this.pending = message;
    this.host.publish();
    try {
      if (!this.host.conversationId) await this.host.newConversation();
      this.flush();
    } catch (e) {
      this.pending = undefined;
      this.host.serverProblem(e);
      this.host.post({ type: 'sendFailed', text: message });
      this.host.publish();
    }
  }

  private flush(): void {
    const message = this.pending;
    if (message === undefined || !this.socket?.connected) return;
    if (!this.loopLive || NOT_READY.has(this.host.agentState ?? '')) return;
    // Cleared before the emit: whatever happens next, this text is never sent a second time.
    this.pending = undefined;
    try {
      this.socket.send(userMessage(message));
      this.host.post({ type: 'sent' });
    } catch (e) {
      this.host.post({ type: 'sendFailed', text: message });
      this.host.problem('send', `The message was not sent: ${(e as Error).message}.`, ['retry']);
    }
    this.host.publish();
  }

  /** Stop: the agent-state change the web UI sends. */
  async stop(): Promise<void> {
    this.socket?.send(stopAction());
  }

  /** V0 goes on with a message. */
  async resume(): Promise<boolean> {
    return false;
  }

  /** The agent-state change the web UI sends (`user_confirmed` / `user_rejected`). */
  async confirm(_id: string, accept: boolean): Promise<void> {
    if (!this.socket) throw new Error('not connected to the conversation');
    this.socket.send(confirmationAction(accept));
  }

  /** V0: the runtime took the checkpoint before the message, keyed by the message's event id. */
  checkpointKey(itemKey: string): number | undefined {
    return messageIdOfKey(itemKey);
  }

  private async openSocket(client: ServerClient, id: string, latest: number): Promise<void> {
    const key = (await this.deps.sessionKey()) || undefined;
    if (this.host.conversationId !== id) return;
    // Before joining: the join itself starts a loop that is not running.
    this.runningBeforeJoin = this.loopRunning(client, id);
    await this.runningBeforeJoin;
    if (this.host.conversationId !== id) return;
    const socket = new ConversationSocket(client.baseUrl, id, latest, key, {
      onEvent: (e) => this.onEvent(socket, e),
      onStatus: (u) => this.onStatus(socket, u),
      onServerError: (m) => {
        if (this.socket !== socket) return;
        this.host.post({ type: 'add', items: [{ kind: 'error', key: `s${++this.statusSeq}`, text: m }] });
      },
      onConnected: () => {
        if (this.socket !== socket) return;
        this.host.log.info(`joined conversation ${id} on ${client.baseUrl} (events after ${latest})`);
        this.isJoined = true;
        this.loopLive = false;
        this.joinedAfter = socket.latestEventId;
        this.host.clearProblem('socket');
        this.host.publish();
        void this.runningBeforeJoin.then((running) => {
          if (running && this.socket === socket && socket.connected) this.markLoopLive();
        });
      },
      onDisconnected: (reason, refused) => {
        if (this.socket !== socket) return;
        this.isJoined = false;
        this.loopLive = false;
        // Asked now, before the socket reconnects (a second at the earliest): a server that
        // restarted answers nothing or a loop that is not running.
        if (!refused) this.runningBeforeJoin = this.loopRunning(client, id);
        this.host.log.warn(`conversation ${id}: ${refused ? 'refused' : 'disconnected'} (${reason})`);
        if (refused) {
          this.socket = undefined;
          if (/session_api_key/i.test(reason)) this.host.problem('socket', 'The OpenHands server refused the session API key.', ['key', 'retry']);
          else if (/settings not found/i.test(reason)) this.host.requireLlm();
          else this.host.problem('socket', `The server refused to open the conversation: ${reason}`, ['retry']);
        }
        this.host.publish();
      },
    }, this.deps.socketFactory);
    this.socket = socket;
    socket.connect();
  }

  leave(): void {
    this.socket?.close();
    this.socket = undefined;
    this.isJoined = false;
    this.loopLive = false;
  }

  /** Whether the server runs the conversation's loop now (`RUNNING`); false when it cannot say. */
  private async loopRunning(client: ServerClient, id: string): Promise<boolean> {
    try {
      const status = await client.conversationStatus(id);
      if (status !== 'RUNNING') this.host.log.info(`conversation ${id}: loop ${status ?? 'status unknown'}; a message waits for its agent state`);
      return status === 'RUNNING';
    } catch (e) {
      this.host.log.info(`conversation ${id}: loop status unknown (${(e as Error).message}); a message waits for its agent state`);
      return false;
    }
  }

  private markLoopLive(): void {
    if (this.loopLive) return;
    this.loopLive = true;
    this.host.publish();
    this.flush();
  }

  private onEvent(socket: ConversationSocket, e: ServerEvent): void {
    if (this.socket !== socket) return;
    const stateChanged = this.host.apply([{ event: e }], (event) => {
      if (event.observation !== 'agent_state_changed') return;
      const state = String((event.extras ?? {}).agent_state ?? '');
      // A fresh agent state from a live loop (newer than the join) lets a waiting message go.
      if (!this.loopLive && typeof event.id === 'number' && event.id > this.joinedAfter && !NOT_LIVE.has(state)) this.markLoopLive();
      if (state === 'error' && this.host.agentState === 'error') this.problemFromAgentError(event);
      else if (state === 'running' && this.host.agentState === 'running') this.host.clearProblem('llm-auth');
    });
    this.persistLatest(socket);
    if (stateChanged) this.flush();
  }

  private problemFromAgentError(e: ServerEvent): void {
    const reason = String((e.extras ?? {}).reason ?? '');
    if (/auth|api key|401/i.test(reason)) this.host.problem('llm-auth', `The LLM refused the API key (${reason.slice(0, 200)}). Enter the right key, then go on in a New conversation.`, ['llm']);
  }

  private onStatus(socket: ConversationSocket, u: StatusUpdate): void {
    if (this.socket !== socket) return;
    if (u.conversationTitle !== undefined) {
      // A title update, not a runtime status.
      this.host.renameConversation(socket.conversationId, u.conversationTitle);
      this.host.publish();
      return;
    }
    this.runtime = describeRuntimeStatus(u.id, u.message);
    const line = `conversation ${socket.conversationId}: runtime ${u.id ?? ''} ${u.message ?? ''}`.trim();
    if (u.type === 'error') this.host.log.error(line);
    else this.host.log.info(line);
    this.host.post({ type: 'add', items: [statusItem(u, ++this.statusSeq)] });
    if (u.id === 'STATUS$ERROR_LLM_AUTHENTICATION') {
      this.host.problem('llm-auth', 'The LLM refused the API key: enter the right key for the model. A running conversation keeps the key it started with, so go on in a New conversation afterwards.', ['llm']);
    } else if (u.id === 'STATUS$STARTING_RUNTIME' && !['connected', 'executing'].includes(this.host.executorState)) {
      this.host.problem('runtime', 'The runtime is waiting for this window\'s executor to connect.', ['start']);
    } else if (u.type === 'error' && /executor/i.test(u.message ?? '')) {
      this.host.problem('runtime', `The runtime found no executor: ${u.message}`, ['start', 'logs']);
    } else if (u.type === 'error') {
      this.host.problem('runtime', describeRuntimeStatus(u.id, u.message), ['logs']);
    } else if (u.id === 'STATUS$READY' || u.id === 'STATUS$RUNTIME_STARTED') {
      this.host.clearProblem('runtime');
    }
    this.host.publish();
  }

  private persistLatest(socket: ConversationSocket): void {
    if (this.persistTimer) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.deps.state.update(LATEST_KEY(socket.serverUrl, socket.conversationId), socket.latestEventId);
    }, 500);
  }

  dispose(): void {
    if (this.persistTimer) clearTimeout(this.persistTimer);
    this.leave();
  }
}

/**
 * The answer to an awaited action in confirmation mode: the agent-state change the web UI sends
 * (OpenHands' AgentState USER_CONFIRMED / USER_REJECTED; the controller then re-adds the action
 * with confirmation_state "confirmed" or "rejected").
 */
export function confirmationAction(accept: boolean): Record<string, unknown> {
  return { action: 'change_agent_state', args: { agent_state: accept ? 'user_confirmed' : 'user_rejected' } };
}

/** `p`'s value, or `fallback` after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise<T>((resolve) => {
    const t = setTimeout(() => resolve(fallback), ms);
    p.then((v) => {
      clearTimeout(t);
      resolve(v);
    }, () => {
      clearTimeout(t);
      resolve(fallback);
    });
  });
}
