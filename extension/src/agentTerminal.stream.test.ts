import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AgentTerminal } from './agentTerminal';
import { mock, resetMock } from './test/vscodeMock';

/**
 * What a terminal shows for the text a Pseudoterminal writes: printable characters overwrite the
 * cell under the cursor, `\r` goes to column 0, `\n` to the next line, `\b` one column left;
 * escape sequences (the SGR colours and erase-in-line the sanitiser keeps) change no cell here.
 */
function screen(written: string): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  for (let i = 0; i < written.length; i++) {
    const ch = written[i];
    if (ch === '\x1b') {
      const m = /^\x1b\[[0-9;:?]*[A-Za-z]/.exec(written.slice(i));
      if (m) i += m[0].length - 1;
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row++;
      lines[row] ??= [];
    } else if (ch === '\b') col = Math.max(0, col - 1);
    else {
      while (lines[row].length < col) lines[row].push(' ');
      lines[row][col++] = ch;
    }
  }
  return lines.map((l) => l.join('').trimEnd());
}

/**
 * The stream of a real executor session as the addon hands it over (recorded by
 * scripts/capture-terminal-session.cjs): the shell's init `alias git=...`, then
 * `ls src && cat src/greet.py`, in the addon's own chunks. The shell's reads split right after
 * `###PS1END###`, so the newline closing the prompt block arrives as a chunk of its own.
 */
const session = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'terminal-session.json'), 'utf8')) as {
  commands: string[];
  chunks: string[];
};

describe('agent terminal on a real shell stream', () => {
  beforeEach(() => resetMock());

  it('shows the whole prompt before each command bash echoes', () => {
    const term = new AgentTerminal({ revealOnCommand: () => false });
    term.show();
    const t = mock.terminals[0];
    const out: string[] = [];
    t.pty.onDidWrite((s: string) => out.push(s));
    t.pty.open();
    for (const chunk of session.chunks) term.data(new TextEncoder().encode(chunk));
    const cwd = /"working_dir": "([^"]+)"/.exec(session.chunks.join(''))![1];
    const shown = screen(out.join(''));
    for (const command of session.commands) {
      expect(shown).toContain(`${cwd} $ ${command}`);
    }
    expect(shown).toContain('greet.py');
    expect(shown).toContain('def greet(name):');
  });

  // The real VS Code host (the screenshot in docs/): the output buffered before the terminal
  // opened was flushed into a terminal still being laid out, and the prompt it ended with (the
  // line xterm.js does not reflow, the cursor's) kept only its first 19 columns:
  // `/tmp/oh-vscode-run.ls src && cat src/greet.py`. No prompt may be left as the line being
  // written, neither at the flush nor after any prompt block.
  it('never leaves a prompt as the line being written (the real host cut it on a resize)', () => {
    const host = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'terminal-session-vscode.json'), 'utf8')) as {
      openedAfter: number;
      commands: string[];
      chunks: string[];
    };
    const term = new AgentTerminal({ revealOnCommand: () => false });
    term.notice('connected to http://127.0.0.1:1 (conversation c)', true);
    const t = mock.terminals[0];
    const out: string[] = [];
    t.pty.onDidWrite((s: string) => out.push(s));
    const atLineStart = () => /[\r\n]$/.test(out.join(''));
    host.chunks.forEach((chunk, i) => {
      if (i === host.openedAfter) {
        t.pty.open({ columns: 80, rows: 30 });
        expect(atLineStart(), 'the flush at open ends with a prompt').toBe(true);
      }
      term.data(new TextEncoder().encode(chunk));
      if (i >= host.openedAfter && chunk.includes('###PS1END###')) {
        expect(atLineStart(), `a prompt is the line being written after chunk ${i}`).toBe(true);
      }
    });
    const cwd = /"working_dir": "([^"]+)"/.exec(host.chunks.join(''))![1];
    const shown = screen(out.join(''));
    for (const command of host.commands) expect(shown).toContain(`${cwd} $ ${command}`);
  });
});
