import * as path from 'path';
import * as vscode from 'vscode';

/**
 * "Revert files to before this" on a user message of the tab (docs/checkpoints.md): the
 * checkpoint the runtime took before that message, found by its `before_message` in the executor's
 * `checkpoint_list`; the files a restore would change (`checkpoint_plan`), each with a diff on
 * demand (`checkpoint_blob` for the captured side); files with unsaved editor changes left alone
 * and reported; the restore, and its undo (the checkpoint of the state before it).
 */

/** What a revert needs of the executor: run one action (event_to_dict JSON), get the observation JSON. */
export interface CheckpointExecutor {
  execute(actionJson: string): Promise<string>;
}

export type Entry =
  | { kind: 'file'; hash: string; size: number; mode: number }
  | { kind: 'symlink'; target: string }
  | { kind: 'dir'; mode: number };

export type ChangeKind = 'create' | 'modify' | 'mode' | 'replace' | 'delete';

/** One path a restore changes (`root` absolute, `path` relative to it); `then` is the checkpoint's entry. */
export interface PlannedChange {
  root: string;
  path: string;
  kind: ChangeKind;
  now?: Entry | null;
  then?: Entry | null;
}

export interface LeftAlone {
  path: string;
  why: string;
}

export interface Plan {
  checkpoint: number;
  changes: PlannedChange[];
  left: LeftAlone[];
}

export interface RestoreReport {
  checkpoint: number;
  undo_checkpoint: number;
  applied: PlannedChange[];
  left: LeftAlone[];
}

/** Which user message a checkpoint precedes: its conversation and its number there. */
export interface BeforeMessage {
  conversation_id: string;
  message: number;
}

export interface CheckpointSummary {
  id: number;
  label: string;
  /** Set on the checkpoints taken before a user message. */
  before_message?: BeforeMessage;
  created_ms: number;
  roots: string[];
}

/**
 * `checkpoint_take`'s arguments for the checkpoint before a user message, as `VsCodeRuntime` (V0,
 * `openhands_vscode_runtime.checkpoints.before_message_args`; `messageId` is the event id) and the
 * V1 tab (`messageId` is the message's number among the user messages) send them: the
 * `before_message` a revert finds it by, and a label for people; docs/checkpoints.md.
 */
export function beforeMessageArgs(conversationId: string, messageId: number): { label: string; before_message: BeforeMessage } {
  return {
    label: `before message ${messageId} of conversation ${conversationId}`,
    before_message: { conversation_id: conversationId, message: messageId },
  };
}

/** The event id of a user message item (`e<id>`, tab/eventModel.ts), else undefined. */
export function messageIdOfKey(key: string): number | undefined {
  const m = /^e(\d+)$/.exec(key);
  return m ? Number(m[1]) : undefined;
}

export class CheckpointError extends Error {}

let nextActionId = 1;

/** Runs `checkpoint_<op>` in the executor; its `extras.result`, or a CheckpointError with the executor's message. */
export async function runCheckpoint<T>(executor: CheckpointExecutor, op: string, args: Record<string, unknown>): Promise<T> {
  // Ids only tie the reply to this call (no server is involved).
  const action = { id: nextActionId++, action: `checkpoint_${op}`, args };
  const reply = JSON.parse(await executor.execute(JSON.stringify(action))) as {
    observation?: string;
    content?: string;
    extras?: { result?: unknown };
  };
  if (reply.observation !== 'checkpoint') throw new CheckpointError(reply.content || `checkpoint_${op} failed`);
  return reply.extras?.result as T;
}

/** The checkpoint taken before message `messageId` of `conversationId` (the newest if several), else undefined. */
export async function checkpointBefore(executor: CheckpointExecutor, conversationId: string, messageId: number): Promise<CheckpointSummary | undefined> {
  const list = await runCheckpoint<{ checkpoints: CheckpointSummary[] }>(executor, 'list', {});
  return list.checkpoints
    .filter((c) => c.before_message?.conversation_id === conversationId && c.before_message.message === messageId)
    .pop();
}

/** The absolute path of a planned change. */
export function changePath(c: PlannedChange): string {
  return path.join(c.root, c.path);
}

/** The planned files that have unsaved changes in an editor (never overwritten: passed as `skip`). */
export function dirtyPaths(plan: Plan, documents: readonly vscode.TextDocument[]): string[] {
  const dirty = new Set(documents.filter((d) => d.isDirty && d.uri.scheme === 'file').map((d) => d.uri.fsPath));
  return plan.changes.map(changePath).filter((p) => dirty.has(p));
}

/** One line per change for the pick list: what happens and where (the folder named, for multi-root). */
export function describeChange(c: PlannedChange, dirty: boolean): { label: string; description: string; detail?: string } {
  const verbs: Record<ChangeKind, string> = {
    create: 'restore (deleted since)',
    modify: 'revert changes',
    mode: 'restore permissions',
    replace: 'restore (kind changed)',
    delete: 'delete (created since)',
  };
  return {
    label: c.path,
    description: `${verbs[c.kind]} · ${path.basename(c.root)}`,
    detail: dirty ? 'has unsaved changes in an editor: will be left alone' : undefined,
  };
}

/** How the revert talks to the user; `vscodeRevertUi` in the editor, a scripted one in unit tests. */
export interface RevertUi {
  /** Shows the changes; resolves with the change to diff, 'apply', or undefined (cancelled). */
  pick(plan: Plan, dirty: ReadonlySet<string>, messageText: string): Promise<PlannedChange | 'apply' | undefined>;
  /** Opens a diff of the file then (the checkpoint) and now. */
  diff(change: PlannedChange, thenText: string): Promise<void>;
  info(message: string, actions: string[]): Promise<string | undefined>;
  error(message: string): void;
}

export interface RevertOutcome {
  report: RestoreReport;
  /** The sentence the conversation shows. */
  note: string;
}

/** The text of a captured file (empty for a folder, a link or nothing), for the diff's "then" side. */
export async function thenText(executor: CheckpointExecutor, change: PlannedChange): Promise<string> {
  const then = change.then;
  if (!then || then.kind !== 'file') return then?.kind === 'symlink' ? `symbolic link to ${then.target}\n` : '';
  const blob = await runCheckpoint<{ text: string | null; size: number }>(executor, 'blob', { hash: then.hash });
  return blob.text ?? `(${blob.size} bytes, not text)\n`;
}

/** What the conversation says after a restore. */
export function revertNote(messageId: number, report: RestoreReport, undo: boolean): string {
  const head = undo
    ? `Undid a revert: files restored as they were before it (checkpoint ${report.checkpoint}).`
    : `Files reverted to before message ${messageId} (checkpoint ${report.checkpoint}).`;
  const parts = [head, `${report.applied.length} change(s) applied.`];
  if (report.left.length) parts.push(`Left alone: ${report.left.map((l) => `${l.path} (${l.why})`).join('; ')}.`);
  parts.push(`Checkpoint ${report.undo_checkpoint} holds the files as they were before this ${undo ? 'undo' : 'revert'}.`);
  return parts.join(' ');
}

/**
 * The whole flow for one user message: find its checkpoint, show the plan (diffs on demand),
 * restore with the dirty editors skipped, report; `onNote` puts each sentence in the conversation.
 * Resolves with the outcome, or undefined when nothing was restored.
 */
export async function revertToBefore(
  executor: CheckpointExecutor,
  ui: RevertUi,
  conversationId: string,
  messageId: number,
  messageText: string,
  documents: () => readonly vscode.TextDocument[],
  onNote: (text: string) => void,
): Promise<RevertOutcome | undefined> {
  try {
    const checkpoint = await checkpointBefore(executor, conversationId, messageId);
    if (!checkpoint) {
      ui.error('No checkpoint was taken before this message (it predates checkpoints, or it was pruned): nothing to revert to.');
      return undefined;
    }
    for (;;) {
      const plan = await runCheckpoint<Plan>(executor, 'plan', { id: checkpoint.id });
      if (plan.changes.length === 0) {
        await ui.info('The files are as they were before this message: nothing to revert.', []);
        return undefined;
      }
      const dirty = dirtyPaths(plan, documents());
      const choice = await ui.pick(plan, new Set(dirty), messageText);
      if (choice === undefined) return undefined;
      if (choice !== 'apply') {
        await ui.diff(choice, await thenText(executor, choice));
        continue;
      }
      // The editors are asked again now: one may have become dirty while the list was open.
      const skip = dirtyPaths(plan, documents());
      const report = await runCheckpoint<RestoreReport>(executor, 'restore', { id: checkpoint.id, skip });
      const note = revertNote(messageId, report, false);
      onNote(note);
      void offerUndo(executor, ui, messageId, report, documents, onNote);
      return { report, note };
    }
  } catch (e) {
    ui.error(`Revert failed: ${(e as Error).message}`);
    return undefined;
  }
}

/** "Undo" on the revert's notification restores its undo checkpoint (dirty editors skipped again). */
async function offerUndo(
  executor: CheckpointExecutor,
  ui: RevertUi,
  messageId: number,
  report: RestoreReport,
  documents: () => readonly vscode.TextDocument[],
  onNote: (text: string) => void,
): Promise<void> {
  const shown = report.left.length
    ? `Reverted ${report.applied.length} change(s); ${report.left.length} path(s) left alone (see the conversation).`
    : `Reverted ${report.applied.length} change(s).`;
  if ((await ui.info(shown, ['Undo'])) !== 'Undo') return;
  await undoRevert(executor, ui, messageId, report.undo_checkpoint, documents, onNote);
}

/** Restores the state a revert replaced (its `undo_checkpoint`). */
export async function undoRevert(
  executor: CheckpointExecutor,
  ui: RevertUi,
  messageId: number,
  undoCheckpoint: number,
  documents: () => readonly vscode.TextDocument[],
  onNote: (text: string) => void,
): Promise<RestoreReport | undefined> {
  try {
    const plan = await runCheckpoint<Plan>(executor, 'plan', { id: undoCheckpoint });
    const report = await runCheckpoint<RestoreReport>(executor, 'restore', { id: undoCheckpoint, skip: dirtyPaths(plan, documents()) });
    onNote(revertNote(messageId, report, true));
    return report;
  } catch (e) {
    ui.error(`Undoing the revert failed: ${(e as Error).message}`);
    return undefined;
  }
}

/** The "then" side of a diff: `openhands-checkpoint:` documents, served from memory. */
export const CHECKPOINT_SCHEME = 'openhands-checkpoint';

export class CheckpointDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private next = 1;

  /** A URI whose document is `text` (named after `file` for the diff's title). */
  put(file: string, text: string): vscode.Uri {
    const key = String(this.next++);
    this.texts.set(key, text);
    return vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: file, query: key });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? '';
  }
}

/** The revert's UI in the editor: a quick pick of the changes, `vscode.diff`, notifications. */
export function vscodeRevertUi(docs: CheckpointDocuments): RevertUi {
  return {
    async pick(plan, dirty, messageText) {
      type Item = vscode.QuickPickItem & { change?: PlannedChange; apply?: boolean };
      const changing = plan.changes.filter((c) => !dirty.has(changePath(c))).length;
      const items: Item[] = [
        {
          label: `$(discard) Revert ${changing} path(s) to before this message`,
          description: dirty.size ? `${dirty.size} with unsaved changes left alone` : undefined,
          apply: true,
        },
        ...plan.changes.map((c) => ({ ...describeChange(c, dirty.has(changePath(c))), change: c })),
      ];
      const picked = await vscode.window.showQuickPick(items, {
        title: `Revert files to before: ${messageText.slice(0, 60)}`,
        placeHolder: 'Pick a file to see its diff, or the first line to revert',
        matchOnDescription: true,
        ignoreFocusOut: true,
      });
      if (!picked) return undefined;
      return picked.apply ? 'apply' : picked.change;
    },
    async diff(change, text) {
      const file = changePath(change);
      const then = docs.put(file, text);
      const exists = change.now?.kind === 'file';
      const now = exists ? vscode.Uri.file(file) : docs.put(file, '');
      await vscode.commands.executeCommand('vscode.diff', then, now, `${change.path} (before the message ↔ now)`);
    },
    async info(message, actions) {
      return vscode.window.showInformationMessage(message, ...actions);
    },
    error(message) {
      void vscode.window.showErrorMessage(message);
    },
  };
}
