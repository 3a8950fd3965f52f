/**
 * The gate in front of every IDE tool that changes something (open_file, save_document, open_diff,
 * present_review, execute_command): the executor's rules. The workspace must be trusted, and the
 * user must have allowed, once per workspace (remembered in workspaceState, revocable), that agents
 * and MCP clients change it. `execute_command` has two more gates of its own (commandTool.ts).
 */
import * as vscode from 'vscode';
import { Consent, ConsentPrompt, ConsentUi, defaultUi } from '../consent';
import { ToolRefusedError } from './toolSupport';

export const IDE_WRITE_CONSENT_KEY = 'openhands.ideWriteConsent.v1';

export const IDE_WRITE_PROMPT: ConsentPrompt = {
  key: IDE_WRITE_CONSENT_KEY,
  text: (workspaceLabel, who) => ({
    message: `Allow ${who} to open and save files, propose edits and show reviews in "${workspaceLabel}"?`,
    detail:
      'The IDE tools open_file, save_document, open_diff (you accept or reject each change) and present_review will act in this ' +
      'workspace without asking again; VS Code commands need a separate opt-in. Revoke with "OpenHands: Revoke IDE Tools Consent".',
  }),
};

export interface WriteGate {
  /** Resolves when `tool` may change the workspace; throws ToolRefusedError with the reason otherwise. */
  check(tool: string): Promise<void>;
  revoke(): Thenable<void>;
}

export function createWriteGate(state: vscode.Memento, ui: ConsentUi = defaultUi): WriteGate {
  const consent = new Consent(state, ui, IDE_WRITE_PROMPT);
  return {
    async check(tool) {
      const label = vscode.workspace.workspaceFolders?.[0]?.name ?? 'this window';
      const answer = await consent.ensure(label, 'agents and MCP clients');
      if (answer === 'untrusted') {
        throw new ToolRefusedError(`Refused: "${tool}" changes the workspace, and VS Code does not trust this workspace (Restricted Mode). The user can trust it with "Workspaces: Manage Workspace Trust".`);
      }
      if (answer === 'declined') {
        throw new ToolRefusedError(`Refused: the user did not allow IDE tools to change this workspace ("${tool}" needs that consent; it is asked again on the next call).`);
      }
    },
    revoke: () => consent.revoke(),
  };
}
