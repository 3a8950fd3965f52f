/**
 * Proposed file contents shown in VS Code's diff editor for a person to accept or reject: the
 * `open_diff` tool, and the OpenHands tab's confirmation mode (an edit the agent waits to make,
 * shown with `write: false`: accepting it only answers, the agent's executor then makes the edit).
 *
 * The left side is the file as VS Code has it (the unsaved buffer when it is open; an empty
 * document for a file that does not exist yet); the right side is a read-only virtual document
 * (`openhands-proposed:` scheme) holding the proposal. The diff editor's title bar carries
 * "Accept Proposed Change" and "Reject Proposed Change" (package.json `editor/title`, shown while
 * the right side is a proposal). Accept writes the proposal into the document and saves it; Reject,
 * closing the diff tab, a newer proposal for the same file, or the caller giving up (its signal)
 * all reject. Each proposal settles exactly once.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { displayPath } from './toolSupport';

export const PROPOSED_SCHEME = 'openhands-proposed';
export const ACCEPT_COMMAND = 'openhands.ide.acceptDiff';
export const REJECT_COMMAND = 'openhands.ide.rejectDiff';

export type DiffDecision =
  | { result: 'FILE_SAVED'; path: string }
  /** Accepted without writing (`write: false`: someone else applies the change, e.g. the agent after confirmation). */
  | { result: 'ACCEPTED'; path: string }
  | { result: 'DIFF_REJECTED'; path: string; reason: 'rejected' | 'tab-closed' | 'superseded' | 'cancelled' | 'shutdown' };

interface Pending {
  id: number;
  target: vscode.Uri;
  proposed: vscode.Uri;
  original: vscode.Uri | undefined;
  content: string;
  write: boolean;
  settle(d: DiffDecision): void;
  settled: boolean;
}

export class DiffApprovals implements vscode.Disposable {
  private nextId = 1;
  private readonly pending = new Map<string, Pending>(); // by proposed URI
  private readonly contents = new Map<string, string>(); // virtual documents by URI
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly log?: { info(m: string): void; warn(m: string): void }) {
    const provider: vscode.TextDocumentContentProvider = { provideTextDocumentContent: (uri) => this.contents.get(uri.toString()) ?? '' };
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, provider),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (uri?: vscode.Uri) => this.decide(uri, true)),
      vscode.commands.registerCommand(REJECT_COMMAND, (uri?: vscode.Uri) => this.decide(uri, false)),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const p = this.byTab(tab);
          if (p && !p.settled) this.finish(p, { result: 'DIFF_REJECTED', path: displayPath(p.target), reason: 'tab-closed' });
        }
      }),
    ];
  }

  /** Number of proposals waiting for a decision. */
  get waiting(): number {
    return this.pending.size;
  }

  /**
   * Shows `content` as the proposed new text of `target` and resolves with the user's decision.
   * Throws (before showing anything) only when the diff editor cannot be opened.
   */
  async propose(target: vscode.Uri, content: string, opts: { title?: string; signal?: AbortSignal; write?: boolean } = {}): Promise<DiffDecision> {
    for (const p of this.pending.values()) {
      if (p.target.toString() === target.toString()) this.finish(p, { result: 'DIFF_REJECTED', path: displayPath(p.target), reason: 'superseded' });
    }
    const id = this.nextId++;
    // The file's own path in the virtual URI: the diff editor picks the language from it.
    const proposed = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: target.path, query: `id=${id}&side=proposed` });
    const exists = await fileExists(target);
    const original = exists ? undefined : vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: target.path, query: `id=${id}&side=original` });
    this.contents.set(proposed.toString(), content);
    if (original) this.contents.set(original.toString(), '');
    let settle!: (d: DiffDecision) => void;
    const decided = new Promise<DiffDecision>((r) => (settle = r));
    const p: Pending = { id, target, proposed, original, content, write: opts.write !== false, settle, settled: false };
    this.pending.set(proposed.toString(), p);
    const onAbort = () => {
      if (!p.settled) this.finish(p, { result: 'DIFF_REJECTED', path: displayPath(target), reason: 'cancelled' });
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const name = path.posix.basename(target.path);
    const title = opts.title ?? `${name}${exists ? '' : ' (new file)'} ↔ proposed by the agent: Accept or Reject in the title bar`;
    try {
      await vscode.commands.executeCommand('vscode.diff', original ?? target, proposed, title, { preview: false });
    } catch (e) {
      this.forget(p);
      throw new Error(`Cannot open the diff editor for ${displayPath(target)}: ${e instanceof Error ? e.message : e}`);
    }
    this.log?.info(`IDE tools: diff ${id} for ${displayPath(target)} waits for the user`);
    const decision = await decided;
    opts.signal?.removeEventListener('abort', onAbort);
    return decision;
  }

  private byTab(tab: vscode.Tab): Pending | undefined {
    const input = tab.input;
    if (input instanceof vscode.TabInputTextDiff) return this.pending.get(input.modified.toString());
    return undefined;
  }

  /** The proposal a title-bar click (it passes the right side's URI) or the active diff tab names. */
  private find(uri?: vscode.Uri): Pending | undefined {
    if (uri) {
      const p = this.pending.get(uri.toString());
      if (p) return p;
    }
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    return tab ? this.byTab(tab) : undefined;
  }

  private async decide(uri: vscode.Uri | undefined, accept: boolean): Promise<void> {
    const p = this.find(uri);
    if (!p || p.settled) {
      void vscode.window.showWarningMessage('OpenHands: this proposed change was already decided or withdrawn.');
      return;
    }
    if (!accept) {
      this.finish(p, { result: 'DIFF_REJECTED', path: displayPath(p.target), reason: 'rejected' });
      return;
    }
    if (!p.write) {
      this.finish(p, { result: 'ACCEPTED', path: displayPath(p.target) });
      return;
    }
    p.settled = true; // no tab-closed rejection while the file is written
    try {
      await writeDocument(p.target, p.content);
    } catch (e) {
      p.settled = false;
      const message = e instanceof Error ? e.message : String(e);
      this.log?.warn(`IDE tools: saving the accepted diff for ${displayPath(p.target)} failed: ${message}`);
      void vscode.window.showErrorMessage(`OpenHands: could not save ${displayPath(p.target)}: ${message}. The proposal is still open.`);
      return;
    }
    p.settled = false;
    this.finish(p, { result: 'FILE_SAVED', path: displayPath(p.target) });
  }

  private finish(p: Pending, d: DiffDecision): void {
    if (p.settled) return;
    p.settled = true;
    this.log?.info(`IDE tools: diff ${p.id} for ${displayPath(p.target)}: ${d.result}${d.result === 'DIFF_REJECTED' ? ` (${d.reason})` : ''}`);
    this.forget(p);
    p.settle(d);
    void closeDiffTabs(p.proposed);
  }

  private forget(p: Pending): void {
    this.pending.delete(p.proposed.toString());
    // The virtual documents stay readable until their tab is gone (a closing tab may still ask).
    setTimeout(() => {
      this.contents.delete(p.proposed.toString());
      if (p.original) this.contents.delete(p.original.toString());
    }, 5000).unref?.();
  }

  dispose(): void {
    for (const p of [...this.pending.values()]) this.finish(p, { result: 'DIFF_REJECTED', path: displayPath(p.target), reason: 'shutdown' });
    for (const d of this.disposables) d.dispose();
  }
}

async function fileExists(uri: vscode.Uri): Promise<boolean> {
  if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) return true;
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** Replaces the document's whole text (an open, even unsaved, buffer included) and saves it. */
export async function writeDocument(uri: vscode.Uri, content: string): Promise<void> {
  if (!(await fileExists(uri))) {
    await vscode.workspace.fs.writeFile(uri, Buffer.from(content, 'utf8'));
    return;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.getText() !== content) {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), content);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error('VS Code refused the edit');
  }
  if (doc.isDirty && !(await doc.save())) throw new Error('VS Code did not save the document');
}

async function closeDiffTabs(proposed: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === proposed.toString());
  if (tabs.length) await Promise.resolve(vscode.window.tabGroups.close(tabs)).catch(() => undefined);
}
