import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { decodeVsCodeValues, encodeVsCodeValues, VsCodeValueError } from './vscodeValues';

const pos = (line: number, character: number) => ({ line, character });
const decodeError = (v: unknown): string => {
  try {
    decodeVsCodeValues(v);
  } catch (e) {
    expect(e).toBeInstanceOf(VsCodeValueError);
    return (e as Error).message;
  }
  throw new Error('decode did not fail');
};

describe('decodeVsCodeValues: each type', () => {
  it('Uri', () => {
    const u = decodeVsCodeValues({ $vscode: 'Uri', value: 'file:///ws/src/a.ts' }) as vscode.Uri;
    expect(u).toBeInstanceOf(vscode.Uri);
    expect(u.scheme).toBe('file');
    expect(u.fsPath).toBe('/ws/src/a.ts');
  });
  it('Position', () => {
    const p = decodeVsCodeValues({ $vscode: 'Position', line: 3, character: 7 }) as vscode.Position;
    expect(p).toBeInstanceOf(vscode.Position);
    expect([p.line, p.character]).toEqual([3, 7]);
  });
  it('Range, with plain and with tagged positions', () => {
    const r = decodeVsCodeValues({ $vscode: 'Range', start: pos(1, 2), end: { $vscode: 'Position', line: 3, character: 4 } }) as vscode.Range;
    expect(r).toBeInstanceOf(vscode.Range);
    expect(r.start).toBeInstanceOf(vscode.Position);
    expect(r.end).toBeInstanceOf(vscode.Position);
    expect([r.start.line, r.start.character, r.end.line, r.end.character]).toEqual([1, 2, 3, 4]);
  });
  it('Selection', () => {
    const s = decodeVsCodeValues({ $vscode: 'Selection', anchor: pos(5, 1), active: pos(2, 0) }) as vscode.Selection;
    expect(s).toBeInstanceOf(vscode.Selection);
    expect([s.anchor.line, s.anchor.character, s.active.line, s.active.character]).toEqual([5, 1, 2, 0]);
  });
  it('Location, with a URI string or a tagged Uri, a plain or tagged Range', () => {
    const a = decodeVsCodeValues({ $vscode: 'Location', uri: 'file:///ws/a.ts', range: { start: pos(0, 0), end: pos(0, 3) } }) as vscode.Location;
    expect(a).toBeInstanceOf(vscode.Location);
    expect(a.uri).toBeInstanceOf(vscode.Uri);
    expect(a.uri.fsPath).toBe('/ws/a.ts');
    expect(a.range).toBeInstanceOf(vscode.Range);
    expect(a.range.end.character).toBe(3);
    const b = decodeVsCodeValues({
      $vscode: 'Location',
      uri: { $vscode: 'Uri', value: 'file:///ws/b.ts' },
      range: { $vscode: 'Range', start: pos(9, 0), end: pos(9, 1) },
    }) as vscode.Location;
    expect(b.uri.fsPath).toBe('/ws/b.ts');
    expect(b.range.start.line).toBe(9);
  });
});

describe('decodeVsCodeValues: nesting', () => {
  it('reconstructs tagged values at any depth in arrays and objects, and leaves the rest alone', () => {
    const input = [
      'editor.action.goToLocations',
      { $vscode: 'Uri', value: 'file:///ws/a.ts' },
      { deep: { list: [1, null, { $vscode: 'Location', uri: 'file:///ws/c.ts', range: { start: pos(2, 0), end: pos(2, 5) } }] }, flag: true },
      [[{ $vscode: 'Position', line: 0, character: 0 }]],
    ];
    const out = decodeVsCodeValues(input) as any[];
    expect(out[0]).toBe('editor.action.goToLocations');
    expect(out[1]).toBeInstanceOf(vscode.Uri);
    const loc = out[2].deep.list[2];
    expect(loc).toBeInstanceOf(vscode.Location);
    expect(loc.uri.fsPath).toBe('/ws/c.ts');
    expect(out[2].deep.list.slice(0, 2)).toEqual([1, null]);
    expect(out[2].flag).toBe(true);
    expect(out[3][0][0]).toBeInstanceOf(vscode.Position);
    // the input is not modified
    expect((input[1] as any).$vscode).toBe('Uri');
  });
  it('an object without the tag stays a plain object even if it looks like a Position', () => {
    const out = decodeVsCodeValues({ line: 1, character: 2 });
    expect(out).not.toBeInstanceOf(vscode.Position);
    expect(out).toEqual({ line: 1, character: 2 });
  });
});

describe('decodeVsCodeValues: errors name the type and the field', () => {
  it('unknown type', () => {
    expect(decodeError({ $vscode: 'Foo' })).toBe('Unknown VS Code object type: "Foo". Supported types: Uri, Position, Range, Selection, Location');
    expect(decodeError({ $vscode: 42 })).toBe('Unknown VS Code object type: 42. Supported types: Uri, Position, Range, Selection, Location');
  });
  it('missing field', () => {
    expect(decodeError({ $vscode: 'Position', character: 1 })).toBe('Invalid VS Code Position: missing required field "line"');
    expect(decodeError({ $vscode: 'Position', line: 1 })).toBe('Invalid VS Code Position: missing required field "character"');
    expect(decodeError({ $vscode: 'Uri' })).toBe('Invalid VS Code Uri: missing required field "value"');
    expect(decodeError({ $vscode: 'Range', start: pos(0, 0) })).toBe('Invalid VS Code Range: missing required field "end"');
    expect(decodeError({ $vscode: 'Selection', active: pos(0, 0) })).toBe('Invalid VS Code Selection: missing required field "anchor"');
    expect(decodeError({ $vscode: 'Location', uri: 'file:///a' })).toBe('Invalid VS Code Location: missing required field "range"');
  });
  it('field of the wrong type', () => {
    expect(decodeError({ $vscode: 'Position', line: '3', character: 0 })).toBe('Invalid VS Code Position: field "line" must be a number, got string');
    expect(decodeError({ $vscode: 'Position', line: 3, character: null })).toBe('Invalid VS Code Position: field "character" must be a number, got null');
    expect(decodeError({ $vscode: 'Position', line: -1, character: 0 })).toBe('Invalid VS Code Position: field "line" must be a non-negative integer, got -1');
    expect(decodeError({ $vscode: 'Uri', value: 7 })).toBe('Invalid VS Code Uri: field "value" must be a string, got number');
    expect(decodeError({ $vscode: 'Range', start: 'x', end: pos(0, 0) })).toBe('Invalid VS Code Range: field "start" must be a Position object, got string');
    expect(decodeError({ $vscode: 'Location', uri: 5, range: { start: pos(0, 0), end: pos(0, 0) } })).toBe('Invalid VS Code Location: field "uri" must be a URI string or a Uri object, got number');
    expect(decodeError({ $vscode: 'Location', uri: 'file:///a', range: { $vscode: 'Position', line: 0, character: 0 } })).toBe('Invalid VS Code Location: field "range" must be a Range, got a Position');
  });
  it('a URI without a scheme', () => {
    expect(decodeError({ $vscode: 'Uri', value: 'src/a.ts' })).toMatch(/^Invalid VS Code Uri: field "value" is not a URI with a scheme: "src\/a.ts"/);
  });
  it('errors inside nested values say where they are', () => {
    expect(decodeError([{ a: { $vscode: 'Foo' } }])).toBe('Unknown VS Code object type: "Foo". Supported types: Uri, Position, Range, Selection, Location (at $[0].a)');
    expect(decodeError({ $vscode: 'Range', start: { character: 0 }, end: pos(0, 0) })).toBe('Invalid VS Code Position: missing required field "line" (at $.start)');
    expect(decodeError([1, { $vscode: 'Location', uri: 'file:///a', range: { start: pos(0, 0), end: { line: 'x', character: 0 } } }])).toBe(
      'Invalid VS Code Position: field "line" must be a number, got string (at $[1].range.end)',
    );
  });
  it('refuses absurd nesting instead of overflowing the stack', () => {
    let v: unknown = 1;
    for (let i = 0; i < 200; i++) v = [v];
    expect(decodeError(v)).toMatch(/nested deeper than 64 levels/);
  });
});

describe('encodeVsCodeValues', () => {
  it('writes each type tagged, with plain fields, and round-trips through decode', () => {
    const uri = vscode.Uri.file('/ws/a.ts');
    const range = new vscode.Range(new vscode.Position(1, 2), new vscode.Position(3, 4));
    const value = {
      uri,
      pos: new vscode.Position(0, 5),
      range,
      sel: new vscode.Selection(new vscode.Position(4, 0), new vscode.Position(2, 1)),
      locs: [new vscode.Location(uri, range)],
      n: 1,
      s: 'x',
      nothing: null,
      f: () => 1,
    };
    const encoded = encodeVsCodeValues(value) as any;
    expect(encoded).toEqual({
      uri: { $vscode: 'Uri', value: 'file:///ws/a.ts' },
      pos: { $vscode: 'Position', line: 0, character: 5 },
      range: { $vscode: 'Range', start: pos(1, 2), end: pos(3, 4) },
      sel: { $vscode: 'Selection', anchor: pos(4, 0), active: pos(2, 1) },
      locs: [{ $vscode: 'Location', uri: 'file:///ws/a.ts', range: { start: pos(1, 2), end: pos(3, 4) } }],
      n: 1,
      s: 'x',
      nothing: null,
    });
    const back = decodeVsCodeValues(JSON.parse(JSON.stringify(encoded))) as any;
    expect(back.sel).toBeInstanceOf(vscode.Selection);
    expect(back.locs[0]).toBeInstanceOf(vscode.Location);
    expect(back.locs[0].range.end.character).toBe(4);
    expect(encodeVsCodeValues(back)).toEqual(encoded);
  });
  it('cuts cycles instead of looping', () => {
    const a: any = { name: 'a' };
    a.self = a;
    expect(encodeVsCodeValues(a)).toEqual({ name: 'a', self: '[circular]' });
  });
});
