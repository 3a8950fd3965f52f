import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createFsBridge, fileType, toFsError } from './fsBridge';
import type { LocalDisk } from './openDocuments';
import { EndOfLine, FileSystemError, FileType, mock, Position, resetMock, Uri, workspace } from './test/vscodeMock';

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

  it('an open, unmodified document: a read is its text (no workspace.fs call); an edit is applied to it as the changed span and saved', async () => {
    const doc = textDocument('/ws/open.txt', 'one\nsecond line\n');
    const { fs, calls } = countingFs();
    const bridge = createFsBridge({ fs, localDisk: memoryDisk });
    expect(await bridge.stat('/ws/open.txt')).toEqual({ type: 'file', size: 16, mtimeMs: 5 });
    expect(dec(await bridge.readFile('/ws/open.txt'))).toBe('one\nsecond line\n');
    await bridge.writeFile('/ws/open.txt', enc('two\nsecond line\n'));
    expect(calls).toEqual([]);
    expect(mock.appliedEdits).toHaveLength(1);
    expect(mock.appliedEdits[0].edits).toEqual([{ uri: doc.uri, range: { start: new Position(0, 0), end: new Position(0, 3) }, newText: 'two' }]);
    expect(doc.saves).toBe(1);
    expect(dec(mock.files.get('/ws/open.txt')!)).toBe('two\nsecond line\n');
  });

  it('a save participant that would change the text: the file is written and the editor reloads it', async () => {
    const doc = textDocument('/ws/open.txt', 'alpha\nbeta');
    mock.config['files.insertFinalNewline'] = true;
    const { fs, calls } = countingFs();
    const bridge = createFsBridge({ fs, localDisk: memoryDisk, editorSyncTimeoutMs: 1000 });
    const done = bridge.writeFile('/ws/open.txt', enc('gamma\nbeta'));
    await waitUntil(() => calls.includes('writeFile'));
    doc.reload();
    await done;
    expect(mock.appliedEdits).toHaveLength(0);
    expect(doc.saves).toBe(0);
    expect(dec(mock.files.get('/ws/open.txt')!)).toBe('gamma\nbeta');
    expect(doc.getText()).toBe('gamma\nbeta');
  });

  it('a document that does not show the file (changed on disk, not reloaded yet) is not read from', async () => {
    textDocument('/ws/stale.txt', 'old text\n');
    mock.files.set('/ws/stale.txt', enc('written by a shell command\n'));
    const { fs, calls } = countingFs();
    const bridge = createFsBridge({ fs, localDisk: memoryDisk });
    expect(dec(await bridge.readFile('/ws/stale.txt'))).toBe('written by a shell command\n');
    expect(calls).toEqual([]); // read from the local disk
  });

  it('a closed file the local disk shows is stat\'ed and read there (no workspace.fs call); a change between the two is read', async () => {
    mock.files.set('/ws/closed.txt', enc('one\n'));
    const { fs, calls } = countingFs();
    const bridge = createFsBridge({ fs, localDisk: memoryDisk });
    expect(await bridge.stat('/ws/closed.txt')).toEqual({ type: 'file', size: 4, mtimeMs: 5 });
    expect(dec(await bridge.readFile('/ws/closed.txt'))).toBe('one\n');
    mock.files.set('/ws/closed.txt', enc('two\n'));
    expect(dec(await bridge.readFile('/ws/closed.txt'))).toBe('two\n');
    // The write still goes through the file service, which the explorer and editors watch.
    await bridge.writeFile('/ws/closed.txt', enc('three\n'));
    expect(calls).toEqual(['writeFile']);
  });

  it('what the local disk cannot see (a directory, a missing file, a virtual file system) is asked of workspace.fs', async () => {
    mock.files.set('/ws/d/f.txt', enc('x'));
    const { fs, calls } = countingFs();
    const bridge = createFsBridge({ fs, localDisk: memoryDisk });
    expect((await bridge.stat('/ws/d')).type).toBe('directory');
    await expect(bridge.readFile('/ws/missing')).rejects.toMatchObject({ code: 'FileNotFound' });
    const blind = createFsBridge({ fs, localDisk: { identity: async () => undefined, read: async () => undefined } });
    expect(await blind.stat('/ws/d/f.txt')).toMatchObject({ type: 'file', size: 1 });
    expect(dec(await blind.readFile('/ws/d/f.txt'))).toBe('x');
    expect(calls).toEqual(['stat', 'readFile', 'stat', 'readFile']);
  });
});

/** A stand-in for node's fs (the disk check of openDocuments.ts) over the mock's in-memory files. */
const memoryDisk: LocalDisk = {
  async identity(p) {
    const d = mock.files.get(p);
    return d ? { key: dec(d), size: d.length, mtimeMs: 5.5 } : undefined;
  },
  async read(p) {
    return mock.files.get(p);
  },
};

/** The mock's workspace.fs, recording each call. */
function countingFs() {
  const calls: string[] = [];
  const base = workspace.fs as any;
  const fs = {
    ...base,
    async stat(uri: Uri) {
      calls.push('stat');
      return base.stat(uri);
    },
    async readFile(uri: Uri) {
      calls.push('readFile');
      return base.readFile(uri);
    },
    async writeFile(uri: Uri, data: Uint8Array) {
      calls.push('writeFile');
      return base.writeFile(uri, data);
    },
  };
  return { fs, calls };
}

async function waitUntil(f: () => boolean) {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(f()).toBe(true);
}

/** An open document (LF lines) over the mock's files: edits make it dirty, save writes the file. */
function textDocument(path: string, text: string) {
  mock.files.set(path, enc(text));
  const offsetAt = (t: string, p: Position) => t.split('\n').slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  const doc = {
    uri: Uri.file(path), isClosed: false, isDirty: false, version: 1, eol: EndOfLine.LF, text, saves: 0,
    getText() { return doc.text; },
    positionAt(offset: number) {
      const before = doc.text.slice(0, offset);
      return new Position(before.split('\n').length - 1, offset - (before.lastIndexOf('\n') + 1));
    },
    applyEdit(range: { start: Position; end: Position }, newText: string) {
      doc.text = doc.text.slice(0, offsetAt(doc.text, range.start)) + newText + doc.text.slice(offsetAt(doc.text, range.end));
      doc.version++;
      doc.isDirty = true;
      mock.onDidChangeTextDocument.fire({ document: doc });
    },
    async save() {
      mock.files.set(path, enc(doc.text));
      doc.isDirty = false;
      doc.saves++;
      return true;
    },
    /** What VS Code does when the file service reports a change of an unmodified document. */
    reload() {
      doc.text = dec(mock.files.get(path)!);
      doc.version++;
      mock.onDidChangeTextDocument.fire({ document: doc });
    },
  };
  mock.textDocuments.push(doc);
  return doc;
}
