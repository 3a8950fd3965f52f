import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationPlaces, placeOf } from './conversationPlace';
import { applyToWorkspace, ApplyRefused, branchOf, contentAt, discardWorktree, worktreeChanges } from './worktree';

/**
 * Real git repositories in temp folders: a "window folder" repository and a worktree of it made
 * the way the agent-server makes one for a `worktree: true` conversation (`git worktree add -b
 * openhands/<id> <dir> main`).
 */

const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', GIT_CONFIG_NOSYSTEM: '1' };
const sh = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { stdio: 'pipe', env: ENV }).toString();
const write = (dir: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
};
const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');
const ID = '0b6a4f3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
const BRANCH = `openhands/${ID}`;

let tmp: string;
let main: string;
let wt: string;

/** Every file of a folder (but .git) with its content, and git's view of it: what "changed nothing" compares. */
function state(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.push(`${path.relative(dir, p)}=${fs.readFileSync(p, 'utf8')}`);
    }
  };
  walk(dir);
  return [files.join('\n'), sh(dir, 'status', '--porcelain'), sh(dir, 'rev-parse', 'HEAD'), sh(dir, 'ls-files', '-s')].join('\n--\n');
}

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'oh-worktree-')));
  main = path.join(tmp, 'project');
  fs.mkdirSync(main);
  sh(main, 'init', '-q', '-b', 'main');
  write(main, 'a.txt', 'one\ntwo\nthree\n');
  write(main, 'b.txt', 'bee\n');
  write(main, 'keep.txt', 'keep\n');
  write(main, '.gitignore', '*.log\n');
  sh(main, 'add', '.');
  sh(main, 'commit', '-qm', 'base');
  wt = path.join(tmp, 'conversation-worktrees', ID, 'project');
  sh(main, 'worktree', 'add', '-q', '-b', BRANCH, wt, 'main');
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The agent's work in the worktree: an edit, a deletion, a committed new file, an untracked one, an ignored one. */
function agentWorks(): void {
  write(wt, 'a.txt', 'one\nTWO\nthree\n');
  fs.rmSync(path.join(wt, 'b.txt'));
  write(wt, 'src/c.txt', 'sea\n');
  sh(wt, 'add', 'src/c.txt');
  sh(wt, 'commit', '-qm', 'agent: c');
  write(wt, 'd.txt', 'dee\n');
  write(wt, 'build.log', 'ignored\n');
}

describe('worktreeChanges (Review changes)', () => {
  it('lists every file the worktree changed against its base: modified, deleted, added (committed or untracked), not ignored ones', async () => {
    const base = sh(main, 'rev-parse', 'HEAD').trim();
    // The window folder moves on after the worktree was made: the base stays the worktree's.
    write(main, 'keep.txt', 'kept\n');
    sh(main, 'commit', '-qam', 'main moves on');
    agentWorks();
    const before = sh(wt, 'status', '--porcelain');
    const ch = await worktreeChanges(wt, main);
    expect(ch.base).toBe(base);
    expect(ch.worktree).toBe(wt);
    expect(ch.files).toEqual([
      { status: 'M', path: 'a.txt' },
      { status: 'D', path: 'b.txt' },
      { status: 'A', path: 'd.txt' },
      { status: 'A', path: 'src/c.txt' },
    ]);
    expect(await contentAt(wt, ch.base, 'a.txt')).toBe('one\ntwo\nthree\n');
    expect(await contentAt(wt, ch.base, 'd.txt')).toBe('');
    // Looking changed nothing in the worktree (its own index is not used).
    expect(sh(wt, 'status', '--porcelain')).toBe(before);
    expect(await branchOf(wt)).toBe(BRANCH);
  });

  it('runs nothing the repository config names (fsmonitor) while looking', async () => {
    const marker = path.join(tmp, 'fsmonitor-ran');
    const hook = path.join(tmp, 'fsmonitor.sh');
    fs.writeFileSync(hook, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
    agentWorks();
    // Set after the test's own git commands (which would run it).
    sh(main, 'config', 'core.fsmonitor', hook);
    await worktreeChanges(wt, main);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("sees a change made in the same clock tick as the worktree's index, to the same size (git's racy-clean check)", async () => {
    // Stamped as one tick: the file and the index at the same second, the change keeping the
    // file's size and mtime (a coarse clock); ctime is not compared, as when it ticks with them.
    sh(main, 'config', 'core.trustctime', 'false');
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000 - 100_000);
    fs.utimesSync(path.join(wt, 'a.txt'), tick, tick);
    sh(wt, 'update-index', '--refresh');
    fs.utimesSync(sh(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index').trim(), tick, tick);
    write(wt, 'a.txt', 'ONE\ntwo\nthree\n');
    fs.utimesSync(path.join(wt, 'a.txt'), tick, tick);
    expect(sh(wt, 'diff-files', '--name-only')).toBe('a.txt\n'); // git itself sees it (without rewriting the index)
    expect((await worktreeChanges(wt, main)).files.map((f) => f.path)).toEqual(['a.txt']);
  });
});

describe('applyToWorkspace (Apply to workspace)', () => {
  it('applies the changes onto the window folder as uncommitted changes, its HEAD and index left alone', async () => {
    write(main, 'keep.txt', 'kept\n');
    sh(main, 'commit', '-qam', 'main moves on');
    const head = sh(main, 'rev-parse', 'HEAD');
    const index = sh(main, 'ls-files', '-s');
    agentWorks();
    const applied = await applyToWorkspace(wt, main);
    expect(applied.target).toBe(main);
    expect(applied.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt', 'd.txt', 'src/c.txt']);
    expect(read(main, 'a.txt')).toBe('one\nTWO\nthree\n');
    expect(fs.existsSync(path.join(main, 'b.txt'))).toBe(false);
    expect(read(main, 'src/c.txt')).toBe('sea\n');
    expect(read(main, 'd.txt')).toBe('dee\n');
    expect(read(main, 'keep.txt')).toBe('kept\n');
    expect(fs.existsSync(path.join(main, 'build.log'))).toBe(false);
    expect(sh(main, 'rev-parse', 'HEAD')).toBe(head);
    expect(sh(main, 'ls-files', '-s')).toBe(index);
    expect(sh(main, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' D b.txt', ' M a.txt', '?? d.txt', '?? src/']);
  });

  it('merges where the window folder changed other lines of the same file since the base', async () => {
    write(main, 'a.txt', 'one\ntwo\nthree\nfour\n');
    sh(main, 'commit', '-qam', 'main adds a line');
    write(wt, 'a.txt', 'ONE\ntwo\nthree\n');
    await applyToWorkspace(wt, main);
    expect(read(main, 'a.txt')).toBe('ONE\ntwo\nthree\nfour\n');
  });

  it('reports a conflict with the file it concerns and changes nothing', async () => {
    write(main, 'a.txt', 'one\nzwei\nthree\n');
    sh(main, 'commit', '-qam', 'main changes the same line');
    agentWorks();
    const before = state(main);
    const e = await applyToWorkspace(wt, main).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApplyRefused);
    expect((e as ApplyRefused).reason).toBe('conflict');
    expect((e as ApplyRefused).files).toEqual(['a.txt']);
    expect((e as ApplyRefused).message).toMatch(/conflict.*a\.txt/);
    expect(state(main)).toBe(before);
  });

  it('refuses, naming them, when the window folder has uncommitted changes to files the worktree changed', async () => {
    agentWorks();
    write(main, 'a.txt', 'my own edit\n');
    write(main, 'd.txt', 'my own new file\n');
    write(main, 'keep.txt', 'an unrelated edit\n');
    const before = state(main);
    const e = await applyToWorkspace(wt, main).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApplyRefused);
    expect((e as ApplyRefused).reason).toBe('dirty');
    expect((e as ApplyRefused).files).toEqual(['a.txt', 'd.txt']);
    expect((e as ApplyRefused).message).toContain('a.txt, d.txt');
    expect(state(main)).toBe(before);
  });

  it('applies a staged file of the window folder untouched when the worktree did not change it', async () => {
    write(main, 'keep.txt', 'staged\n');
    sh(main, 'add', 'keep.txt');
    write(wt, 'a.txt', 'changed\n');
    await applyToWorkspace(wt, main);
    expect(read(main, 'a.txt')).toBe('changed\n');
    expect(sh(main, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([' M a.txt', 'M  keep.txt']);
  });
});

describe('discardWorktree (Discard)', () => {
  it('removes the worktree with its changes and its branch', async () => {
    agentWorks();
    const gone = await discardWorktree(wt, main);
    expect(gone).toEqual({ worktree: wt, branch: BRANCH });
    expect(fs.existsSync(wt)).toBe(false);
    expect(sh(main, 'branch', '--list', BRANCH)).toBe('');
    expect(sh(main, 'worktree', 'list', '--porcelain')).not.toContain(wt);
    // The window folder is as it was.
    expect(sh(main, 'status', '--porcelain')).toBe('');
  });

  it('refuses the window folder itself and runs no hook of the repository', async () => {
    await expect(discardWorktree(main, main)).rejects.toThrow(/not a linked worktree/);
    const marker = path.join(tmp, 'hook-ran');
    const hooks = sh(main, 'rev-parse', '--path-format=absolute', '--git-path', 'hooks').trim();
    fs.mkdirSync(hooks, { recursive: true });
    fs.writeFileSync(path.join(hooks, 'reference-transaction'), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    await discardWorktree(wt, main);
    expect(fs.existsSync(marker)).toBe(false);
    expect(sh(main, 'branch', '--list', BRANCH)).toBe('');
  });
});

describe('placeOf (where the list says a conversation works)', () => {
  it('tells the workspace, a worktree of its repository with its branch, and another folder apart', async () => {
    expect(await placeOf(main, [main])).toEqual({ kind: 'workspace', folder: main });
    expect(await placeOf(wt, [main])).toEqual({ kind: 'worktree', path: wt, branch: BRANCH, folder: main });
    sh(wt, 'checkout', '-q', '--detach');
    expect(await placeOf(wt, [main])).toEqual({ kind: 'worktree', path: wt, branch: undefined, folder: main });
    const other = path.join(tmp, 'other');
    fs.mkdirSync(other);
    expect(await placeOf(other, [main])).toEqual({ kind: 'elsewhere', path: other });
  });

  it('keeps an answer for its time to live, then asks git again', async () => {
    let now = 0;
    const places = new ConversationPlaces(() => [main], 1000, () => now);
    expect(await places.get(wt)).toMatchObject({ kind: 'worktree', branch: BRANCH });
    sh(wt, 'checkout', '-q', '-b', 'agent-branch');
    expect(await places.get(wt)).toMatchObject({ branch: BRANCH });
    now = 1000;
    expect(await places.get(wt)).toMatchObject({ branch: 'agent-branch' });
  });
});
