/**
 * Confirmation mode in the OpenHands tab: the edit an awaited `str_replace_editor` action (OpenHands
 * action "edit") would make, computed from its arguments and the file as VS Code has it, shown in
 * the diff editor (diffApproval.ts, `write: false`). Accept / Reject there answer like the tab's
 * Confirm / Reject; the agent's own executor then makes (or skips) the edit. An edit whose result
 * cannot be known beforehand (an `old_str` that is not found exactly once, `undo_edit`, `view`)
 * shows no diff: the tab's buttons decide.
 */
import * as vscode from 'vscode';
import type { DiffApprovals } from './diffApproval';

/** The file content after the edit, or undefined when it cannot be computed from the arguments. */
export function proposedContent(args: Record<string, unknown>, current: string | undefined): string | undefined {
  const command = typeof args.command === 'string' ? args.command : '';
  const str = (k: string) => (typeof args[k] === 'string' ? (args[k] as string) : undefined);
  if (command === 'create') return str('file_text');
  if (current === undefined) return undefined;
  if (command === 'str_replace') {
    const oldStr = str('old_str');
    if (!oldStr) return undefined;
    const at = current.indexOf(oldStr);
    if (at < 0 || current.indexOf(oldStr, at + 1) >= 0) return undefined;
    return current.slice(0, at) + (str('new_str') ?? '') + current.slice(at + oldStr.length);
  }
  if (command === 'insert') {
    const line = typeof args.insert_line === 'number' ? args.insert_line : NaN;
    const text = str('new_str');
    if (!Number.isInteger(line) || line < 0 || text === undefined) return undefined;
    const lines = current.split('\n');
    if (line > lines.length) return undefined;
    lines.splice(line, 0, ...text.split('\n'));
    return lines.join('\n');
  }
  return undefined;
}

export function createEditReviewer(diffs: DiffApprovals) {
  return async (args: Record<string, unknown>, signal: AbortSignal): Promise<boolean | undefined> => {
    const p = typeof args.path === 'string' ? args.path : '';
    if (!p.startsWith('/')) return undefined;
    const uri = vscode.Uri.file(p);
    let current: string | undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) current = open.getText();
    else {
      try {
        current = Buffer.from(await vscode.workspace.fs.readFile(uri)).toString('utf8');
      } catch {
        current = undefined;
      }
    }
    const content = proposedContent(args, current);
    if (content === undefined || signal.aborted) return undefined;
    const name = p.split('/').pop();
    const decision = await diffs.propose(uri, content, { write: false, signal, title: `${name} ↔ the agent's proposed edit: Accept or Reject (confirmation mode)` });
    if (decision.result === 'ACCEPTED') return true;
    if (decision.result === 'DIFF_REJECTED' && decision.reason === 'rejected') return false;
    return undefined;
  };
}
