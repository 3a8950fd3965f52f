// The runtime path's cancel (docs/ide-tools.md): when the OpenHands runtime gives up on an IDE
// call, the executor aborts its signal; open_diff then closes its diff editor and settles as
// cancelled, and the call answers at once. The diff editor is the mock's tab model (the real host
// runs the same in tests/vscode/suite/ide-write.js).
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { mock, resetMock } from '../test/vscodeMock';
import { DiffApprovals } from './diffApproval';
import type { ReviewPanels } from './reviewPanel';
import { CANCELLED_MESSAGE, runtimeIdeTools } from './runtimeTools';
import { runTool } from './tools';
import { writeTools } from './writeTools';

function setup() {
  const infos: string[] = [];
  const diffs = new DiffApprovals({ info: (m) => infos.push(m), warn: (m) => infos.push(m) });
  // VS Code's diff command: a diff tab whose right side is the proposal.
  vscode.commands.registerCommand('vscode.diff', (left: unknown, right: unknown, title: unknown) => {
    mock.tabs.push({ input: new (vscode as any).TabInputTextDiff(left, right), label: String(title) });
  });
  const tools = writeTools({
    gate: { check: async () => undefined, revoke: async () => undefined },
    diffs,
    reviews: {} as ReviewPanels,
    commands: { enabled: () => false, allowlist: () => [] },
  });
  const runtime = runtimeIdeTools([], (name, args, ctx) => runTool(tools, name, args, ctx), { debug: () => undefined });
  return { diffs, runtime, infos };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
};

describe('runtime IDE tool calls', () => {
  beforeEach(() => resetMock());

  it('open_diff closes its diff editor and answers as cancelled when the runtime gives up', async () => {
    const { diffs, runtime, infos } = setup();
    const abort = new AbortController();
    const answer = runtime.call('open_diff', JSON.stringify({ path: '/ws/a.ts', new_content: 'proposed\n' }), abort.signal);
    await until(() => mock.tabs.length === 1);
    expect(diffs.waiting).toBe(1);
    abort.abort();
    const result = JSON.parse(await answer);
    expect(result).toEqual({ content: [{ type: 'text', text: CANCELLED_MESSAGE }], isError: true });
    await until(() => mock.tabs.length === 0);
    expect(diffs.waiting).toBe(0);
    expect(infos.some((m) => /diff 1 for .*a\.ts: DIFF_REJECTED \(cancelled\)/.test(m))).toBe(true);
    expect(mock.files.has('/ws/a.ts')).toBe(false);
  });

  it('a call that finishes first is not affected by a later abort', async () => {
    const { runtime } = setup();
    const abort = new AbortController();
    const answer = JSON.parse(await runtime.call('open_diff', JSON.stringify({ path: 3 }), abort.signal));
    abort.abort();
    expect(answer).toEqual({ content: [{ type: 'text', text: 'Argument "path" must be a string, got number' }], isError: true });
  });
});
