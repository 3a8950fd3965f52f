/**
 * What the user sees: workspace folders, open editors, the selection (current and the latest
 * non-empty one) and whether a document has unsaved changes. All read-only.
 */
import * as vscode from 'vscode';
import { displayPath, IdeTool, OutRange, outRange, POSITION_NOTE, resolvePath, schema, stringArg } from './toolSupport';

/** Selected text beyond this many characters is cut (the range still says how much was selected). */
export const MAX_SELECTION_TEXT = 100_000;

export interface SelectionSnapshot {
  path: string;
  uri: string;
  language: string;
  range: OutRange;
  /** Whether the cursor is at the start of the range (selected upwards). */
  reversed: boolean;
  text: string;
  text_truncated: boolean;
  selections: number;
  at: string;
}

export function snapshotSelection(editor: vscode.TextEditor): SelectionSnapshot {
  const sel = editor.selection;
  const full = editor.document.getText(sel);
  return {
    path: displayPath(editor.document.uri),
    uri: editor.document.uri.toString(),
    language: editor.document.languageId,
    range: outRange(sel),
    reversed: sel.isReversed,
    text: full.length > MAX_SELECTION_TEXT ? full.slice(0, MAX_SELECTION_TEXT) : full,
    text_truncated: full.length > MAX_SELECTION_TEXT,
    selections: editor.selections.length,
    at: new Date().toISOString(),
  };
}

/** Remembers the last non-empty selection in any text editor while the window lives. */
export class SelectionTracker implements vscode.Disposable {
  private latest: SelectionSnapshot | undefined;
  private readonly sub: vscode.Disposable;

  constructor() {
    this.sub = vscode.window.onDidChangeTextEditorSelection((e) => this.observe(e.textEditor));
    const active = vscode.window.activeTextEditor;
    if (active) this.observe(active);
  }

  observe(editor: vscode.TextEditor): void {
    if (editor.selection.isEmpty) return;
    this.latest = snapshotSelection(editor);
  }

  get latestSelection(): SelectionSnapshot | undefined {
    return this.latest;
  }

  dispose(): void {
    this.sub.dispose();
  }
}

const noArgs = { type: 'object' as const, properties: {}, additionalProperties: false };

export function editorTools(selections: SelectionTracker): IdeTool[] {
  return [
    {
      name: 'get_workspace_folders',
      readOnly: true,
      description: 'The folders open in this VS Code window. Returns {folders: [{name, path, uri}], workspace_file}.',
      inputSchema: noArgs,
      async run() {
        return {
          folders: (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: displayPath(f.uri), uri: f.uri.toString() })),
          workspace_file: vscode.workspace.workspaceFile ? displayPath(vscode.workspace.workspaceFile) : null,
        };
      },
    },
    {
      name: 'get_open_editors',
      readOnly: true,
      description:
        'The editor tabs open in VS Code, in tab-group order. Returns {editors: [{path, uri, label, language, active, dirty, preview, group}]}: ' +
        'active is the tab the user is looking at, dirty means unsaved changes; language is null for tabs that are not text (images, webviews...).',
      inputSchema: noArgs,
      async run() {
        const editors = [];
        for (const group of vscode.window.tabGroups.all) {
          for (const tab of group.tabs) {
            const input = tab.input as { uri?: vscode.Uri; modified?: vscode.Uri } | undefined;
            const uri = input?.uri ?? input?.modified;
            const doc = uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) : undefined;
            editors.push({
              path: uri ? displayPath(uri) : null,
              uri: uri ? uri.toString() : null,
              label: tab.label,
              language: doc?.languageId ?? null,
              active: tab.isActive && group.isActive,
              dirty: tab.isDirty,
              preview: tab.isPreview,
              group: group.viewColumn,
            });
          }
        }
        return { editors };
      },
    },
    {
      name: 'get_selection',
      readOnly: true,
      description: `The current selection in the active text editor (the cursor position when nothing is selected). ${POSITION_NOTE} Returns {selection: {path, uri, language, range, reversed, text, text_truncated, selections, at}} or {selection: null} when no text editor is active.`,
      inputSchema: noArgs,
      async run() {
        const editor = vscode.window.activeTextEditor;
        return { selection: editor ? snapshotSelection(editor) : null };
      },
    },
    {
      name: 'get_latest_selection',
      readOnly: true,
      description: `The last non-empty selection the user made in any text editor since this VS Code window opened (it stays after the editor loses focus or the selection is cleared). ${POSITION_NOTE} Returns {selection: {...as get_selection}} or {selection: null} if nothing was selected yet.`,
      inputSchema: noArgs,
      async run() {
        return { selection: selections.latestSelection ?? null };
      },
    },
    {
      name: 'check_document_dirty',
      readOnly: true,
      description: 'Whether a file has unsaved changes in VS Code. Returns {path, uri, open, dirty}: open says whether VS Code has the document loaded; a document that is not open is never dirty.',
      inputSchema: { type: 'object', properties: { path: schema.path }, required: ['path'], additionalProperties: false },
      async run(args) {
        const uri = resolvePath(stringArg(args, 'path'));
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        return { path: displayPath(uri), uri: uri.toString(), open: doc !== undefined, dirty: doc?.isDirty ?? false };
      },
    },
  ];
}
