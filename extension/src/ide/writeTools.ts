/**
 * The IDE tools that change something: open_file, save_document, open_diff, present_review and
 * execute_command. Every call passes the write gate first (writeGate.ts: trusted workspace + the
 * user's one-time consent); execute_command also needs the per-workspace opt-in and the allowlist.
 */
import * as vscode from 'vscode';
import { DiffApprovals } from './diffApproval';
import { REVIEW_MODES, ReviewMode } from './reviewDocument';
import type { ReviewPanels } from './reviewPanel';
import { decodeVsCodeValues, encodeVsCodeValues, SUPPORTED_TYPES, VsCodeValueError } from './vscodeValues';
import type { WriteGate } from './writeGate';
import {
  boolArg,
  displayPath,
  enumArg,
  IdeTool,
  loadDocument,
  openDocumentFor,
  outRange,
  POSITION_NOTE,
  resolvePath,
  schema,
  stringArg,
  ToolArgumentError,
  ToolRefusedError,
} from './toolSupport';

/** Proposed contents and review texts above this size are refused (they travel in one JSON message). */
export const MAX_TEXT_BYTES = 2 * 1024 * 1024;

export const EXECUTE_COMMAND_STATE_KEY = 'openhands.ide.executeCommand.enabled.v1';
export const ALLOWLIST_SETTING = 'openhands.ide.executeCommand.allowlist';

export interface CommandPolicy {
  /** Whether the user turned execute_command on for this workspace. */
  enabled(): boolean;
  /** Command ids (exact, or a prefix ending in `*`) that may run. */
  allowlist(): readonly string[];
}

export interface WriteToolDeps {
  gate: WriteGate;
  diffs: DiffApprovals;
  reviews: ReviewPanels;
  commands: CommandPolicy;
}

function textArg(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (v === undefined || v === null) throw new ToolArgumentError(`Missing required argument "${name}"`);
  if (typeof v !== 'string') throw new ToolArgumentError(`Argument "${name}" must be a string, got ${Array.isArray(v) ? 'array' : typeof v}`);
  if (Buffer.byteLength(v, 'utf8') > MAX_TEXT_BYTES) throw new ToolArgumentError(`Argument "${name}" is larger than ${MAX_TEXT_BYTES} bytes`);
  return v;
}

/** The range from the first `start` to the end of the first `end` after it (or of `start` alone). */
export function findTextRange(text: string, start: string, end: string | undefined, where: string): { from: number; to: number } {
  const from = text.indexOf(start);
  if (from < 0) throw new ToolArgumentError(`start_text ${JSON.stringify(start)} was not found in ${where}`);
  if (end === undefined) return { from, to: from + start.length };
  const at = text.indexOf(end, from + start.length);
  if (at < 0) throw new ToolArgumentError(`end_text ${JSON.stringify(end)} was not found after start_text in ${where}`);
  return { from, to: at + end.length };
}

export function commandAllowed(id: string, allowlist: readonly string[]): boolean {
  return allowlist.some((a) => (a.endsWith('*') ? id.startsWith(a.slice(0, -1)) : a === id));
}

export function writeTools(deps: WriteToolDeps): IdeTool[] {
  const { gate } = deps;
  return [
    {
      name: 'open_file',
      readOnly: false,
      description:
        'Opens a file in a VS Code editor tab and makes it the active editor, optionally selecting and revealing a range found by text: ' +
        'start_text (its first occurrence) up to the end of end_text (its first occurrence after start_text; without end_text, start_text alone). ' +
        `${POSITION_NOTE} Returns {path, uri, range, selected_text} (range null without start_text).`,
      inputSchema: {
        type: 'object',
        properties: {
          path: schema.path,
          start_text: { type: 'string', description: 'Text to find; the selection starts at its first occurrence.' },
          end_text: { type: 'string', description: 'Text after start_text where the selection ends (inclusive). Needs start_text.' },
          preview: { type: 'boolean', description: 'Open as a preview tab (replaced by the next preview). Default false.' },
          preserve_focus: { type: 'boolean', description: 'Keep the keyboard focus where it is. Default false.' },
        },
        required: ['path'],
        additionalProperties: false,
      },
      async run(args) {
        const uri = resolvePath(stringArg(args, 'path'));
        const start = stringArg(args, 'start_text', true);
        const end = stringArg(args, 'end_text', true);
        if (end !== undefined && start === undefined) throw new ToolArgumentError('Argument "end_text" needs "start_text"');
        if (start === '') throw new ToolArgumentError('Argument "start_text" must not be empty');
        const preview = boolArg(args, 'preview', false);
        const preserveFocus = boolArg(args, 'preserve_focus', false);
        await gate.check('open_file');
        const doc = await loadDocument(uri);
        let selection: vscode.Selection | undefined;
        if (start !== undefined) {
          const r = findTextRange(doc.getText(), start, end === '' ? undefined : end, displayPath(uri));
          selection = new vscode.Selection(doc.positionAt(r.from), doc.positionAt(r.to));
        }
        const editor = await vscode.window.showTextDocument(doc, { preview, preserveFocus, selection });
        if (selection) editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        return {
          path: displayPath(uri),
          uri: uri.toString(),
          range: selection ? outRange(selection) : null,
          selected_text: selection ? doc.getText(selection) : null,
        };
      },
    },
    {
      name: 'save_document',
      readOnly: false,
      description:
        'Saves a document that has unsaved changes in VS Code (what the user or a tool typed into the editor) to disk. ' +
        'Returns {path, uri, open, was_dirty, saved}: a document that is not open or has no unsaved changes is left alone (saved false).',
      inputSchema: { type: 'object', properties: { path: schema.path }, required: ['path'], additionalProperties: false },
      async run(args) {
        const uri = resolvePath(stringArg(args, 'path'));
        await gate.check('save_document');
        const doc = openDocumentFor(uri);
        const base = { path: displayPath(uri), uri: uri.toString() };
        if (!doc) return { ...base, open: false, was_dirty: false, saved: false };
        if (doc.isUntitled) throw new ToolArgumentError(`${displayPath(uri)} is an untitled document: it has no file to save to`);
        if (!doc.isDirty) return { ...base, open: true, was_dirty: false, saved: false };
        if (!(await doc.save())) throw new Error(`VS Code did not save ${displayPath(uri)}`);
        return { ...base, open: true, was_dirty: true, saved: true };
      },
    },
    {
      name: 'open_diff',
      readOnly: false,
      description:
        "Proposes a new content for a file: VS Code shows it in its diff editor (left: the file as VS Code has it, unsaved changes included; right: the proposal) " +
        'with "Accept Proposed Change" and "Reject Proposed Change" in the editor title bar, and this call waits until the user decides. ' +
        'Accept writes the proposal to the file and saves it: returns {result: "FILE_SAVED", path}. Reject, closing the diff tab, or a newer ' +
        'proposal for the same file: {result: "DIFF_REJECTED", path, reason} with reason rejected, tab-closed, superseded, cancelled or shutdown. ' +
        'A path to a file that does not exist yet proposes a new file.',
      inputSchema: {
        type: 'object',
        properties: {
          path: schema.path,
          new_content: { type: 'string', description: 'The complete proposed content of the file.' },
          title: { type: 'string', description: 'Title of the diff tab. Default: the file name and how to decide.' },
        },
        required: ['path', 'new_content'],
        additionalProperties: false,
      },
      async run(args, call) {
        const uri = resolvePath(stringArg(args, 'path'));
        const content = textArg(args, 'new_content');
        const title = stringArg(args, 'title', true) || undefined;
        await gate.check('open_diff');
        return deps.diffs.propose(uri, content, { title, signal: call?.signal });
      },
    },
    {
      name: 'present_review',
      readOnly: false,
      description:
        'Shows Markdown (a review, a plan, a summary of changes) to the user in a VS Code panel beside the editor, one panel per title. ' +
        'mode "replace" (default) sets the whole text, "append" adds to it, "update-section" replaces the body of the section under `heading` ' +
        '(any level; appended as "## heading" if missing). HTML in the text is shown as text; links work for http(s) only. ' +
        'Returns {title, outcome, characters, sections, revision}.',
      inputSchema: {
        type: 'object',
        properties: {
          markdown: { type: 'string', description: 'The Markdown text.' },
          mode: { type: 'string', enum: [...REVIEW_MODES], description: 'replace (default), append or update-section.' },
          heading: { type: 'string', description: 'For update-section: the heading text of the section to replace.' },
          title: { type: 'string', description: 'Panel title. Default "OpenHands Review".' },
        },
        required: ['markdown'],
        additionalProperties: false,
      },
      async run(args) {
        const markdown = textArg(args, 'markdown');
        const mode = enumArg<ReviewMode>(args, 'mode', REVIEW_MODES, 'replace');
        const heading = stringArg(args, 'heading', true);
        if (mode === 'update-section' && !heading?.trim()) throw new ToolArgumentError('Argument "heading" is required with mode "update-section"');
        const title = stringArg(args, 'title', true)?.trim() || 'OpenHands Review';
        await gate.check('present_review');
        return deps.reviews.show(title, markdown, mode, heading);
      },
    },
    {
      name: 'execute_command',
      readOnly: false,
      description:
        'Runs a VS Code command (off by default: the user turns it on per workspace, and only commands in the setting ' +
        `${ALLOWLIST_SETTING} may run). args is a JSON array of the command's arguments, in which VS Code objects are written as ` +
        `$vscode-tagged values at any depth: {"$vscode": "Uri", "value": "file:///..."}, {"$vscode": "Position", "line": 0, "character": 0}, ` +
        '{"$vscode": "Range", "start": {...}, "end": {...}}, {"$vscode": "Selection", "anchor": {...}, "active": {...}}, ' +
        '{"$vscode": "Location", "uri": "file:///...", "range": {...}}. These are VS Code API values, so their lines and characters are 0-based. ' +
        `Supported types: ${SUPPORTED_TYPES.join(', ')}. Returns {command, result} with VS Code objects in the result written the same way.`,
      inputSchema: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The command id, e.g. "editor.action.goToLocations".' },
          args: { type: 'array', description: 'The arguments, with $vscode-tagged values for VS Code objects. Default [].' },
        },
        required: ['command'],
        additionalProperties: false,
      },
      async run(args) {
        const command = stringArg(args, 'command');
        const raw = args.args ?? [];
        if (!Array.isArray(raw)) throw new ToolArgumentError(`Argument "args" must be an array, got ${raw === null ? 'null' : typeof raw}`);
        await gate.check('execute_command');
        if (!deps.commands.enabled()) {
          throw new ToolRefusedError(
            'Refused: execute_command is off in this workspace. The user can turn it on with "OpenHands: Allow VS Code Commands for IDE Tools in This Workspace".',
          );
        }
        if (!commandAllowed(command, deps.commands.allowlist())) {
          throw new ToolRefusedError(`Refused: the VS Code command "${command}" is not in the setting ${ALLOWLIST_SETTING}.`);
        }
        let decoded: unknown[];
        try {
          decoded = decodeVsCodeValues(raw) as unknown[];
        } catch (e) {
          if (e instanceof VsCodeValueError) throw new ToolArgumentError(e.message);
          throw e;
        }
        let result: unknown;
        try {
          result = await vscode.commands.executeCommand(command, ...decoded);
        } catch (e) {
          // VS Code's own text for a command nobody registered (API commands such as
          // vscode.executeDefinitionProvider are not listed by getCommands, so no list is checked first).
          const message = e instanceof Error ? e.message : String(e);
          if (/^command '.*' not found$/.test(message)) throw new ToolArgumentError(`Unknown VS Code command "${command}" (no extension registered it)`);
          throw new Error(`The VS Code command "${command}" failed: ${message}`);
        }
        return { command, result: encodeVsCodeValues(result) ?? null };
      },
    },
  ];
}
