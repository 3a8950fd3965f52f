import { describe, expect, it } from 'vitest';
import { parseInline, parseMarkdown, safeHref } from './markdown';

describe('markdown', () => {
  it('parses code blocks, headings, lists, quotes and paragraphs', () => {
    const md = '# Title\n\nSome **bold** and *em* and `code`.\n\n```python\nprint("<b>hi</b>")\n```\n- one\n- two\n\n1. first\n2. second\n> quoted';
    expect(parseMarkdown(md)).toEqual([
      { t: 'h', level: 1, children: [{ t: 'text', text: 'Title' }] },
      { t: 'p', children: [{ t: 'text', text: 'Some ' }, { t: 'strong', children: [{ t: 'text', text: 'bold' }] }, { t: 'text', text: ' and ' }, { t: 'em', children: [{ t: 'text', text: 'em' }] }, { t: 'text', text: ' and ' }, { t: 'code', text: 'code' }, { t: 'text', text: '.' }] },
      { t: 'pre', lang: 'python', text: 'print("<b>hi</b>")' },
      { t: 'list', ordered: false, items: [[{ t: 'text', text: 'one' }], [{ t: 'text', text: 'two' }]] },
      { t: 'list', ordered: true, items: [[{ t: 'text', text: 'first' }], [{ t: 'text', text: 'second' }]] },
      { t: 'quote', children: [{ t: 'text', text: 'quoted' }] },
    ]);
  });

  it('keeps an unterminated code block to the end and snake_case as text', () => {
    expect(parseMarkdown('```\na\nb')).toEqual([{ t: 'pre', lang: '', text: 'a\nb' }]);
    expect(parseInline('my_var_name')).toEqual([{ t: 'text', text: 'my_var_name' }]);
  });

  it('links only http(s) URLs', () => {
    expect(parseInline('[x](https://example.com/a)')).toEqual([{ t: 'link', href: 'https://example.com/a', children: [{ t: 'text', text: 'x' }] }]);
    expect(parseInline('[x](javascript:alert(1))')).toEqual([{ t: 'text', text: '[x](javascript:alert(1))' }]);
    expect(parseInline('see https://example.com/x.')).toEqual([{ t: 'text', text: 'see ' }, { t: 'link', href: 'https://example.com/x', children: [{ t: 'text', text: 'https://example.com/x' }] }, { t: 'text', text: '.' }]);
    for (const bad of ['javascript:alert(1)', 'data:text/html,<script>', 'command:workbench.action.terminal.new', 'vscode://x', ' //evil.com']) expect(safeHref(bad)).toBeUndefined();
  });
});
