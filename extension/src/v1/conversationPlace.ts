import type { ConversationPlace } from '../webview/protocol';
import { checkWorkspace } from './workspaceCheck';
import { branchOf } from './worktree';

/**
 * Where a conversation working in `dir` (the agent-server's `workspace.working_dir`) works for a
 * window with folders `roots`: one of them, a git worktree of their repository (decided by git,
 * as the executor pool decides it: workspaceCheck.ts) with the branch checked out there, or
 * elsewhere (another project, or a worktree that is gone).
 */
export async function placeOf(dir: string, roots: string[]): Promise<ConversationPlace> {
  const v = await checkWorkspace(dir, roots);
  if ('refused' in v) return { kind: 'elsewhere', path: dir };
  if (!v.worktree) return { kind: 'workspace', folder: v.root };
  return { kind: 'worktree', path: v.root, branch: await branchOf(v.root), folder: v.folder ?? roots[0] };
}

/**
 * `placeOf` for the conversation list, which is reloaded every few seconds: each folder's answer
 * is kept for `ttlMs` (a branch the agent switched shows after that), and `forget` drops it at
 * once (after Discard).
 */
export class ConversationPlaces {
  private readonly cache = new Map<string, { at: number; place: Promise<ConversationPlace> }>();

  constructor(
    private readonly roots: () => string[],
    private readonly ttlMs = 10000,
    private readonly now: () => number = Date.now,
  ) {}

  get(dir: string): Promise<ConversationPlace> {
    const hit = this.cache.get(dir);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.place;
    const place = placeOf(dir, this.roots());
    this.cache.set(dir, { at: this.now(), place });
    return place;
  }

  forget(): void {
    this.cache.clear();
  }
}
