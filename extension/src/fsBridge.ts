import * as vscode from 'vscode';
import type { Logger } from './logging';
import type { FileType, FsCallbacks } from './native';
import { type LocalDisk, nodeDisk, openDocument, saveBlocker, SyncedDocuments, writeThroughDocument } from './openDocuments';

/**
 * An error from `vscode.workspace.fs` with the operation and path in its message. Its `code` is
 * the original one (`FileNotFound`, ... for a `vscode.FileSystemError`, `ENOENT`, ... from Node):
 * the executor maps codes to POSIX names in one place (crates/oh-node/src/fs.rs).
 */
export function toFsError(e: unknown, op: string, path: string): Error & { code?: string } {
  const err = e as { code?: unknown; message?: string } | undefined;
  const out = new Error(`${op} ${path}: ${err?.message ?? String(e)}`) as Error & { code?: string };
  if (typeof err?.code === 'string') out.code = err.code;
  return out;
}

/** The contract's file type of a `vscode.FileType` (symlinks are followed: their target's bits). */
export function fileType(type: vscode.FileType): FileType {
  if (type & vscode.FileType.Directory) return 'directory';
  if (type & vscode.FileType.File) return 'file';
  return 'other';
}

export interface FsBridgeOptions {
  fs?: vscode.FileSystem;
  log?: Logger;
  /** How long a write waits for an open, unmodified editor of that file to show the new text. */
  editorSyncTimeoutMs?: number;
  /** Called when the agent wrote a file that has unsaved changes in an editor. */
  onDirtyConflict?: (uri: vscode.Uri) => void;
  /** Called after each successful write (the view lists recently changed files). */
  onDidWrite?: (uri: vscode.Uri) => void;
  /** What tells whether a file changed (see openDocuments.ts); node's `fs` by default. */
  localDisk?: LocalDisk;
}

const decoder = new TextDecoder('utf-8');

/**
 * The file callbacks handed to the native executor (`FsCallbacks` of the addon's generated
 * contract). Every change the agent makes goes through `vscode.workspace.fs`, so VS Code's file
 * service, watchers, the explorer and open editors see it (see README.md, "How agent edits reach
 * your editors"), except on a document open in an editor without unsaved changes, whose text is
 * the file: a read is answered from it, an edit is applied to it and saved (openDocuments.ts).
 *
 * Reads change nothing, so a regular file the local disk shows (`LocalDisk`, node's `fs`) is
 * stat'ed and read there: each `workspace.fs` call is a round trip to the workbench (3-4 ms in
 * code-server against well under 0.1 ms), and the executor reads a file with `stat`, then
 * `readFile`, then writes it. What the local disk cannot see (a directory, a missing or
 * unreadable file, a virtual file system registered for `file:`) is asked of `workspace.fs`,
 * whose error names the reason.
 */
export function createFsBridge(options: FsBridgeOptions = {}): FsCallbacks {
  const fs = options.fs ?? vscode.workspace.fs;
  const log = options.log;
  const syncTimeout = options.editorSyncTimeoutMs ?? 2000;
  const disk = options.localDisk ?? nodeDisk;
  const synced = new SyncedDocuments(disk);

  const wrap = async <T>(op: string, path: string, f: () => Thenable<T> | Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      const err = toFsError(e, op, path);
      log?.debug(`fs ${op} ${path} failed: ${err.code ?? 'no code'} ${err.message}`);
      throw err;
    }
  };

  /**
   * The write through the file service; an open, unmodified editor reloads it (waited for). A
   * document left unsaved with exactly the agent's text by a failed save is not the user's.
   */
  const writeToDisk = async (path: string, uri: vscode.Uri, data: Uint8Array) => {
    const doc = openDocument(uri);
    const wasDirty = doc?.isDirty ?? false;
    const agentsText = wasDirty && doc?.getText() === decoder.decode(data);
    const editorSynced = doc && !wasDirty ? waitForEditor(doc, data, syncTimeout) : undefined;
    await fs.writeFile(uri, data);
    if (agentsText) {
      log?.warn(`the editor of ${path} shows the agent's edit unsaved (saving it failed); the file has the agent's bytes`);
    } else if (wasDirty) {
      log?.warn(`agent wrote ${path}, which has unsaved changes in an editor`);
      options.onDirtyConflict?.(uri);
    } else if (editorSynced && !(await editorSynced)) {
      log?.warn(`the editor of ${path} did not pick up the agent's write within ${syncTimeout} ms`);
    }
  };

  return {
    readFile: (path) =>
      wrap('readFile', path, async () => {
        const uri = vscode.Uri.file(path);
        const doc = await synced.get(uri);
        if (doc) return doc.bytes;
        return (await disk.read(path)) ?? (await fs.readFile(uri));
      }),

    writeFile: (path, data) =>
      wrap('writeFile', path, async () => {
        const uri = vscode.Uri.file(path);
        const doc = await synced.get(uri);
        const blocker = doc ? saveBlocker(doc.doc, doc.bytes, data) : 'no open, unmodified document showing the file';
        if (doc && !blocker && (await writeThroughDocument(doc, data))) {
          log?.debug(`fs writeFile ${path}: applied to the open document and saved`);
        } else {
          if (doc && !blocker) log?.debug(`fs writeFile ${path}: not saved through the document (the same text, a failed save or another participant's change); writing the file`);
          else if (doc) log?.debug(`fs writeFile ${path}: written to disk, not through the document: ${blocker}`);
          await writeToDisk(path, uri, data);
        }
        options.onDidWrite?.(uri);
      }),

    stat: (path) =>
      wrap('stat', path, async () => {
        const uri = vscode.Uri.file(path);
        const doc = await synced.get(uri);
        if (doc) return { type: 'file', size: doc.bytes.length, mtimeMs: Math.trunc(doc.disk.mtimeMs) };
        const id = await disk.identity(path);
        if (id) return { type: 'file', size: id.size, mtimeMs: Math.trunc(id.mtimeMs) };
        const s = await fs.stat(uri);
        return { type: fileType(s.type), size: s.size, mtimeMs: s.mtime };
      }),

    readDirectory: (path) =>
      wrap('readDirectory', path, async () => {
        const entries = await fs.readDirectory(vscode.Uri.file(path));
        return entries.map(([name, type]) => ({ name, type: fileType(type) }));
      }),

    createDirectory: (path) => wrap('createDirectory', path, async () => fs.createDirectory(vscode.Uri.file(path))),

    delete: (path) =>
      wrap('delete', path, async () => fs.delete(vscode.Uri.file(path), { recursive: false, useTrash: false })),

    // POSIX rename semantics (what the executor's LocalFs does): replace an existing target.
    rename: (from, to) =>
      wrap('rename', from, async () => fs.rename(vscode.Uri.file(from), vscode.Uri.file(to), { overwrite: true })),
  };
}

/**
 * Resolves true once the open document shows `data` (VS Code reloads an unmodified document when
 * its file service reports the change), false after `timeoutMs`.
 */
function waitForEditor(doc: vscode.TextDocument, data: Uint8Array, timeoutMs: number): Promise<boolean> {
  const expected = decoder.decode(data).replace(/\r\n/g, '\n');
  const matches = () => doc.getText().replace(/\r\n/g, '\n') === expected;
  if (matches()) return Promise.resolve(true); // nothing will change in the editor
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      sub.dispose();
      clearTimeout(timer);
      resolve(ok);
    };
    const sub = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && matches()) finish(true);
    });
    const timer = setTimeout(() => finish(matches()), timeoutMs);
  });
}
