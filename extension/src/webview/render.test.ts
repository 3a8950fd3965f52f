// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { ChatList, renderItem, renderMarkdown } from './render';
import type { ChatItem } from './protocol';

const XSS = [
  '<script>window.__pwned = 1</script>',
  '<img src=x onerror="window.__pwned=1">',
  '[click](javascript:window.__pwned=1)',
  '`<b>code</b>` **<i>bold</i>**',
  '```html\n</code></pre><script>window.__pwned=1</script>\n```',
  '"><svg onload=window.__pwned=1>',
];

describe('webview rendering', () => {
  it('never turns text into markup (XSS cases)', () => {
    for (const text of XSS) {
      const host = document.createElement('div');
      host.append(renderMarkdown(document, text));
      host.append(renderItem(document, { kind: 'action', key: 'k', action: 'run', title: text, status: 'ok', output: text, thought: text, diff: [`+ ${text}`] }));
      host.append(renderItem(document, { kind: 'error', key: 'e', text }));
      expect(host.querySelector('script, img, svg, iframe, b, i, [onerror], [onload]')).toBeNull();
      for (const a of host.querySelectorAll('a')) expect(a.getAttribute('href')).toMatch(/^https?:\/\//);
      // The text itself is all there, as text.
      expect(host.textContent).toContain(text.includes('```') ? '<script>window.__pwned=1</script>' : text.replace(/[`*]|\[click\]\(|\)$/g, '').slice(0, 5));
    }
    expect((window as any).__pwned).toBeUndefined();
  });

  it('offers "Revert files to before this" on user messages from the server only', () => {
    const user = renderItem(document, { kind: 'message', key: 'e7', role: 'user', text: 'fix it' });
    const button = user.querySelector<HTMLButtonElement>('button.revert');
    expect(button?.textContent).toBe('Revert files to before this');
    expect(button?.dataset.revert).toBe('e7');
    // The agent's messages, and a user message not (yet) from the stream, have none.
    expect(renderItem(document, { kind: 'message', key: 'e8', role: 'agent', text: 'done' }).querySelector('button.revert')).toBeNull();
    expect(renderItem(document, { kind: 'message', key: 'x0', role: 'user', text: 'hi', pending: true }).querySelector('button.revert')).toBeNull();
  });

  it('renders a message as Markdown with a code block, and an action collapsed with exit code, duration and diff', () => {
    const msg = renderItem(document, { kind: 'message', key: 'm', role: 'agent', text: 'Run:\n```bash\nls -la\n```' });
    expect(msg.querySelector('pre code')!.textContent).toBe('ls -la');
    const wrap = renderItem(document, { kind: 'action', key: 'a', action: 'edit', title: 'Edited a.py', thought: 'Fix *it*', status: 'ok', exitCode: 0, durationMs: 1500, diff: ['- old', '+ new'], output: 'edited' });
    expect(wrap.querySelector('.thought')!.textContent).toBe('Fix it');
    const act = wrap.querySelector('details')!;
    expect(act.open).toBe(false);
    expect(act.querySelector('summary')!.textContent).toContain('exit 0 · 1.5 s');
    expect([...act.querySelectorAll('.diff span')].map((s) => s.className)).toEqual(['del', 'add']);
  });

  it('appends 1,000 events incrementally: earlier nodes are kept, a patch replaces one node', () => {
    const container = document.createElement('div');
    const list = new ChatList(document, container);
    list.add([{ kind: 'message', key: 'first', role: 'user', text: 'start' }]);
    const first = container.firstElementChild;
    let replaced = 0;
    for (let i = 0; i < 1000; i++) {
      const item: ChatItem = { kind: 'action', key: `a${i}`, action: 'run', title: `echo ${i}`, status: 'running' };
      list.add([item]);
      const before = container.lastElementChild;
      list.patch({ ...item, status: 'ok', exitCode: 0, output: String(i) });
      if (container.lastElementChild !== before) replaced++;
    }
    expect(container.children.length).toBe(1001);
    expect(container.firstElementChild).toBe(first);
    expect(replaced).toBe(1000);
    expect(container.querySelectorAll('.action.running').length).toBe(0);
    expect(container.querySelectorAll('details.action.ok').length).toBe(1000);
    list.reset([]);
    expect(container.children.length).toBe(0);
  });
});
