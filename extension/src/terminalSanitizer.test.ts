import { describe, expect, it } from 'vitest';
import { sanitize, TerminalSanitizer } from './terminalSanitizer';

describe('terminal sanitizer', () => {
  it('turns lone \\n into \\r\\n and keeps \\r\\n and \\r', () => {
    expect(sanitize('a\nb\r\nc\rd')).toBe('a\r\nb\r\nc\rd');
  });

  it('handles a \\r\\n pair split across chunks', () => {
    const s = new TerminalSanitizer();
    expect(s.push('a\r') + s.push('\nb\n')).toBe('a\r\nb\r\n');
  });

  it('keeps colours and erase-in-line, drops cursor movement and screen clears', () => {
    expect(sanitize('\x1b[1;31mred\x1b[0m\x1b[K')).toBe('\x1b[1;31mred\x1b[0m\x1b[K');
    expect(sanitize('\x1b[2J\x1b[H\x1b[10;5Hx\x1b[?1049h\x1b[?25l')).toBe('x');
  });

  it('drops OSC (titles, hyperlinks, clipboard) with BEL or ST terminators', () => {
    expect(sanitize('\x1b]0;evil title\x07ok')).toBe('ok');
    expect(sanitize('\x1b]52;c;ZXZpbA==\x1b\\ok')).toBe('ok');
    expect(sanitize('\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\')).toBe('link');
    expect(sanitize('\x1bP1$qm\x1b\\z')).toBe('z');
  });

  it('handles an escape sequence split across chunks', () => {
    const s = new TerminalSanitizer();
    expect(s.push('a\x1b') + s.push('[3') + s.push('2mb\x1b]0;t') + s.push('itle\x07c')).toBe('a\x1b[32mbc');
  });

  it('drops other C0 and all C1 controls, keeps tabs, backspace and unicode', () => {
    expect(sanitize('a\x00b\x07c\x9b31md\x7fe\tf\bg ü ✓')).toBe('abc31mde\tf\bg ü ✓');
  });

  it('drops oversized or malformed CSI', () => {
    expect(sanitize(`\x1b[${'1;'.repeat(100)}mX`)).toContain('X');
    expect(sanitize(`\x1b[${'1;'.repeat(100)}mX`)).not.toContain('\x1b');
    expect(sanitize('\x1b[31\x01mY')).toBe('mY');
  });
});
