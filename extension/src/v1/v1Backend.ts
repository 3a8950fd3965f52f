import { randomUUID } from 'crypto';
import { beforeMessageArgs, messageIdOfKey, runCheckpoint, type CheckpointExecutor } from '../revert';
import type { AwaitedAction, ConversationBackend, ExecutorPort, LlmSettings, NewConversationOptions, SecretStore, SessionHost, StateStore } from '../tab/backend';
import { ServerError, type FetchLike } from '../tab/http';
import { problemOf } from '../fixes';
import type { ConversationPlace, Problem } from '../webview/protocol';
import { AgentServerClient, EventStream, startedBy, type AgentServerEndpoint, type ConfirmationMode, type SocketFactory, type V1Event } from './agentServerClient';
import { V1EventAdapter } from './v1Events';

/** How long Continue waits for a pausing run to wind down (the agent-server's 409), and how often it asks. */
const RESUME_PATIENCE_MS = 30_000;
const RESUME_RETRY_MS = 500;
/** How long a joined socket may bring no event before the history is read over REST (historyOverRest). */
const HISTORY_FALLBACK_MS = 1500;

/**
 * The executor as the V1 tab drives it: serve a conversation, let one go, and run the checkpoint
 * actions itself (the V1 tools never see the user's messages: the tab takes the checkpoint
 * before each one, docs/checkpoints.md).
 */
export interface V1ExecutorPort extends ExecutorPort, CheckpointExecutor {
  /** Stops serving `conversationId` if this window serves it (the conversation was deleted). */
  release(conversationId: string): Promise<void>;
}

/** What `endpoint` throws when there is no agent-server and the tab can say what fixes it. */
export class EndpointProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export interface V1BackendDeps {
  /** The agent-server: attach mode's settings and key, or the one the extension started (may throw `EndpointProblem`). */
  endpoint: () => Thenable<AgentServerEndpoint | undefined> | AgentServerEndpoint | undefined;
  /** Per workspace: the conversation shown last. */
  state: StateStore;
  /** Per user: the LLM model and base URL of new conversations (the key is in `secrets`). */
  llmState: StateStore;
  secrets: SecretStore;
  executor: V1ExecutorPort;
  /** The folder the agent works in (the first of the window). */
  workspaceRoot: () => string | undefined;
  confirmation: () => ConfirmationMode;
  /** Whether a new conversation works in a git worktree unless asked otherwise (`openhands.v1.newConversationInWorktree`). */
  worktreeByDefault?: () => boolean;
  /** This window's IDE tools as an MCP server entry for the agent (undefined when not served). */
  ideTools?: () => Promise<{ url: string; headers: Record<string, string> } | undefined>;
  /** Where a conversation working in `workingDir` works for this window (the list says it). */
  locate?: (workingDir: string) => Promise<ConversationPlace | undefined>;
  fetch?: FetchLike;
  socketFactory?: SocketFactory;
}

// The first message's request holds until the executor attached (the tools wait for it there).
const FIRST_MESSAGE_TIMEOUT_MS = 15 * 60 * 1000;
const CURRENT_KEY = (server: string) => `openhands.v1.conversation:${server}`;
/** The conversations this tab created on a server (newest last, at most `CREATED_KEEP`). */
const CREATED_KEY = (server: string) => `openhands.v1.created:${server}`;
const CREATED_KEEP = 500;
const LLM_MODEL_KEY = 'openhands.v1.llm';
const LLM_SECRET = 'openhands.v1.llmApiKey';

/**
 * The tab on a V1 agent-server: the conversation list, create (this package's terminal and file
 * editor, this window's IDE tools over MCP, the confirmation policy, the LLM from the tab's form),
 * history and live events over the conversation's WebSocket (V1 events adapted to the one event
 * model, v1Events.ts), send (a checkpoint taken by the executor before each message), pause, run,
 * confirm or reject over REST, delete. Everything the two backends share is in `TabSession`.
 */
export class V1Backend implements ConversationBackend {
  readonly version = 'v1';
  readonly noLlmMessage = 'Choose the model for OpenHands and enter its API key below.';
  private host!: SessionHost;
  private client: AgentServerClient | undefined;
  private endpoint: AgentServerEndpoint | undefined;
  private stream: EventStream | undefined;
  /** Streams that have delivered an event (historyOverRest is for those that have not). */
  private readonly heard = new WeakSet<EventStream>();
  private adapter = new V1EventAdapter();
  private sending = false;
  private starting: Promise<unknown> | undefined;

  constructor(private readonly deps: V1BackendDeps) {}

  bind(host: SessionHost): void {
    this.host = host;
  }

  get serverUrl(): string {
    return this.endpoint?.baseUrl ?? '';
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  get linked(): boolean {
    return this.stream !== undefined;
  }

  get joined(): boolean {
    return Boolean(this.stream?.connected);
  }

  get busy(): boolean {
    return this.sending || this.starting !== undefined;
  }

  async connect(): Promise<Problem | undefined> {
    let endpoint: AgentServerEndpoint | undefined;
    try {
      endpoint = await this.deps.endpoint();
    } catch (e) {
      if (!(e instanceof EndpointProblem)) throw e;
      this.endpoint = undefined;
      this.client = undefined;
      return e.problem;
    }
    this.endpoint = endpoint;
    if (!endpoint) {
      this.client = undefined;
      return problemOf('server', 'No OpenHands agent-server yet: set "openhands.v1.url" (and its key with "Set Session API Key").', ['settings', 'key']);
    }
    this.client = new AgentServerClient(endpoint.baseUrl, endpoint.sessionApiKey, this.deps.fetch ?? endpoint.fetch);
    return undefined;
  }

  remembered(): string | undefined {
    return this.endpoint ? this.deps.state.get<string>(CURRENT_KEY(this.endpoint.baseUrl)) : undefined;
  }

  async remember(id: string | undefined): Promise<void> {
    if (this.endpoint) await this.deps.state.update(CURRENT_KEY(this.endpoint.baseUrl), id);
  }

  /** The LLM of new conversations: model and base URL in the extension's global state, the key in SecretStorage. */
  async loadLlm(): Promise<LlmSettings | undefined> {
    const saved = this.deps.llmState.get<{ model?: string; baseUrl?: string }>(LLM_MODEL_KEY);
    const apiKeySet = Boolean(await this.deps.secrets.get(LLM_SECRET));
    return { model: saved?.model ?? '', baseUrl: saved?.baseUrl ?? '', apiKeySet };
  }

  /** V1 takes the LLM per conversation (`agent.llm` of the create request). */
  async saveLlm(model: string, baseUrl: string, apiKey: string): Promise<void> {
    await this.deps.llmState.update(LLM_MODEL_KEY, { model, baseUrl });
    if (apiKey) await this.deps.secrets.store(LLM_SECRET, apiKey);
    this.host.log.info(`stored the LLM settings for V1 conversations (model ${model})`);
  }

  /**
   * The server's conversations, each marked as started in this tab, in Agent Canvas or by an
   * automation (by their tags), or elsewhere (a script, another client: nothing tells them apart),
   * and with where it works (the workspace, a worktree and its branch).
   */
  async listConversations() {
    const list = await this.client!.listConversations();
    const mine = new Set(this.endpoint ? (this.deps.state.get<string[]>(CREATED_KEY(this.endpoint.baseUrl)) ?? []) : []);
    const locate = this.deps.locate;
    return Promise.all(list.map(async ({ tags, ...c }) => ({
      ...c,
      origin: mine.has(c.id) ? ('tab' as const) : startedBy(tags),
      place: c.workingDir && locate ? await locate(c.workingDir).catch(() => undefined) : undefined,
    })));
  }

  reset(): void {
    this.adapter = new V1EventAdapter();
  }

  /** The stream replays the whole history on every connect. */
  async join(id: string): Promise<void> {
    const client = this.client!;
    const stream = new EventStream(client.baseUrl, id, this.endpoint?.sessionApiKey, {
      onOpen: () => {
        if (this.stream !== stream) return;
        this.host.log.info(`joined V1 conversation ${id} on ${client.baseUrl}`);
        this.host.clearProblem('socket');
        this.host.publish();
        const timer = setTimeout(() => void this.historyOverRest(stream, client), HISTORY_FALLBACK_MS);
        timer.unref?.();
      },
      onEvent: (e) => {
        this.heard.add(stream);
        this.onEvent(stream, e);
      },
      onClose: (code, reason, refused) => {
        if (this.stream !== stream) return;
        this.host.log.warn(`V1 conversation ${id}: event stream ${refused ? 'refused' : 'closed'} (${code} ${reason})`);
        if (refused) {
          this.stream = undefined;
          if (code === 4001) this.host.problem('socket', 'The agent-server refused the session API key.', ['key', 'retry']);
          else this.host.problem('socket', `The agent-server has no conversation ${id}.`, ['retry']);
        }
        this.host.publish();
      },
    }, this.deps.socketFactory ?? this.endpoint?.socketFactory);
    this.stream = stream;
    stream.connect();
  }

  leave(): void {
    this.stream?.close();
    this.stream = undefined;
  }

  /**
   * The agent-server (1.58) replays a conversation's history on a new socket only after it has
   * sent the conversation's state, which waits for the conversation's lock; a running step holds
   * that lock to its end (a tool call can last minutes), so a tab that joins mid-step would show
   * nothing until then. When the socket has brought nothing after HISTORY_FALLBACK_MS, the history
   * comes over REST instead (its search takes no lock); the adapter takes each event once by id,
   * so the socket's replay, when it comes, adds nothing twice.
   */
  private async historyOverRest(stream: EventStream, client: AgentServerClient): Promise<void> {
    if (this.stream !== stream || this.heard.has(stream)) return;
    try {
      const events = await client.events(stream.conversationId);
      if (this.stream !== stream || this.heard.has(stream)) return;
      this.host.log.info(`V1 conversation ${stream.conversationId}: the event stream sent no history yet; ${events.length} event(s) read over REST`);
      for (const e of events) this.onEvent(stream, e);
    } catch (err) {
      this.host.log.warn(`V1 conversation ${stream.conversationId}: history over REST: ${(err as Error).message}`);
    }
  }

  private onEvent(stream: EventStream, e: V1Event): void {
    if (this.stream !== stream) return;
    this.host.apply(this.adapter.adapt(e), (event) => {
      if (event.observation === 'error' && isAuthError(String(event.content ?? ''))) {
        this.host.problem('llm-auth', `The LLM refused the API key (${String(event.content).slice(0, 200)}). Enter the right key, then start a New conversation.`, ['llm']);
      }
      if (event.observation === 'agent_state_changed' && this.adapter.status) this.host.setConversationStatus(stream.conversationId, this.adapter.status);
    });
  }

  /**
   * Creates a conversation (with the first message when there is one). The agent-server creates
   * its tools inside the request and they wait for an executor, so the executor is sent to the
   * conversation (by the id chosen here) while the request runs. In a worktree (asked, else the
   * user's default): the agent-server makes it and the conversation's executor works there.
   */
  async newConversation(firstMessage?: string, options?: NewConversationOptions): Promise<string> {
    const client = this.client;
    const root = this.deps.workspaceRoot();
    if (!client || !this.endpoint) throw new Error('No agent-server to start a conversation on.');
    if (!root) throw new Error('Open a folder: the agent needs a workspace to work in.');
    const llm = this.host.llm;
    if (!llm) {
      this.host.requireLlm();
      this.host.publish();
      throw new Error('Choose the LLM first (model and API key).');
    }
    this.host.leaveShown();
    const id = randomUUID();
    const createdKey = CREATED_KEY(this.endpoint.baseUrl);
    await this.deps.state.update(createdKey, [...(this.deps.state.get<string[]>(createdKey) ?? []), id].slice(-CREATED_KEEP));
    await this.host.showNew(id, 'starting');
    const apiKey = (await this.deps.secrets.get(LLM_SECRET)) || undefined;
    const ide = await this.deps.ideTools?.().catch(() => undefined);
    const worktree = options?.worktree ?? this.deps.worktreeByDefault?.() ?? false;
    // Created without its first message (`initial_message` would start the agent before the
    // checkpoint could be taken): `postMessage` posts it.
    const creating = (async () => {
      const created = await client.startConversation({
        conversationId: id,
        workingDir: root,
        llm: { model: llm.model, baseUrl: llm.baseUrl || undefined, apiKey },
        confirmation: this.deps.confirmation(),
        mcpServers: ide ? { vscode: { url: ide.url, transport: 'http', headers: ide.headers } } : undefined,
        worktree,
      });
      const dir = (created.workspace as { working_dir?: unknown } | undefined)?.working_dir;
      this.host.log.info(`created V1 conversation ${id} on ${client.baseUrl}${worktree ? ` in ${dir === root ? 'the workspace: it is not in a git repository, so no worktree' : `a git worktree: ${String(dir)}`}` : ''}`);
      if (firstMessage !== undefined) await this.postMessage(client, id, firstMessage, 1);
    })();
    this.starting = creating;
    this.host.follow(id);
    try {
      await creating;
    } catch (e) {
      if (this.host.conversationId === id) this.host.serverProblem(e);
      this.host.publish();
      throw e;
    } finally {
      if (this.starting === creating) this.starting = undefined;
    }
    if (this.host.conversationId === id) await this.join(id);
    void this.host.refreshConversations();
    return id;
  }

  /** A new conversation with the message as its first, or the message to the one shown. */
  async send(message: string): Promise<void> {
    if (this.sending) throw new Error('A message is already being sent.');
    this.sending = true;
    this.host.publish();
    try {
      const id = this.host.conversationId;
      if (!id) {
        await this.host.newConversation(message);
      } else {
        const client = this.client!;
        const number = await client.userMessageCount(id).then(
          (n) => n + 1,
          (e: Error) => {
            this.host.log.warn(`no checkpoint before the next message of conversation ${id}: its user messages could not be counted (${e.message}); the message is sent without one (it cannot be reverted)`);
            return undefined;
          },
        );
        if (number === undefined) await client.sendMessage(id, message);
        else await this.postMessage(client, id, message, number);
      }
      this.host.clearProblem('send');
      this.host.post({ type: 'sent' });
    } catch (e) {
      this.host.post({ type: 'sendFailed', text: message });
      if (!(e instanceof ServerError)) this.host.problem('send', `The message was not sent: ${(e as Error).message}`, ['retry']);
    } finally {
      this.sending = false;
      this.host.publish();
    }
  }

  /** Stop: V1 pauses after the running step. */
  async stop(id: string): Promise<void> {
    if (!this.client) return;
    await this.client.pause(id);
  }

  /** A paused conversation runs again (`/run`); a finished one gets a message. */
  async resume(id: string): Promise<boolean> {
    if (!this.client) return true;
    if (this.adapter.status !== 'paused') return false;
    // A pause takes effect after the step in progress: the agent-server reports `paused` at once but
    // answers 409 ("already running") until that run has wound down. The person asked to go on, so
    // ask again until it takes the run, the state moves on, or RESUME_PATIENCE_MS pass.
    const deadline = Date.now() + RESUME_PATIENCE_MS;
    for (;;) {
      try {
        await this.client.run(id);
        return true;
      } catch (e) {
        const busy = e instanceof ServerError && e.status === 409;
        if (!busy) this.host.serverProblem(e);
        if (!busy || this.adapter.status !== 'paused' || Date.now() >= deadline) {
          this.host.publish();
          return true;
        }
      }
      await new Promise((r) => setTimeout(r, RESUME_RETRY_MS));
    }
  }

  /** The answer to the actions the agent waits to run, over REST (`respond_to_confirmation`). */
  async confirm(id: string, accept: boolean, waiting: AwaitedAction): Promise<void> {
    if (!this.client) throw new Error('no agent-server');
    this.adapter.answered(accept);
    // The reason reaches the agent ("Action rejected: …"): it says which action the user refused.
    await this.client.respondToConfirmation(id, accept, accept ? undefined : `The user rejected this action in the OpenHands tab (${waiting.title}).`);
  }

  /** Deletes a conversation on the agent-server; its executor (if this window's) stops. */
  async deleteConversation(id: string): Promise<void> {
    await this.deps.executor.release(id);
    await this.client!.deleteConversation(id);
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
    await this.checkpointBefore(id, number, this.host.serving);
    await client.run(id);
  }

  /** The checkpoint before message `number`; a failure is logged and the message goes out without one. */
  private async checkpointBefore(id: string, number: number, serving?: Promise<boolean>): Promise<void> {
    const args = beforeMessageArgs(id, number);
    const label = args.label;
    try {
      if (serving && !(await serving)) throw new Error('the executor does not serve the conversation');
      const taken = await runCheckpoint<{ id: number }>(this.deps.executor, 'take', args);
      this.host.log.info(`checkpoint ${taken?.id} taken ${label}`);
    } catch (e) {
      this.host.log.warn(`no checkpoint ${label}: ${(e as Error)?.message ?? e}; the message is sent without one (it cannot be reverted)`);
    }
  }

  /** V1: the tab took the checkpoint before the message, keyed by its number among the user messages. */
  checkpointKey(itemKey: string): number | undefined {
    const eventId = messageIdOfKey(itemKey);
    return eventId === undefined ? undefined : this.adapter.userMessageNumber(eventId);
  }

  dispose(): void {
    this.leave();
  }
}

function isAuthError(text: string): boolean {
  return /AuthenticationError|invalid.api.key|incorrect api key|401/i.test(text);
}
