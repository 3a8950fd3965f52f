import type { Fix } from '../fixes';
import type { ServerEvent } from './eventModel';
import type { ConversationSummary, HostToView, Problem } from '../webview/protocol';
import type { Usage } from './usage';

/**
 * The contract between the tab's one session (`TabSession`, tabSession.ts) and the OpenHands it
 * talks to: `ConversationBackend` is what differs between the V0 server (../v0/) and the V1
 * agent-server (../v1/): transport, event shapes, and the calls that create, send, stop and
 * confirm. `SessionHost` is what a backend may ask of the session. No `vscode` here.
 */

/** Where the tab keeps what must survive a reload (VS Code's workspaceState / globalState). */
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

export interface TabLog {
  info(m: string): void;
  warn(m: string): void;
  error(m: string): void;
}

/**
 * Confirmation mode: shows an edit the agent proposes (the action's arguments) as a diff; resolves
 * true (accepted) or false (rejected) when the user answers there, undefined when no diff could be
 * shown or it was closed without an answer (the tab's Confirm / Reject still decide).
 */
export type EditReviewer = (args: Record<string, unknown>, signal: AbortSignal) => Promise<boolean | undefined>;

/** The LLM of the tab's conversations; `model` empty when none is chosen yet (a key may be). */
export interface LlmSettings {
  model: string;
  baseUrl: string;
  apiKeySet: boolean;
}

/**
 * One input of the event model: an event in V0's `event_to_dict` shape, or "the action shown as
 * `holdBack` waits for the user's answer" (V1 says so after the action, eventModel.holdBack), or
 * `usage`: what the conversation has cost so far (V1's `stats` state; V0's ride on its events).
 */
export type ModelStep = { event: ServerEvent } | { holdBack: string; args: Record<string, unknown> } | { usage: Usage };

/** The action the agent waits to run (confirmation mode), as the event model holds it. */
export interface AwaitedAction {
  key: string;
  action: string;
  title: string;
  args: Record<string, unknown>;
  heldBack: boolean;
}

/** What a backend may ask of the session it serves. */
export interface SessionHost {
  /** The conversation shown (undefined: none yet). */
  readonly conversationId: string | undefined;
  readonly agentState: string | undefined;
  /** Bumped by every open, switch, creation and leave: a backend's await that spans one checks it. */
  readonly generation: number;
  readonly llm: LlmSettings | undefined;
  /** The executor's move to the conversation shown: resolves true once it serves it. */
  readonly serving: Promise<boolean> | undefined;
  readonly executorState: string;
  readonly log: TabLog;
  /**
   * The loop that applies a conversation's incoming events (both backends): into the model, the
   * page's adds and patches, the awaited edit's review, a status when something the header shows
   * changed. `react` runs after each event (a backend's own consequences). True: the agent state changed.
   */
  apply(steps: ModelStep[], react?: (event: ServerEvent) => void): boolean;
  /** The conversation's history (V0's REST events): into the model at once, the page gets it whole. */
  showHistory(events: ServerEvent[]): void;
  post(message: HostToView): void;
  publish(): void;
  problem(id: string, message: string, fixes: Fix[]): void;
  clearProblem(id: string): void;
  /** A failed request: the server problem and its fix (no LLM settings: the LLM form). */
  serverProblem(e: unknown): void;
  /** Shows the LLM form as required (the server has no LLM settings). */
  requireLlm(): void;
  /** Leaves the conversation shown before another one is created (a new generation). */
  leaveShown(): void;
  /** Shows the conversation `id` that is being created (empty; first in the picker). */
  showNew(id: string, status: string): Promise<void>;
  /** Sends the executor to `id` (`serving`). */
  follow(id: string): Promise<boolean>;
  renameConversation(id: string, title: string): void;
  setConversationStatus(id: string, status: string): void;
  newConversation(firstMessage?: string, options?: NewConversationOptions): Promise<string>;
  refreshConversations(): Promise<void>;
  open(): Promise<void>;
}

/** How a new conversation is made (V1 only; V0 ignores it). */
export interface NewConversationOptions {
  /** In a git worktree of the workspace's repository (undefined: the user's default setting). */
  worktree?: boolean;
}

/** One generation of OpenHands as the tab talks to it (V0Backend, V1Backend). */
export interface ConversationBackend {
  readonly version: 'v0' | 'v1';
  /** The server the tab talks to ('' while there is none); when it changes, the tab starts afresh. */
  readonly serverUrl: string;
  /** A client for the server exists (after `connect`). */
  readonly connected: boolean;
  /** The conversation shown has an event stream (joined or reconnecting). */
  readonly linked: boolean;
  /** The conversation's event stream is joined. */
  readonly joined: boolean;
  /** A message is on its way (the message box waits). */
  readonly busy: boolean;
  /** V0: the runtime's last status line. */
  readonly runtimeStatus?: string;
  /** V0 `attach` mode: the conversation fixed by the settings. */
  readonly attachedConversation?: string;
  /** The first words of the "choose an LLM" problem. */
  readonly noLlmMessage: string;
  bind(host: SessionHost): void;
  /**
   * A client for the server the settings name now (V0 sets `serverUrl` before its first await, so
   * the tab leaves another server's conversation at once). A problem when there is no server.
   */
  connect(): Promise<Problem | undefined>;
  /** The conversation this workspace showed last on this server (what the executor serves on start). */
  remembered(): string | undefined;
  remember(id: string | undefined): Thenable<void>;
  /** The LLM settings (V0: the server's, V1: the tab's own); undefined when there are none. */
  loadLlm(): Promise<LlmSettings | undefined>;
  saveLlm(model: string, baseUrl: string, apiKey: string, current: LlmSettings | undefined): Promise<void>;
  listConversations(): Promise<ConversationSummary[]>;
  /** Joins conversation `id` (shown now, its model empty): its history and its live events. */
  join(id: string): Promise<void>;
  /** Closes the event stream of the conversation shown. */
  leave(): void;
  /** The model was reset: per-conversation state goes; `dropMessage`: a message waiting to go too. */
  reset(dropMessage: boolean): void;
  newConversation(firstMessage?: string, options?: NewConversationOptions): Promise<string>;
  send(message: string): Promise<void>;
  stop(id: string): Promise<void>;
  /** Continue: true when the backend resumed the conversation itself (else a message goes). */
  resume(id: string): Promise<boolean>;
  confirm(id: string, accept: boolean, waiting: AwaitedAction): Promise<void>;
  /** The key of the checkpoint taken before the user message shown as item `key` (revert.ts). */
  checkpointKey(itemKey: string): number | undefined;
  /** Deletes a conversation on the server (V1 only). */
  deleteConversation?(id: string): Promise<void>;
  dispose(): void;
}
