import * as vscode from 'vscode';
import { SecretExportMasker, maskSecretExports } from './secretMask';
import { ShellStream } from './shellStream';
import { TerminalSanitizer } from './terminalSanitizer';

export const AGENT_TERMINAL_NAME = 'OpenHands Agent';
const MAX_PENDING = 256 * 1024;

const dim = (s: string) => `\x1b[2m${s}\x1b[0m`;
const bold = (s: string) => `\x1b[1m${s}\x1b[0m`;
const red = (s: string) => `\x1b[31m${s}\x1b[0m`;

/**
 * The Pseudoterminal behind the "OpenHands Agent" terminal. Output written before the terminal
 * is opened is buffered (bounded) and flushed on open. It is read-only: typing shows a hint.
 */
export class AgentPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private opened = false;
  private pending: string[] = [];
  private pendingSize = 0;
  private hinted = false;

  constructor(private readonly onClosedByUser: () => void) {}

  open(): void {
    this.opened = true;
    if (this.pending.length > 0) {
      this.writeEmitter.fire(this.pending.join(''));
      this.pending = [];
      this.pendingSize = 0;
    }
  }

  close(): void {
    this.opened = false;
    this.onClosedByUser();
  }

  handleInput(_data: string): void {
    if (this.hinted) return;
    this.hinted = true;
    this.write(dim('\r\n[This terminal shows what the OpenHands agent runs; it does not take input.]\r\n'));
  }

  /** Writes already-sanitised text. */
  write(text: string): void {
    if (text === '') return;
    if (this.opened) {
      this.writeEmitter.fire(text);
      return;
    }
    this.pending.push(text);
    this.pendingSize += text.length;
    while (this.pendingSize > MAX_PENDING && this.pending.length > 1) {
      this.pendingSize -= this.pending.shift()!.length;
    }
  }

  dispose(): void {
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}

/**
 * The agent terminal as the rest of the extension sees it: it creates the terminal on first use
 * (and again after the user closed it), prints each command as a prompt line and streams its
 * output live through the sanitiser, so hostile escape sequences never reach xterm.js.
 */
export class AgentTerminal implements vscode.Disposable {
  private terminal: vscode.Terminal | undefined;
  private pty: AgentPty | undefined;
  private readonly sanitizer = new TerminalSanitizer();
  private readonly shell = new ShellStream();
  private readonly masker = new SecretExportMasker();
  private readonly decoder = new TextDecoder('utf-8');
  private atLineStart = true;
  /**
   * The short prompt of the last PS1 block, written only together with whatever follows it (the
   * command bash echoes, output, a notice). xterm.js reflows every line on a resize except the one
   * the cursor is on: a prompt left waiting there while the panel opens or changes width (the
   * buffered output is flushed into a terminal still being laid out) kept only its first row's
   * cells, and the command landed after them (`/tmp/oh-vscode-run.ls src && …`).
   */
  private heldPrompt = '';

  constructor(private readonly options: { revealOnCommand: () => boolean; name?: string } = { revealOnCommand: () => true }) {}

  /** Shows the terminal (creating it if needed). */
  show(preserveFocus = true): void {
    this.ensure().show(preserveFocus);
  }

  get exists(): boolean {
    return this.terminal !== undefined;
  }

  /** A command the agent starts: printed as `$ command` (cwd dimmed above it when given). */
  command(command: string, cwd?: string): void {
    this.ensure();
    this.sanitizer.reset();
    let text = this.newLine();
    if (cwd) text += dim(new TerminalSanitizer().push(cwd)) + '\r\n';
    const lines = new TerminalSanitizer().push(maskSecretExports(command)).split('\r\n');
    text += lines.map((l, i) => (i === 0 ? bold('$ ') : bold('> ')) + l).join('\r\n') + '\r\n';
    this.emit(text);
    if (this.options.revealOnCommand()) this.terminal?.show(true);
  }

  /**
   * The executor's raw shell stream (bytes from the addon's terminal hook): readline's echo of
   * each command, its output, and OpenHands' PS1 JSON blocks, which become a short prompt
   * (`cwd $ `, with the previous command's exit code when it failed).
   */
  data(raw: Uint8Array | string): void {
    const text = typeof raw === 'string' ? raw : this.decoder.decode(raw, { stream: true });
    for (const seg of this.shell.push(text)) {
      if (seg.type === 'text') {
        // Masked before sanitising: the masker sees bash's own bytes (secretMask.ts).
        const shown = this.masker.push(seg.text);
        if (shown === '') continue;
        this.ensure();
        this.emit(this.sanitizer.push(shown));
      } else {
        const held = this.masker.flush();
        if (held !== '') {
          this.ensure();
          this.emit(this.sanitizer.push(held));
        }
        this.prompt(seg.exitCode, seg.cwd);
      }
    }
  }

  /**
   * A shell prompt: the previous command's failure (if any) at once, then `cwd $ `, held until
   * the echo (or anything else) follows it (`heldPrompt`).
   */
  prompt(exitCode: number | undefined, cwd: string | undefined): void {
    this.ensure();
    this.sanitizer.reset();
    let text = this.newLine();
    if (exitCode !== undefined && exitCode !== 0) text += red(`[exit code ${exitCode}]`) + '\r\n';
    this.emit(text);
    this.heldPrompt = (cwd ? dim(new TerminalSanitizer().push(cwd)) + ' ' : '') + bold('$ ');
  }

  /** Reveals the terminal without focus when the user wants that for each command. */
  reveal(): void {
    if (this.options.revealOnCommand()) this.ensure().show(true);
  }

  /** Live output of the running command (raw: sanitised here). */
  output(data: string): void {
    this.ensure();
    this.emit(this.sanitizer.push(data));
  }

  /** The command finished; a non-zero exit code is shown. */
  exit(code: number | undefined): void {
    let text = this.newLine();
    if (code !== undefined && code !== 0) text += red(`[exit code ${code}]`) + '\r\n';
    this.emit(text);
  }

  /** A dimmed status line from the extension itself (connected, stopped, ...); `create` opens the terminal if needed. */
  notice(message: string, create = false): void {
    if (create) this.ensure();
    const text = this.newLine() + dim(`# ${new TerminalSanitizer().push(message)}`) + '\r\n';
    this.emit(text);
  }

  /** What starts a line of our own here: nothing at a line start, else a line break. */
  private newLine(): string {
    return this.atLineStart && this.heldPrompt === '' ? '' : '\r\n';
  }

  private emit(text: string): void {
    if (text === '') return;
    text = this.heldPrompt + text;
    this.heldPrompt = '';
    this.atLineStart = text.endsWith('\n') || text.endsWith('\r');
    this.pty?.write(text);
  }

  private ensure(): vscode.Terminal {
    if (!this.terminal || !this.pty) {
      this.pty = new AgentPty(() => {
        this.terminal = undefined;
        this.pty = undefined;
        this.atLineStart = true;
      });
      this.terminal = vscode.window.createTerminal({
        name: this.options.name ?? AGENT_TERMINAL_NAME,
        pty: this.pty,
        iconPath: new vscode.ThemeIcon('hubot'),
        isTransient: true,
      });
    }
    return this.terminal;
  }

  dispose(): void {
    this.terminal?.dispose();
    this.pty?.dispose();
    this.terminal = undefined;
    this.pty = undefined;
  }
}
