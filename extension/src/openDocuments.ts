import { promises as nodeFs } from 'node:fs';
import * as vscode from 'vscode';

/**
 * The agent's file actions on a document open in an editor, without unsaved changes: a read is
 * answered from the document and an edit is applied to it as a `WorkspaceEdit` and saved (one
 * undo step, no reload from disk), but only when that gives exactly the bytes the agent asked
 * for. Everything else takes `fsBridge.ts`'s `workspace.fs` path.
 *
 * Whether a document's text is the file on disk is checked on the local disk, not trusted: VS
 * Code reloads a document some time after the file changes, and a file the agent changed with a
 * shell command may not be reloaded yet. `LocalDisk` is that check (node's `fs`, sub-millisecond
 * against the 3-4 ms of a `workspace.fs` call); a file it cannot see (a virtual file system
 * registered for `file:`) never takes these paths.
 */

/** A file's identity and size on the local disk; `key` changes whenever its contents may have. */
export interface DiskIdentity {
  key: string;
  size: number;
  mtimeMs: number;
}

export interface LocalDisk {
  /** The identity of a regular file; undefined if it is not one or cannot be seen. */
  identity(path: string): Promise<DiskIdentity | undefined>;
  read(path: string): Promise<Uint8Array | undefined>;
}

export const nodeDisk: LocalDisk = {
  async identity(path) {
    try {
      const s = await nodeFs.stat(path, { bigint: true });
      if (!s.isFile()) return undefined;
      return { key: `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`, size: Number(s.size), mtimeMs: Number(s.mtimeMs) };
    } catch {
      return undefined;
    }
  },
  async read(path) {
    try {
      return await nodeFs.readFile(path);
    } catch {
      return undefined;
    }
  },
};

/** Documents larger than this are not compared with the disk (the editor refuses to edit them anyway). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  const key = uri.toString();
  return vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.toString() === key);
}

export interface SyncedDocument {
  doc: vscode.TextDocument;
  /** The document's text as UTF-8: the bytes on disk. */
  bytes: Uint8Array;
  disk: DiskIdentity;
}

/**
 * Open documents known to show the file on disk byte for byte: verified once by reading the
 * disk, then valid while neither the document's version nor the file's identity changes.
 */
export class SyncedDocuments {
  private readonly verified = new Map<string, { version: number; key: string }>();

  constructor(private readonly disk: LocalDisk = nodeDisk) {}

  /** The open, unmodified document of `uri` if its text is now the file on disk, else undefined. */
  async get(uri: vscode.Uri): Promise<SyncedDocument | undefined> {
    const doc = uri.scheme === 'file' ? openDocument(uri) : undefined;
    if (!doc || doc.isDirty) return undefined;
    const version = doc.version;
    const id = await this.disk.identity(uri.fsPath);
    if (!id || id.size > MAX_DOCUMENT_BYTES) return undefined;
    const known = this.verified.get(uri.toString());
    if (known && known.version === version && known.key === id.key) {
      const bytes = encoder.encode(doc.getText());
      return current(doc, version) ? { doc, bytes, disk: id } : undefined;
    }
    const bytes = encoder.encode(doc.getText());
    if (bytes.length !== id.size) return undefined;
    // Read between two identities: equal identities mean the bytes read are the file's now.
    const onDisk = await this.disk.read(uri.fsPath);
    const after = await this.disk.identity(uri.fsPath);
    if (!onDisk || !after || after.key !== id.key || !sameBytes(onDisk, bytes) || !current(doc, version)) return undefined;
    if (this.verified.size >= 256) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(uri.toString(), { version, key: id.key });
    return { doc, bytes, disk: id };
  }
}

function current(doc: vscode.TextDocument, version: number): boolean {
  return !doc.isClosed && !doc.isDirty && doc.version === version;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const isAscii = (b: Uint8Array) => b.every((x) => x < 0x80);

/**
 * Why saving `text` through the document would not put exactly the agent's bytes on disk (the
 * reason, for the log), or undefined when it would. `oldBytes` are the document's bytes, which
 * are the file's ([SyncedDocuments]).
 */
export function saveBlocker(doc: vscode.TextDocument, oldBytes: Uint8Array, data: Uint8Array): string | undefined {
  let text: string;
  try {
    text = strictDecoder.decode(data);
  } catch {
    return 'the new bytes are not UTF-8';
  }
  if (text.startsWith('\uFEFF')) return 'the new bytes start with a byte order mark';
  // `TextDocument.encoding` (VS Code 1.100+): the document saves in it. Without it, a document
  // whose bytes were all ASCII may be in any ASCII-compatible encoding, so non-ASCII text is not
  // left to it; bytes with non-ASCII that matched the text as UTF-8 were decoded as UTF-8.
  const encoding = (doc as unknown as { encoding?: string }).encoding;
  if (encoding !== undefined && encoding !== 'utf8') return `the document's encoding is ${encoding}`;
  if (encoding === undefined && isAscii(oldBytes) && !isAscii(data)) return "the document's encoding is unknown";
  // The document keeps one line ending and converts every line break it is given to it.
  if (doc.eol === vscode.EndOfLine.CRLF ? /\r(?!\n)|(?<!\r)\n/.test(text) : text.includes('\r')) return 'the line endings differ from the document';
  return participantBlocker(doc, text);
}

/** A save participant VS Code runs that would change `text`, by its setting. */
function participantBlocker(doc: vscode.TextDocument, text: string): string | undefined {
  const files = vscode.workspace.getConfiguration('files', doc);
  const editor = vscode.workspace.getConfiguration('editor', doc);
  // What VS Code's own participants change: only text with that shape (checked broadly).
  if (files.get<boolean>('insertFinalNewline') && text.length > 0 && !text.endsWith('\n')) return 'files.insertFinalNewline';
  if (files.get<boolean>('trimFinalNewlines') && /(^|\n)[^\S\n]*\n$/.test(text)) return 'files.trimFinalNewlines';
  if (files.get<boolean>('trimTrailingWhitespace') && /[^\S\r\n]\r?(\n|$)/.test(text)) return 'files.trimTrailingWhitespace';
  // Formatters and code actions may change anything.
  if (editor.get<boolean>('formatOnSave')) return 'editor.formatOnSave';
  const actions = editor.get<unknown>('codeActionsOnSave');
  const on = (v: unknown) => v !== false && v !== 'never';
  if (Array.isArray(actions) ? actions.length > 0 : actions && typeof actions === 'object' && Object.values(actions).some(on)) return 'editor.codeActionsOnSave';
  return undefined;
}

/**
 * Applies the agent's new contents to a synced document as one edit (the changed span only: the
 * cursor, folding and undo stay where the rest of the text is) and saves it. True when the
 * document was saved showing exactly `data`; false when the caller must write the file itself
 * (another participant changed the text, the save failed, the user typed meanwhile).
 */
export async function writeThroughDocument(synced: SyncedDocument, data: Uint8Array): Promise<boolean> {
  const { doc } = synced;
  const oldText = doc.getText();
  const newText = strictDecoder.decode(data);
  // The same text: nothing to save (save() refuses a clean document); the caller rewrites the file.
  if (oldText === newText) return false;
  const [start, oldEnd, newEnd] = changedSpan(oldText, newText);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(doc.uri, new vscode.Range(doc.positionAt(start), doc.positionAt(oldEnd)), newText.slice(start, newEnd));
  if (!(await vscode.workspace.applyEdit(edit)) || doc.getText() !== newText) return false;
  if (!(await doc.save())) return false;
  return !doc.isDirty && doc.getText() === newText;
}

/** [start, end in old, end in new] of the part that differs, not splitting a CRLF or a surrogate pair. */
export function changedSpan(a: string, b: string): [number, number, number] {
  const max = Math.min(a.length, b.length);
  let start = 0;
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  const splits = (s: string, i: number) => i > 0 && i < s.length && ((s[i - 1] === '\r' && s[i] === '\n') || (/[\uD800-\uDBFF]/.test(s[i - 1]) && /[\uDC00-\uDFFF]/.test(s[i])));
  while (start > 0 && (splits(a, start) || splits(b, start))) start--;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  while ((endA < a.length || endB < b.length) && (splits(a, endA) || splits(b, endB))) {
    endA++;
    endB++;
  }
  return [start, endA, endB];
}
