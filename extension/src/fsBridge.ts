import * as vscode from 'vscode';
import type { Logger } from './logging';
import type { FileType, FsCallbacks } from './native';

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
}

const decoder = new TextDecoder('utf-8');

/**
 * The file callbacks handed to the native executor (`FsCallbacks` of the addon's generated
 * contract). Every file action of the agent goes through `vscode.workspace.fs`, so VS Code's file
 * service, watchers, the explorer and open editors see it (see README.md, "How agent edits reach
 * your editors").
 */
export function createFsBridge(options: FsBridgeOptions = {}): FsCallbacks {
  const fs = options.fs ?? vscode.workspace.fs;
  const log = options.log;
  const syncTimeout = options.editorSyncTimeoutMs ?? 2000;

  const wrap = async <T>(op: string, path: string, f: () => Thenable<T> | Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (e) {
      const err = toFsError(e, op, path);
      log?.debug(`fs ${op} ${path} failed: ${err.code ?? 'no code'} ${err.message}`);
      throw err;
    }
  };

  return {
    readFile: (path) => wrap('readFile', path, async () => fs.readFile(vscode.Uri.file(path))),

    writeFile: (path, data) =>
      wrap('writeFile', path, async () => {
        const uri = vscode.Uri.file(path);
        const doc = openDocument(uri);
        const wasDirty = doc?.isDirty ?? false;
        const editorSynced = doc && !wasDirty ? waitForEditor(doc, data, syncTimeout) : undefined;
        await fs.writeFile(uri, data);
        options.onDidWrite?.(uri);
        if (wasDirty) {
          log?.warn(`agent wrote ${path}, which has unsaved changes in an editor`);
          options.onDirtyConflict?.(uri);
        } else if (editorSynced && !(await editorSynced)) {
          log?.warn(`the editor of ${path} did not pick up the agent's write within ${syncTimeout} ms`);
        }
      }),

    stat: (path) =>
      wrap('stat', path, async () => {
        const s = await fs.stat(vscode.Uri.file(path));
        return { type: fileType(s.type), size: s.size, mtimeMs: s.mtime };
      }),

    readDirectory: (path) =>
      wrap('readDirectory', path, async () => {
        const entries = await fs.readDirectory(vscode.Uri.file(path));
        return entries.map(([name, type]) => ({ name, type: fileType(type) }));
      }),

    createDirectory: (path) => wrap('createDirectory', path, async () => fs.createDirectory(vscode.Uri.file(path))),

    delete: (path) => wrap('delete', path, async () => fs.delete(vscode.Uri.file(path), { recursive: false, useTrash: false })),

    // POSIX rename semantics (what the executor's LocalFs does): replace an existing target.
    rename: (from, to) => wrap('rename', from, async () => fs.rename(vscode.Uri.file(from), vscode.Uri.file(to), { overwrite: true })),
  };
}

function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  const key = uri.toString();
  return vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.toString() === key);
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
