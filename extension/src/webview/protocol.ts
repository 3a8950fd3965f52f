/**
 * The messages between the extension host and the OpenHands tab's webview, and the display items
 * of a conversation. Types only: shared by the host (`tab/tabSession.ts`, `view.ts`, `tab/eventModel.ts`)
 * and `webview/main.ts` (page).
 */

export type AgentState =
  | 'loading' | 'init' | 'running' | 'awaiting_user_input' | 'paused' | 'stopped' | 'finished'
  | 'rejected' | 'error' | 'awaiting_user_confirmation' | 'user_confirmed' | 'user_rejected'
  | 'rate_limited';

/** One entry of the rendered conversation. `key` is stable: patches replace the entry with that key. */
export type ChatItem =
  | { kind: 'message'; key: string; role: 'user' | 'agent'; text: string; pending?: boolean }
  | { kind: 'thought'; key: string; text: string }
  | {
      kind: 'action';
      key: string;
      /** OpenHands action name: run, edit, read, write, browse, run_ipython, ... */
      action: string;
      /** One line for the header: the command, "Edited src/a.py", ... */
      title: string;
      thought?: string;
      status: 'running' | 'ok' | 'error';
      /** The observation, once it arrived. */
      output?: string;
      exitCode?: number;
      durationMs?: number;
      /** Unified-style diff lines of an edit ("+ ...", "- ...", "  ..."). */
      diff?: string[];
      /** Confirmation mode: the action waits for the user, or the user's answer. */
      confirmation?: 'awaiting' | 'confirmed' | 'rejected';
    }
  | { kind: 'finish'; key: string; text: string }
  | { kind: 'error'; key: string; text: string }
  | { kind: 'state'; key: string; state: AgentState | string; reason?: string }
  | { kind: 'status'; key: string; level: 'info' | 'error'; text: string };

/** Something the user must act on, with the buttons that fix it. */
export interface Problem {
  id: string;
  message: string;
  fixes: Array<{ fix: string; label: string }>;
}

/**
 * Who started a V1 conversation: `tab` (this tab created it: it remembers the ids), `canvas`
 * (tagged `clientsource: agentcanvas`, as Agent Canvas tags each conversation it creates),
 * `automation` (an OpenHands automation's tags), `elsewhere` (anything else: a script, another
 * window, another client; the agent-server's conversation info says no more).
 */
export type Origin = 'tab' | 'canvas' | 'automation' | 'elsewhere';

const ORIGIN_WORDS: Record<Origin, { list: string; line: string }> = {
  tab: { list: 'started in the tab', line: 'Started in the tab' },
  canvas: { list: 'started in Agent Canvas', line: 'Started in Agent Canvas' },
  automation: { list: 'started by an automation', line: 'Started by an OpenHands automation' },
  elsewhere: { list: 'started outside the tab', line: 'Started outside the tab (a script or another client)' },
};

export interface ConversationSummary {
  id: string;
  title: string;
  status?: string;
  updated?: string;
  /** V1: who started it (`Origin`). */
  origin?: Origin;
  /** V1: the folder the conversation works in (the agent-server's `workspace.working_dir`). */
  workingDir?: string;
  /** V1: where that is for this window. */
  place?: ConversationPlace;
}

/**
 * Where a conversation works: one of the window's folders, a git worktree of the window's
 * repository (a conversation created with `worktree: true`: branch `openhands/<id>`), or a folder
 * this window does not serve.
 */
export type ConversationPlace =
  | { kind: 'workspace'; folder: string }
  | { kind: 'worktree'; path: string; branch?: string; folder: string }
  | { kind: 'elsewhere'; path: string };

/** The place as the list says it: "in the workspace", "in worktree openhands/…", "in /other/folder". */
export function placeLabel(p: ConversationPlace | undefined): string | undefined {
  if (!p) return undefined;
  if (p.kind === 'workspace') return 'in the workspace';
  if (p.kind === 'worktree') return p.branch ? `in worktree ${p.branch}` : `in worktree ${p.path} (detached)`;
  return `in ${p.path}`;
}

/** The line under the picker: where the conversation shown works. */
export function placeText(p: ConversationPlace | undefined, started?: Origin): string {
  const who = started ? ORIGIN_WORDS[started].line : '';
  const where = !p
    ? ''
    : p.kind === 'workspace'
      ? `works in the workspace (${p.folder})`
      : p.kind === 'worktree'
        ? `works in a git worktree${p.branch ? ` on branch ${p.branch}` : ' (detached HEAD)'}: ${p.path}`
        : `works in ${p.path}, not a folder of this window`;
  if (!who) return where ? where.charAt(0).toUpperCase() + where.slice(1) : '';
  return where ? `${who}; ${where}` : who;
}

/** How the conversation list words a conversation's state (V1 `execution_status`, V0 status). */
export function conversationStateLabel(status: string | undefined): string | undefined {
  if (!status) return undefined;
  const s = status.toLowerCase();
  return s === 'waiting_for_confirmation' ? 'waiting for your confirmation' : s.replace(/_/g, ' ');
}

/** One entry of the conversation list: title, state, who started it and where it works. */
export function conversationLabel(c: ConversationSummary): string {
  const parts = [
    conversationStateLabel(c.status),
    c.origin ? ORIGIN_WORDS[c.origin].list : undefined,
    placeLabel(c.place),
  ].filter(Boolean);
  return parts.length ? `${c.title} (${parts.join(', ')})` : c.title;
}

/** The tab's chrome (everything but the event list). */
export interface TabStatus {
  serverUrl: string;
  /** Where the agent runs (this machine or which other one) and that its actions run here. */
  place?: string;
  executor: {
    state: string;
    label: string;
    message?: string;
    conversationId?: string;
    hasKey?: boolean;
    /** What this window's executor ran recently (also without an event stream, e.g. attach mode). */
    actions?: Array<{ kind: string; summary: string; status: string; result?: string; durationMs?: number }>;
  };
  conversations: ConversationSummary[];
  conversationId?: string;
  /** Whether the conversation socket is joined. */
  joined: boolean;
  agentState?: string;
  agentStateLabel?: string;
  runtimeStatus?: string;
  problems: Problem[];
  /** The server has no LLM settings (or the user asked to change them): show the form. */
  llmForm?: { model: string; baseUrl: string; apiKeySet: boolean; required: boolean };
  /** The message box accepts input (server reachable, LLM configured). */
  canSend: boolean;
  canStop: boolean;
  canContinue: boolean;
  attachMode: boolean;
  /** What the conversation shown has cost and how full its context is, as the server reports it. */
  usage?: { text: string; costUsd: number; contextPercent?: number; budgetUsd?: number };
  /**
   * The agent's edits since the person's last message (review by hunk): each file with what is
   * left to review, and how many undone hunks go to the agent with the next message.
   */
  changes?: { files: Array<{ path: string; label: string; added: number; removed: number; hunks: number }>; undone: number };
  /** Confirmation mode: the action the agent waits to run (Confirm / Reject in the tab). */
  confirmation?: {
    key: string; action: string; title: string; kind: 'command' | 'edit' | 'other'; diffShown: boolean; sending: boolean;
    /** OpenHands did not hold the action back (1.6.0 does so only for commands): it already ran; the answer only lets the agent go on or stops it. */
    alreadyDone: boolean;
  };
}

export type HostToView =
  | { type: 'status'; status: TabStatus }
  | { type: 'reset'; conversationId?: string; items: ChatItem[] }
  | { type: 'add'; items: ChatItem[] }
  | { type: 'patch'; item: ChatItem }
  | { type: 'sent' }
  | { type: 'sendFailed'; text: string };

export type ViewToHost =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'confirm'; accept: boolean }
  | { type: 'continue' }
  | { type: 'new' }
  | { type: 'switch'; id: string }
  | { type: 'refresh' }
  | { type: 'fix'; fix: string }
  | { type: 'saveLlm'; model: string; baseUrl: string; apiKey: string }
  | { type: 'editLlm' }
  | { type: 'cancelLlm' }
  /** One of `ALLOWED_COMMANDS` (view.ts); `path`: the file a "Changes" entry names (checked by the command). */
  | { type: 'command'; command: string; path?: string }
  /** "Revert files to before this" on the user message with this key. */
  | { type: 'revert'; key: string };
