import { ConversationSocket, stopAction, userMessage, type SocketFactory, type StatusUpdate } from './conversationSocket';
import { problemOf, serverProblemOf, type Fix } from './fixes';
import { AGENT_STATE_LABELS, EventModel, describeRuntimeStatus, statusItem, type ServerEvent } from './eventModel';
import { ServerClient, ServerError, type FetchLike, type LlmSettings } from './serverClient';
import type { ChatItem, ConversationSummary, HostToView, Problem, TabStatus } from './webview/protocol';

/** Where the tab keeps what must survive a reload (VS Code's workspaceState). */
export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export interface SecretStore {
  get(key: string): Thenable<string | undefined>;
  store(key: string, value: string): Thenable<void>;
}

/** The parts of the executor the tab drives (ExecutorService). */
export interface ExecutorPort {
  readonly snapshot: { state: string; message?: string; conversationId?: string; fixes?: Fix[] };
  /** Serve this conversation (stop serving another); resolves once registered, rejects on failure. */
  retarget(conversationId: string): Promise<void>;
}

export interface ChatSessionDeps {
  serverUrl: () => string;
  /** `attach` mode: the conversation is fixed by settings (headless and CI use). */
  attachedConversation: () => string | undefined;
  sessionKey: () => Thenable<string | undefined>;
  state: StateStore;
  secrets: SecretStore;
  executor: ExecutorPort;
  post: (message: HostToView) => void;
  log: { info(m: string): void; warn(m: string): void; error(m: string): void };
  fetch?: FetchLike;
  socketFactory?: SocketFactory;
  /** The workspace folder: paths under it are shown relative. */
  /** The workspace folders (the first one's paths are shown relative to it; several: named). */
  workspaceRoot?: () => string | readonly string[] | undefined;
  /** Labels and recent actions of the executor for the tab. */
  executorDetails?: () => Partial<TabStatus['executor']>;
  /** How long a new conversation waits for this window's executor before the first message. */
  executorWaitMs?: number;
}

/**
 * Confirmation mode: shows an edit the agent proposes (the action's arguments) as a diff; resolves
 * true (accepted) or false (rejected) when the user answers there, undefined when no diff could be
 * shown or it was closed without an answer (the tab's Confirm / Reject still decide).
 */
export type EditReviewer = (args: Record<string, unknown>, signal: AbortSignal) => Promise<boolean | undefined>;

const CURRENT_KEY = (server: string) => `openhands.tab.conversation:${server}`;
const LATEST_KEY = (server: string, id: string) => `openhands.tab.latestEvent:${server}:${id}`;
const LLM_SECRET = (server: string) => `openhands.llmApiKey:${server}`;
// The agent takes a message in every state but these.
const NOT_READY = new Set(['loading', 'init', '']);
// States that do not show a live agent loop after a (re)join: the last one a closing server
// wrote (`stopped`) can arrive in the replay of a loop that is restarting.
const NOT_LIVE = new Set([...NOT_READY, 'stopped']);

/**
 * The conversation the OpenHands tab shows: the server's conversations, the joined one's event
 * stream (rendered incrementally), the message box, Stop/Continue, first-use LLM settings and the
 * problems the user must act on. The executor follows it: creating or switching a conversation
 * retargets the executor before the tab joins the conversation and sends the first message.
 */
export class ChatSession {
  private editReviewer: EditReviewer | undefined;
  /** The awaited action whose edit is shown as a diff, and how to withdraw that diff. */
  private review: { key: string; abort: AbortController; shown: boolean } | undefined;
  /** The awaited action the user answered (sent once; the bar shows "sending" until the state moves). */
  private answered: string | undefined;
  private client: ServerClient | undefined;
  private socket: ConversationSocket | undefined;
  private model: EventModel;
  private conversations: ConversationSummary[] = [];
  private conversationId: string | undefined;
  private joined = false;
  private runtimeStatus: string | undefined;
  private readonly problems = new Map<string, Problem>();
  private llm: LlmSettings | undefined;
  private llmForm: TabStatus['llmForm'];
  private reachable = false;
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
  private generation = 0;
  private persistTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly deps: ChatSessionDeps) {
    this.model = new EventModel(deps.workspaceRoot?.());
  }

  get currentConversationId(): string | undefined {
    return this.conversationId;
  }

  /** The conversation this workspace showed last on this server (what the executor serves on start). */
  remembered(): string | undefined {
    return this.deps.attachedConversation() ?? this.deps.state.get<string>(CURRENT_KEY(this.deps.serverUrl()));
  }

  get items(): readonly ChatItem[] {
    return this.model.all;
  }

  /** (Re)loads everything from the server: settings, conversations, the remembered conversation. */
  async open(): Promise<void> {
    const gen = ++this.generation;
    const url = this.deps.serverUrl();
    if (this.client && this.client.baseUrl !== url) {
      // Another server: nothing of the old one's conversation stays on screen or joined.
      this.leave();
      this.conversationId = undefined;
      this.conversations = [];
      this.model = new EventModel(this.deps.workspaceRoot?.());
      this.pending = undefined;
      this.runtimeStatus = undefined;
      this.deps.post({ type: 'reset', items: [] });
    }
    const key = (await this.deps.sessionKey()) || undefined;
    this.client = new ServerClient(url, key, this.deps.fetch);
    this.problems.clear();
    this.reachable = false;
    try {
      this.llm = await this.client.llmSettings();
      this.reachable = true;
      if (!this.llm) {
        this.llmForm = { model: '', baseUrl: '', apiKeySet: false, required: true };
        this.problem('llm', 'The OpenHands server has no LLM settings yet: choose a model and enter its API key below.', ['llm']);
      } else if (this.llmForm?.required) {
        this.llmForm = undefined;
      }
    } catch (e) {
      this.serverProblem(e);
    }
    if (this.reachable) await this.loadConversations();
    if (gen !== this.generation) return;
    const target = this.remembered();
    if (this.reachable && target && target !== this.conversationId) await this.switchTo(target);
    else if (this.reachable && target && !this.socket) await this.switchTo(target);
    this.publish();
  }

  /**
   * Forgets everything held in memory and opens again from what a new window has: workspaceState
   * (the conversation, its latest event id) and the server (history, replay).
   */
  async reopen(): Promise<void> {
    this.leave();
    this.conversationId = undefined;
    this.model = new EventModel(this.deps.workspaceRoot?.());
    this.pending = undefined;
    this.deps.post({ type: 'reset', items: [] });
    await this.open();
  }

  /** Shows an existing conversation, retargets the executor to it and joins its stream. */
  async switchTo(id: string): Promise<void> {
    if (!this.client) await this.open();
    const client = this.client!;
    const gen = ++this.generation;
    this.leave();
    this.conversationId = id;
    this.model = new EventModel(this.deps.workspaceRoot?.());
    this.pending = undefined;
    this.runtimeStatus = undefined;
    this.problems.delete('runtime');
    await this.deps.state.update(CURRENT_KEY(client.baseUrl), id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
    // The executor first: joining an idle conversation starts its runtime, which waits for it.
    this.followWithExecutor(id);
    let history: ServerEvent[] = [];
    try {
      history = await client.history(id);
    } catch (e) {
      this.deps.log.warn(`could not load the history of ${id}: ${(e as Error).message}`);
    }
    if (gen !== this.generation) return;
    for (const e of history) this.model.apply(e);
    const persisted = this.deps.state.get<number>(LATEST_KEY(client.baseUrl, id));
    // Without the history (older server), resume after what this window received before.
    const latest = history.length ? this.model.latestEventId : typeof persisted === 'number' ? persisted : -1;
    this.deps.post({ type: 'reset', conversationId: id, items: [...this.model.all] });
    await this.join(client, id, latest);
  }

  /** Creates a conversation, brings this window's executor to it, then joins it. */
  async newConversation(): Promise<string> {
    if (!this.client) await this.open();
    const client = this.client!;
    const gen = ++this.generation;
    this.leave();
    const id = await client.createConversation();
    this.deps.log.info(`created conversation ${id} on ${client.baseUrl}`);
    this.conversationId = id;
    this.model = new EventModel(this.deps.workspaceRoot?.());
    this.runtimeStatus = undefined;
    this.conversations = [{ id, title: 'New conversation', status: 'STARTING' }, ...this.conversations.filter((c) => c.id !== id)];
    await this.deps.state.update(CURRENT_KEY(client.baseUrl), id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
    // The server is starting the runtime now; it waits (bounded) for an executor to register.
    // Register first, then join and send, so the agent never starts without its sandbox.
    try {
      await withTimeout(this.deps.executor.retarget(id), this.deps.executorWaitMs ?? 90000, 'the executor to register');
      this.problems.delete('executor');
    } catch (e) {
      this.deps.log.warn(`the executor did not register for ${id}: ${(e as Error).message}`);
    }
    if (gen !== this.generation) return id;
    await this.join(client, id, -1);
    return id;
  }

  /** The message box: sends now, or once the agent can take it (a new conversation first). */
  async send(text: string): Promise<void> {
    const message = text.trim();
    if (!message) return;
    if (this.pending !== undefined) throw new Error('A message is already waiting to be sent.');
    this.pending = message;
    this.publish();
    try {
      if (!this.conversationId) await this.newConversation();
      this.flush();
    } catch (e) {
      this.pending = undefined;
      this.serverProblem(e);
      this.deps.post({ type: 'sendFailed', text: message });
      this.publish();
    }
  }

  private flush(): void {
    const message = this.pending;
    if (message === undefined || !this.socket?.connected) return;
    if (!this.loopLive || NOT_READY.has(this.model.agentState ?? '')) return;
    // Cleared before the emit: whatever happens next, this text is never sent a second time.
    this.pending = undefined;
    try {
      this.socket.send(userMessage(message));
      this.deps.post({ type: 'sent' });
    } catch (e) {
      this.deps.post({ type: 'sendFailed', text: message });
      this.problem('send', `The message was not sent: ${(e as Error).message}.`, ['retry']);
    }
    this.publish();
  }

  /** Stop: the agent-state change the web UI sends. */
  stop(): void {
    try {
      this.socket?.send(stopAction());
    } catch (e) {
      this.problem('send', `Could not stop the agent: ${(e as Error).message}.`, ['retry']);
      this.publish();
    }
  }

  /**
   * Confirmation mode: the user's answer to the awaited action, sent as the agent-state change the
   * web UI sends (`user_confirmed` / `user_rejected`). Sent at most once per awaited action.
   */
  confirm(accept: boolean): void {
    const waiting = this.model.awaiting;
    if (this.model.agentState !== 'awaiting_user_confirmation' || !waiting || this.answered === waiting.key) return;
    this.answered = waiting.key;
    try {
      this.socket?.send(confirmationAction(accept));
      this.deps.log.info(`conversation ${this.conversationId}: ${accept ? 'confirmed' : 'rejected'} ${waiting.action} ${waiting.title}`);
    } catch (e) {
      this.answered = undefined;
      this.problem('send', `Could not send your answer: ${(e as Error).message}.`, ['retry']);
    }
    this.withdrawReview();
    this.publish();
  }

  setEditReviewer(reviewer: EditReviewer | undefined): void {
    this.editReviewer = reviewer;
  }

  private withdrawReview(): void {
    this.review?.abort.abort();
    this.review = undefined;
  }

  /** Shows an awaited edit as a diff once; the diff's Accept / Reject answer like the tab's buttons. */
  private reviewAwaitedEdit(): void {
    const waiting = this.model.awaiting;
    const awaitingNow = this.model.agentState === 'awaiting_user_confirmation' && waiting !== undefined;
    if (!awaitingNow || (this.review && this.review.key !== waiting!.key)) this.withdrawReview();
    // Only an edit that is really held back is a proposal (see EventModel: OpenHands 1.6.0 runs edits at once).
    if (!awaitingNow || this.review || !this.editReviewer || waiting!.action !== 'edit' || !waiting!.heldBack || this.answered === waiting!.key) return;
    const review = { key: waiting!.key, abort: new AbortController(), shown: true };
    this.review = review;
    this.editReviewer(waiting!.args, review.abort.signal).then(
      (decision) => {
        if (this.review === review) this.review.shown = false;
        if (decision !== undefined && this.model.awaiting?.key === review.key) this.confirm(decision);
        else this.publish();
      },
      (e) => {
        this.deps.log.warn(`could not show the proposed edit as a diff: ${(e as Error)?.message ?? e}`);
        if (this.review === review) this.review.shown = false;
        this.publish();
      },
    );
  }

  /** Continue a stopped or finished conversation: a new message. */
  continueConversation(): Promise<void> {
    return this.send('Please continue.');
  }

  showLlmForm(): void {
    this.llmForm = { model: this.llm?.model ?? '', baseUrl: this.llm?.baseUrl ?? '', apiKeySet: this.llm?.apiKeySet ?? false, required: !this.llm };
    this.publish();
  }

  hideLlmForm(): void {
    if (this.llmForm && !this.llmForm.required) this.llmForm = undefined;
    this.publish();
  }

  /** First use / "wrong key": the key goes to SecretStorage and to the server's settings API. */
  async saveLlmSettings(model: string, baseUrl: string, apiKey: string): Promise<void> {
    if (!this.client) await this.open();
    const client = this.client!;
    const m = model.trim();
    if (!m) {
      this.problem('llm', 'Enter the model, e.g. openai/gpt-4o or anthropic/claude-sonnet-4-20250514.', ['llm']);
      this.publish();
      return;
    }
    let key = apiKey.trim();
    if (key) await this.deps.secrets.store(LLM_SECRET(client.baseUrl), key);
    else if (!this.llm?.apiKeySet) key = (await this.deps.secrets.get(LLM_SECRET(client.baseUrl))) ?? '';
    try {
      await client.storeLlmSettings({ model: m, baseUrl: baseUrl.trim(), apiKey: key || undefined });
    } catch (e) {
      this.serverProblem(e);
      this.publish();
      return;
    }
    this.deps.log.info(`stored the LLM settings on ${client.baseUrl} (model ${m})`);
    this.llmForm = undefined;
    this.problems.delete('llm');
    this.problems.delete('llm-auth');
    await this.open();
  }

  async refreshConversations(): Promise<void> {
    if (!this.client) return this.open();
    await this.loadConversations();
    this.publish();
  }

  /**
   * The picker's list. A failing list (e.g. an OpenHands 1.6 server whose V1 sandbox service
   * needs Docker answers 500 to `GET /api/conversations`) must not block the tab: the current and
   * the remembered conversation stay pickable, and the log says why the list is short.
   */
  private async loadConversations(): Promise<void> {
    try {
      this.conversations = await this.client!.listConversations();
    } catch (e) {
      if (e instanceof ServerError && (e.kind === 'auth' || e.kind === 'unreachable')) this.serverProblem(e);
      else this.deps.log.warn(`the conversation list is not available: ${(e as Error).message}`);
    }
    for (const id of [this.remembered(), this.conversationId]) {
      if (id && !this.conversations.some((c) => c.id === id)) this.conversations.unshift({ id, title: id });
    }
  }

  /** The executor's state changed: its errors are problems of the tab too. */
  executorChanged(): void {
    const s = this.deps.executor.snapshot;
    if (s.state === 'error' || s.state === 'blocked') {
      this.problem('executor', `Executor: ${s.message ?? s.state}`, s.fixes?.length ? s.fixes : ['retry']);
    } else {
      this.problems.delete('executor');
      if (s.state === 'connected' || s.state === 'executing') this.problems.delete('runtime');
    }
    this.publish();
  }

  private followWithExecutor(id: string): void {
    this.deps.executor.retarget(id).then(
      () => this.problems.delete('executor'),
      (e: Error) => this.deps.log.warn(`the executor could not serve ${id}: ${e.message}`),
    );
  }

  private async join(client: ServerClient, id: string, latest: number): Promise<void> {
    const key = (await this.deps.sessionKey()) || undefined;
    if (this.conversationId !== id) return;
    // Before joining: the join itself starts a loop that is not running.
    this.runningBeforeJoin = this.loopRunning(client, id);
    await this.runningBeforeJoin;
    if (this.conversationId !== id) return;
    const socket = new ConversationSocket(client.baseUrl, id, latest, key, {
      onEvent: (e) => this.onEvent(socket, e),
      onStatus: (u) => this.onStatus(socket, u),
      onServerError: (m) => {
        if (this.socket !== socket) return;
        this.deps.post({ type: 'add', items: [{ kind: 'error', key: `s${++this.statusSeq}`, text: m }] });
      },
      onConnected: () => {
        if (this.socket !== socket) return;
        this.deps.log.info(`joined conversation ${id} on ${client.baseUrl} (events after ${latest})`);
        this.joined = true;
        this.loopLive = false;
        this.joinedAfter = socket.latestEventId;
        this.problems.delete('socket');
        this.publish();
        void this.runningBeforeJoin.then((running) => {
          if (running && this.socket === socket && socket.connected) this.markLoopLive();
        });
      },
      onDisconnected: (reason, refused) => {
        if (this.socket !== socket) return;
        this.joined = false;
        this.loopLive = false;
        // Asked now, before the socket reconnects (a second at the earliest): a server that
        // restarted answers nothing or a loop that is not running.
        if (!refused) this.runningBeforeJoin = this.loopRunning(client, id);
        this.deps.log.warn(`conversation ${id}: ${refused ? 'refused' : 'disconnected'} (${reason})`);
        if (refused) {
          this.socket = undefined;
          if (/session_api_key/i.test(reason)) this.problem('socket', 'The OpenHands server refused the session API key.', ['key', 'retry']);
          else if (/settings not found/i.test(reason)) {
            this.llmForm = { model: '', baseUrl: '', apiKeySet: false, required: true };
            this.problem('llm', 'The OpenHands server has no LLM settings yet: choose a model and enter its API key below.', ['llm']);
          } else this.problem('socket', `The server refused to open the conversation: ${reason}`, ['retry']);
        }
        this.publish();
      },
    }, this.deps.socketFactory);
    this.socket = socket;
    socket.connect();
  }

  private leave(): void {
    this.socket?.close();
    this.socket = undefined;
    this.joined = false;
    this.loopLive = false;
  }

  /** Whether the server runs the conversation's loop now (`RUNNING`); false when it cannot say. */
  private async loopRunning(client: ServerClient, id: string): Promise<boolean> {
    try {
      const status = await client.conversationStatus(id);
      if (status !== 'RUNNING') this.deps.log.info(`conversation ${id}: loop ${status ?? 'status unknown'}; a message waits for its agent state`);
      return status === 'RUNNING';
    } catch (e) {
      this.deps.log.info(`conversation ${id}: loop status unknown (${(e as Error).message}); a message waits for its agent state`);
      return false;
    }
  }

  private markLoopLive(): void {
    if (this.loopLive) return;
    this.loopLive = true;
    this.publish();
    this.flush();
  }

  /** Shows a line of this window's own in the conversation `id` (if it is still the one shown). */
  note(id: string, level: 'info' | 'error', text: string): void {
    if (this.conversationId !== id) return;
    this.deps.post({ type: 'add', items: [this.model.note(level, text)] });
  }

  private onEvent(socket: ConversationSocket, e: ServerEvent): void {
    if (this.socket !== socket) return;
    const before = this.model.agentState;
    const awaitingBefore = this.model.awaiting?.key;
    const changes = this.model.apply(e);
    const adds = changes.filter((c) => c.op === 'add').map((c) => c.item);
    if (adds.length) this.deps.post({ type: 'add', items: adds });
    for (const c of changes) if (c.op === 'patch') this.deps.post({ type: 'patch', item: c.item });
    this.persistLatest(socket);
    this.reviewAwaitedEdit();
    // A fresh agent state from a live loop (newer than the join) lets a waiting message go.
    if (!this.loopLive && e.observation === 'agent_state_changed' && typeof e.id === 'number' && e.id > this.joinedAfter
      && !NOT_LIVE.has(String((e.extras ?? {}).agent_state ?? ''))) {
      this.markLoopLive();
    }
    if (this.model.agentState !== before) {
      this.deps.log.info(`conversation ${socket.conversationId}: agent ${this.model.agentState}`);
      if (this.model.agentState === 'error') this.problemFromAgentError(e);
      else if (this.model.agentState === 'running') this.problems.delete('llm-auth');
      this.publish();
      this.flush();
    } else if (this.model.awaiting?.key !== awaitingBefore) {
      // OpenHands announces awaiting_user_confirmation before the awaited action itself.
      this.publish();
    }
  }

  private problemFromAgentError(e: ServerEvent): void {
    const reason = String((e.extras ?? {}).reason ?? '');
    if (/auth|api key|401/i.test(reason)) this.problem('llm-auth', `The LLM refused the API key (${reason.slice(0, 200)}). Enter the right key, then go on in a New conversation.`, ['llm']);
  }

  private onStatus(socket: ConversationSocket, u: StatusUpdate): void {
    if (this.socket !== socket) return;
    if (u.conversationTitle !== undefined) {
      // A title update, not a runtime status.
      const c = this.conversations.find((x) => x.id === socket.conversationId);
      if (c) c.title = u.conversationTitle;
      this.publish();
      return;
    }
    this.runtimeStatus = describeRuntimeStatus(u.id, u.message);
    const line = `conversation ${socket.conversationId}: runtime ${u.id ?? ''} ${u.message ?? ''}`.trim();
    if (u.type === 'error') this.deps.log.error(line);
    else this.deps.log.info(line);
    this.deps.post({ type: 'add', items: [statusItem(u, ++this.statusSeq)] });
    if (u.id === 'STATUS$ERROR_LLM_AUTHENTICATION') {
      this.problem('llm-auth', 'The LLM refused the API key: enter the right key for the model. A running conversation keeps the key it started with, so go on in a New conversation afterwards.', ['llm']);
    } else if (u.id === 'STATUS$STARTING_RUNTIME' && !['connected', 'executing'].includes(this.deps.executor.snapshot.state)) {
      this.problem('runtime', 'The runtime is waiting for this window\'s executor to connect.', ['start']);
    } else if (u.type === 'error' && /executor/i.test(u.message ?? '')) {
      this.problem('runtime', `The runtime found no executor: ${u.message}`, ['start', 'logs']);
    } else if (u.type === 'error') {
      this.problem('runtime', describeRuntimeStatus(u.id, u.message), ['logs']);
    } else if (u.id === 'STATUS$READY' || u.id === 'STATUS$RUNTIME_STARTED') {
      this.problems.delete('runtime');
    }
    this.publish();
  }

  private persistLatest(socket: ConversationSocket): void {
    if (this.persistTimer) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.deps.state.update(LATEST_KEY(socket.serverUrl, socket.conversationId), socket.latestEventId);
    }, 500);
  }

  private serverProblem(e: unknown): void {
    if (e instanceof ServerError && e.kind === 'no_settings') {
      // V0 only: the server answers without LLM settings; the tab's form asks for them.
      this.llmForm = { model: '', baseUrl: '', apiKeySet: false, required: true };
      this.problem('llm', 'The OpenHands server has no LLM settings yet: choose a model and enter its API key below.', ['llm']);
    } else {
      this.problems.set('server', serverProblemOf(e));
    }
    this.deps.log.error((e as Error)?.message ?? String(e));
  }

  private problem(id: string, message: string, fixes: Fix[]): void {
    this.problems.set(id, problemOf(id, message, fixes));
  }

  status(): TabStatus {
    const ex = this.deps.executor.snapshot;
    const agentState = this.model.agentState;
    const ready = Boolean(this.socket?.connected) && !NOT_READY.has(agentState ?? '');
    const attached = this.deps.attachedConversation();
    return {
      serverUrl: this.deps.serverUrl(),
      executor: { state: ex.state, label: ex.state, message: ex.message, conversationId: ex.conversationId, ...this.deps.executorDetails?.() },
      conversations: this.conversations,
      conversationId: this.conversationId,
      joined: this.joined,
      agentState,
      agentStateLabel: agentState ? AGENT_STATE_LABELS[agentState] ?? agentState : undefined,
      runtimeStatus: this.runtimeStatus,
      problems: [...this.problems.values()],
      llmForm: this.llmForm,
      canSend: this.reachable && Boolean(this.llm) && this.pending === undefined && (!this.conversationId || this.joined),
      canStop: ready && (agentState === 'running' || agentState === 'awaiting_user_confirmation'),
      canContinue: ready && ['stopped', 'finished', 'paused', 'error', 'rejected'].includes(agentState ?? ''),
      attachMode: Boolean(attached),
      confirmation: this.confirmationStatus(),
    };
  }

  private confirmationStatus(): TabStatus['confirmation'] {
    const w = this.model.awaiting;
    if (this.model.agentState !== 'awaiting_user_confirmation' || !w) return undefined;
    const kind = w.action === 'run' || w.action === 'run_ipython' ? 'command' : w.action === 'edit' || w.action === 'write' ? 'edit' : 'other';
    const title = kind === 'command' ? String(w.args.command ?? w.args.code ?? w.title) : w.title;
    return { key: w.key, action: w.action, title, kind, diffShown: Boolean(this.review?.key === w.key && this.review.shown), sending: this.answered === w.key, alreadyDone: !w.heldBack };
  }

  publish(): void {
    this.deps.post({ type: 'status', status: this.status() });
  }

  dispose(): void {
    this.generation++;
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

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
