import * as vscode from 'vscode';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** Normalises a level name from the addon's tracing records ("WARN", "warning", 4, ...). */
export function parseLevel(level: unknown): LogLevel {
  const s = String(level ?? '').toLowerCase();
  if (s.startsWith('err') || s === '1') return 'error';
  if (s.startsWith('warn') || s === '2') return 'warn';
  if (s.startsWith('debug') || s === '4') return 'debug';
  if (s.startsWith('trace') || s === '5') return 'trace';
  return 'info';
}

/**
 * The extension's log: a LogOutputChannel ("OpenHands"), so the user picks the level in the
 * Output view and records carry levels. The addon's tracing records are written here too, with
 * their target as a prefix.
 */
export class Logger implements vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;

  constructor(name = 'OpenHands') {
    this.channel = vscode.window.createOutputChannel(name, { log: true });
  }

  trace(message: string): void { this.channel.trace(message); }
  debug(message: string): void { this.channel.debug(message); }
  info(message: string): void { this.channel.info(message); }
  warn(message: string): void { this.channel.warn(message); }
  error(message: string | Error): void { this.channel.error(message); }

  /** Writes one record coming from the addon's tracing subscriber. */
  record(level: unknown, target: string | undefined, message: string): void {
    const text = target ? `[${target}] ${message}` : message;
    switch (parseLevel(level)) {
      case 'error': this.channel.error(text); break;
      case 'warn': this.channel.warn(text); break;
      case 'debug': this.channel.debug(text); break;
      case 'trace': this.channel.trace(text); break;
      default: this.channel.info(text);
    }
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
