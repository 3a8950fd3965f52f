import * as vscode from 'vscode';
import { applyHunk, type Hunk, type TurnChanges } from '../tab/turnChanges';

/**
 * Review by hunk in the editor: above each change the agent made to a file since the person's
 * last message, a CodeLens offers Keep and Undo. Undo puts back exactly that hunk through a
 * `WorkspaceEdit` (on the editor's undo stack; a document with unsaved changes of the person's is
 * edited, not saved over), and the tab tells the agent with the next message
 * (`TurnChanges.feedback`). The model lives in `../tab/turnChanges.ts`; this file only shows it.
 */

export const HUNK_COMMANDS = {
  keep: 'openhands.changes.keepHunk',
  undo: 'openhands.changes.undoHunk',
  keepAll: 'openhands.changes.keepAll',
  undoAll: 'openhands.changes.undoAll',
  review: 'openhands.changes.review',
  openFile: 'openhands.changes.openFile',
  sendUndone: 'openhands.changes.sendUndone',
} as const;

const BASELINE_SCHEME = 'openhands-turn';

export interface HunkReviewDeps {
  /** The shown conversation's changes (the tab session's). */
  changes: TurnChanges;
  /** Sends the undone hunks to the agent at once (a message of their own). */
  sendUndoneNow: () => Promise<void>;
  log: { info(m: string): void; warn(m: string): void };
}

export function registerHunkReview(deps: HunkReviewDeps): vscode.Disposable[] {
  const { changes, log } = deps;
  const changed = new vscode.EventEmitter<void>();
  const lenses: vscode.CodeLensProvider = {
    onDidChangeCodeLenses: changed.event,
    provideCodeLenses(doc) {
      if (doc.uri.scheme !== 'file' || !changes.has(doc.uri.fsPath)) return [];
      const out: vscode.CodeLens[] = [];
      for (const hunk of changes.hunks(doc.uri.fsPath, doc.getText())) {
        const line = Math.min(hunk.afterStart, Math.max(0, doc.lineCount - 1));
        const range = new vscode.Range(line, 0, line, 0);
        const args = [doc.uri.fsPath, hunk];
        const size = `+${hunk.afterLines.length} −${hunk.beforeLines.length}`;
        out.push(
          new vscode.CodeLens(range, { title: `$(check) Keep (${size})`, command: HUNK_COMMANDS.keep, arguments: args, tooltip: "Keep the agent's change" }),
          new vscode.CodeLens(range, { title: '$(discard) Undo', command: HUNK_COMMANDS.undo, arguments: args, tooltip: 'Put back what was there; the agent is told with your next message' }),
        );
      }
      return out;
    },
  };
  const baseline: vscode.TextDocumentContentProvider = {
    onDidChange: new vscode.EventEmitter<vscode.Uri>().event,
    provideTextDocumentContent: (uri) => changes.baseline(uri.path) ?? '',
  };
  const refresh = () => changed.fire();
  return [
    changed,
    vscode.languages.registerCodeLensProvider({ scheme: 'file' }, lenses),
    vscode.workspace.registerTextDocumentContentProvider(BASELINE_SCHEME, baseline),
    changes.onDidChange(refresh),
    vscode.workspace.onDidChangeTextDocument((e) => {
      // The tab's list counts from the editor's text (observe fires the listeners, lenses included).
      if (changes.has(e.document.uri.fsPath) && !changes.observe(e.document.uri.fsPath, e.document.getText())) refresh();
    }),
    vscode.commands.registerCommand(HUNK_COMMANDS.keep, (path: string, hunk: Hunk) => {
      if (!changes.keep(path, hunk)) log.warn(`keep: the hunk at line ${hunk.afterStart + 1} of ${path} is no longer there`);
    }),
    vscode.commands.registerCommand(HUNK_COMMANDS.undo, (path: string, hunk: Hunk) => undoHunks(changes, path, [hunk], log)),
    vscode.commands.registerCommand(HUNK_COMMANDS.keepAll, async () => {
      const texts = new Map<string, string>();
      for (const p of changes.paths()) texts.set(p, (await vscode.workspace.openTextDocument(vscode.Uri.file(p))).getText());
      changes.keepAll((p) => texts.get(p));
    }),
    vscode.commands.registerCommand(HUNK_COMMANDS.undoAll, async () => {
      for (const p of changes.paths()) {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(p));
        await undoHunks(changes, p, changes.hunks(p, doc.getText()), log);
      }
    }),
    vscode.commands.registerCommand(HUNK_COMMANDS.review, async () => {
      const paths = changes.paths();
      if (!paths.length) {
        void vscode.window.showInformationMessage('OpenHands: the agent has changed no file since your last message.');
        return;
      }
      const pick = paths.length === 1 ? paths[0] : (await vscode.window.showQuickPick(paths.map((p) => ({ label: vscode.workspace.asRelativePath(p), path: p }))))?.path;
      if (pick) await openTurnDiff(pick);
    }),
    // From the tab's "Changes" list: only a file the agent changed this turn (the page names it).
    vscode.commands.registerCommand(HUNK_COMMANDS.openFile, async (path: unknown) => {
      if (typeof path !== 'string' || !changes.has(path)) {
        log.warn(`changes: ${String(path)} is not a file the agent changed since your last message`);
        return;
      }
      await openTurnDiff(path);
    }),
    vscode.commands.registerCommand(HUNK_COMMANDS.sendUndone, () => deps.sendUndoneNow()),
  ];
}

/** VS Code's diff editor: the file's text before the turn (kept hunks applied) against the file now. */
async function openTurnDiff(path: string): Promise<void> {
  const before = vscode.Uri.from({ scheme: BASELINE_SCHEME, path });
  await vscode.commands.executeCommand('vscode.diff', before, vscode.Uri.file(path), `${vscode.workspace.asRelativePath(path)} (since your last message)`);
}

/**
 * Puts the hunks back in the file (later ones first, so the earlier ones' lines stay where they
 * are), as one edit of the document: the editor's Undo takes it back. A document the person had
 * not modified is saved, so the file on disk is restored too; one with unsaved changes stays so.
 * A hunk whose lines changed since it was shown is refused, never guessed.
 */
export async function undoHunks(changes: TurnChanges, path: string, hunks: Hunk[], log: { warn(m: string): void }): Promise<boolean> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
  const wasDirty = doc.isDirty;
  const original = doc.getText();
  let text = original;
  const done: Hunk[] = [];
  for (const hunk of [...hunks].sort((a, b) => b.afterStart - a.afterStart)) {
    const next = applyHunk(text, hunk, true);
    if (next === undefined) {
      log.warn(`undo: the lines of the hunk at line ${hunk.afterStart + 1} of ${path} changed since; left as they are`);
      void vscode.window.showWarningMessage(`OpenHands: ${vscode.workspace.asRelativePath(path)} changed at line ${hunk.afterStart + 1} since the change was shown; nothing was undone there.`);
      continue;
    }
    text = next;
    done.push(hunk);
  }
  if (!done.length) return false;
  // The smallest range that differs, so the editor keeps cursors and folds elsewhere.
  let start = 0;
  while (start < original.length && start < text.length && original[start] === text[start]) start++;
  let end = 0;
  while (end < original.length - start && end < text.length - start && original[original.length - 1 - end] === text[text.length - 1 - end]) end++;
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(doc.positionAt(start), doc.positionAt(original.length - end)), text.slice(start, text.length - end));
  if (!(await vscode.workspace.applyEdit(edit))) return false;
  if (!wasDirty) await doc.save();
  for (const hunk of done.reverse()) changes.rejected(path, hunk);
  return true;
}
