import { beforeEach, describe, expect, it } from 'vitest';
import { AGENT_TERMINAL_NAME, AgentTerminal } from './agentTerminal';
import { mock, resetMock } from './test/vscodeMock';

function capture() {
  const t = mock.terminals[mock.terminals.length - 1];
  const out: string[] = [];
  t.pty.onDidWrite((s: string) => out.push(s));
  return { t, out };
}

describe('agent terminal', () => {
  beforeEach(() => resetMock());

  it('creates the "OpenHands Agent" terminal lazily and buffers until opened', () => {
    const term = new AgentTerminal();
    expect(mock.terminals).toHaveLength(0);
    term.command('echo hi', '/ws');
    term.output('hi\n');
    term.exit(0);
    expect(mock.terminals).toHaveLength(1);
    const { t, out } = capture();
    expect(t.name).toBe(AGENT_TERMINAL_NAME);
    expect(out).toHaveLength(0);
    t.pty.open();
    const text = out.join('');
    expect(text).toContain('$ \x1b[0mecho hi\r\n');
    expect(text).toContain('hi\r\n');
    expect(text).not.toMatch(/[^\r]\n/);
  });

  it('streams live once open and sanitises output', () => {
    const term = new AgentTerminal();
    term.show();
    const { t, out } = capture();
    t.pty.open();
    term.output('\x1b]0;pwn\x07line1\nline2');
    expect(out.join('')).toBe('line1\r\nline2');
    term.exit(2);
    expect(out.join('')).toContain('\r\n\x1b[31m[exit code 2]');
  });

  it('prints multi-line commands with continuation prompts and reveals when configured', () => {
    const term = new AgentTerminal({ revealOnCommand: () => true });
    term.command('for i in 1 2\ndo echo $i; done');
    const { t, out } = capture();
    t.pty.open();
    expect(out.join('')).toContain('> \x1b[0mdo echo $i; done\r\n');
    expect(t.shown).toBe(1);
  });

  it('recreates the terminal after the user closed it', () => {
    const term = new AgentTerminal({ revealOnCommand: () => false });
    term.command('a');
    mock.terminals[0].pty.close();
    term.command('b');
    expect(mock.terminals).toHaveLength(2);
    expect(mock.terminals[0].shown).toBe(0);
  });

  it('turns the raw shell stream into prompts, echo and output', () => {
    const term = new AgentTerminal();
    const ps1 = (code: number) => `\n###PS1JSON###\n{"exit_code": "${code}", "working_dir": "/ws"}\n###PS1END###\n`;
    const enc = new TextEncoder();
    term.data(enc.encode(ps1(0)));
    term.data(enc.encode('\x1b[?2004hls nope\r\n\x1b[?2004lls: cannot access'));
    term.data(enc.encode(` 'nope'${ps1(2)}`));
    const { t, out } = capture();
    t.pty.open();
    // The last prompt waits for what follows it: the line being written stays empty.
    expect(out.join('')).toBe("\x1b[2m/ws\x1b[0m \x1b[1m$ \x1b[0mls nope\r\nls: cannot access 'nope'\r\n\x1b[31m[exit code 2]\x1b[0m\r\n");
    term.data(enc.encode('\x1b[?2004hpwd\r\n'));
    // (its newline waits in the stream: it could begin the next PS1 block)
    expect(out.join('')).toMatch(/\r\n\x1b\[2m\/ws\x1b\[0m \x1b\[1m\$ \x1b\[0mpwd$/);
  });

  it('starts its own lines after a held prompt on a line of their own', () => {
    const term = new AgentTerminal();
    term.show();
    const { t, out } = capture();
    t.pty.open();
    term.data(new TextEncoder().encode('\n###PS1JSON###\n{"exit_code": "0", "working_dir": "/ws"}\n###PS1END###\n'));
    term.notice('executor stopped');
    expect(out.join('')).toBe('\x1b[2m/ws\x1b[0m \x1b[1m$ \x1b[0m\r\n\x1b[2m# executor stopped\x1b[0m\r\n');
  });

  it('decodes UTF-8 split across chunks', () => {
    const term = new AgentTerminal();
    const bytes = new TextEncoder().encode('ü✓');
    term.data(bytes.slice(0, 1));
    term.data(bytes.slice(1));
    const { t, out } = capture();
    t.pty.open();
    expect(out.join('')).toBe('ü✓');
  });

  it('answers typing with a read-only hint once', () => {
    const term = new AgentTerminal();
    term.show();
    const { t, out } = capture();
    t.pty.open();
    t.pty.handleInput('x');
    t.pty.handleInput('y');
    expect(out.join('').match(/does not take input/g)).toHaveLength(1);
  });
});
