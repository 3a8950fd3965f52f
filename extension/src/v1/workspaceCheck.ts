import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { WorkspaceVerdict } from './executorPool';

/** One git command's trimmed output, undefined when it fails (not a repository, no git). */
function git(cwd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['-C', cwd, ...args], { timeout: 10000, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }, (err, stdout) =>
      resolve(err ? undefined : stdout.trim()),
    );
  });
}

function real(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Where the executor of a conversation whose tools work in `workspace` (its discovery file's
 * `workspace`) may run, given the window's folders `roots` (the first is where the tab's
 * conversations work):
 *
 * - one of the window's folders (compared as real paths): there;
 * - a git worktree of the repository of one of the window's folders (a conversation created with
 *   `worktree: true`: the agent-server made it on branch `openhands/<id>`): there. Decided by git,
 *   not by how the path is spelt: the worktree's common git folder is the window's, and the
 *   window's repository lists the worktree (`git worktree list`);
 * - anything else is refused with the reason: another project's conversation on a shared
 *   discovery folder must not run its shell and file edits in this window.
 */
export async function checkWorkspace(workspace: string, roots: string[]): Promise<WorkspaceVerdict> {
  if (!workspace || !path.isAbsolute(workspace)) return { refused: `the conversation's workspace "${workspace}" is not an absolute path` };
  const target = real(workspace);
  if (!target) return { refused: `the conversation's workspace ${workspace} does not exist` };
  if (!roots.length) return { refused: 'this window has no folder open' };
  for (const root of roots) if (real(root) === target) return { root };
  const common = await git(target, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  const top = await git(target, ['rev-parse', '--path-format=absolute', '--show-toplevel']);
  const worktreeTop = top ? real(top) : undefined;
  if (common && worktreeTop) {
    for (const root of roots) {
      const rootCommon = await git(root, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
      const rootTop = await git(root, ['rev-parse', '--path-format=absolute', '--show-toplevel']);
      const rootReal = real(root);
      if (!rootCommon || !rootTop || !rootReal || real(rootCommon) !== real(common)) continue;
      // Another worktree than the window's own, at the window folder's place in it (the
      // agent-server keeps a folder's path inside the repository).
      if (real(rootTop) === worktreeTop) continue;
      if (path.relative(worktreeTop, target) !== path.relative(real(rootTop)!, rootReal)) continue;
      const list = (await git(root, ['worktree', 'list', '--porcelain'])) ?? '';
      const listed = list.split('\n').filter((l) => l.startsWith('worktree ')).map((l) => real(l.slice('worktree '.length)));
      if (listed.includes(worktreeTop)) return { root: target, worktree: true, folder: root };
    }
  }
  return { refused: `the conversation works in ${workspace}, which is neither a folder of this window nor a git worktree of its repository` };
}
