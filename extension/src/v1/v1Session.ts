import { randomUUID } from 'crypto';
import type { EditReviewer, ExecutorPort, SecretStore, StateStore } from '../chatSession';
import { AGENT_STATE_LABELS, EventModel } from '../eventModel';
import { problemOf, serverProblemOf, type Fix } from '../fixes';
import { messageIdOfKey, messageLabel, runCheckpoint, type CheckpointExecutor } from '../revert';
import { ServerError, type FetchLike } from '../serverClient';
import type { ChatItem, ConversationSummary, HostToView, Problem, TabStatus } from '../webview/protocol';
import { AgentServerClient, EventStream, type AgentServerEndpoint, type ConfirmationMode, type SocketFactory, type V1Event } from './agentServerClient';
import { V1EventAdapter } from './v1Events';

/**
 * The executor as the V1 tab drives it: serve a conversation, let one go, and run the checkpoint
 * actions itself (the V1 tools never see the user's messages: the tab takes the checkpoint
 * before each one, docs/checkpoints.md).
 */
export interface V1ExecutorPort extends ExecutorPort, CheckpointExecutor {
  /** Stops serving `conversationId` if this window serves it (the conversation was deleted). */
  release(conversationId: string): Promise<void>;
}

export interface V1SessionDeps {
  /** The agent-server: attach mode's settings and key, or the one the extension started. */
  endpoint: () => Thenable<AgentServerEndpoint | undefined> | AgentServerEndpoint | undefined;
  /** Per workspace: the conversation shown last. */
  state: StateStore;
  /** Per user: the LLM model and base URL of new conversations (the key is in `secrets`). */
  llmState: StateStore;
  secrets: SecretStore;
  executor: V1ExecutorPort;
  post: (message: HostToView) => void;
  log: { info(m: string): void; warn(m: string): void; error(m: string): void };
  workspaceRoot: () => string | undefined;
  /** Every folder of the window (a multi-root workspace): the tab names the folder of each path. */
  workspaceFolders?: () => readonly string[];
  confirmation: () => ConfirmationMode;
  /** This window's IDE tools as an MCP server entry for the agent (undefined when not served). */
  ideTools?: () => Promise<{ url: string; headers: Record<string, string> } | undefined>;
  executorDetails?: () => Partial<TabStatus['executor']>;
  fetch?: FetchLike;
  socketFactory?: SocketFactory;
}

// The first message's request holds until the executor attached (the tools wait for it there).
const FIRST_MESSAGE_TIMEOUT_MS = 15 * 60 * 1000;
const CURRENT_KEY = (server: string) => `openhands.v1.conversation:${server}`;
const LLM_MODEL_KEY = 'openhands.v1.llm';
const LLM_SECRET = 'openhands.v1.llmApiKey';
// States in which the agent takes a new message (V1 queues one sent while it runs, too).
const CONTINUABLE = new Set(['paused', 'finished', 'error', 'awaiting_user_input', 'stopped']);

/**
 * The OpenHands tab on a V1 agent-server: the same event model and page as the V0 tab
 * (`ChatSession`), another API. The conversation list, create (this package's terminal and file
 * editor, this window's IDE tools over MCP, the confirmation policy, the LLM from the tab's form),
 * history and live events over the conversation's WebSocket, send, pause, continue, confirm or
 * reject, delete. The executor follows the conversation shown: creating or switching retargets
 * it (it finds the conversation's channel in the discovery file, executorService `route`).
 */
export class V1Session {
  private client: AgentServerClient | undefined;
  private endpoint: AgentServerEndpoint | undefined;
  private stream: EventStream | undefined;
  private adapter = new V1EventAdapter();
  private model: EventModel;
  private conversations: ConversationSummary[] = [];
  private conversationId: string | undefined;
  private readonly problems = new Map<string, Problem>();
  private llm: { model: string; baseUrl: string } | undefined;
  private llmKeySet = false;
  private llmForm: TabStatus['llmForm'];
  private reachable = false;
  private sending = false;
  private starting: Promise<unknown> | undefined;
  private answered: string | undefined;
  private editReviewer: EditReviewer | undefined;
  private review: { key: string; abort: AbortController; shown: boolean } | undefined;
  private generation = 0;
  /** The executor's move to the conversation shown: resolves true once it serves it. */
  private serving: Promise<boolean> | undefined;

  constructor(private readonly deps: V1SessionDeps) {
    this.model = new EventModel(deps.workspaceFolders?.() ?? deps.workspaceRoot());
  }

  /** Shows a line of this window's own in the conversation `id` (if it is still the one shown). */
  note(id: string, level: 'info' | 'error', text: string): void {
    if (this.currentConversationId !== id) return;
    this.deps.post({ type: 'add', items: [this.model.note(level, text)] });
  }

  get currentConversationId(): string | undefined {
    return this.conversationId;
  }

  get items(): readonly ChatItem[] {
    return this.model.all;
  }

  remembered(): string | undefined {
    return this.endpoint ? this.deps.state.get<string>(CURRENT_KEY(this.endpoint.baseUrl)) : undefined;
  }

  setEditReviewer(reviewer: EditReviewer | undefined): void {
    this.editReviewer = reviewer;
  }

  /** (Re)loads: the agent-server, the LLM settings, the conversation list, the remembered conversation. */
  async open(): Promise<void> {
    const gen = ++this.generation;
    const endpoint = await this.deps.endpoint();
    if (gen !== this.generation) return;
    if (this.endpoint && (!endpoint || endpoint.baseUrl !== this.endpoint.baseUrl)) {
      this.leave();
      this.conversationId = undefined;
      this.conversations = [];
      this.resetModel();
      this.deps.post({ type: 'reset', items: [] });
    }
    this.endpoint = endpoint;
    // What a reload can find out again; a refused LLM key stays until the user changes the LLM.
    for (const id of ['server', 'llm', 'socket', 'send']) this.problems.delete(id);
    this.reachable = false;
    await this.loadLlm();
    if (!endpoint) {
      this.client = undefined;
      this.problem('server', 'No OpenHands agent-server yet: set "openhands.v1.url" (and its key with "Set Session API Key").', ['settings', 'key']);
      this.publish();
      return;
    }
    this.client = new AgentServerClient(endpoint.baseUrl, endpoint.sessionApiKey, this.deps.fetch);
    try {
      this.conversations = await this.client.listConversations();
      this.reachable = true;
    } catch (e) {
      this.serverProblem(e);
    }
    if (gen !== this.generation) return;
    const target = this.remembered();
    if (this.reachable && target && (target !== this.conversationId || !this.stream)) await this.switchTo(target);
    this.publish();
  }

  /** What a new window does: forget what is in memory, load again from the server. */
  async reopen(): Promise<void> {
    this.leave();
    this.conversationId = undefined;
    this.resetModel();
    this.deps.post({ type: 'reset', items: [] });
    await this.open();
  }

  private resetModel(): void {
    this.model = new EventModel(this.deps.workspaceFolders?.() ?? this.deps.workspaceRoot());
    this.adapter = new V1EventAdapter();
    this.answered = undefined;
    this.withdrawReview();
  }

  /** Shows a conversation: the executor serves it, its history and live events stream in. */
  async switchTo(id: string): Promise<void> {
    if (!this.client) await this.open();
    const client = this.client;
    if (!client || !this.endpoint) return;
    ++this.generation;
    this.leave();
    this.conversationId = id;
    this.resetModel();
    await this.deps.state.update(CURRENT_KEY(client.baseUrl), id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
    this.serving = this.followWithExecutor(id);
    this.join(client, id);
  }

  /**
   * Creates a conversation (with the first message when there is one). The agent-server creates
   * its tools inside the request and they wait for an executor, so the executor is sent to the
   * conversation (by the id chosen here) while the request runs.
   */
  async newConversation(firstMessage?: string): Promise<string> {
    if (!this.client) await this.open();
    const client = this.client;
    const root = this.deps.workspaceRoot();
    if (!client || !this.endpoint) throw new Error('No agent-server to start a conversation on.');
    if (!root) throw new Error('Open a folder: the agent needs a workspace to work in.');
    if (!this.llm) {
      this.showLlmForm(true);
      throw new Error('Choose the LLM first (model and API key).');
    }
    ++this.generation;
    this.leave();
    const id = randomUUID();
    this.conversationId = id;
    this.resetModel();
    this.conversations = [{ id, title: 'New conversation', status: 'starting' }, ...this.conversations.filter((c) => c.id !== id)];
    await this.deps.state.update(CURRENT_KEY(client.baseUrl), id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
    const llm = this.llm;
    const apiKey = (await this.deps.secrets.get(LLM_SECRET)) || undefined;
    const ide = await this.deps.ideTools?.().catch(() => undefined);
    // Created without its first message (`initial_message` would start the agent before the
    // checkpoint could be taken): `postMessage` posts it.
    const creating = (async () => {
      await client.startConversation({
        conversationId: id,
        workingDir: root,
        llm: { model: llm.model, baseUrl: llm.baseUrl || undefined, apiKey },
        confirmation: this.deps.confirmation(),
        mcpServers: ide ? { vscode: { url: ide.url, transport: 'http', headers: ide.headers } } : undefined,
      });
      this.deps.log.info(`created V1 conversation ${id} on ${client.baseUrl}`);
      if (firstMessage !== undefined) await this.postMessage(client, id, firstMessage, 1);
    })();
    this.starting = creating;
    this.serving = this.followWithExecutor(id);
    try {
      await creating;
    } catch (e) {
      if (this.conversationId === id) this.serverProblem(e);
      this.publish();
      throw e;
    } finally {
      if (this.starting === creating) this.starting = undefined;
    }
    if (this.conversationId === id) this.join(client, id);
    void this.refreshConversations();
    return id;
  }

  /** The message box: a new conversation with it as the first message, or a message to this one. */
  async send(text: string): Promise<void> {
    const message = text.trim();
    if (!message) return;
    if (this.sending) throw new Error('A message is already being sent.');
    this.sending = true;
    this.publish();
    try {
      if (!this.conversationId) {
        await this.newConversation(message);
      } else {
        const id = this.conversationId;
        const client = this.client!;
        const number = await client.userMessageCount(id).then(
          (n) => n + 1,
          (e: Error) => {
            this.deps.log.warn(`no checkpoint before the next message of conversation ${id}: its user messages could not be counted (${e.message}); the message is sent without one (it cannot be reverted)`);
            return undefined;
          },
        );
        if (number === undefined) await client.sendMessage(id, message);
        else await this.postMessage(client, id, message, number);
      }
      this.problems.delete('send');
      this.deps.post({ type: 'sent' });
    } catch (e) {
      this.deps.post({ type: 'sendFailed', text: message });
      if (!(e instanceof ServerError)) this.problem('send', `The message was not sent: ${(e as Error).message}`, ['retry']);
    } finally {
      this.sending = false;
      this.publish();
    }
  }

  /** Stop: V1 pauses after the running step. */
  stop(): void {
    const id = this.conversationId;
    if (!id || !this.client) return;
    this.client.pause(id).catch((e: Error) => {
      this.problem('send', `Could not pause the agent: ${e.message}.`, ['retry']);
      this.publish();
    });
  }

  /** Continue: a paused conversation runs again; a finished one gets a new message. */
  async continueConversation(): Promise<void> {
    const id = this.conversationId;
    if (!id || !this.client) return;
    if (this.adapter.status === 'paused') {
      try {
        await this.client.run(id);
      } catch (e) {
        if (!(e instanceof ServerError && e.status === 409)) this.serverProblem(e);
        this.publish();
      }
      return;
    }
    await this.send('Please continue.');
  }

  /** Confirmation mode: the answer to the actions the agent waits to run (sent once). */
  confirm(accept: boolean): void {
    const waiting = this.model.awaiting;
    const id = this.conversationId;
    if (!id || !this.client || this.model.agentState !== 'awaiting_user_confirmation' || !waiting || this.answered === waiting.key) return;
    this.answered = waiting.key;
    this.adapter.answered(accept);
    // The reason reaches the agent ("Action rejected: …"): it says which action the user refused.
    this.client.respondToConfirmation(id, accept, accept ? undefined : `The user rejected this action in the OpenHands tab (${waiting.title}).`).then(
      () => this.deps.log.info(`conversation ${id}: ${accept ? 'confirmed' : 'rejected'} ${waiting.action} ${waiting.title}`),
      (e: Error) => {
        this.answered = undefined;
        this.problem('send', `Could not send your answer: ${e.message}.`, ['retry']);
        this.publish();
      },
    );
    this.withdrawReview();
    this.publish();
  }

  /** Deletes a conversation on the agent-server; its executor (if this window's) stops. */
  async deleteConversation(id: string): Promise<void> {
    if (!this.client) return;
    if (this.conversationId === id) {
      this.leave();
      this.conversationId = undefined;
      this.resetModel();
      this.deps.post({ type: 'reset', items: [] });
      if (this.endpoint) await this.deps.state.update(CURRENT_KEY(this.endpoint.baseUrl), undefined);
    }
    await this.deps.executor.release(id);
    await this.client.deleteConversation(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    this.publish();
  }

  showLlmForm(required = false): void {
    this.llmForm = { model: this.llm?.model ?? '', baseUrl: this.llm?.baseUrl ?? '', apiKeySet: this.llmKeySet, required: required || !this.llm };
    this.publish();
  }

  hideLlmForm(): void {
    if (this.llmForm && !this.llmForm.required) this.llmForm = undefined;
    this.publish();
  }

  /**
   * The LLM of new conversations: model and base URL in the extension's global state, the key in
   * SecretStorage; V1 takes them per conversation (`agent.llm` of the create request).
   */
  async saveLlmSettings(model: string, baseUrl: string, apiKey: string): Promise<void> {
    const m = model.trim();
    if (!m) {
      this.problem('llm', 'Enter the model, e.g. openai/gpt-4o or anthropic/claude-sonnet-4-20250514.', ['llm']);
      this.publish();
      return;
    }
    await this.deps.llmState.update(LLM_MODEL_KEY, { model: m, baseUrl: baseUrl.trim() });
    if (apiKey.trim()) await this.deps.secrets.store(LLM_SECRET, apiKey.trim());
    this.deps.log.info(`stored the LLM settings for V1 conversations (model ${m})`);
    this.llmForm = undefined;
    this.problems.delete('llm');
    this.problems.delete('llm-auth');
    await this.loadLlm();
    this.publish();
  }

  private async loadLlm(): Promise<void> {
    const saved = this.deps.llmState.get<{ model?: string; baseUrl?: string }>(LLM_MODEL_KEY);
    this.llm = saved?.model ? { model: saved.model, baseUrl: saved.baseUrl ?? '' } : undefined;
    this.llmKeySet = Boolean(await this.deps.secrets.get(LLM_SECRET));
    if (!this.llm) {
      this.llmForm = { model: '', baseUrl: '', apiKeySet: this.llmKeySet, required: true };
      this.problem('llm', 'Choose the model for OpenHands and enter its API key below.', ['llm']);
    } else if (this.llmForm?.required) {
      this.llmForm = undefined;
    }
  }

  async refreshConversations(): Promise<void> {
    if (!this.client) return this.open();
    try {
      const list = await this.client.listConversations();
      const current = this.conversationId;
      this.conversations = current && !list.some((c) => c.id === current) ? [...this.conversations.filter((c) => c.id === current), ...list] : list;
    } catch (e) {
      this.deps.log.warn(`the conversation list is not available: ${(e as Error).message}`);
    }
    this.publish();
  }

  executorChanged(): void {
    const s = this.deps.executor.snapshot;
    if (s.state === 'error' || s.state === 'blocked') this.problem('executor', `Executor: ${s.message ?? s.state}`, s.fixes?.length ? s.fixes : ['retry']);
    else this.problems.delete('executor');
    this.publish();
  }

  /** The executor serves `id` from now on; resolves true once it does, false when it could not. */
  private followWithExecutor(id: string): Promise<boolean> {
    return this.deps.executor.retarget(id).then(
      () => {
        this.problems.delete('executor');
        this.publish();
        return true;
      },
      (e: Error) => {
        this.deps.log.warn(`the executor could not serve ${id}: ${e.message}`);
        return false;
      },
    );
  }

  /**
   * Posts user message `number` of conversation `id` (its number among the conversation's user
   * messages: the agent-server gives the message its id only once stored) with the checkpoint
   * before it, taken by this window's executor so that nothing the agent does in answer can
   * precede it (docs/checkpoints.md). Later messages: the checkpoint, then the message. The first
   * one: V1 creates the conversation's tools with it, and the executor can attach only then, so it
   * is posted with `run: false` (the tools wait for the executor inside that request), the
   * checkpoint is taken once the executor serves the conversation, and then the agent runs.
   */
  private async postMessage(client: AgentServerClient, id: string, text: string, number: number): Promise<void> {
    if (number > 1) {
      await this.checkpointBefore(id, number);
      await client.sendMessage(id, text);
      return;
    }
    await client.sendMessage(id, text, false, FIRST_MESSAGE_TIMEOUT_MS);
    await this.checkpointBefore(id, number, this.serving);
    await client.run(id);
  }

  /** The checkpoint labelled for message `number`; a failure is logged and the message goes out without one. */
  private async checkpointBefore(id: string, number: number, serving?: Promise<boolean>): Promise<void> {
    const label = messageLabel(id, number);
    try {
      if (serving && !(await serving)) throw new Error('the executor does not serve the conversation');
      const taken = await runCheckpoint<{ id: number }>(this.deps.executor, 'take', { label });
      this.deps.log.info(`checkpoint ${taken?.id} taken ${label}`);
    } catch (e) {
      this.deps.log.warn(`no checkpoint ${label}: ${(e as Error)?.message ?? e}; the message is sent without one (it cannot be reverted)`);
    }
  }

  /** The number of the user message shown as item `key` (its checkpoint's key), else undefined. */
  userMessageNumber(key: string): number | undefined {
    const eventId = messageIdOfKey(key);
    return eventId === undefined ? undefined : this.adapter.userMessageNumber(eventId);
  }

  private join(client: AgentServerClient, id: string): void {
    const stream = new EventStream(client.baseUrl, id, this.endpoint?.sessionApiKey, {
      onOpen: () => {
        if (this.stream !== stream) return;
        this.deps.log.info(`joined V1 conversation ${id} on ${client.baseUrl}`);
        this.problems.delete('socket');
        this.publish();
      },
      onEvent: (e) => this.onEvent(stream, e),
      onClose: (code, reason, refused) => {
        if (this.stream !== stream) return;
        this.deps.log.warn(`V1 conversation ${id}: event stream ${refused ? 'refused' : 'closed'} (${code} ${reason})`);
        if (refused) {
          this.stream = undefined;
          if (code === 4001) this.problem('socket', 'The agent-server refused the session API key.', ['key', 'retry']);
          else this.problem('socket', `The agent-server has no conversation ${id}.`, ['retry']);
        }
        this.publish();
      },
    }, this.deps.socketFactory);
    this.stream = stream;
    stream.connect();
  }

  private onEvent(stream: EventStream, e: V1Event): void {
    if (this.stream !== stream) return;
    const before = this.model.agentState;
    const awaitingBefore = this.model.awaiting?.key;
    const problemsBefore = this.problems.size;
    for (const step of this.adapter.adapt(e)) {
      const changes = 'event' in step ? this.model.apply(step.event) : this.model.holdBack(step.holdBack, step.args);
      const adds = changes.filter((c) => c.op === 'add').map((c) => c.item);
      if (adds.length) this.deps.post({ type: 'add', items: adds });
      for (const c of changes) if (c.op === 'patch') this.deps.post({ type: 'patch', item: c.item });
      if ('event' in step && step.event.observation === 'error' && isAuthError(String(step.event.content ?? ''))) {
        this.problem('llm-auth', `The LLM refused the API key (${String(step.event.content).slice(0, 200)}). Enter the right key, then start a New conversation.`, ['llm']);
      }
    }
    this.reviewAwaitedEdit();
    if (this.model.agentState !== before || this.model.awaiting?.key !== awaitingBefore || this.problems.size !== problemsBefore) {
      if (this.model.agentState !== before) this.deps.log.info(`V1 conversation ${stream.conversationId}: agent ${this.model.agentState}`);
      const c = this.conversations.find((x) => x.id === stream.conversationId);
      if (c && this.adapter.status) c.status = this.adapter.status;
      this.publish();
    }
  }

  private withdrawReview(): void {
    this.review?.abort.abort();
    this.review = undefined;
  }

  /** An edit the agent waits to make is shown as a diff (current vs proposed) before it is written. */
  private reviewAwaitedEdit(): void {
    const waiting = this.model.awaiting;
    const awaitingNow = this.model.agentState === 'awaiting_user_confirmation' && waiting !== undefined;
    if (!awaitingNow || (this.review && this.review.key !== waiting!.key)) this.withdrawReview();
    if (!awaitingNow || this.review || !this.editReviewer || waiting!.action !== 'edit' || this.answered === waiting!.key) return;
    if (['view', undefined].includes(waiting!.args.command as string | undefined)) return;
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
    this.publish();
  }

  private leave(): void {
    this.stream?.close();
    this.stream = undefined;
  }

  private serverProblem(e: unknown): void {
    this.problems.set('server', serverProblemOf(e));
    this.deps.log.error((e as Error)?.message ?? String(e));
  }

  private problem(id: string, message: string, fixes: Fix[]): void {
    this.problems.set(id, problemOf(id, message, fixes));
  }

  status(): TabStatus {
    const ex = this.deps.executor.snapshot;
    const agentState = this.model.agentState;
    const joined = Boolean(this.stream?.connected);
    const w = this.model.awaiting;
    let confirmation: TabStatus['confirmation'];
    if (agentState === 'awaiting_user_confirmation' && w) {
      const kind = w.action === 'run' ? 'command' : w.action === 'edit' ? 'edit' : 'other';
      const title = kind === 'command' ? String(w.args.command ?? w.title) : w.title;
      confirmation = { key: w.key, action: w.action, title, kind, diffShown: Boolean(this.review?.key === w.key && this.review.shown), sending: this.answered === w.key, alreadyDone: false };
    }
    return {
      serverUrl: this.endpoint?.baseUrl ?? '',
      executor: { state: ex.state, label: ex.state, message: ex.message, conversationId: ex.conversationId, ...this.deps.executorDetails?.() },
      conversations: this.conversations,
      conversationId: this.conversationId,
      joined,
      agentState,
      agentStateLabel: agentState ? AGENT_STATE_LABELS[agentState] ?? agentState : undefined,
      runtimeStatus: undefined,
      problems: [...this.problems.values()],
      llmForm: this.llmForm,
      canSend: this.reachable && Boolean(this.llm) && !this.sending && this.starting === undefined && (!this.conversationId || joined),
      canStop: joined && (agentState === 'running' || agentState === 'awaiting_user_confirmation'),
      canContinue: joined && CONTINUABLE.has(agentState ?? ''),
      attachMode: false,
      confirmation,
    };
  }

  publish(): void {
    this.deps.post({ type: 'status', status: this.status() });
  }

  dispose(): void {
    this.generation++;
    this.leave();
    this.withdrawReview();
  }
}

function isAuthError(text: string): boolean {
  return /AuthenticationError|invalid.api.key|incorrect api key|401/i.test(text);
}
