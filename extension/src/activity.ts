import * as vscode from 'vscode';
import { actionTitle } from './actionTitle';

/** One delegated action as the view lists it. */
export interface ActivityEntry {
  id: number;
  kind: string;
  summary: string;
  status: 'running' | 'ok' | 'error';
  result?: string;
  startedAt: number;
  finishedAt?: number;
}

type Json = Record<string, unknown>;

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
const oneLine = (s: string, max = 160) => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** An action event's kind and its title on one line (actionTitle.ts, the tab's too). */
export function summariseAction(event: Json): { kind: string; summary: string } {
  const kind = str(event.action);
  return { kind: kind || 'unknown', summary: oneLine(actionTitle(kind, (event.args as Json | undefined) ?? {}, str(event.message))) };
}

/** Outcome of an observation event: ok/error and a one-line result. */
export function summariseObservation(event: Json): { status: 'ok' | 'error'; result: string } {
  const kind = str(event.observation);
  const content = str(event.content);
  const extras = (event.extras as Json | undefined) ?? {};
  const metadata = (extras.metadata as Json | undefined) ?? {};
  if (kind === 'error') return { status: 'error', result: oneLine(content) };
  if (kind === 'run') {
    const code = metadata.exit_code;
    const exit = typeof code === 'number' ? code : Number(code);
    const lastLine = content.trimEnd().split('\n').pop() ?? '';
    if (Number.isFinite(exit) && exit !== 0 && exit !== -1) return { status: 'error', result: `exit ${exit}${lastLine ? ` · ${oneLine(lastLine, 100)}` : ''}` };
    if (exit === -1) return { status: 'ok', result: `still running · ${oneLine(lastLine, 100)}` };
    return { status: 'ok', result: `exit 0${lastLine ? ` · ${oneLine(lastLine, 100)}` : ''}` };
  }
  const lines = content === '' ? 0 : content.split('\n').length;
  return { status: 'ok', result: lines > 1 ? `${lines} lines` : oneLine(content, 100) || 'done' };
}

/** The last N delegated actions with their results, newest first. */
export class ActivityLog implements vscode.Disposable {
  private readonly entries: ActivityEntry[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly capacity = 50, private readonly now: () => number = Date.now) {}

  get items(): readonly ActivityEntry[] {
    return this.entries;
  }

  action(event: Json): void {
    const id = Number(event.id);
    const { kind, summary } = summariseAction(event);
    const existing = this.entries.find((e) => e.id === id && e.status === 'running');
    if (existing) return; // a re-delivery of a running action
    this.entries.unshift({ id, kind, summary, status: 'running', startedAt: this.now() });
    if (this.entries.length > this.capacity) this.entries.length = this.capacity;
    this.emitter.fire();
  }

  observation(event: Json): void {
    const cause = Number(event.cause);
    const entry = this.entries.find((e) => e.id === cause);
    if (!entry) return;
    const { status, result } = summariseObservation(event);
    entry.status = status;
    entry.result = result;
    entry.finishedAt = this.now();
    this.emitter.fire();
  }

  get running(): number {
    return this.entries.filter((e) => e.status === 'running').length;
  }

  clear(): void {
    this.entries.length = 0;
    this.emitter.fire();
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
