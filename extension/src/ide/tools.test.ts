// The tools' argument rules and position conversions, with the vscode mock (the real answers of
// language extensions are checked in the real host: tests/vscode/suite/ide.js).
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { mock, resetMock } from '../test/vscodeMock';
import { createTools, runTool } from './tools';
import type { SelectionTracker } from './editorTools';
import { resolvePath } from './toolSupport';

function fakeDocument(path: string, text: string, dirty = false) {
  const lines = text.split('\n');
  return {
    uri: vscode.Uri.file(path),
    lineCount: lines.length,
    lineAt: (i: number) => ({ text: lines[i] }),
    getText: () => text,
    isDirty: dirty,
    version: 3,
    languageId: 'typescript',
  };
}

const tools = () => createTools({ selections: { latestSelection: undefined } as unknown as SelectionTracker });

describe('runTool', () => {
  beforeEach(() => resetMock());

  it('refuses an unknown tool, non-object arguments and unknown arguments, naming them', async () => {
    await expect(runTool(tools(), 'nope', {})).rejects.toThrow(/^Unknown tool "nope". Tools: diagnostics, hover, /);
    await expect(runTool(tools(), 'hover', [1])).rejects.toThrow('The arguments of "hover" must be a JSON object');
    await expect(runTool(tools(), 'hover', { path: '/ws/a.ts', line: 1, colum: 3 })).rejects.toThrow('Unknown argument "colum" for "hover"; it takes: path, line, column');
    await expect(runTool(tools(), 'hover', { line: 1 })).rejects.toThrow('Missing required argument "path"');
    await expect(runTool(tools(), 'hover', { path: 3, line: 1 })).rejects.toThrow('Argument "path" must be a string, got number');
  });

  it('every tool has an object schema; position tools say positions are 1-based', () => {
    for (const t of tools()) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.readOnly).toBe(true);
      if ('line' in ((t.inputSchema.properties as object) ?? {})) expect(t.description).toMatch(/1-based/);
    }
  });
});

describe('positions and paths', () => {
  beforeEach(() => resetMock());

  it('resolves absolute, workspace-relative and URI paths', () => {
    expect(resolvePath('/abs/a.ts').fsPath).toBe('/abs/a.ts');
    expect(resolvePath('src/a.ts').fsPath).toBe('/ws/src/a.ts');
    const u = resolvePath('file:///x/y.ts');
    expect([u.scheme, u.fsPath]).toEqual(['file', '/x/y.ts']);
  });

  it('hover passes a 0-based position to VS Code and answers with 1-based ranges', async () => {
    mock.textDocuments.push(fakeDocument('/ws/src/a.ts', 'const x = 1;\nconst yy = x;\n'));
    let seen: any;
    mock.registered.set('vscode.executeHoverProvider', (_uri: unknown, pos: unknown) => {
      seen = pos;
      return [{ contents: [{ value: '```ts\nconst yy: number\n```' }, { language: 'ts', value: 'x' }, ''], range: new vscode.Range(new vscode.Position(1, 6), new vscode.Position(1, 8)) }];
    });
    const r: any = await runTool(tools(), 'hover', { path: 'src/a.ts', line: 2, column: 7 });
    expect([seen.line, seen.character]).toEqual([1, 6]);
    expect(r.hovers).toEqual([{ contents: ['```ts\nconst yy: number\n```', '```ts\nx\n```'], range: { start: { line: 2, column: 7 }, end: { line: 2, column: 9 } } }]);
  });

  it('refuses positions outside the document, naming the argument', async () => {
    mock.textDocuments.push(fakeDocument('/ws/a.ts', 'ab\ncd'));
    await expect(runTool(tools(), 'hover', { path: '/ws/a.ts', line: 0 })).rejects.toThrow('Argument "line" must be at least 1, got 0');
    await expect(runTool(tools(), 'hover', { path: '/ws/a.ts', line: 3 })).rejects.toThrow('Argument "line" is 3, past the end of /ws/a.ts (2 lines)');
    await expect(runTool(tools(), 'hover', { path: '/ws/a.ts', line: 1, column: 4 })).rejects.toThrow('Argument "column" is 4, past the end of line 1 (2 characters)');
    await expect(runTool(tools(), 'hover', { path: '/ws/a.ts', line: 1.5 })).rejects.toThrow('Argument "line" must be an integer, got 1.5');
  });
});

describe('diagnostics', () => {
  beforeEach(() => resetMock());

  const diag = (line: number, severity: number, message: string) => ({ range: new vscode.Range(new vscode.Position(line, 2), new vscode.Position(line, 5)), severity, message, source: 'ts', code: { value: 2322, target: vscode.Uri.file('/doc') } });

  it('errors and warnings by default, sorted, 1-based; severity widens; the unsaved document is described', async () => {
    mock.textDocuments.push(fakeDocument('/ws/a.ts', 'a\nb\nc\nd', true));
    const uri = vscode.Uri.file('/ws/a.ts').toString();
    mock.diagnostics.set(uri, [diag(3, 3, 'hint'), diag(2, 1, 'warn'), diag(1, 2, 'info'), diag(0, 0, 'err')]);
    const r: any = await runTool(tools(), 'diagnostics', { path: '/ws/a.ts' });
    expect(r.severity).toBe('warning');
    expect(r.diagnostics.map((d: any) => [d.severity, d.range.start.line, d.message])).toEqual([['error', 1, 'err'], ['warning', 3, 'warn']]);
    expect(r.diagnostics[0]).toMatchObject({ path: '/ws/a.ts', source: 'ts', code: 2322, range: { start: { line: 1, column: 3 }, end: { line: 1, column: 6 } } });
    expect(r.counts).toEqual({ error: 1, warning: 1, information: 0, hint: 0 });
    expect(r.document).toMatchObject({ dirty: true, opened_by_tool: false, in_editor_tab: false, reported: true });
    const all: any = await runTool(tools(), 'diagnostics', { path: '/ws/a.ts', severity: 'hint' });
    expect(all.diagnostics).toHaveLength(4);
    const errors: any = await runTool(tools(), 'diagnostics', { path: '/ws/a.ts', severity: 'error', limit: 1 });
    expect(errors.diagnostics.map((d: any) => d.message)).toEqual(['err']);
    await expect(runTool(tools(), 'diagnostics', { severity: 'errors' })).rejects.toThrow('Argument "severity" must be one of "error", "warning", "information", "hint", got "errors"');
  });

  it('an open document without any report says so, with a note pointing at open_in_tab', async () => {
    mock.textDocuments.push(fakeDocument('/ws/b.ts', 'x'));
    const r: any = await runTool(tools(), 'diagnostics', { path: '/ws/b.ts' });
    expect(r.diagnostics).toEqual([]);
    expect(r.document.reported).toBe(false);
    expect(r.document.note).toMatch(/open_in_tab/);
  });

  it('without a path: every reported file', async () => {
    mock.diagnostics.set(vscode.Uri.file('/ws/a.ts').toString(), [diag(0, 0, 'a')]);
    mock.diagnostics.set(vscode.Uri.file('/ws/b.ts').toString(), [diag(4, 1, 'b')]);
    const r: any = await runTool(tools(), 'diagnostics', {});
    expect(r.document).toBeUndefined();
    expect(r.diagnostics.map((d: any) => `${d.path}:${d.range.start.line}`)).toEqual(['/ws/a.ts:1', '/ws/b.ts:5']);
  });
});
