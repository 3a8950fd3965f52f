// The writing tools' rules that need no real VS Code: the write gate comes first, then
// execute_command's opt-in and allowlist, then the $vscode arguments; results are encoded back.
// (open_diff, open_file, save_document and present_review run in the real host: tests/vscode/suite/ide-write.js.)
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { resetMock } from '../test/vscodeMock';
import { runTool } from './tools';
import { ToolRefusedError } from './toolSupport';
import type { DiffApprovals } from './diffApproval';
import type { ReviewPanels } from './reviewPanel';
import { commandAllowed, findTextRange, writeTools } from './writeTools';
import type { WriteGate } from './writeGate';

function setup(opts: { gate?: string; enabled?: boolean; allowlist?: string[] } = {}) {
  const gateCalls: string[] = [];
  const gate: WriteGate = {
    async check(tool) {
      gateCalls.push(tool);
      if (opts.gate) throw new ToolRefusedError(opts.gate);
    },
    revoke: async () => undefined,
  };
  const tools = writeTools({
    gate,
    diffs: {} as DiffApprovals,
    reviews: {} as ReviewPanels,
    commands: { enabled: () => opts.enabled ?? true, allowlist: () => opts.allowlist ?? ['test.*'] },
  });
  return { tools, gateCalls };
}

describe('execute_command', () => {
  beforeEach(() => resetMock());

  it('is refused by the write gate before anything else (untrusted workspace)', async () => {
    const { tools, gateCalls } = setup({ gate: 'Refused: untrusted' });
    await expect(runTool(tools, 'execute_command', { command: 'test.echo' })).rejects.toThrow('Refused: untrusted');
    expect(gateCalls).toEqual(['execute_command']);
  });

  it('is refused while off in the workspace, and for a command outside the allowlist', async () => {
    await expect(runTool(setup({ enabled: false }).tools, 'execute_command', { command: 'test.echo' })).rejects.toThrow(
      'Refused: execute_command is off in this workspace. The user can turn it on with "OpenHands: Allow VS Code Commands for IDE Tools in This Workspace".',
    );
    await expect(runTool(setup().tools, 'execute_command', { command: 'workbench.action.terminal.sendSequence' })).rejects.toThrow(
      'Refused: the VS Code command "workbench.action.terminal.sendSequence" is not in the setting openhands.ide.executeCommand.allowlist.',
    );
  });

  it('reconstructs nested $vscode values, names a bad one, and encodes the result back', async () => {
    const seen: unknown[][] = [];
    vscode.commands.registerCommand('test.echo', (...a: unknown[]) => {
      seen.push(a);
      return { where: a[1] };
    });
    const { tools } = setup();
    const loc = { $vscode: 'Location', uri: 'file:///ws/a.ts', range: { start: { line: 1, character: 2 }, end: { $vscode: 'Position', line: 1, character: 5 } } };
    const r = (await runTool(tools, 'execute_command', { command: 'test.echo', args: ['x', [loc]] })) as { result: { where: unknown } };
    expect(seen[0][1]).toEqual([expect.any(vscode.Location)]);
    expect(r.result.where).toEqual([{ $vscode: 'Location', uri: 'file:///ws/a.ts', range: { start: { line: 1, character: 2 }, end: { line: 1, character: 5 } } }]);
    await expect(runTool(tools, 'execute_command', { command: 'test.echo', args: [{ a: { $vscode: 'Foo' } }] })).rejects.toThrow(
      'Unknown VS Code object type: "Foo". Supported types: Uri, Position, Range, Selection, Location (at $[0].a)',
    );
    await expect(runTool(tools, 'execute_command', { command: 'test.echo', args: [{ $vscode: 'Position', character: 1 }] })).rejects.toThrow(
      'Invalid VS Code Position: missing required field "line" (at $[0])',
    );
    await expect(runTool(tools, 'execute_command', { command: 'test.echo', args: [{ $vscode: 'Position', line: '1', character: 1 }] })).rejects.toThrow(
      'Invalid VS Code Position: field "line" must be a number, got string (at $[0])',
    );
    // (the mock runs unknown commands as no-ops: these two stand for VS Code's own failures)
    vscode.commands.registerCommand('test.nothere', () => {
      throw new Error("command 'test.nothere' not found");
    });
    vscode.commands.registerCommand('test.fails', () => {
      throw new Error('boom');
    });
    await expect(runTool(tools, 'execute_command', { command: 'test.nothere' })).rejects.toThrow('Unknown VS Code command "test.nothere" (no extension registered it)');
    await expect(runTool(tools, 'execute_command', { command: 'test.fails' })).rejects.toThrow('The VS Code command "test.fails" failed: boom');
    await expect(runTool(tools, 'execute_command', { command: 'test.echo', args: { a: 1 } })).rejects.toThrow('Argument "args" must be an array, got object');
  });
});

describe('helpers', () => {
  it('commandAllowed: exact ids and prefixes ending in *', () => {
    expect(commandAllowed('editor.action.goToLocations', ['editor.action.*'])).toBe(true);
    expect(commandAllowed('editor.actionX', ['editor.action.*'])).toBe(false);
    expect(commandAllowed('vscode.open', ['vscode.open'])).toBe(true);
    expect(commandAllowed('vscode.openWith', ['vscode.open'])).toBe(false);
    expect(commandAllowed('anything', [])).toBe(false);
  });

  it('findTextRange: start alone, start..end, and the errors', () => {
    const t = 'alpha beta gamma beta';
    expect(findTextRange(t, 'beta', undefined, 'f')).toEqual({ from: 6, to: 10 });
    expect(findTextRange(t, 'alpha', 'beta', 'f')).toEqual({ from: 0, to: 10 });
    expect(findTextRange(t, 'gamma', 'beta', 'f')).toEqual({ from: 11, to: 21 });
    expect(() => findTextRange(t, 'delta', undefined, 'f.ts')).toThrow('start_text "delta" was not found in f.ts');
    expect(() => findTextRange(t, 'gamma', 'alpha', 'f.ts')).toThrow('end_text "alpha" was not found after start_text in f.ts');
  });

  it('every writing tool is marked as writing and passes the gate', async () => {
    const { tools, gateCalls } = setup({ gate: 'no' });
    expect(tools.map((t) => t.name)).toEqual(['open_file', 'save_document', 'open_diff', 'present_review', 'execute_command']);
    expect(tools.every((t) => !t.readOnly)).toBe(true);
    const args: Record<string, object> = {
      open_file: { path: '/ws/a.ts' },
      save_document: { path: '/ws/a.ts' },
      open_diff: { path: '/ws/a.ts', new_content: 'x' },
      present_review: { markdown: '# hi' },
      execute_command: { command: 'test.echo' },
    };
    for (const t of tools) await expect(runTool(tools, t.name, args[t.name])).rejects.toThrow('no');
    expect(gateCalls).toEqual(tools.map((t) => t.name));
  });
});
