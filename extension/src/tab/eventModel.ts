import { actionTitle } from '../actionTitle';
import type { AgentState, ChatItem } from '../webview/protocol';

/** An event as OpenHands serialises it (`event_to_dict`), as the server's `oh_event` carries it. */
export interface ServerEvent {
  id?: number;
  timestamp?: string;
  source?: string;
  message?: string;
  cause?: number;
  action?: string;
  observation?: string;
  args?: Record<string, unknown>;
  content?: string;
  extras?: Record<string, unknown>;
  /** V0: the agent's accumulated LLM metrics when the event was made (tab/usage.ts). */
  llm_metrics?: unknown;
}

/** What one event changed in the rendered list. */
export type ModelChange = { op: 'add'; item: ChatItem } | { op: 'patch'; item: ChatItem };

// Actions that run something on the executor (shown as an action with its observation).
const TOOL_ACTIONS = new Set(['run', 'run_ipython', 'read', 'write', 'edit', 'browse', 'browse_interactive', 'call_tool_mcp']);
// Bookkeeping the person does not need to see.
const HIDDEN_ACTIONS = new Set(['null', 'recall', 'change_agent_state', 'system', 'condensation', 'condensation_request']);
const HIDDEN_OBSERVATIONS = new Set(['null', 'recall', 'condense', 'user_rejected']);

const BROADCAST_ENVIRONMENT = new Set(['run', 'agent_state_changed', 'recall', 'error']);

export const AGENT_STATE_LABELS: Record<string, string> = {
  loading: 'Starting…',
  init: 'Starting…',
  running: 'Running',
  awaiting_user_input: 'Awaiting your input',
  paused: 'Paused',
  stopped: 'Stopped',
  finished: 'Finished',
  rejected: 'Rejected',
  error: 'Error',
  awaiting_user_confirmation: 'Awaiting confirmation',
  user_confirmed: 'Confirmed',
  user_rejected: 'Rejected',
  rate_limited: 'Rate limited',
};

const MAX_OUTPUT = 20000;
const MAX_DIFF_LINES = 400;

/**
 * Turns the conversation's event stream into display items. Events are applied in stream order
 * and at most once (an id at or below the last one seen is ignored, so a replay after a reconnect
 * renders nothing twice); an observation patches the action it answers (`cause`).
 */
export class EventModel {
  private readonly items: ChatItem[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly actionTimes = new Map<string, number>();
  private lastId = -1;
  private readonly seen = new Set<number>();
  /** Id of the agent-state event `agentState` came from: an older one arriving later is history. */
  private stateId = -1;
  agentState: AgentState | string | undefined;
  /** Confirmation mode: the action waiting for the user's answer (its arguments, for showing an edit as a diff). */
  awaiting: { key: string; action: string; title: string; args: Record<string, unknown>; heldBack: boolean } | undefined;

  /** `workspaceRoot`: paths under it are shown relative to it in action titles; with several
   * folders (a multi-root workspace) each path is shown as `<folder name>/<path in it>`. A
   * function is asked at each title (a conversation's worktree may become known after it starts). */
  constructor(private readonly workspaceRoot?: Roots | (() => Roots)) {}

  /** The highest event id applied (-1 before any): the socket's `latest_event_id`. */
  get latestEventId(): number {
    return this.lastId;
  }

  get all(): readonly ChatItem[] {
    return this.items;
  }

  /** A line of this window's own in the conversation (a revert of files): not from the server. */
  note(level: 'info' | 'error', text: string): ChatItem {
    const item: ChatItem = { kind: 'status', key: `n${this.items.length}`, level, text };
    this.add(item);
    return item;
  }

  /** Applies one event; returns what changed (nothing for a duplicate or a hidden event). */
  apply(e: ServerEvent): ModelChange[] {
    if (!e || typeof e !== 'object') return [];
    if (typeof e.id === 'number') {
      // By id, not by order: the server may deliver a little out of order (a replay sends the
      // last agent state after newer events; live broadcasts come from several threads).
      if (this.seen.has(e.id)) return [];
      this.seen.add(e.id);
      this.lastId = Math.max(this.lastId, e.id);
    }
    // What the server broadcasts (§6 of the V0 behaviour): of the environment's events only
    // command outputs, agent states, recalls and errors. The REST history has them all; showing
    // the same subset keeps a reopened conversation identical to the live one.
    if (e.source === 'environment' && !(e.observation && BROADCAST_ENVIRONMENT.has(e.observation))) return [];
    const key = typeof e.id === 'number' ? `e${e.id}` : `x${this.items.length}`;
    if (e.action) return this.action(e, key);
    if (e.observation) return this.observation(e, key);
    return [];
  }

  /**
   * Confirmation mode where the server says which action waits only after it (V1: the action,
   * then `waiting_for_confirmation`): the action under `key` is the one held back for the
   * user's answer; `args` are its arguments (for showing an edit as a diff before it is made).
   */
  holdBack(key: string, args: Record<string, unknown>): ModelChange[] {
    const i = this.byKey.get(key);
    const item = i === undefined ? undefined : this.items[i];
    if (!item || item.kind !== 'action' || item.status !== 'running') return [];
    this.awaiting = { key, action: item.action, title: item.title, args, heldBack: true };
    return this.patch({ ...item, confirmation: 'awaiting' });
  }

  private add(item: ChatItem): ModelChange[] {
    this.byKey.set(item.key, this.items.length);
    this.items.push(item);
    return [{ op: 'add', item }];
  }

  private patch(item: ChatItem): ModelChange[] {
    const i = this.byKey.get(item.key);
    if (i === undefined) return this.add(item);
    this.items[i] = item;
    return [{ op: 'patch', item }];
  }

  private action(e: ServerEvent, key: string): ModelChange[] {
    const a = e.action!;
    const args = e.args ?? {};
    if (HIDDEN_ACTIONS.has(a)) return [];
    const thought = str(args.thought).trim();
    if (a === 'message') {
      const role = e.source === 'user' ? 'user' : 'agent';
      return this.add({ kind: 'message', key, role, text: str(args.content) || str(e.message) });
    }
    if (a === 'think') return this.add({ kind: 'thought', key, text: thought || str(e.message) });
    if (a === 'finish') {
      const text = str(args.final_thought) || str(args.outputs && (args.outputs as Record<string, unknown>).content) || thought || str(e.message);
      return this.add({ kind: 'finish', key, text });
    }
    if (TOOL_ACTIONS.has(a) || e.source === 'agent') {
      if (e.timestamp) this.actionTimes.set(key, Date.parse(e.timestamp));
      const roots = typeof this.workspaceRoot === 'function' ? this.workspaceRoot() : this.workspaceRoot;
      const title = relativePaths(actionTitle(a, args, e.message), roots);
      const confirmation = str(args.confirmation_state);
      if (confirmation === 'confirmed' || confirmation === 'rejected') {
        // OpenHands re-adds the awaited action with the answer under a new id: it is the same
        // action, so the awaited item takes the answer and the new id (its observation's cause).
        const waiting = this.awaiting && this.awaiting.action === a ? this.byKey.get(this.awaiting.key) : undefined;
        this.awaiting = undefined;
        const target = waiting === undefined ? undefined : this.items[waiting];
        if (target && target.kind === 'action') {
          this.byKey.set(key, waiting!);
          if (e.timestamp) this.actionTimes.set(target.key, Date.parse(e.timestamp));
          // A rejected action never runs (its user_rejected observation is not shown): it ends here.
          return this.patch(confirmation === 'rejected' ? { ...target, confirmation, status: 'error', output: 'Rejected by the user.' } : { ...target, confirmation });
        }
        return this.add({ kind: 'action', key, action: a, title, thought: thought || undefined, status: 'running', confirmation });
      }
      // OpenHands 1.6.0 serialises confirmation_state only for commands (CmdRunAction,
      // IPythonRunCellAction): another action the agent waits on (an edit) arrives without it, right
      // after the state turned awaiting_user_confirmation, and is not held back (the event stream's
      // copy loses the flag, so the runtime runs it). It is still the action the answer is about.
      if (confirmation === 'awaiting_confirmation' || (confirmation === '' && e.source === 'agent' && this.agentState === 'awaiting_user_confirmation' && !this.awaiting)) {
        this.awaiting = { key, action: a, title, args, heldBack: confirmation === 'awaiting_confirmation' };
        return this.add({ kind: 'action', key, action: a, title, thought: thought || undefined, status: 'running', confirmation: 'awaiting' });
      }
      return this.add({ kind: 'action', key, action: a, title, thought: thought || undefined, status: 'running' });
    }
    return [];
  }

  private observation(e: ServerEvent, key: string): ModelChange[] {
    const o = e.observation!;
    const extras = e.extras ?? {};
    if (HIDDEN_OBSERVATIONS.has(o)) return [];
    if (o === 'agent_state_changed') {
      const state = str(extras.agent_state);
      const id = typeof e.id === 'number' ? e.id : this.lastId;
      if (id < this.stateId) return [];
      this.stateId = id;
      if (state === this.agentState) return [];
      this.agentState = state;
      if (state === 'loading' || state === 'init') return [];
      const changes: ModelChange[] = [];
      if (state !== 'awaiting_user_confirmation' && this.awaiting) {
        // The answer (or a stop) ends the wait. An awaited action OpenHands re-added with its
        // answer was already folded in; one it cannot re-add with it (an edit in 1.6.0) takes it here.
        const i = this.byKey.get(this.awaiting.key);
        const item = i === undefined ? undefined : this.items[i];
        if (item && item.kind === 'action' && item.confirmation === 'awaiting' && (state === 'user_confirmed' || state === 'user_rejected')) {
          changes.push(...this.patch({ ...item, confirmation: state === 'user_confirmed' ? 'confirmed' : 'rejected' }));
        }
        this.awaiting = undefined;
      }
      return [...changes, ...this.add({ kind: 'state', key, state, reason: str(extras.reason) || undefined })];
    }
    const causeKey = typeof e.cause === 'number' ? `e${e.cause}` : undefined;
    const index = causeKey ? this.byKey.get(causeKey) : undefined;
    const target = index === undefined ? undefined : this.items[index];
    if (o === 'error' && (!target || target.kind !== 'action')) {
      return this.add({ kind: 'error', key, text: str(e.content) || str(e.message) });
    }
    if (target && target.kind === 'action' && target.status === 'running') {
      const metadata = (extras.metadata ?? {}) as Record<string, unknown>;
      const exitCode = typeof metadata.exit_code === 'number' ? metadata.exit_code : undefined;
      const started = this.actionTimes.get(target.key);
      const ended = e.timestamp ? Date.parse(e.timestamp) : NaN;
      const failed = o === 'error' || (exitCode !== undefined && exitCode !== 0 && exitCode !== -1);
      const item: ChatItem = {
        ...target,
        status: failed ? 'error' : 'ok',
        output: clip(str(e.content)),
        exitCode,
        durationMs: started !== undefined && Number.isFinite(ended) && Number.isFinite(started) ? Math.max(0, ended - started) : undefined,
        diff: o === 'edit' ? editDiff(extras) : undefined,
      };
      return this.patch(item);
    }
    if (o === 'error') return this.add({ kind: 'error', key, text: str(e.content) });
    if (o === 'run' && e.source !== 'user') {
      // A command output without its action in view (e.g. the replay started after it).
      const metadata = (extras.metadata ?? {}) as Record<string, unknown>;
      const exitCode = typeof metadata.exit_code === 'number' ? metadata.exit_code : undefined;
      return this.add({ kind: 'action', key, action: 'run', title: str(extras.command), status: exitCode && exitCode > 0 ? 'error' : 'ok', output: clip(str(e.content)), exitCode });
    }
    return [];
  }
}

/** A runtime status update (`{"status_update": true, "type", "id", "message"}`) as a display item. */
export function statusItem(update: { type?: string; id?: string; message?: string }, seq: number): ChatItem {
  const level = update.type === 'error' ? 'error' : 'info';
  return { kind: 'status', key: `s${seq}`, level, text: describeRuntimeStatus(update.id, update.message) };
}

const RUNTIME_STATUS: Record<string, string> = {
  'STATUS$STARTING_RUNTIME': 'Starting the runtime (waiting for this VS Code window\'s executor)…',
  'STATUS$RUNTIME_STARTED': 'Runtime started',
  'STATUS$SETTING_UP_WORKSPACE': 'Setting up the workspace…',
  'STATUS$SETTING_UP_GIT_HOOKS': 'Setting up git hooks…',
  'STATUS$READY': 'Ready',
  'STATUS$STOPPED': 'Runtime stopped',
  'STATUS$ERROR_LLM_AUTHENTICATION': 'The LLM refused the API key.',
  'STATUS$ERROR_LLM_SERVICE_UNAVAILABLE': 'The LLM service is unavailable.',
  'STATUS$ERROR_LLM_INTERNAL_SERVER_ERROR': 'The LLM service failed (internal server error).',
  'STATUS$ERROR_LLM_OUT_OF_CREDITS': 'The LLM account is out of credits.',
  'STATUS$ERROR_RUNTIME_DISCONNECTED': 'The runtime disconnected.',
  'STATUS$LLM_RETRY': 'Retrying the LLM call…',
};

export function describeRuntimeStatus(id: string | undefined, message: string | undefined): string {
  const known = id ? RUNTIME_STATUS[id] : undefined;
  const msg = (message ?? '').trim();
  if (known && msg && msg !== id && !msg.startsWith('STATUS$')) return `${known} ${msg}`;
  return known ?? (msg || id || 'status update');
}

/** The diff of an edit: OpenHands' own when the event carries one, else computed from old/new content. */
export function editDiff(extras: Record<string, unknown>): string[] | undefined {
  if (typeof extras.diff === 'string' && extras.diff.trim() !== '') return extras.diff.split('\n').slice(0, MAX_DIFF_LINES);
  if (typeof extras.old_content !== 'string' && typeof extras.new_content !== 'string') return undefined;
  return lineDiff(str(extras.old_content), str(extras.new_content));
}

/** Where two line lists start to differ and where they stop: `a[start..endA)` and `b[start..endB)`
 * are the middle that differs (the lines before and after are the same in both). */
export function commonEnds(a: readonly string[], b: readonly string[]): { start: number; endA: number; endB: number } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return { start, endA, endB };
}

/** A compact diff: unchanged prefix and suffix trimmed (2 context lines), the middle as -/+ lines. */
export function lineDiff(before: string, after: string): string[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  const { start, endA, endB } = commonEnds(a, b);
  const out: string[] = [];
  const ctx = 2;
  for (let i = Math.max(0, start - ctx); i < start; i++) out.push(`  ${a[i]}`);
  for (let i = start; i < endA; i++) out.push(`- ${a[i]}`);
  for (let i = start; i < endB; i++) out.push(`+ ${b[i]}`);
  for (let i = endA; i < Math.min(a.length, endA + ctx); i++) out.push(`  ${a[i]}`);
  return out.slice(0, MAX_DIFF_LINES);
}

/** The folders paths are shown relative to: one, several (multi-root) or none. */
export type Roots = string | readonly string[] | undefined;

/** `/ws/src/a.py` -> `src/a.py` for paths under the workspace root; with several roots (a
 * multi-root workspace) the folder is named: `/home/u/api/src/a.py` -> `api/src/a.py`. */
export function relativePaths(text: string, root: Roots): string {
  const roots = (typeof root === 'string' ? [root] : root ?? []).map((r) => r.replace(/\/+$/, '')).filter(Boolean);
  if (roots.length === 1) return text.split(`${roots[0]}/`).join('');
  // Longest first: a folder nested in another is named by the inner one.
  for (const r of [...roots].sort((a, b) => b.length - a.length)) {
    text = text.split(`${r}/`).join(`${r.slice(r.lastIndexOf('/') + 1)}/`);
  }
  return text;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function clip(s: string): string {
  return s.length > MAX_OUTPUT ? `${s.slice(0, MAX_OUTPUT)}\n… (${s.length - MAX_OUTPUT} more characters)` : s;
}
