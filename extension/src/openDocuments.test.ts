import { beforeEach, describe, expect, it } from 'vitest';
import { changedSpan, saveBlocker } from './openDocuments';
import { EndOfLine, mock, resetMock } from './test/vscodeMock';

const enc = (s: string) => new TextEncoder().encode(s);
const doc = (eol = EndOfLine.LF, encoding?: string) => ({ eol, encoding, uri: { toString: () => 'file:///ws/a.txt' } }) as any;

describe('open documents', () => {
  beforeEach(() => resetMock());

  it('the changed span does not split a CRLF or a surrogate pair', () => {
    expect(changedSpan('alpha\nsecond\n', 'beta\nsecond\n')).toEqual([0, 4, 3]); // 'alph' -> 'bet'
    expect(changedSpan('same', 'same')).toEqual([4, 4, 4]);
    // A span starting or ending between \r and \n is widened to the whole pair.
    expect(changedSpan('x\ry', 'x\r\ny')).toEqual([1, 2, 3]);
    expect(changedSpan('x\ny', 'x\r\ny')).toEqual([1, 2, 3]);
    expect(changedSpan('a\uD83D\uDE00', 'a\uD83D\uDE01')).toEqual([1, 3, 3]);
  });

  it('blocks the save path when the saved bytes would differ from the agent\'s', () => {
    const ascii = enc('old\n');
    expect(saveBlocker(doc(), ascii, enc('new\n'))).toBeUndefined();
    expect(saveBlocker(doc(), ascii, new Uint8Array([0xff, 0x0a]))).toBe('the new bytes are not UTF-8');
    expect(saveBlocker(doc(), ascii, enc('\uFEFFnew\n'))).toBe('the new bytes start with a byte order mark');
    expect(saveBlocker(doc(EndOfLine.LF, 'utf8bom'), ascii, enc('new\n'))).toBe("the document's encoding is utf8bom");
    expect(saveBlocker(doc(EndOfLine.LF, 'utf8'), ascii, enc('né\n'))).toBeUndefined();
    expect(saveBlocker(doc(), ascii, enc('né\n'))).toBe("the document's encoding is unknown");
    expect(saveBlocker(doc(), enc('é\n'), enc('né\n'))).toBeUndefined();
    expect(saveBlocker(doc(), ascii, enc('new\r\n'))).toBe('the line endings differ from the document');
    expect(saveBlocker(doc(EndOfLine.CRLF), ascii, enc('a\r\nb\n'))).toBe('the line endings differ from the document');
    expect(saveBlocker(doc(EndOfLine.CRLF), ascii, enc('a\r\nb\r\n'))).toBeUndefined();
  });

  it('blocks the save path for each save participant that would change the text', () => {
    const old = enc('old\n');
    const blocked = (key: string, value: unknown, text: string) => {
      resetMock();
      mock.config[key] = value;
      return saveBlocker(doc(), old, enc(text));
    };
    expect(blocked('files.insertFinalNewline', true, 'no final newline')).toBe('files.insertFinalNewline');
    expect(blocked('files.insertFinalNewline', true, 'final newline\n')).toBeUndefined();
    expect(blocked('files.trimFinalNewlines', true, 'two\n\n')).toBe('files.trimFinalNewlines');
    expect(blocked('files.trimFinalNewlines', true, 'one\n')).toBeUndefined();
    expect(blocked('files.trimTrailingWhitespace', true, 'space \nx\n')).toBe('files.trimTrailingWhitespace');
    expect(blocked('files.trimTrailingWhitespace', true, 'clean\nx\n')).toBeUndefined();
    expect(blocked('editor.formatOnSave', true, 'x\n')).toBe('editor.formatOnSave');
    expect(blocked('editor.codeActionsOnSave', { 'source.fixAll': 'explicit' }, 'x\n')).toBe('editor.codeActionsOnSave');
    expect(blocked('editor.codeActionsOnSave', ['source.organizeImports'], 'x\n')).toBe('editor.codeActionsOnSave');
    expect(blocked('editor.codeActionsOnSave', { 'source.fixAll': 'never', 'source.x': false }, 'x\n')).toBeUndefined();
  });
});
