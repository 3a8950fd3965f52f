import * as vscode from 'vscode';
import { serverOrigin } from './config';

/** workspaceState key; bump the suffix if what the user consents to changes materially. */
export const CONSENT_KEY = 'openhands.executionConsent.v1';

export type ConsentResult = 'granted' | 'declined' | 'untrusted';

export interface ConsentUi {
  isTrusted(): boolean;
  ask(message: string, detail: string): Thenable<string | undefined>;
}

/** What a Consent asks for and where the answer is remembered (workspaceState key). */
export interface ConsentPrompt {
  readonly key: string;
  /**
   * When set, the answer is remembered per `scope(who)` (the server's origin for the executor):
   * consent given for one server is not consent for another, and the user is asked again when
   * the origin changes. Without it, one answer covers every `who`.
   */
  readonly scope?: (who: string) => string;
  /**
   * The question and its detail, given the workspace's name, who will act (a URL) and, when the
   * workspace's own settings chose it, the conversation whose agent will act.
   */
  text(workspaceLabel: string, who: string, conversation?: string): { message: string; detail: string };
}

/**
 * The host of a server on another machine, for the prompt to name (by its spelling: only what the
 * user reads; the loopback rules of the connection are checked by address elsewhere). Undefined for
 * this machine, or for a label that is no URL (this window's own agent-server).
 */
export function remoteHost(serverUrl: string): string | undefined {
  let u: URL;
  try {
    u = new URL(serverUrl);
  } catch {
    return undefined;
  }
  const h = u.hostname.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '[::1]' || /^127\./.test(h) ? undefined : u.host;
}

/** The executor's consent: run commands and edit files for an OpenHands server. */
export const EXECUTION_PROMPT: ConsentPrompt = {
  key: CONSENT_KEY,
  scope: serverOrigin,
  text: (workspaceLabel, serverUrl, conversation) => {
    const remote = remoteHost(serverUrl);
    // Another machine is named in the question itself: its agent gets this machine's shell.
    const where = remote ? `${serverOrigin(serverUrl)}, on another machine (${remote}),` : serverUrl;
    return {
      message: remote
        ? `Allow the OpenHands agent on ${remote} (another machine) to run commands and edit files here, in "${workspaceLabel}"?`
        : `Allow OpenHands to run commands and edit files in "${workspaceLabel}"?`,
      detail:
        (conversation
          ? `This workspace's settings (.vscode/settings.json) attach it to conversation ${conversation}: the agent of that ` +
            `conversation on the OpenHands server at ${where} will run shell commands in this workspace `
          : `The agent of the OpenHands server at ${where} will run shell commands in this workspace `) +
        'and read and write its files, without asking again. You can revoke this with ' +
        '"OpenHands: Revoke Execution Consent for This Workspace".',
    };
  },
};

/**
 * What an answer is remembered under: the scope of `who` (the server's origin), and the
 * conversation when the workspace's settings chose it, so that consent given to a server does not
 * cover a conversation a repository picked, and the answer for one such conversation not another.
 */
function scopeId(prompt: ConsentPrompt, who: string, conversation?: string): string {
  const base = prompt.scope ? prompt.scope(who) : '';
  return conversation ? `${base} conversation ${conversation}` : base;
}

const ALLOW = 'Allow';
const DENY = "Don't Allow";

// A notification rather than a modal dialog: it does not block the window while the user reads
// the OpenHands tab, and it works in every host (test hosts refuse modal dialogs). Closing it
// without choosing counts as "no" for now and asks again on the next start.
export const defaultUi: ConsentUi = {
  isTrusted: () => vscode.workspace.isTrusted,
  ask: (message, detail) => vscode.window.showWarningMessage(`${message} ${detail}`, ALLOW, DENY),
};

/**
 * The gate in front of every execution: the workspace must be trusted, and the user must have
 * said yes once for this workspace (remembered in workspaceState). Concurrent callers share one
 * prompt.
 */
export class Consent {
  /** One prompt at a time per scope, shared by concurrent callers. */
  private readonly pending = new Map<string, Promise<ConsentResult>>();

  constructor(
    private readonly state: vscode.Memento,
    private readonly ui: ConsentUi = defaultUi,
    private readonly prompt: ConsentPrompt = EXECUTION_PROMPT,
  ) {}

  /** For a prompt without a scope: whether the user said yes. */
  get granted(): boolean {
    return this.state.get<boolean>(this.prompt.key, false) === true;
  }

  /**
   * Whether the user said yes for `who` (for a scoped prompt: for its scope, e.g. its origin) and,
   * when given, the conversation the workspace's settings chose.
   */
  grantedFor(who: string, conversation?: string): boolean {
    if (!this.prompt.scope && !conversation) return this.granted;
    // A bare `true` is a record from before consent was per origin: it names no server.
    const granted = this.state.get<unknown>(this.prompt.key);
    return Array.isArray(granted) && granted.includes(scopeId(this.prompt, who, conversation));
  }

  /**
   * Checks trust and consent, asking the user when consent was never given (for this `who`, and
   * for `conversation` when the workspace's settings chose it: the prompt then names it).
   */
  ensure(workspaceLabel: string, serverUrl: string, conversation?: string): Promise<ConsentResult> {
    if (!this.ui.isTrusted()) return Promise.resolve('untrusted');
    if (this.grantedFor(serverUrl, conversation)) return Promise.resolve('granted');
    const id = scopeId(this.prompt, serverUrl, conversation);
    let pending = this.pending.get(id);
    if (!pending) {
      pending = this.ask(workspaceLabel, serverUrl, conversation).finally(() => {
        this.pending.delete(id);
      });
      this.pending.set(id, pending);
    }
    return pending;
  }

  /**
   * Records a yes the user gave by another explicit action (the tab's **Set Up and Start**, whose
   * text says it also allows execution), for `who` only; never in an untrusted workspace.
   */
  async grant(who: string): Promise<ConsentResult> {
    if (!this.ui.isTrusted()) return 'untrusted';
    await this.record(who);
    return 'granted';
  }

  private async ask(workspaceLabel: string, serverUrl: string, conversation?: string): Promise<ConsentResult> {
    const { message, detail } = this.prompt.text(workspaceLabel, serverUrl, conversation);
    const answer = await this.ui.ask(message, detail);
    if (answer !== ALLOW) return 'declined';
    await this.record(serverUrl, conversation);
    return 'granted';
  }

  private async record(serverUrl: string, conversation?: string): Promise<void> {
    if (this.prompt.scope || conversation) {
      const before = this.state.get<unknown>(this.prompt.key);
      const list = Array.isArray(before) ? before.filter((x) => typeof x === 'string') : [];
      await this.state.update(this.prompt.key, [...new Set([...list, scopeId(this.prompt, serverUrl, conversation)])]);
    } else {
      await this.state.update(this.prompt.key, true);
    }
  }

  revoke(): Thenable<void> {
    return this.state.update(this.prompt.key, undefined);
  }
}
