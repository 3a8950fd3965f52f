import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import {
  type CheckpointExecutor,
  type PlannedChange,
  type RevertUi,
  beforeMessageArgs,
  describeChange,
  messageIdOfKey,
  revertToBefore,
  runCheckpoint,
  undoRevert,
} from './revert';

// The real executor addon (npm/executor, `npm/executor/build.sh`): real checkpoints on a real
// folder. Nothing here needs a server; `execute` runs one action in the executor core.
const require_ = createRequire(__filename);
const addon = require_('../../npm/executor/index.js') as {
  Executor: new (options: Record<string, unknown>, fs: null) => CheckpointExecutor & { stop(): Promise<void> };
};

const CONVERSATION = 'conv1';

/** A scripted user: answers each pick from `picks` in turn, records everything shown. */
function scriptedUi(picks: Array<(shown: PlannedChange[]) => PlannedChange | 'apply' | undefined>) {
  const log = { picks: [] as Array<{ paths: string[]; dirty: string[] }>, diffs: [] as Array<{ path: string; text: string }>, infos: [] as string[], errors: [] as string[] };
  const ui: RevertUi = {
    async pick(plan, dirty) {
      log.picks.push({ paths: plan.changes.map((c) => c.path).sort(), dirty: [...dirty].sort() });
      const next = picks.shift();
      return next ? next(plan.changes) : undefined;
    },
    async diff(change, text) {
      log.diffs.push({ path: change.path, text });
    },
    async info(message) {
      log.infos.push(message);
      return undefined;
    },
    error(message) {
      log.errors.push(message);
    },
  };
  return { ui, log };
}

function dirtyDoc(file: string): vscode.TextDocument {
  return { isDirty: true, uri: vscode.Uri.file(file) } as unknown as vscode.TextDocument;
}

describe('revert to before a user message (real executor)', () => {
  let dir: string;
  let ws: string;
  let executor: CheckpointExecutor & { stop(): Promise<void> };
  const read = (name: string) => readFileSync(path.join(ws, name), 'utf8');

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'oh-revert-'));
    ws = path.join(dir, 'ws');
    mkdirSync(ws);
    // The store in the test's folder (read when the executor is built).
    process.env.OH_CHECKPOINT_DIR = path.join(dir, 'store');
    writeFileSync(path.join(ws, 'a.txt'), 'one\n');
    writeFileSync(path.join(ws, 'b.txt'), 'keep me\n');
    writeFileSync(path.join(ws, 'open.txt'), 'user text\n');
    executor = new addon.Executor({ serverUrl: 'http://127.0.0.1:9', conversationId: CONVERSATION, workspaceRoot: ws }, null);
    // What the runtime does before user message 4; a checkpoint with only that message's label
    // is not one before it (the label is for people, nothing reads it).
    await runCheckpoint(executor, 'take', beforeMessageArgs(CONVERSATION, 4));
    await runCheckpoint(executor, 'take', { label: beforeMessageArgs(CONVERSATION, 5).label });
    // The agent's turn: bash edits, deletes and creates.
    const reply = JSON.parse(await executor.execute(JSON.stringify({
      id: 900, action: 'run', args: { command: "sed -i 's/one/two/' a.txt && rm b.txt && echo new > c.txt && echo agent > open.txt" },
    })));
    expect(reply.extras.metadata.exit_code).toBe(0);
  });

  afterEach(async () => {
    await executor.stop().catch(() => undefined);
    delete process.env.OH_CHECKPOINT_DIR;
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the changes, shows a diff on demand, restores, leaves a dirty editor alone, and is undoable', async () => {
    const { ui, log } = scriptedUi([
      (changes) => changes.find((c) => c.path === 'a.txt'),
      () => 'apply',
    ]);
    const notes: string[] = [];
    const openFile = path.join(ws, 'open.txt');
    const outcome = await revertToBefore(executor, ui, CONVERSATION, 4, 'do it', () => [dirtyDoc(openFile)], (n) => notes.push(n));

    expect(log.errors).toEqual([]);
    expect(log.picks[0]).toEqual({ paths: ['a.txt', 'b.txt', 'c.txt', 'open.txt'], dirty: [openFile] });
    expect(log.diffs).toEqual([{ path: 'a.txt', text: 'one\n' }]);
    // On disk: as before the message, except the file with unsaved changes.
    expect(read('a.txt')).toBe('one\n');
    expect(read('b.txt')).toBe('keep me\n');
    expect(existsSync(path.join(ws, 'c.txt'))).toBe(false);
    expect(read('open.txt')).toBe('agent\n');
    expect(outcome!.report.left).toEqual([{ path: openFile, why: 'has unsaved changes in an editor' }]);
    // The conversation says so.
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('Files reverted to before message 4');
    expect(notes[0]).toContain(`Left alone: ${openFile} (has unsaved changes in an editor)`);

    // The undo brings back the agent's state.
    const undone = await undoRevert(executor, ui, 4, outcome!.report.undo_checkpoint, () => [], (n) => notes.push(n));
    expect(undone!.applied.length).toBe(3);
    expect(read('a.txt')).toBe('two\n');
    expect(existsSync(path.join(ws, 'b.txt'))).toBe(false);
    expect(read('c.txt')).toBe('new\n');
    expect(notes[1]).toContain('Undid a revert');
  });

  it('cancelling the list changes nothing', async () => {
    const { ui } = scriptedUi([() => undefined]);
    const notes: string[] = [];
    expect(await revertToBefore(executor, ui, CONVERSATION, 4, 'do it', () => [], (n) => notes.push(n))).toBeUndefined();
    expect(read('a.txt')).toBe('two\n');
    expect(notes).toEqual([]);
  });

  it('a message without a checkpoint (another message, another conversation) is reported, nothing restored', async () => {
    for (const [conversation, message] of [[CONVERSATION, 5], ['other', 4]] as const) {
      const { ui, log } = scriptedUi([() => 'apply']);
      expect(await revertToBefore(executor, ui, conversation, message, '', () => [], () => undefined)).toBeUndefined();
      expect(log.errors[0]).toMatch(/^No checkpoint was taken before this message/);
      expect(log.picks).toEqual([]);
    }
    expect(read('a.txt')).toBe('two\n');
  });
});

describe('revert helpers', () => {
  it('takes the checkpoint before a message with the same arguments as the Python runtime (one format, two languages)', () => {
    // V0 takes its checkpoints in Python (VsCodeRuntime) and the tab finds them by
    // `before_message`; checkpoints.py needs nothing beyond the standard library, so it is loaded
    // on its own.
    const module = path.join(__dirname, '..', '..', 'openhands-runtime-py', 'src', 'openhands_vscode_runtime', 'checkpoints.py');
    const script = [
      'import importlib.util, json, sys',
      `spec = importlib.util.spec_from_file_location('checkpoints', ${JSON.stringify(module)})`,
      'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      "print(json.dumps(m.before_message_args('conv-7f', 12)))",
    ].join('\n');
    const run = spawnSync('python3', ['-c', script], { encoding: 'utf8', env: { ...process.env, PYENV_VERSION: 'system' } });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(beforeMessageArgs('conv-7f', 12));
  });

  it('reads the message id from an item key', () => {
    expect(messageIdOfKey('e12')).toBe(12);
    expect(messageIdOfKey('x3')).toBeUndefined();
    expect(messageIdOfKey('n4')).toBeUndefined();
  });

  it('names the folder of each change (multi-root)', () => {
    const d = describeChange({ root: '/home/u/api', path: 'src/a.py', kind: 'modify' }, true);
    expect(d.description).toBe('revert changes · api');
    expect(d.detail).toMatch(/unsaved changes/);
  });
});
