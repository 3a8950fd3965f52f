/**
 * A small stand-in for the `vscode` module, enough for the unit tests of the glue code.
 * Tests reach the recorded calls through `mock` and reset it with `resetMock()`.
 */
type Listener<T> = (e: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Disposable {
  constructor(private readonly f: () => void) {}
  dispose(): void {
    this.f();
  }
}

export class Uri {
  private constructor(readonly scheme: string, readonly fsPath: string, readonly query = '') {}
  get path() {
    return this.fsPath;
  }
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  /** Like vscode.Uri.parse(value, true): a scheme is required. */
  static parse(value: string, _strict?: boolean): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/)?(.*)$/.exec(value);
    if (!m) throw new Error(`[UriError]: Scheme is missing: {scheme: "", path: "${value}"}`);
    return new Uri(m[1], decodeURIComponent(m[2]));
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.fsPath, ...parts].join('/'));
  }
  static from(c: { scheme: string; path: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path, c.query ?? '');
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}${this.query ? `?${this.query}` : ''}`;
  }
}

export enum FileType { Unknown = 0, File = 1, Directory = 2, SymbolicLink = 64 }
export enum StatusBarAlignment { Left = 1, Right = 2 }
export class ThemeIcon { constructor(readonly id: string) {} }
export class ThemeColor { constructor(readonly id: string) {} }

export class FileSystemError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
  static FileNotFound(p?: unknown) { return new FileSystemError(`${p} (FileNotFound)`, 'FileNotFound'); }
  static FileExists(p?: unknown) { return new FileSystemError(`${p} (FileExists)`, 'FileExists'); }
  static FileIsADirectory(p?: unknown) { return new FileSystemError(`${p} (FileIsADirectory)`, 'FileIsADirectory'); }
}

export interface MockLog { level: string; message: string }

function makeMock() {
  const state = {
    logs: [] as MockLog[],
    terminals: [] as Array<{ name: string; pty: any; shown: number; disposed: boolean }>,
    warnings: [] as Array<{ message: string; items: unknown[] }>,
    errors: [] as Array<{ message: string; items: string[] }>,
    warningAnswer: undefined as string | undefined,
    errorAnswer: undefined as string | undefined,
    inputAnswer: undefined as string | undefined,
    commands: [] as Array<{ id: string; args: unknown[] }>,
    registered: new Map<string, (...a: unknown[]) => unknown>(),
    config: {} as Record<string, unknown>,
    isTrusted: true,
    files: new Map<string, Uint8Array>(),
    textDocuments: [] as any[],
    statusItems: [] as any[],
    onDidChangeTextDocument: new EventEmitter<any>(),
    onDidChangeConfiguration: new EventEmitter<any>(),
    onDidGrantWorkspaceTrust: new EventEmitter<void>(),
    diagnostics: new Map<string, any[]>(),
    onDidChangeDiagnostics: new EventEmitter<any>(),
    /** The open editor tabs (one group); `vscode.diff` adds a diff tab when a test registers it. */
    tabs: [] as Array<{ input: unknown; label: string }>,
    onDidChangeTabs: new EventEmitter<any>(),
    contentProviders: new Map<string, any>(),
    appliedEdits: [] as WorkspaceEdit[],
  };
  return state;
}

export let mock = makeMock();
export function resetMock(): void {
  mock = makeMock();
}

export const window = {
  createOutputChannel(_name: string, _opts?: unknown) {
    const log = (level: string) => (message: unknown) => mock.logs.push({ level, message: String(message instanceof Error ? message.message : message) });
    return { trace: log('trace'), debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), show() {}, dispose() {} };
  },
  createTerminal(options: { name: string; pty: any }) {
    const t = { name: options.name, pty: options.pty, shown: 0, disposed: false };
    mock.terminals.push(t);
    return { name: options.name, show: () => { t.shown++; }, dispose: () => { t.disposed = true; } };
  },
  async showWarningMessage(message: string, ...items: unknown[]) {
    mock.warnings.push({ message, items });
    return mock.warningAnswer;
  },
  async showErrorMessage(message: string, ...items: string[]) {
    mock.errors.push({ message, items });
    return mock.errorAnswer;
  },
  async showInformationMessage() { return undefined; },
  async showInputBox() { return mock.inputAnswer; },
  createStatusBarItem() {
    const item = { text: '', tooltip: '', backgroundColor: undefined as unknown, command: '', name: '', visible: false, show() { item.visible = true; }, dispose() {} };
    mock.statusItems.push(item);
    return item;
  },
  registerWebviewViewProvider() { return new Disposable(() => {}); },
  tabGroups: {
    get all() { return [{ tabs: mock.tabs }]; },
    get activeTabGroup() { return { tabs: mock.tabs, activeTab: mock.tabs[mock.tabs.length - 1] }; },
    onDidChangeTabs: (l: Listener<any>) => mock.onDidChangeTabs.event(l),
    async close(tabs: any | any[]) {
      const closed = (Array.isArray(tabs) ? tabs : [tabs]).filter((t) => mock.tabs.includes(t));
      mock.tabs = mock.tabs.filter((t) => !closed.includes(t));
      mock.onDidChangeTabs.fire({ opened: [], changed: [], closed });
      return true;
    },
  },
};

export class TabInputTextDiff {
  constructor(readonly original: Uri, readonly modified: Uri) {}
}

export const commands = {
  async executeCommand(id: string, ...args: unknown[]) {
    mock.commands.push({ id, args });
    return mock.registered.get(id)?.(...args);
  },
  registerCommand(id: string, f: (...a: unknown[]) => unknown) {
    mock.registered.set(id, f);
    return new Disposable(() => mock.registered.delete(id));
  },
};

const fs = {
  async readFile(uri: Uri) {
    const data = mock.files.get(uri.fsPath);
    if (!data) throw FileSystemError.FileNotFound(uri.toString());
    return data;
  },
  async writeFile(uri: Uri, data: Uint8Array) { mock.files.set(uri.fsPath, data); },
  async stat(uri: Uri) {
    const data = mock.files.get(uri.fsPath);
    if (data) return { type: FileType.File, size: data.length, mtime: 2, ctime: 1 };
    if ([...mock.files.keys()].some((k) => k.startsWith(`${uri.fsPath}/`))) return { type: FileType.Directory, size: 0, mtime: 2, ctime: 1 };
    throw FileSystemError.FileNotFound(uri.toString());
  },
  async readDirectory(uri: Uri) {
    const prefix = `${uri.fsPath}/`;
    const names = new Map<string, FileType>();
    for (const k of mock.files.keys()) {
      if (!k.startsWith(prefix)) continue;
      const rest = k.slice(prefix.length);
      const [head, ...tail] = rest.split('/');
      names.set(head, tail.length ? FileType.Directory : FileType.File);
    }
    return [...names.entries()];
  },
  async createDirectory() {},
  async delete(uri: Uri) {
    if (!mock.files.delete(uri.fsPath)) throw FileSystemError.FileNotFound(uri.toString());
  },
  async rename(from: Uri, to: Uri, opts?: { overwrite?: boolean }) {
    const data = mock.files.get(from.fsPath);
    if (!data) throw FileSystemError.FileNotFound(from.toString());
    if (mock.files.has(to.fsPath) && !opts?.overwrite) throw FileSystemError.FileExists(to.toString());
    mock.files.delete(from.fsPath);
    mock.files.set(to.fsPath, data);
  },
};

export const workspace = {
  fs,
  get isTrusted() { return mock.isTrusted; },
  get textDocuments() { return mock.textDocuments; },
  get workspaceFolders() { return [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }]; },
  onDidChangeTextDocument: (l: Listener<any>) => mock.onDidChangeTextDocument.event(l),
  onDidChangeConfiguration: (l: Listener<any>) => mock.onDidChangeConfiguration.event(l),
  onDidGrantWorkspaceTrust: (l: Listener<void>) => mock.onDidGrantWorkspaceTrust.event(l),
  getConfiguration(section: string, _scope?: unknown) {
    return { get: <T>(key: string, def?: T): T => (`${section}.${key}` in mock.config ? (mock.config[`${section}.${key}`] as T) : (def as T)) };
  },
  /** Applies each replacement to the open document of its URI (its `applyEdit`, as the tests build them). */
  async applyEdit(edit: WorkspaceEdit) {
    mock.appliedEdits.push(edit);
    for (const e of edit.edits) {
      const doc = mock.textDocuments.find((d) => d.uri.toString() === e.uri.toString());
      if (!doc?.applyEdit) return false;
      doc.applyEdit(e.range, e.newText);
    }
    return true;
  },
  asRelativePath(p: Uri | string) { return typeof p === 'string' ? p : p.fsPath; },
  registerTextDocumentContentProvider(scheme: string, provider: unknown) {
    mock.contentProviders.set(scheme, provider);
    return new Disposable(() => mock.contentProviders.delete(scheme));
  },
};

export const version = '1.99.0-mock';

/** An in-memory Memento (workspaceState). */
export class MemoryMemento {
  private readonly data = new Map<string, unknown>();
  get<T>(key: string, def?: T): T | undefined {
    return this.data.has(key) ? (this.data.get(key) as T) : def;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, value);
  }
  keys(): readonly string[] {
    return [...this.data.keys()];
  }
}

// Value classes, shaped like VS Code's (0-based lines and characters).
export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(start: Position, end: Position) {
    this.start = start;
    this.end = end;
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}
export class Selection extends Range {
  constructor(readonly anchor: Position, readonly active: Position) {
    super(anchor, active);
  }
}
export class Location {
  constructor(readonly uri: Uri, readonly range: Range) {}
}

export const languages = {
  getDiagnostics(uri?: Uri): any {
    if (uri) return mock.diagnostics.get(uri.toString()) ?? [];
    return [...mock.diagnostics.entries()].map(([u, d]) => [Uri.parse(u), d]);
  },
  onDidChangeDiagnostics: (l: Listener<any>) => mock.onDidChangeDiagnostics.event(l),
};

export enum EndOfLine { LF = 1, CRLF = 2 }
export class WorkspaceEdit {
  readonly edits: Array<{ uri: Uri; range: Range; newText: string }> = [];
  replace(uri: Uri, range: Range, newText: string): void {
    this.edits.push({ uri, range, newText });
  }
}
