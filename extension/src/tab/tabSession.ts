import { problemOf, serverProblemOf, type Fix } from '../fixes';
import type { ChatItem, ConversationSummary, HostToView, Problem, TabStatus } from '../webview/protocol';
import type { ConversationBackend, EditReviewer, ExecutorPort, LlmSettings, ModelStep, NewConversationOptions, SessionHost, TabLog } from './backend';
import { AGENT_STATE_LABELS, EventModel, relativePaths, type Roots, type ServerEvent } from './eventModel';
import { ServerError } from './http';
import { TurnChanges } from './turnChanges';
import { Budget, contextPercent, dollars, usageFromV0Metrics, usageLine, type Usage } from './usage';

export interface TabSessionDeps {
  backend: ConversationBackend;
  executor: ExecutorPort;
  post: (message: HostToView) => void;
  log: TabLog;
  /** The workspace folders: paths under them are shown relative (several: with the folder's name). */
  workspaceFolders?: () => string | readonly string[] | undefined;
  /** Labels and recent actions of the executor for the tab. */
  executorDetails?: () => Partial<TabStatus['executor']>;
  /** Where the agent runs and that its actions run in this window (the line the header always shows). */
  place?: () => string;
  /** `openhands.budgetPerConversation` (USD; 0: none): the agent is paused when a conversation reaches it. */
  budgetUsd?: () => number;
  /** Each published status: the conversation list and the one shown (V1: background conversations' attention). */
  listed?: (list: readonly ConversationSummary[], shown: string | undefined) => void;
}

// What a reload finds out again; a refused LLM key stays until the LLM changes, the executor's
// problem until its state does.
const RELOADABLE = ['server', 'llm', 'socket', 'send', 'runtime', 'setup'];
// The agent takes a message in every state but these.
const NOT_READY = new Set(['loading', 'init', '']);
// States in which Continue goes on (V0 stopped/finished/rejected, V1 paused/idle, both error).
const CONTINUABLE = new Set(['stopped', 'finished', 'paused', 'error', 'rejected', 'awaiting_user_input']);

/**
 * The conversation the OpenHands tab shows, whichever OpenHands it runs on: the server's
 * conversations, the shown one's events (rendered incrementally), the message box, Stop /
 * Continue / Confirm, the LLM form, the problems the user must act on, the awaited edit's review,
 * the status the page renders. The backend (V0 or V1) holds only what differs. Everything is in
 * the instance (no module state), so a tab can hold several sessions, one per conversation.
 * The executor follows the conversation shown: creating or switching retargets it.
 */
export class TabSession implements SessionHost {
  private readonly backend: ConversationBackend;
  private model: EventModel;
  private conversations: ConversationSummary[] = [];
  private shown: string | undefined;
  /** The server whose conversations are shown (undefined before the first open). */
  private server: string | undefined;
  private readonly problems = new Map<string, Problem>();
  private problemsVersion = 0;
  private llmSettings: LlmSettings | undefined;
  /** An LLM key is stored (V1: possibly before a model is chosen); the form says so. */
  private llmKeySet = false;
  private llmForm: TabStatus['llmForm'];
  private reachable = false;
  private editReviewer: EditReviewer | undefined;
  /** The awaited action whose edit is shown as a diff, and how to withdraw that diff. */
  private review: { key: string; abort: AbortController; shown: boolean } | undefined;
  /** The awaited action the user answered (sent once; the bar shows "sending" until the state moves). */
  private answered: string | undefined;
  private gen = 0;
  serving: Promise<boolean> | undefined;
  /** What the conversation shown has cost so far, and its budget. */
  private usage: Usage | undefined;
  private budget = new Budget();
  /** The agent's edits since the person's last message, hunk by hunk (review/, turnChanges.ts). */
  readonly changes = new TurnChanges();

  constructor(private readonly deps: TabSessionDeps) {
    this.backend = deps.backend;
    this.model = new EventModel(() => this.roots());
    this.backend.bind(this);
    this.changes.onDidChange(() => this.publish()); // the "Changes" list follows edits, Keep and Undo
  }

  get version(): 'v0' | 'v1' {
    return this.backend.version;
  }

  get currentConversationId(): string | undefined {
    return this.shown;
  }

  get conversationId(): string | undefined {
    return this.shown;
  }

  get agentState(): string | undefined {
    return this.model.agentState;
  }

  get generation(): number {
    return this.gen;
  }

  get llm(): LlmSettings | undefined {
    return this.llmSettings;
  }

  get executorState(): string {
    return this.deps.executor.snapshot.state;
  }

  get log(): TabLog {
    return this.deps.log;
  }

  get items(): readonly ChatItem[] {
    return this.model.all;
  }

  /** The conversation list as the tab shows it. */
  get conversationList(): readonly ConversationSummary[] {
    return this.conversations;
  }

  /** The conversation this workspace showed last on this server (what the executor serves on start). */
  remembered(): string | undefined {
    return this.backend.remembered();
  }

  setEditReviewer(reviewer: EditReviewer | undefined): void {
    this.editReviewer = reviewer;
  }

  /** (Re)loads everything: the server, the LLM settings, the conversations, the remembered conversation. */
  async open(): Promise<void> {
    const gen = ++this.gen;
    const connecting = this.backend.connect();
    this.leaveOtherServer();
    const noServer = await connecting;
    if (gen !== this.gen) return;
    this.leaveOtherServer();
    for (const id of RELOADABLE) this.problems.delete(id);
    this.reachable = false;
    try {
      this.setLlm(await this.backend.loadLlm());
      if (noServer) {
        this.problems.set(noServer.id, noServer);
        this.publish();
        return;
      }
      this.reachable = true;
      await this.loadConversations();
    } catch (e) {
      this.serverProblem(e);
    }
    if (gen !== this.gen) return;
    const target = this.remembered();
    if (this.reachable && target && (target !== this.shown || !this.backend.linked)) await this.switchTo(target);
    this.publish();
  }

  /** Another server: nothing of the old one's conversation stays on screen or joined. */
  private leaveOtherServer(): void {
    const url = this.backend.serverUrl;
    if (this.server !== undefined && url !== this.server) {
      this.backend.leave();
      this.shown = undefined;
      this.conversations = [];
      this.resetModel(true);
      this.deps.post({ type: 'reset', items: [] });
    }
    this.server = url;
  }

  /**
   * Forgets everything held in memory and opens again from what a new window has: the workspace
   * state (the conversation, V0: its latest event id) and the server (history, replay).
   */
  async reopen(): Promise<void> {
    this.backend.leave();
    this.shown = undefined;
    this.resetModel(true);
    this.deps.post({ type: 'reset', items: [] });
    await this.open();
  }

  /** Paths are shown relative to the shown conversation's worktree, if it has one, else to the folders. */
  private roots(): Roots {
    const place = this.conversations.find((c) => c.id === this.shown)?.place;
    return place?.kind === 'worktree' ? place.path : this.deps.workspaceFolders?.();
  }

  private resetModel(dropMessage: boolean): void {
    this.model = new EventModel(() => this.roots());
    this.usage = undefined;
    this.budget = new Budget();
    this.problems.delete('budget');
    this.answered = undefined;
    this.withdrawReview();
    this.problems.delete('runtime');
    this.changes.reset();
    this.backend.reset(dropMessage);
  }

  /** Shows an existing conversation: the executor serves it, its history and live events stream in. */
  async switchTo(id: string): Promise<void> {
    if (!this.backend.connected) await this.open();
    if (!this.backend.connected) return;
    ++this.gen;
    this.backend.leave();
    this.shown = id;
    this.resetModel(true);
    await this.backend.remember(id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
    // The executor first: joining an idle V0 conversation starts its runtime, which waits for it.
    this.serving = this.follow(id);
    await this.backend.join(id);
  }

  /** Creates a conversation (V1: with the first message when there is one) and shows it. */
  async newConversation(firstMessage?: string, options?: NewConversationOptions): Promise<string> {
    if (!this.backend.connected) await this.open();
    return this.backend.newConversation(firstMessage, options);
  }

  leaveShown(): void {
    ++this.gen;
    this.backend.leave();
  }

  async showNew(id: string, status: string): Promise<void> {
    this.shown = id;
    this.resetModel(false);
    this.conversations = [{ id, title: 'New conversation', status }, ...this.conversations.filter((c) => c.id !== id)];
    await this.backend.remember(id);
    this.deps.post({ type: 'reset', conversationId: id, items: [] });
    this.publish();
  }

  /** The executor serves `id` from now on; resolves true once it does, false when it could not. */
  follow(id: string): Promise<boolean> {
    this.serving = this.deps.executor.retarget(id).then(
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
    return this.serving;
  }

  /** The message box: a new conversation with it, or a message to the one shown. */
  async send(text: string): Promise<void> {
    const message = text.trim();
    if (!message) return;
    // The hunks the person undid since the last message go with it, so the agent does not redo them.
    const feedback = this.changes.feedback((p) => relativePaths(p, this.roots()));
    await this.backend.send(feedback ? `${message}\n\n${feedback}` : message);
    this.changes.sent();
  }

  /** The undone hunks to the agent at once (a message of their own), not with the next one. */
  async sendUndoneNow(): Promise<void> {
    if (this.changes.pendingRejections.length) await this.send('Before you go on: I undid some of your edits.');
  }

  /** Stop: V0 the agent-state change the web UI sends, V1 a pause after the running step. */
  stop(): void {
    const id = this.shown;
    if (!id) return;
    this.backend.stop(id).catch((e: Error) => {
      this.problem('send', `Could not stop the agent: ${e.message}.`, ['retry']);
      this.publish();
    });
  }

  /** Continue a stopped, paused or finished conversation (V1 runs a paused one again; else a message). */
  async continueConversation(): Promise<void> {
    const id = this.shown;
    if (!id || (await this.backend.resume(id))) return;
    await this.send('Please continue.');
  }

  /**
   * Confirmation mode: the user's answer to the awaited action (whichever actions the server's
   * confirmation mode or the SDK's policy holds back). Sent at most once per awaited action.
   */
  confirm(accept: boolean): void {
    const waiting = this.model.awaiting;
    const id = this.shown;
    if (!id || this.model.agentState !== 'awaiting_user_confirmation' || !waiting || this.answered === waiting.key) return;
    this.answered = waiting.key;
    this.backend.confirm(id, accept, waiting).then(
      () => this.deps.log.info(`conversation ${id}: ${accept ? 'confirmed' : 'rejected'} ${waiting.action} ${waiting.title}`),
      (e: Error) => {
        if (this.answered === waiting.key) this.answered = undefined;
        this.problem('send', `Could not send your answer: ${e.message}.`, ['retry']);
        this.publish();
      },
    );
    this.withdrawReview();
    this.publish();
  }

  /** Deletes a conversation on the server (V1); the executor stops serving it. */
  async deleteConversation(id: string): Promise<void> {
    if (!this.backend.deleteConversation) throw new Error('This OpenHands server does not delete conversations from the tab.');
    if (!this.backend.connected) return;
    if (this.shown === id) {
      this.backend.leave();
      this.shown = undefined;
      this.resetModel(true);
      this.deps.post({ type: 'reset', items: [] });
      await this.backend.remember(undefined);
    }
    await this.backend.deleteConversation(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    this.publish();
  }

  get canDelete(): boolean {
    return this.backend.deleteConversation !== undefined;
  }

  /** The key of the checkpoint taken before the user message shown as item `key`, else undefined. */
  checkpointKey(itemKey: string): number | undefined {
    return this.backend.checkpointKey(itemKey);
  }

  private withdrawReview(): void {
    this.review?.abort.abort();
    this.review = undefined;
  }

  /**
   * Shows an awaited edit as a diff once; the diff's Accept / Reject answer like the tab's
   * buttons. Only an edit that is really held back is a proposal (OpenHands 1.6.0 runs an awaited
   * edit at once, see EventModel), and a `view` changes nothing.
   */
  private reviewAwaitedEdit(): void {
    const waiting = this.model.awaiting;
    const awaitingNow = this.model.agentState === 'awaiting_user_confirmation' && waiting !== undefined;
    if (!awaitingNow || (this.review && this.review.key !== waiting!.key)) this.withdrawReview();
    if (!awaitingNow || this.review || !this.editReviewer || waiting!.action !== 'edit' || !waiting!.heldBack || this.answered === waiting!.key) return;
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
  }

  apply(steps: ModelStep[], react?: (event: ServerEvent) => void): boolean {
    const before = this.model.agentState;
    const awaitingBefore = this.model.awaiting?.key;
    const problemsBefore = this.problemsVersion;
    const usageBefore = this.usage;
    for (const step of steps) {
      if ('usage' in step) {
        this.usage = step.usage;
        continue;
      }
      if ('event' in step) this.usage = usageFromV0Metrics(step.event.llm_metrics) ?? this.usage;
      if ('event' in step) this.changes.record(step.event);
      const changes = 'event' in step ? this.model.apply(step.event) : this.model.holdBack(step.holdBack, step.args);
      const adds = changes.filter((c) => c.op === 'add').map((c) => c.item);
      if (adds.length) this.deps.post({ type: 'add', items: adds });
      for (const c of changes) if (c.op === 'patch') this.deps.post({ type: 'patch', item: c.item });
      if ('event' in step) react?.(step.event);
    }
    this.reviewAwaitedEdit();
    if (this.usage !== usageBefore) this.checkBudget();
    const stateChanged = this.model.agentState !== before;
    if (stateChanged) this.deps.log.info(`conversation ${this.shown}: agent ${this.model.agentState}`);
    if (stateChanged || this.model.awaiting?.key !== awaitingBefore || this.problemsVersion !== problemsBefore || this.usage !== usageBefore) this.publish();
    return stateChanged;
  }

  /** The conversation reached its budget: pause the agent once and ask whether to go on. */
  private checkBudget(): void {
    const setting = this.deps.budgetUsd?.() ?? 0;
    if (!this.usage || !this.budget.reached(this.usage, setting)) return;
    const limit = this.budget.current(setting)!;
    this.deps.log.info(`conversation ${this.shown}: budget ${dollars(limit)} reached (${dollars(this.usage.costUsd)}), pausing the agent`);
    this.problem(
      'budget',
      `This conversation has cost ${dollars(this.usage.costUsd)}, its budget of ${dollars(limit)} (openhands.budgetPerConversation): the agent was paused. Continue raises the budget by ${dollars(setting)}.`,
      ['budget', 'settings'],
    );
    if (this.model.agentState === 'running' || this.model.agentState === 'awaiting_user_confirmation') this.stop();
  }

  /** The `budget` fix: one more budget's worth for the conversation shown, and the agent goes on. */
  async raiseBudget(): Promise<void> {
    this.budget.raise(this.usage, this.deps.budgetUsd?.() ?? 0);
    this.clearProblem('budget');
    this.publish();
    await this.continueConversation();
  }

  showHistory(events: ServerEvent[]): void {
    for (const e of events) {
      this.model.apply(e);
      this.usage = usageFromV0Metrics(e.llm_metrics) ?? this.usage;
    }
    this.deps.post({ type: 'reset', conversationId: this.shown, items: [...this.model.all] });
  }

  post(message: HostToView): void {
    this.deps.post(message);
  }

  /** Shows a line of this window's own in the conversation `id` (if it is still the one shown). */
  note(id: string, level: 'info' | 'error', text: string): void {
    if (this.shown !== id) return;
    this.deps.post({ type: 'add', items: [this.model.note(level, text)] });
  }

  renameConversation(id: string, title: string): void {
    const c = this.conversations.find((x) => x.id === id);
    if (c) c.title = title;
  }

  setConversationStatus(id: string, status: string): void {
    const c = this.conversations.find((x) => x.id === id);
    if (c) c.status = status;
  }

  showLlmForm(required = false): void {
    const llm = this.llmSettings;
    this.llmForm = { model: llm?.model ?? '', baseUrl: llm?.baseUrl ?? '', apiKeySet: this.llmKeySet, required: required || !llm };
    this.publish();
  }

  hideLlmForm(): void {
    if (this.llmForm && !this.llmForm.required) this.llmForm = undefined;
    this.publish();
  }

  private setLlm(settings: LlmSettings | undefined): void {
    this.llmKeySet = settings?.apiKeySet ?? false;
    this.llmSettings = settings?.model ? settings : undefined;
    if (!this.llmSettings) this.requireLlm();
    else if (this.llmForm?.required) this.llmForm = undefined;
  }

  requireLlm(): void {
    this.llmForm = { model: '', baseUrl: '', apiKeySet: this.llmKeySet, required: true };
    this.problem('llm', this.backend.noLlmMessage, ['llm']);
  }

  /** First use / "wrong key": V0 stores them on the server, V1 for the tab's new conversations. */
  async saveLlmSettings(model: string, baseUrl: string, apiKey: string): Promise<void> {
    const m = model.trim();
    if (!m) {
      this.problem('llm', 'Enter the model, e.g. openai/gpt-4o or anthropic/claude-sonnet-4-20250514.', ['llm']);
      this.publish();
      return;
    }
    if (!this.backend.connected) await this.open();
    try {
      await this.backend.saveLlm(m, baseUrl.trim(), apiKey.trim(), this.llmSettings);
    } catch (e) {
      this.serverProblem(e);
      this.publish();
      return;
    }
    this.llmForm = undefined;
    this.problems.delete('llm');
    this.problems.delete('llm-auth');
    await this.open();
  }

  async refreshConversations(): Promise<void> {
    if (!this.backend.connected) return this.open();
    await this.loadConversations();
    this.publish();
  }

  /**
   * The list again, for background conversations' states (polled): the page is told only when
   * something in it changed (a list re-rendered every few seconds would close an open picker).
   */
  async pollConversations(): Promise<void> {
    if (!this.backend.connected || !this.reachable) return;
    const before = JSON.stringify(this.conversations);
    await this.loadConversations();
    if (JSON.stringify(this.conversations) !== before) this.publish();
  }

  /**
   * The picker's list. A failing list (e.g. an OpenHands 1.6 server whose V1 sandbox service
   * needs Docker answers 500 to `GET /api/conversations`) must not block the tab: the current and
   * the remembered conversation stay pickable, and the log says why the list is short. A refused
   * key, an unreachable server or a refused certificate is the server problem.
   */
  private async loadConversations(): Promise<void> {
    try {
      this.conversations = await this.backend.listConversations();
    } catch (e) {
      if (e instanceof ServerError && (e.kind === 'auth' || e.kind === 'unreachable' || e.kind === 'tls')) {
        this.reachable = false;
        this.serverProblem(e);
      } else this.deps.log.warn(`the conversation list is not available: ${(e as Error).message}`);
    }
    for (const id of [this.remembered(), this.shown]) {
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

  serverProblem(e: unknown): void {
    if (e instanceof ServerError && e.kind === 'no_settings') this.requireLlm();
    else this.problems.set('server', serverProblemOf(e));
    this.problemsVersion++;
    this.deps.log.error((e as Error)?.message ?? String(e));
  }

  problem(id: string, message: string, fixes: Fix[]): void {
    this.problems.set(id, problemOf(id, message, fixes));
    this.problemsVersion++;
  }

  clearProblem(id: string): void {
    if (this.problems.delete(id)) this.problemsVersion++;
  }

  status(): TabStatus {
    const ex = this.deps.executor.snapshot;
    const agentState = this.model.agentState;
    const joined = this.backend.joined;
    const ready = joined && !NOT_READY.has(agentState ?? '');
    return {
      serverUrl: this.backend.serverUrl,
      place: this.deps.place?.() || undefined,
      executor: { state: ex.state, label: ex.state, message: ex.message, conversationId: ex.conversationId, ...this.deps.executorDetails?.() },
      conversations: this.conversations,
      conversationId: this.shown,
      joined,
      agentState,
      agentStateLabel: agentState ? AGENT_STATE_LABELS[agentState] ?? agentState : undefined,
      runtimeStatus: this.backend.runtimeStatus,
      problems: [...this.problems.values()],
      llmForm: this.llmForm,
      canSend: this.reachable && Boolean(this.llmSettings) && !this.backend.busy && (!this.shown || joined),
      canStop: ready && (agentState === 'running' || agentState === 'awaiting_user_confirmation'),
      canContinue: ready && CONTINUABLE.has(agentState ?? ''),
      attachMode: Boolean(this.backend.attachedConversation),
      usage: this.usageStatus(),
      changes: { files: this.changes.summary((p) => relativePaths(p, this.roots())), undone: this.changes.pendingRejections.length },
      confirmation: this.confirmationStatus(),
    };
  }

  private usageStatus(): TabStatus['usage'] {
    if (!this.usage) return undefined;
    const budgetUsd = this.budget.current(this.deps.budgetUsd?.() ?? 0);
    return { text: usageLine(this.usage, budgetUsd), costUsd: this.usage.costUsd, contextPercent: contextPercent(this.usage), budgetUsd };
  }

  /** The awaited action as the confirmation bar shows it: a command (its text), an edit, or another action. */
  private confirmationStatus(): TabStatus['confirmation'] {
    const w = this.model.awaiting;
    if (this.model.agentState !== 'awaiting_user_confirmation' || !w) return undefined;
    const kind = w.action === 'run' || w.action === 'run_ipython' ? 'command' : w.action === 'edit' || w.action === 'write' ? 'edit' : 'other';
    const title = kind === 'command' ? String(w.args.command ?? w.args.code ?? w.title) : w.title;
    return { key: w.key, action: w.action, title, kind, diffShown: Boolean(this.review?.key === w.key && this.review.shown), sending: this.answered === w.key, alreadyDone: !w.heldBack };
  }

  publish(): void {
    this.deps.post({ type: 'status', status: this.status() });
    this.deps.listed?.(this.conversations, this.shown);
  }

  dispose(): void {
    this.gen++;
    this.backend.dispose();
    this.withdrawReview();
  }
}
