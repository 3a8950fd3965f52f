/**
 * What the IDE tools share: the tool shape, argument checks, path resolution and the 1-based
 * position convention (see tools.ts).
 */
import * as vscode from 'vscode';

export type JsonSchema = Record<string, unknown>;

export interface IdeTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema & { type: 'object' };
  /** True for tools that change nothing; the others pass the write gate (writeGate.ts). */
  readonly readOnly: boolean;
  run(args: Record<string, unknown>, call?: ToolCallContext): Promise<unknown>;
}

/** What a front (MCP endpoint, OpenHands runtime) knows about one call. */
export interface ToolCallContext {
  /** Aborted when the caller gives up (request cancelled, connection closed, action timed out). */
  readonly signal?: AbortSignal;
}

/** A bad argument: the message names the argument and what was expected. */
export class ToolArgumentError extends Error {
  override name = 'ToolArgumentError';
}

// ---- argument helpers ----------------------------------------------------------------------

function describeType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

export function stringArg(args: Record<string, unknown>, name: string): string;
export function stringArg(args: Record<string, unknown>, name: string, optional: true): string | undefined;
export function stringArg(args: Record<string, unknown>, name: string, optional = false): string | undefined {
  // (an optional string may be empty; a required one may not)
  const v = args[name];
  if (v === undefined || v === null) {
    if (optional) return undefined;
    throw new ToolArgumentError(`Missing required argument "${name}"`);
  }
  if (typeof v !== 'string') throw new ToolArgumentError(`Argument "${name}" must be a string, got ${describeType(v)}`);
  if (!optional && v.trim() === '') throw new ToolArgumentError(`Argument "${name}" must not be empty`);
  return v;
}

export function intArg(args: Record<string, unknown>, name: string, opts: { min: number; max?: number; default?: number }): number {
  const v = args[name];
  if (v === undefined || v === null) {
    if (opts.default !== undefined) return opts.default;
    throw new ToolArgumentError(`Missing required argument "${name}"`);
  }
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ToolArgumentError(`Argument "${name}" must be an integer, got ${typeof v === 'number' ? v : describeType(v)}`);
  if (v < opts.min) throw new ToolArgumentError(`Argument "${name}" must be at least ${opts.min}, got ${v}`);
  if (opts.max !== undefined && v > opts.max) throw new ToolArgumentError(`Argument "${name}" must be at most ${opts.max}, got ${v}`);
  return v;
}

export function enumArg<T extends string>(args: Record<string, unknown>, name: string, values: readonly T[], def: T): T {
  const v = args[name];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new ToolArgumentError(`Argument "${name}" must be one of ${values.map((x) => `"${x}"`).join(', ')}, got ${JSON.stringify(v)}`);
  }
  return v as T;
}

// ---- files and positions --------------------------------------------------------------------

const SCHEME = /^[a-zA-Z][\w+.-]+:/;

/** `path` argument -> Uri: absolute path, workspace-relative path, or a URI with a scheme. */
export function resolvePath(path: string): vscode.Uri {
  // A one-letter "scheme" is a Windows drive (C:\...), not a URI.
  if (SCHEME.test(path) && !/^[a-zA-Z]:[\\/]/.test(path)) {
    try {
      return vscode.Uri.parse(path, true);
    } catch (e) {
      throw new ToolArgumentError(`Argument "path" is not a valid URI: ${JSON.stringify(path)}`);
    }
  }
  if (path.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(path)) return vscode.Uri.file(path);
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new ToolArgumentError(`Argument "path" is relative (${JSON.stringify(path)}) but no workspace folder is open; give an absolute path`);
  return vscode.Uri.joinPath(folder.uri, ...path.split(/[\\/]+/).filter(Boolean));
}

export function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

export function openDocumentFor(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => sameUri(d.uri, uri));
}

/** The document's current text (the unsaved buffer when open), loading it without showing it. */
export async function loadDocument(uri: vscode.Uri): Promise<vscode.TextDocument> {
  const open = openDocumentFor(uri);
  if (open) return open;
  try {
    return await vscode.workspace.openTextDocument(uri);
  } catch (e) {
    throw new ToolArgumentError(`Cannot open ${displayPath(uri)}: ${e instanceof Error ? e.message : e}`);
  }
}

/** What a result calls a file: the file system path for `file:` URIs, else the URI. */
export function displayPath(uri: vscode.Uri): string {
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}

/** Reads `line` (1-based) and `column` (1-based, default 1) and checks them against the document. */
export function positionArgs(args: Record<string, unknown>, doc: vscode.TextDocument): vscode.Position {
  const line = intArg(args, 'line', { min: 1 });
  const column = intArg(args, 'column', { min: 1, default: 1 });
  if (line > doc.lineCount) throw new ToolArgumentError(`Argument "line" is ${line}, past the end of ${displayPath(doc.uri)} (${doc.lineCount} lines)`);
  const length = doc.lineAt(line - 1).text.length;
  if (column > length + 1) throw new ToolArgumentError(`Argument "column" is ${column}, past the end of line ${line} (${length} characters)`);
  return new vscode.Position(line - 1, column - 1);
}

export interface OutPosition { line: number; column: number }
export interface OutRange { start: OutPosition; end: OutPosition }

export const outPosition = (p: vscode.Position): OutPosition => ({ line: p.line + 1, column: p.character + 1 });
export const outRange = (r: vscode.Range): OutRange => ({ start: outPosition(r.start), end: outPosition(r.end) });

/** JSON-schema pieces shared by the tools. */
export const schema = {
  path: {
    type: 'string',
    description: 'The file: an absolute path, a path relative to the first workspace folder, or a URI (file:///..., untitled:...).',
  },
  line: { type: 'integer', minimum: 1, description: 'Line number, 1-based (line 1 is the first line).' },
  column: { type: 'integer', minimum: 1, description: 'Column, 1-based (column 1 is the first character of the line). Default 1.' },
} as const;

export const POSITION_NOTE = 'Lines and columns are 1-based (line 1 is the first line, as in numbered file views).';

/** A call the security rules refuse (untrusted workspace, no consent, a command not allowed). */
export class ToolRefusedError extends Error {
  override name = 'ToolRefusedError';
}

export function boolArg(args: Record<string, unknown>, name: string, def: boolean): boolean {
  const v = args[name];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'boolean') throw new ToolArgumentError(`Argument "${name}" must be a boolean, got ${describeType(v)}`);
  return v;
}
