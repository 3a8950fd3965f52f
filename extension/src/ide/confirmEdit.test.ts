// The content a str_replace_editor action would leave, for the confirmation-mode diff.
import { describe, expect, it } from 'vitest';
import { proposedContent } from './confirmEdit';

describe('proposedContent', () => {
  it('create, str_replace (exactly one match), insert after a line', () => {
    expect(proposedContent({ command: 'create', file_text: 'new' }, undefined)).toBe('new');
    expect(proposedContent({ command: 'str_replace', old_str: 'b', new_str: 'B' }, 'a\nb\nc')).toBe('a\nB\nc');
    expect(proposedContent({ command: 'insert', insert_line: 1, new_str: 'x\ny' }, 'a\nb')).toBe('a\nx\ny\nb');
    expect(proposedContent({ command: 'insert', insert_line: 0, new_str: 'x' }, 'a')).toBe('x\na');
  });

  it('nothing when the result cannot be known beforehand', () => {
    expect(proposedContent({ command: 'str_replace', old_str: 'a', new_str: 'b' }, 'a a')).toBeUndefined();
    expect(proposedContent({ command: 'str_replace', old_str: 'z', new_str: 'b' }, 'a')).toBeUndefined();
    expect(proposedContent({ command: 'str_replace', old_str: 'a', new_str: 'b' }, undefined)).toBeUndefined();
    expect(proposedContent({ command: 'insert', insert_line: 5, new_str: 'x' }, 'a')).toBeUndefined();
    expect(proposedContent({ command: 'undo_edit' }, 'a')).toBeUndefined();
    expect(proposedContent({ command: 'view' }, 'a')).toBeUndefined();
  });
});
