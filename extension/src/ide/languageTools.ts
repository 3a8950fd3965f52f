/**
 * Language intelligence through VS Code's own commands (`vscode.executeHoverProvider`, ...), so
 * the answers come from whatever language extensions the user has, on the text VS Code has
 * (unsaved buffers included).
 */
import * as vscode from 'vscode';
import {
  displayPath,
  enumArg,
  IdeTool,
  intArg,
  ToolArgumentError,
  loadDocument,
  openDocumentFor,
  OutRange,
  outRange,
  POSITION_NOTE,
  positionArgs,
  resolvePath,
  schema,
  stringArg,
} from './toolSupport';

// vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3.
export const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;
export type SeverityName = (typeof SEVERITIES)[number];
/** The documented default filter: errors and warnings. */
export const DEFAULT_SEVERITY: SeverityName = 'warning';
const FIRST_DIAGNOSTICS_WAIT_MS = 3000;
const QUIET_MS = 300;

export interface OutDiagnostic {
  path: string;
  uri: string;
  severity: SeverityName;
  range: OutRange;
  message: string;
  source?: string;
  code?: string | number;
}

function diagnosticCode(code: vscode.Diagnostic['code']): string | number | undefined {
  if (code === undefined || code === null) return undefined;
  return typeof code === 'object' ? code.value : code;
}

export function formatDiagnostic(uri: vscode.Uri, d: vscode.Diagnostic): OutDiagnostic {
  const out: OutDiagnostic = {
    path: displayPath(uri),
    uri: uri.toString(),
    severity: SEVERITIES[d.severity] ?? 'error',
    range: outRange(d.range),
    message: d.message,
  };
  if (d.source) out.source = d.source;
  const code = diagnosticCode(d.code);
  if (code !== undefined) out.code = code;
  return out;
}

/**
 * Waits until the language server has reported on `uri` (first change event) and then has been
 * quiet for a moment, or until `timeoutMs`. Used when the tool had to open the document itself:
 * its diagnostics do not exist before the language server has seen it.
 */
function settleDiagnostics(uri: vscode.Uri, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let quiet: ReturnType<typeof setTimeout> | undefined;
    let reported = false;
    const done = () => {
      sub.dispose();
      clearTimeout(overall);
      if (quiet) clearTimeout(quiet);
      resolve(reported);
    };
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.toString() === uri.toString())) return;
      reported = true;
      if (quiet) clearTimeout(quiet);
      quiet = setTimeout(done, QUIET_MS);
    });
    const overall = setTimeout(done, timeoutMs);
  });
}

/** The editor tab showing `uri`, if any (language extensions such as TypeScript check only those). */
function tabFor(uri: vscode.Uri): vscode.Tab | undefined {
  for (const group of vscode.window.tabGroups?.all ?? []) {
    for (const tab of group.tabs) {
      const input = tab.input as { uri?: vscode.Uri } | undefined;
      if (input?.uri && input.uri.toString() === uri.toString()) return tab;
    }
  }
  return undefined;
}

const NOT_REPORTED_NOTE =
  'The language extension did not report on this file while it is not open in an editor tab (TypeScript, for one, ' +
  'checks only files open in tabs), so an empty list does not mean the file is clean. Call again with open_in_tab: true ' +
  'to open it briefly in a background preview tab (focus stays where it is; the tab is closed again).';

/** Diagnostics of one file, opening it as the arguments say; see the tool's description. */
async function fileDiagnostics(uri: vscode.Uri, waitMs: number, openInTab: boolean) {
  const wasOpen = openDocumentFor(uri) !== undefined;
  const wasInTab = tabFor(uri) !== undefined;
  let reported = wasInTab;
  let openedBy: 'hidden' | 'tab' | false = false;
  let doc: vscode.TextDocument;
  if (wasInTab) {
    doc = await loadDocument(uri);
  } else if (openInTab) {
    const settled = settleDiagnostics(uri, waitMs);
    doc = await loadDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    openedBy = 'tab';
    reported = await settled;
    const tab = tabFor(uri);
    if (tab) await vscode.window.tabGroups.close(tab, true);
  } else {
    const settled = wasOpen ? undefined : settleDiagnostics(uri, waitMs);
    doc = await loadDocument(uri);
    if (!wasOpen) openedBy = 'hidden';
    reported = settled ? await settled : vscode.languages.getDiagnostics(uri).length > 0;
  }
  const document: Record<string, unknown> = { path: displayPath(doc.uri), dirty: doc.isDirty, version: doc.version, in_editor_tab: wasInTab, opened_by_tool: openedBy, reported };
  if (!reported) document.note = NOT_REPORTED_NOTE;
  return { document, diagnostics: vscode.languages.getDiagnostics(doc.uri) };
}

type LocationLike = vscode.Location | vscode.LocationLink;

async function lineText(uri: vscode.Uri, line0: number, cache: Map<string, string[] | null>): Promise<string | undefined> {
  const key = uri.toString();
  if (!cache.has(key)) {
    const open = openDocumentFor(uri);
    if (open) cache.set(key, open.getText().split(/\r?\n/));
    else {
      try {
        cache.set(key, new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)).split(/\r?\n/));
      } catch {
        cache.set(key, null);
      }
    }
  }
  const text = cache.get(key)?.[line0];
  return text === undefined ? undefined : text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/** Locations and LocationLinks as `{path, uri, range, text}` (text: the first line of the range, as it is now). */
export async function formatLocations(items: readonly LocationLike[] | LocationLike | undefined | null, limit: number): Promise<{ locations: unknown[]; truncated: boolean }> {
  const list = items ? (Array.isArray(items) ? items : [items]) : [];
  const cache = new Map<string, string[] | null>();
  const locations = [];
  for (const item of list.slice(0, limit)) {
    const link = 'targetUri' in item;
    const uri = link ? (item as vscode.LocationLink).targetUri : (item as vscode.Location).uri;
    const range = link ? ((item as vscode.LocationLink).targetSelectionRange ?? (item as vscode.LocationLink).targetRange) : (item as vscode.Location).range;
    const out: Record<string, unknown> = { path: displayPath(uri), uri: uri.toString(), range: outRange(range) };
    const text = await lineText(uri, range.start.line, cache);
    if (text !== undefined) out.text = text;
    locations.push(out);
  }
  return { locations, truncated: list.length > limit };
}

function hoverText(c: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof c === 'string') return c;
  if ('language' in c && typeof c.language === 'string') return `\`\`\`${c.language}\n${c.value}\n\`\`\``;
  return c.value;
}

const symbolKind = (k: number): string => (vscode.SymbolKind as unknown as Record<number, string> | undefined)?.[k] ?? String(k);

interface OutSymbol { name: string; kind: string; detail?: string; range: OutRange; children?: OutSymbol[] }

function formatDocumentSymbol(s: vscode.DocumentSymbol, depth: number): OutSymbol {
  const out: OutSymbol = { name: s.name, kind: symbolKind(s.kind), range: outRange(s.range) };
  if (s.detail) out.detail = s.detail;
  if (s.children?.length && depth < 20) out.children = s.children.map((c) => formatDocumentSymbol(c, depth + 1));
  return out;
}

const positionSchema = () => ({
  type: 'object' as const,
  properties: { path: schema.path, line: schema.line, column: schema.column } as Record<string, unknown>,
  required: ['path', 'line'],
  additionalProperties: false,
});

const limitSchema = { type: 'integer', minimum: 1, maximum: 1000, description: 'At most this many results (default 100).' };

function navigationTool(name: string, command: string, what: string): IdeTool {
  return {
    name,
    readOnly: true,
    description: `${what} of the symbol at a position, from the language extensions through VS Code's \`${command}\` (unsaved buffers included). ${POSITION_NOTE} Returns {locations: [{path, uri, range, text}], truncated}; text is the location's first line.`,
    inputSchema: { ...positionSchema(), properties: { path: schema.path, line: schema.line, column: schema.column, limit: limitSchema } },
    async run(args) {
      const uri = resolvePath(stringArg(args, 'path'));
      const doc = await loadDocument(uri);
      const pos = positionArgs(args, doc);
      const limit = intArg(args, 'limit', { min: 1, max: 1000, default: 100 });
      const result = await vscode.commands.executeCommand<LocationLike[] | LocationLike | undefined>(command, doc.uri, pos);
      return formatLocations(result, limit);
    },
  };
}

export function languageTools(): IdeTool[] {
  return [
    {
      name: 'diagnostics',
      readOnly: true,
      description:
        'Problems (errors, warnings, ...) that VS Code\'s language extensions report, for one file or for the whole workspace. ' +
        'By default only errors and warnings; pass severity "information" or "hint" to widen. For a file that is open in an editor the ' +
        'unsaved buffer is checked; a file that is not open is opened without showing it and the tool waits for the first report ' +
        '(document.reported says whether one came: TypeScript checks only files open in tabs, see open_in_tab). ' +
        'Without path: every file the language extensions have reported on (many only check open files). ' +
        `${POSITION_NOTE} Returns {diagnostics: [{path, uri, severity, range, message, source, code}], counts, severity, truncated} (+ document {path, dirty, version, in_editor_tab, opened_by_tool, reported, note} for one file).`,
      inputSchema: {
        type: 'object',
        properties: {
          path: { ...schema.path, description: `${schema.path.description} Omit for the whole workspace.` },
          severity: {
            type: 'string',
            enum: [...SEVERITIES],
            default: DEFAULT_SEVERITY,
            description: 'The least severe level included: "error" (errors only), "warning" (default: errors and warnings), "information", "hint" (everything).',
          },
          limit: { type: 'integer', minimum: 1, maximum: 5000, description: 'At most this many diagnostics (default 500).' },
          wait_ms: { type: 'integer', minimum: 0, maximum: 30000, description: `For a file that is not open yet: how long to wait for the language extension's first report (default ${FIRST_DIAGNOSTICS_WAIT_MS}).` },
          open_in_tab: {
            type: 'boolean',
            description: 'For a file that is not open in an editor tab: open it in a background preview tab (focus stays) until the language extension has reported, then close that tab. Needed for TypeScript, which checks only files open in tabs. Default false: the file is opened without showing it.',
          },
        },
        additionalProperties: false,
      },
      async run(args) {
        const path = stringArg(args, 'path', true);
        const openInTab = args.open_in_tab === undefined || args.open_in_tab === null ? false : args.open_in_tab;
        if (typeof openInTab !== 'boolean') throw new ToolArgumentError(`Argument "open_in_tab" must be a boolean, got ${typeof openInTab}`);
        const severity = enumArg(args, 'severity', SEVERITIES, DEFAULT_SEVERITY);
        const limit = intArg(args, 'limit', { min: 1, max: 5000, default: 500 });
        const waitMs = intArg(args, 'wait_ms', { min: 0, max: 30000, default: FIRST_DIAGNOSTICS_WAIT_MS });
        const maxLevel = SEVERITIES.indexOf(severity);
        let entries: Array<[vscode.Uri, readonly vscode.Diagnostic[]]>;
        let document: Record<string, unknown> | undefined;
        if (path !== undefined && path.trim() !== '') {
          const uri = resolvePath(path);
          const r = await fileDiagnostics(uri, waitMs, openInTab);
          document = r.document;
          entries = [[uri, r.diagnostics]];
        } else {
          entries = vscode.languages.getDiagnostics();
        }
        const counts: Record<string, number> = { error: 0, warning: 0, information: 0, hint: 0 };
        const all: OutDiagnostic[] = [];
        for (const [uri, diags] of entries) {
          for (const d of diags) {
            if (d.severity > maxLevel) continue;
            const f = formatDiagnostic(uri, d);
            counts[f.severity]++;
            all.push(f);
          }
        }
        all.sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) || a.path.localeCompare(b.path) || a.range.start.line - b.range.start.line);
        return { ...(document ? { document } : {}), severity, counts, diagnostics: all.slice(0, limit), truncated: all.length > limit };
      },
    },
    {
      name: 'hover',
      readOnly: true,
      description: `The hover information (type, signature, documentation) at a position, as the language extensions give it through \`vscode.executeHoverProvider\` (unsaved buffers included). ${POSITION_NOTE} Returns {hovers: [{contents: [markdown], range}]}.`,
      inputSchema: positionSchema(),
      async run(args) {
        const uri = resolvePath(stringArg(args, 'path'));
        const doc = await loadDocument(uri);
        const pos = positionArgs(args, doc);
        const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, pos)) ?? [];
        return {
          hovers: hovers.map((h) => ({ contents: h.contents.map(hoverText).filter((t) => t.trim() !== ''), ...(h.range ? { range: outRange(h.range) } : {}) })),
        };
      },
    },
    navigationTool('definition', 'vscode.executeDefinitionProvider', 'Where the definition is'),
    navigationTool('type_definition', 'vscode.executeTypeDefinitionProvider', 'Where the type definition is'),
    navigationTool('references', 'vscode.executeReferenceProvider', 'Every reference (the declaration included)'),
    {
      name: 'document_symbols',
      readOnly: true,
      description: `The symbols (classes, functions, variables, ...) of a file as an outline, through \`vscode.executeDocumentSymbolProvider\`. ${POSITION_NOTE} Returns {symbols: [{name, kind, detail, range, children}]}.`,
      inputSchema: { type: 'object', properties: { path: schema.path }, required: ['path'], additionalProperties: false },
      async run(args) {
        const uri = resolvePath(stringArg(args, 'path'));
        const doc = await loadDocument(uri);
        const result = (await vscode.commands.executeCommand<Array<vscode.DocumentSymbol | vscode.SymbolInformation>>('vscode.executeDocumentSymbolProvider', doc.uri)) ?? [];
        return {
          symbols: result.map((s) =>
            'location' in s
              ? { name: s.name, kind: symbolKind(s.kind), ...(s.containerName ? { container: s.containerName } : {}), range: outRange(s.location.range) }
              : formatDocumentSymbol(s, 0),
          ),
        };
      },
    },
    {
      name: 'workspace_symbols',
      readOnly: true,
      description: `Symbols whose name matches a query anywhere in the workspace, through \`vscode.executeWorkspaceSymbolProvider\` (fuzzy matching is the language extension's). ${POSITION_NOTE} Returns {symbols: [{name, kind, container, path, uri, range}], truncated}.`,
      inputSchema: {
        type: 'object',
        properties: { query: { type: 'string', description: 'Text to look for in symbol names.' }, limit: limitSchema },
        required: ['query'],
        additionalProperties: false,
      },
      async run(args) {
        const query = stringArg(args, 'query');
        const limit = intArg(args, 'limit', { min: 1, max: 1000, default: 100 });
        const result = (await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', query)) ?? [];
        return {
          symbols: result.slice(0, limit).map((s) => ({
            name: s.name,
            kind: symbolKind(s.kind),
            ...(s.containerName ? { container: s.containerName } : {}),
            path: displayPath(s.location.uri),
            uri: s.location.uri.toString(),
            range: outRange(s.location.range),
          })),
          truncated: result.length > limit,
        };
      },
    },
  ];
}
