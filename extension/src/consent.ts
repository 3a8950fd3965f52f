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
  /** The question and its detail, given the workspace's name and who will act (a URL). */
  text(workspaceLabel: string, who: string): { message: string; detail: string };
}

/** The executor's consent: run commands and edit files for an OpenHands server. */
export const EXECUTION_PROMPT: ConsentPrompt = {
  key: CONSENT_KEY,
  scope: serverOrigin,
  text: (workspaceLabel, serverUrl) => ({
    message: `Allow OpenHands to run commands and edit files in "${workspaceLabel}"?`,
    detail:
      `The agent of the OpenHands server at ${serverUrl} will run shell commands in this workspace ` +
      'and read and write its files, without asking again. You can revoke this with ' +
      '"OpenHands: Revoke Execution Consent for This Workspace".',
  }),
};

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

  /** Whether the user said yes for `who` (for a scoped prompt: for its scope, e.g. its origin). */
  grantedFor(who: string): boolean {
    const scope = this.prompt.scope;
    if (!scope) return this.granted;
    // A bare `true` is a record from before consent was per origin: it names no server.
    const granted = this.state.get<unknown>(this.prompt.key);
    return Array.isArray(granted) && granted.includes(scope(who));
  }

  /** Checks trust and consent, asking the user when consent was never given (for this `who`). */
  ensure(workspaceLabel: string, serverUrl: string): Promise<ConsentResult> {
    if (!this.ui.isTrusted()) return Promise.resolve('untrusted');
    if (this.grantedFor(serverUrl)) return Promise.resolve('granted');
    const id = this.prompt.scope ? this.prompt.scope(serverUrl) : '';
    let pending = this.pending.get(id);
    if (!pending) {
      pending = this.ask(workspaceLabel, serverUrl).finally(() => {
        this.pending.delete(id);
      });
      this.pending.set(id, pending);
    }
    return pending;
  }

  private async ask(workspaceLabel: string, serverUrl: string): Promise<ConsentResult> {
    const { message, detail } = this.prompt.text(workspaceLabel, serverUrl);
    const answer = await this.ui.ask(message, detail);
    if (answer !== ALLOW) return 'declined';
    const scope = this.prompt.scope;
    if (scope) {
      const before = this.state.get<unknown>(this.prompt.key);
      const list = Array.isArray(before) ? before.filter((x) => typeof x === 'string') : [];
      await this.state.update(this.prompt.key, [...new Set([...list, scope(serverUrl)])]);
    } else {
      await this.state.update(this.prompt.key, true);
    }
    return 'granted';
  }

  revoke(): Thenable<void> {
    return this.state.update(this.prompt.key, undefined);
  }
}
