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
});
