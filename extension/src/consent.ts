import * as vscode from 'vscode';

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
  /** The question and its detail, given the workspace's name and who will act (a URL). */
  text(workspaceLabel: string, who: string): { message: string; detail: string };
}

/** The executor's consent: run commands and edit files for an OpenHands server. */
export const EXECUTION_PROMPT: ConsentPrompt = {
  key: CONSENT_KEY,
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
  private pending: Promise<ConsentResult> | undefined;

  constructor(
    private readonly state: vscode.Memento,
    private readonly ui: ConsentUi = defaultUi,
    private readonly prompt: ConsentPrompt = EXECUTION_PROMPT,
  ) {}

  get granted(): boolean {
    return this.state.get<boolean>(this.prompt.key, false) === true;
  }

  /** Checks trust and consent, asking the user when consent was never given. */
  ensure(workspaceLabel: string, serverUrl: string): Promise<ConsentResult> {
    if (!this.ui.isTrusted()) return Promise.resolve('untrusted');
    if (this.granted) return Promise.resolve('granted');
    if (!this.pending) {
      this.pending = this.ask(workspaceLabel, serverUrl).finally(() => {
        this.pending = undefined;
      });
    }
    return this.pending;
  }

  private async ask(workspaceLabel: string, serverUrl: string): Promise<ConsentResult> {
    const { message, detail } = this.prompt.text(workspaceLabel, serverUrl);
    const answer = await this.ui.ask(message, detail);
    if (answer !== ALLOW) return 'declined';
    await this.state.update(this.prompt.key, true);
    return 'granted';
  }

  revoke(): Thenable<void> {
    return this.state.update(this.prompt.key, undefined);
  }
}
