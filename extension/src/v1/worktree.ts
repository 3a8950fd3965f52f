import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * A conversation's git worktree as the tab acts on it (no `vscode` here): where it is and on
 * which branch, its changes against the commit it was made from (Review changes), those changes
 * carried onto the window's folder (Apply to workspace) and its removal with its branch (Discard).
 *
 * The worktree is the agent's: its files, and the repository's config and hooks, may have been
 * written by the agent. So git runs here without the fsmonitor hook and without hooks
 * (`core.fsmonitor=false`, `core.hooksPath=/dev/null`), and diffs without external diff drivers or
 * textconv: nothing the agent wrote runs in the extension host by being looked at.
 */

/** What the changes of a worktree are measured against and what they are. */
export interface WorktreeChanges {
  /** The worktree's top folder. */
  worktree: string;
  /** The commit the worktree's branch was made from. */
  base: string;
  /**
   * The worktree as it is now as a git tree: its commits, uncommitted changes and untracked files
   * (ignored files excepted), written to the object store under a throw-away index.
   */
  tree: string;
  files: ChangedFile[];
}

export interface ChangedFile {
  /** `A` added (also untracked), `M` modified (content or mode), `D` deleted, `T` type changed. */
  status: 'A' | 'M' | 'D' | 'T';
  /** Relative to the repository's top, with `/`. */
  path: string;
}

/** Apply refused: nothing was changed in the window's folder. */
export class ApplyRefused extends Error {
  constructor(message: string, readonly reason: 'dirty' | 'conflict', readonly files: string[]) {
    super(message);
  }
}

const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.quotePath=false'];

interface GitOptions {
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Answer the failure's output instead of throwing. */
  allowFail?: boolean;
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One git command in `cwd`; throws with git's message when it fails (unless `allowFail`). */
export function git(cwd: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...SAFE, '-C', cwd, ...args],
      { timeout: 60000, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', ...opts.env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
        const r = { code, stdout: String(stdout), stderr: String(stderr) };
        if (err && !opts.allowFail) reject(new Error(`git ${args[0]} failed: ${r.stderr.trim() || err.message}`));
        else resolve(r);
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}

async function out(cwd: string, args: string[]): Promise<string | undefined> {
  const r = await git(cwd, args, { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** The top folder of the work tree holding `dir`. */
export async function topOf(dir: string): Promise<string> {
  const top = await out(dir, ['rev-parse', '--path-format=absolute', '--show-toplevel']);
  if (!top) throw new Error(`${dir} is not in a git work tree`);
  return fs.realpathSync(top);
}

/** The branch checked out in the work tree at `dir` (undefined: detached, or not a repository). */
export function branchOf(dir: string): Promise<string | undefined> {
  return out(dir, ['symbolic-ref', '--short', '-q', 'HEAD']);
}

/**
 * The commit the worktree's branch was made from: the oldest entry of the branch's reflog (git
 * writes one when `git worktree add -b` creates it), else where the worktree's HEAD meets the
 * window folder's HEAD (`mainDir`).
 */
export async function baseOf(worktree: string, mainDir: string, branch?: string): Promise<string> {
  const b = branch ?? (await branchOf(worktree));
  if (b) {
    const log = await out(worktree, ['reflog', 'show', '--format=%H', `refs/heads/${b}`, '--']);
    const oldest = log?.split('\n').filter(Boolean).pop();
    if (oldest) return oldest;
  }
  const mainHead = await out(mainDir, ['rev-parse', 'HEAD']);
  const base = mainHead ? await out(worktree, ['merge-base', 'HEAD', mainHead]) : undefined;
  if (!base) throw new Error(`no base commit found for the worktree ${worktree}`);
  return base;
}

/** Runs `f` with the path of a throw-away index file (a copy of `from`, if it exists). */
async function withScratchIndex<T>(from: string | undefined, f: (index: string) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-index-'));
  const index = path.join(dir, 'index');
  try {
    if (from && fs.existsSync(from)) {
      fs.copyFileSync(from, index);
      // The copy keeps the index's mtime: git takes an entry as "racily clean" (and compares the
      // file's content) when the file's mtime is not older than the index's. A copy stamped now
      // would make a file changed in the same clock tick as the index was written, to the same
      // size, look unchanged (a missed change: seen under load in `make test`).
      const { atime, mtime } = fs.statSync(from);
      fs.utimesSync(index, atime, mtime);
    }
    return await f(index);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The index file of the work tree at `top`. */
async function indexOf(top: string): Promise<string | undefined> {
  const p = await out(top, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
  return p || undefined;
}

/**
 * The work tree at `top` as a git tree: HEAD plus every change and untracked file (not ignored
 * ones). Staged through a copy of its index (the stat cache: only changed files are read), so the
 * work tree's own index is never touched.
 */
export async function snapshotTree(top: string): Promise<string> {
  return withScratchIndex(await indexOf(top), async (index) => {
    const env = { GIT_INDEX_FILE: index };
    await git(top, ['add', '-A', '--', '.'], { env });
    return (await git(top, ['write-tree'], { env })).stdout.trim();
  });
}

function parseNameStatus(z: string): ChangedFile[] {
  const parts = z.split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const s = parts[i].charAt(0);
    const status = s === 'A' || s === 'D' || s === 'T' ? s : 'M';
    files.push({ status, path: parts[i + 1] });
  }
  return files;
}

/** The worktree's changes against its base commit, file by file (added, untracked, modified, deleted). */
export async function worktreeChanges(worktreeDir: string, mainDir: string): Promise<WorktreeChanges> {
  const worktree = await topOf(worktreeDir);
  const base = await baseOf(worktree, mainDir);
  const tree = await snapshotTree(worktree);
  const diff = await git(worktree, ['diff', '--no-ext-diff', '--no-textconv', '--no-renames', '--name-status', '-z', base, tree]);
  return { worktree, base, tree, files: parseNameStatus(diff.stdout) };
}

/** A file's content at `commit` (empty when it did not exist there), for the diff editor's left side. */
export async function contentAt(repoDir: string, commit: string, file: string): Promise<string> {
  const r = await git(repoDir, ['cat-file', 'blob', `${commit}:${file}`], { allowFail: true });
  return r.code === 0 ? r.stdout : '';
}

/** The paths git reports as changed, staged or untracked in the work tree at `top`. */
async function uncommitted(top: string): Promise<Set<string>> {
  const s = await git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
  const set = new Set<string>();
  for (const entry of s.stdout.split('\0')) if (entry.length > 3) set.add(entry.slice(3));
  return set;
}

/** What `applyToWorkspace` did. */
export interface Applied {
  /** The window folder's work tree top, where the files were written. */
  target: string;
  files: ChangedFile[];
}

/**
 * Carries the worktree's changes (against its base) onto the work tree of `mainDir`, as
 * uncommitted changes there (its index and HEAD are left as they are).
 *
 * Refused, changing nothing, when a file the worktree changed has uncommitted changes (or is
 * untracked) in the main folder: the user's work is never overwritten. Otherwise the patch is
 * applied to a scratch copy of the main folder's index first, with a three-way merge where the
 * main folder's HEAD moved on since the base (`git apply --3way --cached`); a conflict there is
 * refused with the files it concerns, and nothing was changed. Only a clean result is written
 * to the main folder's files (`checkout-index` from the scratch index; deletions removed).
 */
export async function applyToWorkspace(worktreeDir: string, mainDir: string): Promise<Applied> {
  const target = await topOf(mainDir);
  const ch = await worktreeChanges(worktreeDir, mainDir);
  if (ch.worktree === target) throw new Error('the worktree is the window folder itself');
  if (!ch.files.length) return { target, files: [] };
  const dirty = await uncommitted(target);
  const clash = ch.files.map((f) => f.path).filter((p) => dirty.has(p));
  if (clash.length) {
    throw new ApplyRefused(
      `Not applied: the workspace has uncommitted changes to ${clash.length === 1 ? 'a file' : 'files'} the worktree changed too: ${clash.join(', ')}. Commit or stash them first.`,
      'dirty',
      clash,
    );
  }
  const patch = (await git(ch.worktree, ['diff', '--no-ext-diff', '--no-textconv', '--no-renames', '--binary', '--full-index', ch.base, ch.tree])).stdout;
  return withScratchIndex(await indexOf(target), async (index) => {
    const env = { GIT_INDEX_FILE: index };
    const r = await git(target, ['apply', '--cached', '--3way', '--whitespace=nowarn', '-'], { env, input: patch, allowFail: true });
    if (r.code !== 0) {
      const conflicted = [...new Set([...r.stderr.matchAll(/^U (.+)$/gm)].map((m) => m[1]))];
      const files = conflicted.length ? conflicted : ch.files.map((f) => f.path);
      throw new ApplyRefused(
        `Not applied: the worktree's changes conflict with the workspace in ${files.join(', ')} (the workspace changed the same lines since the worktree was made). Nothing was changed; merge the branch by hand.`,
        'conflict',
        files,
      );
    }
    const written = ch.files.filter((f) => f.status !== 'D').map((f) => f.path);
    if (written.length) await git(target, ['checkout-index', '-f', '-z', '--stdin'], { env, input: written.join('\0') });
    for (const f of ch.files.filter((x) => x.status === 'D')) fs.rmSync(path.join(target, f.path), { force: true });
    return { target, files: ch.files };
  });
}

/** What `discardWorktree` removed. */
export interface Discarded {
  worktree: string;
  branch?: string;
}

/**
 * Removes the worktree (with its uncommitted changes: `git worktree remove --force`) and the
 * branch it had checked out (`git branch -D`). Only a linked worktree of `mainDir`'s repository:
 * never the main one.
 */
export async function discardWorktree(worktreeDir: string, mainDir: string): Promise<Discarded> {
  const worktree = await topOf(worktreeDir);
  const mainTop = await topOf(mainDir);
  const list = (await git(mainTop, ['worktree', 'list', '--porcelain'])).stdout;
  const tops = list.split('\n').filter((l) => l.startsWith('worktree ')).map((l) => l.slice('worktree '.length));
  const real = tops.map((t) => (fs.existsSync(t) ? fs.realpathSync(t) : t));
  if (!real.slice(1).includes(worktree)) throw new Error(`${worktree} is not a linked worktree of ${mainTop}'s repository`);
  const branch = await branchOf(worktree);
  await git(mainTop, ['worktree', 'remove', '--force', worktree]);
  if (branch) await git(mainTop, ['branch', '-D', branch]);
  return { worktree, branch };
}
