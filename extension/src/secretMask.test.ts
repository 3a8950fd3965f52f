import { beforeEach, describe, expect, it } from 'vitest';
import { summariseAction } from './activity';
import { AgentTerminal } from './agentTerminal';
import { MASK, maskSecretExports } from './secretMask';
import { mock, resetMock } from './test/vscodeMock';

const block = (code: number, cwd: string) =>
  `\n###PS1JSON###\n{\n  "pid": "",\n  "exit_code": "${code}",\n  "username": "u",\n  "hostname": "h",\n  "working_dir": "${cwd}",\n  "py_interpreter_path": ""\n}\n###PS1END###\n`;

// What the runtimes type: V0 (`add_env_vars`) and V1 (`_export_secrets`).
const V0 = `export GITHUB_TOKEN=$'ghp_v0secret\\'q\\x0a'; export PLAIN_NAME=$'v0-other-secret';`;
const V1 = `export GITHUB_TOKEN=$'ghp_v1secret' && export PLAIN_NAME=$'v1-other-secret'`;

describe('secret exports are masked', () => {
  beforeEach(() => resetMock());

  it('masks every value of a command made only of exports, V0 and V1 forms', () => {
    expect(maskSecretExports(V0)).toBe(`export GITHUB_TOKEN=${MASK}; export PLAIN_NAME=${MASK};`);
    expect(maskSecretExports(V1)).toBe(`export GITHUB_TOKEN=${MASK} && export PLAIN_NAME=${MASK}`);
    expect(maskSecretExports(`export A="x\\"y"`)).toBe(`export A=${MASK}`);
  });

  it('leaves ordinary exports in a longer command alone, but masks credential-like names', () => {
    expect(maskSecretExports('export PATH=/opt/bin:$PATH; make')).toBe('export PATH=/opt/bin:$PATH; make');
    expect(maskSecretExports('export OPENAI_API_KEY=sk-abc && python run.py')).toBe(`export OPENAI_API_KEY=${MASK} && python run.py`);
    expect(maskSecretExports('echo export is a word')).toBe('echo export is a word');
  });

  it('masks a value cut at the end of a line', () => {
    expect(maskSecretExports(`export KEY_MATERIAL=$'-----BEGIN ...`)).toBe(`export KEY_MATERIAL=${MASK}`);
  });

  it('the activity list shows the export masked', () => {
    const { summary } = summariseAction({ id: 1, action: 'run', args: { command: V1 } });
    expect(summary).not.toContain('v1secret');
    expect(summary).not.toContain('v1-other-secret');
    expect(summary).toContain(`GITHUB_TOKEN=${MASK}`);
  });

  it("the agent terminal shows bash's echo of the export masked, whatever the chunking", () => {
    // bash's echo: bracketed-paste mode on, the typed line, mode off, CR CR LF, then the prompt.
    const stream = `${block(0, '/ws')}\x1b[?2004h${V0}\x1b[?2004l\r\r\n${block(0, '/ws')}\x1b[?2004hecho done\x1b[?2004l\r\r\ndone\r\n${block(0, '/ws')}`;
    for (let cut = 1; cut < stream.length; cut += 5) {
      resetMock();
      const term = new AgentTerminal({ revealOnCommand: () => false });
      term.show();
      const t = mock.terminals[mock.terminals.length - 1];
      const out: string[] = [];
      t.pty.onDidWrite((s: string) => out.push(s));
      t.pty.open();
      term.data(stream.slice(0, cut));
      term.data(stream.slice(cut));
      const text = out.join('');
      expect(text, `cut at ${cut}`).not.toContain('v0secret');
      expect(text, `cut at ${cut}`).not.toContain('v0-other-secret');
      expect(text, `cut at ${cut}`).toContain(`GITHUB_TOKEN=${MASK}`);
      expect(text, `cut at ${cut}`).toContain('done\r\n');
    }
  });

  it('output without exports streams live (nothing held back)', () => {
    const term = new AgentTerminal({ revealOnCommand: () => false });
    term.show();
    const t = mock.terminals[mock.terminals.length - 1];
    const out: string[] = [];
    t.pty.onDidWrite((s: string) => out.push(s));
    t.pty.open();
    term.data('progress 10%');
    expect(out.join('')).toBe('progress 10%');
  });
});
