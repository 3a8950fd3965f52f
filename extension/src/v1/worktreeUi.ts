import * as path from 'path';
import * as vscode from 'vscode';
import type { ConversationSummary } from '../webview/protocol';
import { applyToWorkspace, ApplyRefused, contentAt, discardWorktree, worktreeChanges, type ChangedFile } from './worktree';

/** The read-only documents of a worktree's base side in the diff editor. */
export const WORKTREE_BASE_SCHEME = 'openhands-worktree-base';

/** A file at a commit of a repository as a URI of WORKTREE_BASE_SCHEME (no commit: an empty side). */
export function baseUri(repo: string, commit: string | undefined, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: WORKTREE_BASE_SCHEME, path: `/${file}`, query: JSON.stringify({ repo, commit: commit ?? '' }) });
}

/** Serves WORKTREE_BASE_SCHEME: a file's content at the worktree's base commit (`git cat-file`). */
export class WorktreeBaseDocuments implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = JSON.parse(uri.query) as { repo: string; commit: string };
    return q.commit ? contentAt(q.repo, q.commit, uri.path.slice(1)) : '';
  }
}

export interface WorktreeCommandDeps {
  /** The conversation the tab shows, as its list has it (its `place`). */
  shown: () => ConversationSummary | undefined;
  /** After Apply or Discard: the list again (places re-read). */
  changed: () => Promise<void>;
  log: { info(m: string): void; warn(m: string): void };
}

type WorktreePlace = { path: string; branch?: string; folder: string };

function worktreeOf(c: ConversationSummary | undefined): WorktreePlace | undefined {
  return c?.place?.kind === 'worktree' ? c.place : undefined;
}

const STATUS_WORD: Record<ChangedFile['status'], string> = { A: 'added', M: 'modified', D: 'deleted', T: 'type changed' };

/**
 * Review changes / Apply to workspace / Discard for the conversation shown when it works in a git
 * worktree (the git work is worktree.ts). Each command answers what it did, for the tests:
 * review the changed files, apply the applied files, discard what it removed (false: nothing).
 */
export function registerWorktreeCommands(deps: WorktreeCommandDeps): vscode.Disposable[] {
  const need = (): { c: ConversationSummary; w: WorktreePlace } | undefined => {
    const c = deps.shown();
    const w = worktreeOf(c);
    if (!c || !w) {
      void vscode.window.showInformationMessage('OpenHands: the conversation shown does not work in a git worktree.');
      return undefined;
    }
    return { c, w };
  };
  const branchName = (w: WorktreePlace) => w.branch ?? path.basename(w.path);
  return [
    vscode.workspace.registerTextDocumentContentProvider(WORKTREE_BASE_SCHEME, new WorktreeBaseDocuments()),
    vscode.commands.registerCommand('openhands.v1.reviewWorktree', async () => {
      const it = need();
      if (!it) return undefined;
      const ch = await worktreeChanges(it.w.path, it.w.folder);
      if (!ch.files.length) {
        void vscode.window.showInformationMessage(`OpenHands: the worktree of ${branchName(it.w)} has no changes.`);
        return [];
      }
      const open = (f: ChangedFile, preview: boolean) => {
        const left = baseUri(ch.worktree, f.status === 'A' ? undefined : ch.base, f.path);
        const right = f.status === 'D' ? baseUri(ch.worktree, undefined, f.path) : vscode.Uri.file(path.join(ch.worktree, f.path));
        return vscode.commands.executeCommand('vscode.diff', left, right, `${f.path} (${STATUS_WORD[f.status]} in ${branchName(it.w)})`, { preview, preserveFocus: true });
      };
      // One pick per file; it stays open, so the user steps through the files.
      const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { file: ChangedFile }>();
      pick.title = `Changes of ${branchName(it.w)} against ${ch.base.slice(0, 10)}`;
      pick.items = ch.files.map((f) => ({ label: f.path, description: STATUS_WORD[f.status], file: f }));
      pick.ignoreFocusOut = true;
      pick.onDidChangeActive((a) => a[0] && void open(a[0].file, true));
      pick.onDidAccept(() => pick.selectedItems[0] && void open(pick.selectedItems[0].file, false));
      pick.onDidHide(() => pick.dispose());
      pick.show();
      return ch.files;
    }),
    vscode.commands.registerCommand('openhands.v1.applyWorktree', async () => {
      const it = need();
      if (!it) return undefined;
      try {
        const applied = await applyToWorkspace(it.w.path, it.w.folder);
        const n = applied.files.length;
        deps.log.info(`applied ${n} file(s) of the worktree ${it.w.path} to ${applied.target}`);
        void vscode.window.showInformationMessage(n ? `OpenHands: ${n} file(s) of ${branchName(it.w)} applied to ${applied.target} (uncommitted changes there).` : `OpenHands: the worktree of ${branchName(it.w)} has no changes to apply.`);
        await deps.changed();
        return applied.files;
      } catch (e) {
        const message = (e as Error).message;
        deps.log.warn(`apply of the worktree ${it.w.path}: ${message}`);
        const actions = e instanceof ApplyRefused ? ['Review Changes'] : [];
        void vscode.window.showErrorMessage(`OpenHands: ${message}`, ...actions).then((a) => {
          if (a) void vscode.commands.executeCommand('openhands.v1.reviewWorktree');
        });
        return e instanceof ApplyRefused ? { refused: e.reason, files: e.files, message } : { error: message };
      }
    }),
    vscode.commands.registerCommand('openhands.v1.discardWorktree', async () => {
      const it = need();
      if (!it) return false;
      if (it.c.status === 'running') {
        void vscode.window.showWarningMessage('OpenHands: the conversation is running in this worktree: stop it first.');
        return false;
      }
      // A warning notification, as Delete Conversation and the consent prompts: VS Code's test
      // hosts refuse modal dialogs, and the real-host suite discards through this one.
      const answer = await vscode.window.showWarningMessage(
        `Discard the worktree of "${it.c.title}" (${it.c.id.slice(0, 8)})? This removes ${it.w.path} with every change in it${it.w.branch ? ` and deletes the branch ${it.w.branch}` : ''}; it cannot be undone.`,
        'Discard',
        'Cancel',
      );
      if (answer !== 'Discard') return false;
      const gone = await discardWorktree(it.w.path, it.w.folder);
      deps.log.info(`discarded the worktree ${gone.worktree}${gone.branch ? ` and the branch ${gone.branch}` : ''}`);
      await deps.changed();
      return gone;
    }),
  ];
}
