import { describe, expect, it } from 'vitest';
import { applyHunk, diffHunks, TurnChanges } from './turnChanges';

const edit = (path: string, old_content: string, new_content: string) => ({
  observation: 'edit',
  extras: { path, old_content, new_content },
});

describe('diffHunks / applyHunk', () => {
  it('finds each changed region as its own hunk, with its lines on both sides', () => {
    const before = 'a\nb\nc\nd\ne\nf';
    const after = 'a\nB\nc\nd\nf\ng';
    const hunks = diffHunks(before, after);
    expect(hunks).toEqual([
      { beforeStart: 1, beforeLines: ['b'], afterStart: 1, afterLines: ['B'] },
      { beforeStart: 4, beforeLines: ['e'], afterStart: 4, afterLines: [] },
      { beforeStart: 6, beforeLines: [], afterStart: 5, afterLines: ['g'] },
    ]);
    expect(diffHunks(before, before)).toEqual([]);
  });

  it('undoing one hunk restores exactly that hunk and leaves the others', () => {
    const before = 'a\nb\nc\nd\ne';
    const after = 'a\nB\nc\nd\nE';
    const [first, second] = diffHunks(before, after);
    expect(applyHunk(after, first, true)).toBe('a\nb\nc\nd\nE');
    expect(applyHunk(after, second, true)).toBe('a\nB\nc\nd\ne');
    // The text moved on since: the hunk no longer applies, nothing is guessed.
    expect(applyHunk('a\nX\nc\nd\nE', first, true)).toBeUndefined();
  });
});

describe('TurnChanges', () => {
  it('the first edit of a file in a turn gives its text before the turn; later edits do not move it', () => {
    const t = new TurnChanges();
    expect(t.record(edit('/w/f.py', 'one\ntwo\n', 'one\n2\n'))).toBe(true);
    t.record(edit('/w/f.py', 'one\n2\n', 'one\n2\nthree\n'));
    expect(t.baseline('/w/f.py')).toBe('one\ntwo\n');
    expect(t.hunks('/w/f.py', 'one\n2\nthree\n')).toHaveLength(1);
    expect(t.record({ observation: 'run', extras: { command: 'ls' } })).toBe(false);
    expect(t.record({ observation: 'edit', extras: { path: '/w/g', content: 'no contents' } })).toBe(false);
    t.sent();
    expect(t.paths()).toEqual([]);
  });

  it('keep makes a hunk part of the accepted text; the other stays offered', () => {
    const t = new TurnChanges();
    t.record(edit('/w/f', 'a\nb\nc\nd', 'A\nb\nc\nD'));
    const [first] = t.hunks('/w/f', 'A\nb\nc\nD');
    expect(t.keep('/w/f', first)).toBe(true);
    expect(t.hunks('/w/f', 'A\nb\nc\nD')).toEqual([{ beforeStart: 3, beforeLines: ['d'], afterStart: 3, afterLines: ['D'] }]);
    t.keepAll(() => 'A\nb\nc\nD');
    expect(t.hunks('/w/f', 'A\nb\nc\nD')).toEqual([]);
  });

  it('undone hunks reach the agent once, with the file, the lines and both sides', () => {
    const t = new TurnChanges();
    t.record(edit('/w/src/app.py', 'x = 1\ny = 2', 'x = 1\ny = 3'));
    const [h] = t.hunks('/w/src/app.py', 'x = 1\ny = 3');
    t.rejected('/w/src/app.py', h);
    const text = t.feedback((p) => p.replace('/w/', ''));
    expect(text).toContain('src/app.py, lines 2-2 of your version');
    expect(text).toContain('```\ny = 3\n```\nwas undone; the file has again\n```\ny = 2\n```');
    expect(text).toMatch(/Do not make them again/);
    expect(t.feedback()).toBe(text?.replace('src/app.py', '/w/src/app.py'));
    t.sent();
    expect(t.feedback()).toBeUndefined();
  });

  it('lists each changed file with its counts, following the agent\'s edits, the editor and Keep', () => {
    const t = new TurnChanges();
    t.record(edit('/w/a.py', 'a\nb\nc\nd', 'A\nb\nc\nd'));
    t.record(edit('/w/b.py', 'x', 'x\ny\nz'));
    t.record(edit('/w/a.py', 'A\nb\nc\nd', 'A\nb\nc'));
    const label = (p: string) => p.replace('/w/', '');
    expect(t.summary(label)).toEqual([
      { path: '/w/a.py', label: 'a.py', added: 1, removed: 2, hunks: 2 },
      { path: '/w/b.py', label: 'b.py', added: 2, removed: 0, hunks: 1 },
    ]);
    // The person undid the first hunk of a.py in the editor: one hunk left there.
    expect(t.observe('/w/a.py', 'a\nb\nc')).toBe(true);
    expect(t.observe('/w/a.py', 'a\nb\nc')).toBe(false);
    expect(t.observe('/w/other.py', 'anything')).toBe(false);
    expect(t.summary(label)[0]).toEqual({ path: '/w/a.py', label: 'a.py', added: 0, removed: 1, hunks: 1 });
    // Keeping b.py's one hunk leaves nothing to review there: it goes from the list.
    const [h] = t.hunks('/w/b.py', 'x\ny\nz');
    t.keep('/w/b.py', h);
    expect(t.summary(label).map((f) => f.label)).toEqual(['a.py']);
    t.keepAll(() => 'a\nb\nc');
    expect(t.summary(label)).toEqual([]);
    t.record(edit('/w/c.py', '', 'new'));
    t.sent();
    expect(t.summary(label)).toEqual([]);
  });
});
