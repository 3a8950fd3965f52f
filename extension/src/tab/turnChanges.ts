import { commonEnds, type ServerEvent } from './eventModel';

/**
 * What the agent changed in files since the person's last message (a "turn"), as hunks to keep or
 * undo one by one, and the undone ones to tell the agent with the next message. Built from the
 * edit observations (V0's `edit`, V1's `file_editor` adapted to it: `old_content`/`new_content`):
 * the first edit of a file in the turn gives its text before the turn. Edits made by commands
 * (`sed -i`, a script) carry no contents and are not in it. No `vscode` here.
 */

/** One changed region: `beforeLines` (at `beforeStart` in the text before the turn) became
 * `afterLines` (at `afterStart` in the text now). Lines are 0-based indexes. */
export interface Hunk {
  beforeStart: number;
  beforeLines: string[];
  afterStart: number;
  afterLines: string[];
}

/** One file of the turn as the tab lists it: how much changed and how many hunks are left to review. */
export interface ChangedFile {
  path: string;
  /** The path as the person sees it (relative to the window's folders). */
  label: string;
  added: number;
  removed: number;
  hunks: number;
}

/** A hunk the person undid, for the agent. */
export interface Rejection {
  path: string;
  hunk: Hunk;
}

// Above this many cells the middle of a diff is one hunk (a full rewrite reads as one anyway).
const MAX_DIFF_CELLS = 4_000_000;

/** The hunks that turn `before` into `after` (a line diff: longest common subsequence). */
export function diffHunks(before: string, after: string): Hunk[] {
  const a = splitLines(before);
  const b = splitLines(after);
  const { start, endA, endB } = commonEnds(a, b);
  const n = endA - start;
  const m = endB - start;
  if (n === 0 && m === 0) return [];
  if (n === 0 || m === 0 || n * m > MAX_DIFF_CELLS) {
    return [{ beforeStart: start, beforeLines: a.slice(start, endA), afterStart: start, afterLines: b.slice(start, endB) }];
  }
  // lcs[i][j]: the longest common subsequence of a[start+i..endA) and b[start+j..endB).
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[start + i] === b[start + j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const hunks: Hunk[] = [];
  let open: Hunk | undefined;
  let i = 0;
  let j = 0;
  const flush = () => {
    if (open) hunks.push(open);
    open = undefined;
  };
  const at = () => (open ??= { beforeStart: start + i, beforeLines: [], afterStart: start + j, afterLines: [] });
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      flush();
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      at().afterLines.push(b[start + j++]);
    } else {
      at().beforeLines.push(a[start + i++]);
    }
  }
  flush();
  return hunks;
}

/** `text` with one hunk replaced by its other side: `undo` puts `beforeLines` back where
 * `afterLines` are; otherwise `afterLines` go where `beforeLines` are (keeping it: the text before
 * the turn then has it). Undefined when the text no longer has the expected lines there. */
export function applyHunk(text: string, hunk: Hunk, undo: boolean): string | undefined {
  const lines = splitLines(text);
  const [at, expected, replacement] = undo
    ? [hunk.afterStart, hunk.afterLines, hunk.beforeLines]
    : [hunk.beforeStart, hunk.beforeLines, hunk.afterLines];
  if (at + expected.length > lines.length) return undefined;
  for (let k = 0; k < expected.length; k++) if (lines[at + k] !== expected[k]) return undefined;
  lines.splice(at, expected.length, ...replacement);
  return lines.join('\n');
}

/** A stable name for a hunk (its place and lines), for commands that come back later. */
export function hunkId(hunk: Hunk): string {
  return JSON.stringify([hunk.afterStart, hunk.beforeLines, hunk.afterLines]);
}

function splitLines(text: string): string[] {
  return text.split('\n');
}

export class TurnChanges {
  /** Per absolute path: its text before the turn (what Keep advances, hunk by hunk). */
  private readonly before = new Map<string, string>();
  /** Per absolute path: its text now, as far as the tab knows (the agent's last edit, or the editor's text). */
  private readonly now = new Map<string, string>();
  /** The summary's hunks per path, for the texts they were computed from. */
  private readonly counted = new Map<string, { before: string; now: string; file: Omit<ChangedFile, 'label'> }>();
  private rejections: Rejection[] = [];
  private readonly listeners = new Set<() => void>();

  /** Takes in an event of the conversation; true when it changed what is listed. */
  record(event: ServerEvent): boolean {
    if (event.observation !== 'edit') return false;
    const x = event.extras ?? {};
    const path = typeof x.path === 'string' ? x.path : undefined;
    if (!path || (typeof x.old_content !== 'string' && typeof x.new_content !== 'string')) return false;
    if (!this.before.has(path)) this.before.set(path, typeof x.old_content === 'string' ? x.old_content : '');
    if (typeof x.new_content === 'string') this.now.set(path, x.new_content);
    this.changed();
    return true;
  }

  /** The files the agent changed this turn (absolute paths, in the order first edited). */
  paths(): string[] {
    return [...this.before.keys()];
  }

  has(path: string): boolean {
    return this.before.has(path);
  }

  /** The file's text before the turn (with the hunks kept since applied), if the agent edited it. */
  baseline(path: string): string | undefined {
    return this.before.get(path);
  }

  /**
   * The editor's text of a file of the turn changed (the person edited it, or undid a hunk): the
   * list counts from it. True when that changed what is listed.
   */
  observe(path: string, text: string): boolean {
    if (!this.before.has(path) || this.now.get(path) === text) return false;
    this.now.set(path, text);
    this.changed();
    return true;
  }

  /**
   * The files of the turn that still differ from their accepted text, for the tab's "Changes"
   * list (a file whose hunks were all kept or undone is left out); `relative` names a path.
   */
  summary(relative: (path: string) => string = (p) => p): ChangedFile[] {
    const out: ChangedFile[] = [];
    for (const [path, before] of this.before) {
      const now = this.now.get(path);
      if (now === undefined) continue;
      let c = this.counted.get(path);
      if (!c || c.before !== before || c.now !== now) {
        const hunks = diffHunks(before, now);
        const file = {
          path,
          added: hunks.reduce((n, h) => n + h.afterLines.length, 0),
          removed: hunks.reduce((n, h) => n + h.beforeLines.length, 0),
          hunks: hunks.length,
        };
        c = { before, now, file };
        this.counted.set(path, c);
      }
      if (c.file.hunks) out.push({ ...c.file, label: relative(path) });
    }
    return out;
  }

  /** The hunks of `path` between its text before the turn and `current` (what the editor has now). */
  hunks(path: string, current: string): Hunk[] {
    const before = this.before.get(path);
    return before === undefined ? [] : diffHunks(before, current);
  }

  /** Keep: the hunk becomes part of the file's accepted text (it is no longer offered). */
  keep(path: string, hunk: Hunk): boolean {
    const before = this.before.get(path);
    const kept = before === undefined ? undefined : applyHunk(before, hunk, false);
    if (kept === undefined) return false;
    this.before.set(path, kept);
    this.counted.delete(path);
    this.changed();
    return true;
  }

  /** Keep all: every file's text now (`current`, the editor's) becomes its accepted text. */
  keepAll(current: (path: string) => string | undefined): void {
    for (const path of this.before.keys()) {
      const text = current(path);
      if (text === undefined) continue;
      this.before.set(path, text);
      this.now.set(path, text);
    }
    this.changed();
  }

  /** The person undid the hunk in the editor (after it was restored): told to the agent next. */
  rejected(path: string, hunk: Hunk): void {
    this.rejections.push({ path, hunk });
    this.changed();
  }

  get pendingRejections(): readonly Rejection[] {
    return this.rejections;
  }

  /**
   * The words for the agent about the hunks undone since the last message (undefined: none).
   * `relative` shows a path as the person sees it. `sent()` clears them once the message is sent.
   */
  feedback(relative: (path: string) => string = (p) => p): string | undefined {
    if (!this.rejections.length) return undefined;
    const parts = this.rejections.map(({ path, hunk }) => {
      const where = hunk.afterLines.length
        ? `lines ${hunk.afterStart + 1}-${hunk.afterStart + hunk.afterLines.length}`
        : `after line ${hunk.afterStart}`;
      const yours = hunk.afterLines.length ? fence(hunk.afterLines) : '(nothing: you deleted the lines below)';
      const restored = hunk.beforeLines.length ? fence(hunk.beforeLines) : '(nothing: your lines were removed)';
      return `- ${relative(path)}, ${where} of your version: your change\n${yours}\nwas undone; the file has again\n${restored}`;
    });
    return (
      'I reviewed your edits and undid these changes. Do not make them again unless I ask for them; ' +
      'keep the rest of your work.\n' +
      parts.join('\n')
    );
  }

  /** A message (with the feedback) went to the agent: a new turn starts, nothing is left to tell. */
  sent(): void {
    this.rejections = [];
    this.before.clear();
    this.now.clear();
    this.counted.clear();
    this.changed();
  }

  /** Another conversation is shown: nothing of this one's turn applies to it. */
  reset(): void {
    this.sent();
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}

function fence(lines: string[]): string {
  return ['```', ...lines, '```'].join('\n');
}
