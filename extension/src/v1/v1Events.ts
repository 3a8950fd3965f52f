import type { ModelStep } from '../tab/backend';
import type { V1Event } from './agentServerClient';
import { usageFromV1Stats } from '../tab/usage';

/** V1 `execution_status` -> the tab's agent states (../tab/eventModel.ts AGENT_STATE_LABELS). */
export const EXECUTION_STATES: Record<string, string> = {
  idle: 'awaiting_user_input',
  running: 'running',
  paused: 'paused',
  waiting_for_confirmation: 'awaiting_user_confirmation',
  finished: 'finished',
  error: 'error',
  stuck: 'error',
  deleting: 'stopped',
};

interface ActionInfo {
  id: number;
  action: string;
  args: Record<string, unknown>;
  answered: boolean;
}

/**
 * Turns one V1 conversation's events (agent-server JSON, `kind` + UUID `id`) into the event
 * model's input, so the V1 tab renders with the V0 tab's model and page. Each V1 event is taken
 * once (by its UUID: the stream replays the whole history on every connect) and numbered in
 * arrival order; an observation names its action by `action_id`, which becomes the `cause`.
 */
export class V1EventAdapter {
  private next = 0;
  private readonly seen = new Set<string>();
  private readonly actions = new Map<string, ActionInfo>();
  /** Each user message's number among the conversation's user messages (1 = the first), by its event id here. */
  private readonly userMessages = new Map<number, number>();
  private executionStatus: string | undefined;
  /** The user's answer sent while the agent waited (applied when the status leaves the wait). */
  private answer: 'user_confirmed' | 'user_rejected' | undefined;

  /** The conversation's V1 execution status, as last seen in its events. */
  get status(): string | undefined {
    return this.executionStatus;
  }

  /** Confirmation mode: the answer the tab just sent (shown on the awaited action when the wait ends). */
  answered(accept: boolean): void {
    this.answer = accept ? 'user_confirmed' : 'user_rejected';
  }

  /**
   * The number of the user message shown as item `e<id>` (1 = the conversation's first user
   * message), the key of the checkpoint the tab took before it (docs/checkpoints.md); else undefined.
   */
  userMessageNumber(eventId: number): number | undefined {
    return this.userMessages.get(eventId);
  }

  /** The actions with no observation yet (what a confirmation answers). */
  get pendingActions(): Array<{ id: string; action: string; args: Record<string, unknown> }> {
    return [...this.actions.entries()].filter(([, a]) => !a.answered).map(([id, a]) => ({ id, action: a.action, args: a.args }));
  }

  adapt(e: V1Event): ModelStep[] {
    if (!e || typeof e !== 'object' || typeof e.kind !== 'string') return [];
    if (typeof e.id === 'string') {
      if (this.seen.has(e.id)) return [];
      this.seen.add(e.id);
    }
    const base = { timestamp: typeof e.timestamp === 'string' ? e.timestamp : undefined };
    switch (e.kind) {
      case 'MessageEvent': {
        const text = textOf((e.llm_message as { content?: unknown } | undefined)?.content);
        const source = e.source === 'user' ? 'user' : 'agent';
        const id = this.next++;
        if (source === 'user') this.userMessages.set(id, this.userMessages.size + 1);
        return [{ event: { ...base, id, source, action: 'message', args: { content: text } } }];
      }
      case 'ActionEvent':
        return this.action(e, base);
      case 'ObservationEvent':
      case 'UserRejectObservation':
      case 'AgentErrorEvent':
        return this.observation(e, base);
      case 'ConversationErrorEvent': {
        // `code` is the exception's class (AuthenticationError, ...): it says what the fix is.
        const code = typeof e.code === 'string' && e.code ? `${e.code}: ` : '';
        const text = errorText(e);
        return [{ event: { ...base, id: this.next++, source: 'environment', observation: 'error', content: text.startsWith(code) ? text : `${code}${text}` } }];
      }
      case 'ConversationStateUpdateEvent':
        return this.stateUpdate(e, base);
      default:
        // System prompt, pause, condensation, token streaming, hooks: bookkeeping.
        return [];
    }
  }

  private action(e: V1Event, base: { timestamp?: string }): ModelStep[] {
    const a = (e.action ?? {}) as Record<string, unknown>;
    const kind = String(a.kind ?? '');
    const tool = String(e.tool_name ?? '');
    const thought = textOf(e.thought);
    const id = this.next++;
    let action: string;
    let args: Record<string, unknown>;
    let message: string | undefined;
    if (kind === 'TerminalAction' || tool === 'terminal') {
      action = 'run';
      args = { command: a.command, thought };
    } else if (kind === 'FileEditorAction' || tool === 'file_editor') {
      action = 'edit';
      args = { ...pick(a, ['command', 'path', 'file_text', 'old_str', 'new_str', 'insert_line', 'view_range']), thought };
    } else if (kind === 'FinishAction' || tool === 'finish') {
      action = 'finish';
      args = { final_thought: a.message, thought };
    } else if (kind === 'ThinkAction' || tool === 'think') {
      action = 'think';
      args = { thought: String(a.thought ?? '') || thought };
    } else if (/MCP/i.test(kind)) {
      action = 'call_tool_mcp';
      args = { name: tool, arguments: a.data ?? a, thought };
    } else {
      action = tool || kind || 'action';
      args = { thought };
      message = typeof e.summary === 'string' && e.summary ? e.summary : tool;
    }
    if (typeof e.id === 'string') this.actions.set(e.id, { id, action, args, answered: action === 'finish' || action === 'think' });
    return [{ event: { ...base, id, source: 'agent', action, args, message } }];
  }

  private observation(e: V1Event, base: { timestamp?: string }): ModelStep[] {
    const actionId = typeof e.action_id === 'string' ? e.action_id : undefined;
    const info = actionId ? this.actions.get(actionId) : undefined;
    if (info) info.answered = true;
    const cause = info?.id;
    if (e.kind === 'UserRejectObservation') {
      const reason = typeof e.rejection_reason === 'string' && e.rejection_reason ? `: ${e.rejection_reason}` : '';
      return [{ event: { ...base, id: this.next++, source: 'environment', cause, observation: 'error', content: `Rejected by the user${reason}.` } }];
    }
    if (e.kind === 'AgentErrorEvent') {
      return [{ event: { ...base, id: this.next++, source: 'environment', cause, observation: 'error', content: errorText(e) } }];
    }
    const o = (e.observation ?? {}) as Record<string, unknown>;
    const kind = String(o.kind ?? '');
    const text = textOf(o.content);
    if (o.is_error === true) {
      return [{ event: { ...base, id: this.next++, source: 'environment', cause, observation: 'error', content: text } }];
    }
    if (kind === 'TerminalObservation' || info?.action === 'run') {
      const metadata = (o.metadata ?? {}) as Record<string, unknown>;
      const exitCode = typeof o.exit_code === 'number' ? o.exit_code : metadata.exit_code;
      const suffix = typeof metadata.suffix === 'string' ? metadata.suffix : '';
      return [{ event: { ...base, id: this.next++, source: 'environment', cause, observation: 'run', content: `${text}${suffix}`, extras: { command: o.command, metadata: { exit_code: exitCode } } } }];
    }
    if (kind === 'FileEditorObservation' || info?.action === 'edit') {
      const extras: Record<string, unknown> = { path: o.path };
      // The whole file before and after: the tab's diff (a view carries neither).
      if (o.command !== 'view' && (typeof o.old_content === 'string' || typeof o.new_content === 'string')) {
        extras.old_content = o.old_content ?? '';
        extras.new_content = o.new_content ?? '';
      }
      // Source `agent`: the event model shows, of the environment's events, only those V0 broadcasts.
      return [{ event: { ...base, id: this.next++, source: 'agent', cause, observation: 'edit', content: text, extras } }];
    }
    return [{ event: { ...base, id: this.next++, source: 'agent', cause, observation: 'tool', content: text } }];
  }

  private stateUpdate(e: V1Event, base: { timestamp?: string }): ModelStep[] {
    // Cost and tokens: the `stats` field alone while the agent runs, inside `full_state` (the first
    // frame of every connect) for what was spent before.
    const stats = e.key === 'stats' ? e.value : e.key === 'full_state' ? (e.value as Record<string, unknown> | undefined)?.stats : undefined;
    const usage = stats === undefined ? undefined : usageFromV1Stats(stats);
    if (usage) return [{ usage }];
    // `full_state` repeats what the replayed events say.
    if (e.key !== 'execution_status' || typeof e.value !== 'string') return [];
    const status = e.value;
    const previous = this.executionStatus;
    this.executionStatus = status;
    const out: ModelStep[] = [];
    if (previous === 'waiting_for_confirmation' && status !== previous && this.answer) {
      // The answer the tab sent marks the awaited action (confirmed / rejected) as the V0 tab shows it.
      out.push({ event: { ...base, id: this.next++, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: this.answer } } });
    }
    this.answer = undefined;
    const state = EXECUTION_STATES[status] ?? status;
    out.push({ event: { ...base, id: this.next++, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: state, reason: status === 'stuck' ? 'The agent is stuck in a loop.' : undefined } } });
    if (status === 'waiting_for_confirmation') {
      const pending = this.pendingActions[0];
      const info = pending ? this.actions.get(pending.id) : undefined;
      if (info) out.push({ holdBack: `e${info.id}`, args: info.args });
    }
    return out;
  }
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) out[k] = o[k];
  return out;
}

/** The text parts of V1 content (`[{type: "text", text}]`), or a plain string. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => (c && typeof c === 'object' && (c as { type?: unknown }).type === 'text' ? String((c as { text?: unknown }).text ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

function errorText(e: V1Event): string {
  for (const k of ['error', 'detail', 'message']) if (typeof e[k] === 'string' && e[k]) return e[k] as string;
  return JSON.stringify(e).slice(0, 500);
}
