/**
 * The `$vscode`-tagged JSON format: how VS Code objects travel inside JSON tool arguments and
 * results. A tagged value is an object whose `$vscode` member names the type:
 *
 *   {"$vscode": "Uri", "value": "file:///home/me/app/src/a.ts"}
 *   {"$vscode": "Position", "line": 3, "character": 7}
 *   {"$vscode": "Range", "start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 9}}
 *   {"$vscode": "Selection", "anchor": {...}, "active": {...}}
 *   {"$vscode": "Location", "uri": "file:///...", "range": {"start": {...}, "end": {...}}}
 *
 * Lines and characters are VS Code's own (0-based): these are VS Code API values, passed as they
 * are to VS Code commands. Inside a compound value, a field may be written plainly (a Position as
 * `{line, character}`, a Range as `{start, end}`, a Uri as its string) or tagged; `encode` writes
 * the fields plainly and tags only the outer value. Tagged values may sit at any depth inside
 * arrays and objects.
 */
import * as vscode from 'vscode';

export const SUPPORTED_TYPES = ['Uri', 'Position', 'Range', 'Selection', 'Location'] as const;
export type VsCodeTypeName = (typeof SUPPORTED_TYPES)[number];

/** A tagged value that cannot be reconstructed; the message names the type and the field. */
export class VsCodeValueError extends Error {
  constructor(
    message: string,
    /** Where in the argument the bad value sits, e.g. `$[0].range.start` (`$` is the whole value). */
    readonly at: string,
  ) {
    super(at === '$' ? message : `${message} (at ${at})`);
    this.name = 'VsCodeValueError';
  }
}

const TAG = '$vscode';
// Deep enough for any real argument, small enough that a hostile one cannot exhaust the stack.
const MAX_DEPTH = 64;

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Replaces every `$vscode`-tagged value inside `value` by the VS Code object it describes. */
export function decodeVsCodeValues(value: unknown): unknown {
  return decodeAt(value, '$', 0);
}

function decodeAt(value: unknown, at: string, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new VsCodeValueError(`Value nested deeper than ${MAX_DEPTH} levels`, at);
  if (Array.isArray(value)) return value.map((v, i) => decodeAt(v, `${at}[${i}]`, depth + 1));
  if (!isPlainObject(value)) return value;
  if (Object.prototype.hasOwnProperty.call(value, TAG)) return decodeTagged(value, at);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = decodeAt(v, `${at}.${k}`, depth + 1);
  return out;
}

function decodeTagged(obj: Record<string, unknown>, at: string): unknown {
  const type = obj[TAG];
  if (typeof type !== 'string' || !(SUPPORTED_TYPES as readonly string[]).includes(type)) {
    const shown = typeof type === 'string' ? `"${type}"` : JSON.stringify(type) ?? typeName(type);
    throw new VsCodeValueError(`Unknown VS Code object type: ${shown}. Supported types: ${SUPPORTED_TYPES.join(', ')}`, at);
  }
  return decodeAs(type as VsCodeTypeName, obj, at);
}

function field(type: VsCodeTypeName, obj: Record<string, unknown>, name: string, at: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(obj, name) || obj[name] === undefined) {
    throw new VsCodeValueError(`Invalid VS Code ${type}: missing required field "${name}"`, at);
  }
  return obj[name];
}

function numberField(type: VsCodeTypeName, obj: Record<string, unknown>, name: string, at: string): number {
  const v = field(type, obj, name, at);
  if (typeof v !== 'number') throw new VsCodeValueError(`Invalid VS Code ${type}: field "${name}" must be a number, got ${typeName(v)}`, at);
  if (!Number.isInteger(v) || v < 0) throw new VsCodeValueError(`Invalid VS Code ${type}: field "${name}" must be a non-negative integer, got ${v}`, at);
  return v;
}

/** A field that holds a compound value: written plainly (an object or, for a Uri, a string) or tagged. */
function nested(
  owner: VsCodeTypeName,
  obj: Record<string, unknown>,
  name: string,
  want: VsCodeTypeName,
  at: string,
): unknown {
  const v = field(owner, obj, name, at);
  const here = `${at}.${name}`;
  if (want === 'Uri' && typeof v === 'string') return parseUri(v, here);
  if (!isPlainObject(v)) {
    const expected = want === 'Uri' ? 'a URI string or a Uri object' : `a ${want} object`;
    throw new VsCodeValueError(`Invalid VS Code ${owner}: field "${name}" must be ${expected}, got ${typeName(v)}`, at);
  }
  if (Object.prototype.hasOwnProperty.call(v, TAG)) {
    const inner = decodeTagged(v, here);
    const innerType = v[TAG] as VsCodeTypeName;
    // A Selection is a Range in VS Code, so it is accepted where a Range is wanted.
    if (innerType !== want && !(want === 'Range' && innerType === 'Selection')) {
      throw new VsCodeValueError(`Invalid VS Code ${owner}: field "${name}" must be a ${want}, got a ${innerType}`, at);
    }
    return inner;
  }
  return decodeAs(want, v, here);
}

function parseUri(value: string, at: string): vscode.Uri {
  try {
    return vscode.Uri.parse(value, true);
  } catch (e) {
    throw new VsCodeValueError(`Invalid VS Code Uri: field "value" is not a URI with a scheme: ${JSON.stringify(value)} (${e instanceof Error ? e.message : e})`, at);
  }
}

function decodeAs(type: VsCodeTypeName, obj: Record<string, unknown>, at: string): unknown {
  switch (type) {
    case 'Uri': {
      const v = field(type, obj, 'value', at);
      if (typeof v !== 'string') throw new VsCodeValueError(`Invalid VS Code Uri: field "value" must be a string, got ${typeName(v)}`, at);
      return parseUri(v, at);
    }
    case 'Position':
      return new vscode.Position(numberField(type, obj, 'line', at), numberField(type, obj, 'character', at));
    case 'Range':
      return new vscode.Range(nested(type, obj, 'start', 'Position', at) as vscode.Position, nested(type, obj, 'end', 'Position', at) as vscode.Position);
    case 'Selection':
      return new vscode.Selection(nested(type, obj, 'anchor', 'Position', at) as vscode.Position, nested(type, obj, 'active', 'Position', at) as vscode.Position);
    case 'Location':
      return new vscode.Location(nested(type, obj, 'uri', 'Uri', at) as vscode.Uri, nested(type, obj, 'range', 'Range', at) as vscode.Range);
  }
}

const plainPosition = (p: vscode.Position) => ({ line: p.line, character: p.character });
const plainRange = (r: vscode.Range) => ({ start: plainPosition(r.start), end: plainPosition(r.end) });

/**
 * Writes VS Code objects inside `value` (e.g. a command's result) as `$vscode`-tagged JSON.
 * Other class instances become plain objects of their enumerable fields; functions are dropped;
 * a cycle or excessive depth is cut with the string "[circular]" / "[too deep]".
 */
export function encodeVsCodeValues(value: unknown): unknown {
  return encodeAt(value, 0, new Set());
}

function encodeAt(value: unknown, depth: number, seen: Set<object>): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return value;
  if (value instanceof vscode.Uri) return { [TAG]: 'Uri', value: value.toString() };
  if (value instanceof vscode.Position) return { [TAG]: 'Position', ...plainPosition(value) };
  // Selection before Range: a Selection is a Range.
  if (value instanceof vscode.Selection) return { [TAG]: 'Selection', anchor: plainPosition(value.anchor), active: plainPosition(value.active) };
  if (value instanceof vscode.Range) return { [TAG]: 'Range', ...plainRange(value) };
  if (value instanceof vscode.Location) return { [TAG]: 'Location', uri: value.uri.toString(), range: plainRange(value.range) };
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => encodeAt(v, depth + 1, seen) ?? null);
    if (value instanceof Uint8Array) return Array.from(value);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const e = encodeAt(v, depth + 1, seen);
      if (e !== undefined) out[k] = e;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}
