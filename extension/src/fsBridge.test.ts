import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createFsBridge, fileType, toFsError } from './fsBridge';
import { FileSystemError, FileType, mock, resetMock } from './test/vscodeMock';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe('fs bridge', () => {
  beforeEach(() => resetMock());

  it('reads, writes, stats and lists through workspace.fs', async () => {
    const fs = createFsBridge();
    await fs.writeFile('/ws/a/b.txt', enc('hello'));
    expect(dec(await fs.readFile('/ws/a/b.txt'))).toBe('hello');
    const st = await fs.stat('/ws/a/b.txt');
    expect(st).toEqual({ type: 'file', size: 5, mtimeMs: 2 });
    expect((await fs.stat('/ws/a')).type).toBe('directory');
    expect(await fs.readDirectory('/ws')).toEqual([{ name: 'a', type: 'directory' }]);
    await fs.rename('/ws/a/b.txt', '/ws/c.txt');
    expect(mock.files.has('/ws/c.txt')).toBe(true);
    await fs.delete('/ws/c.txt');
    expect(mock.files.size).toBe(0);
  });

  it('rejects with the original code (the addon maps codes in one place) and says which operation failed', async () => {
    const fs = createFsBridge();
    await expect(fs.readFile('/ws/missing')).rejects.toMatchObject({ code: 'FileNotFound', message: expect.stringMatching(/^readFile \/ws\/missing: /) });
    await fs.writeFile('/ws/x', enc('1'));
    await fs.writeFile('/ws/y', enc('2'));
    // POSIX rename: an existing target is replaced.
    await fs.rename('/ws/x', '/ws/y');
    expect(dec(mock.files.get('/ws/y')!)).toBe('1');
    expect(toFsError(FileSystemError.FileIsADirectory('/d'), 'readFile', '/d').code).toBe('FileIsADirectory');
    expect(toFsError(Object.assign(new Error('x'), { code: 'EACCES' }), 'op', '/p').code).toBe('EACCES');
    expect(toFsError(new Error('weird ENOENT'), 'op', '/p').code).toBeUndefined();
  });

  it('reports the contract file types for vscode.FileType bits', () => {
    expect(fileType(FileType.File)).toBe('file');
    expect(fileType(FileType.Directory | FileType.SymbolicLink)).toBe('directory');
    expect(fileType(FileType.SymbolicLink)).toBe('other');
    expect(fileType(FileType.Unknown)).toBe('other');
  });

  it('waits for an open, unmodified editor to show the new text', async () => {
    const doc = { uri: { toString: () => 'file:///ws/open.txt' }, isClosed: false, isDirty: false, text: 'old', getText() { return this.text; } };
    mock.textDocuments.push(doc);
    const fs = createFsBridge({ editorSyncTimeoutMs: 1000 });
    const done = fs.writeFile('/ws/open.txt', enc('new'));
    setTimeout(() => { doc.text = 'new'; mock.onDidChangeTextDocument.fire({ document: doc }); }, 20);
    await done;
    expect(doc.getText()).toBe('new');
  });

  it('reports a write to a file with unsaved changes', async () => {
    const doc = { uri: { toString: () => 'file:///ws/dirty.txt' }, isClosed: false, isDirty: true, getText: () => 'user' };
    mock.textDocuments.push(doc);
    const conflict = vi.fn();
    const fs = createFsBridge({ onDirtyConflict: conflict });
    await fs.writeFile('/ws/dirty.txt', enc('agent'));
    expect(conflict).toHaveBeenCalledTimes(1);
    expect(dec(mock.files.get('/ws/dirty.txt')!)).toBe('agent');
  });
});
