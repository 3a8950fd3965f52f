import { describe, expect, it } from 'vitest';
import { ShellStream } from './shellStream';

const block = (code: number, cwd: string) =>
  `\n###PS1JSON###\n{\n  "pid": "",\n  "exit_code": "${code}",\n  "username": "root",\n  "hostname": "h",\n  "working_dir": "${cwd}",\n  "py_interpreter_path": ""\n}\n###PS1END###\n`;

describe('shell stream', () => {
  it('replaces PS1 blocks by prompts with exit code and cwd', () => {
    const s = new ShellStream();
    expect(s.push(`echo hi\r\nhi${block(0, '/ws')}`)).toEqual([
      { type: 'text', text: 'echo hi\r\nhi' },
      { type: 'prompt', exitCode: 0, cwd: '/ws' },
    ]);
  });

  it('handles markers split anywhere across chunks', () => {
    // Every cut, with `\n` and with the `\r\n` a PTY sends: a cut right after `###PS1END###`
    // (the addon's usual chunking) must still drop the block's closing newline.
    for (const whole of [`out1${block(2, '/a')}out2${block(0, '/b')}`, `out1${block(2, '/a')}out2${block(0, '/b')}`.replace(/\n/g, '\r\n')]) {
    for (let cut = 1; cut < whole.length; cut++) {
      const s = new ShellStream();
      const segs = [...s.push(whole.slice(0, cut)), ...s.push(whole.slice(cut))];
      const text = segs.filter((x) => x.type === 'text').map((x: any) => x.text).join('');
      expect(text).toBe('out1out2');
      expect(segs.filter((x) => x.type === 'prompt')).toEqual([
        { type: 'prompt', exitCode: 2, cwd: '/a' },
        { type: 'prompt', exitCode: 0, cwd: '/b' },
      ]);
    }
    }
  });

  it('passes plain text straight through', () => {
    const s = new ShellStream();
    expect(s.push('a\nb')).toEqual([{ type: 'text', text: 'a\nb' }]);
    expect(s.push('\n')).toEqual([]);
    expect(s.push('###')).toEqual([]);
    expect(s.push(' not a marker')).toEqual([{ type: 'text', text: '\n### not a marker' }]);
  });
});
