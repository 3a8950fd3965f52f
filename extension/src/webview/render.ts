/**
 * DOM building for the OpenHands tab (runs in the webview). Every piece of server or user text
 * goes through `textContent` or a text node; attributes are set only from fixed strings, and
 * `href` only from `safeHref` (http/https). No `innerHTML`, no inline handlers.
 */
import { parseMarkdown, type Block, type Inline } from './markdown';
import type { ChatItem } from './protocol';

type Doc = Pick<Document, 'createElement' | 'createTextNode' | 'createDocumentFragment'>;

export function el<K extends keyof HTMLElementTagNameMap>(doc: Doc, tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function inline(doc: Doc, nodes: Inline[], parent: HTMLElement): void {
  for (const n of nodes) {
    switch (n.t) {
      case 'text':
        parent.append(doc.createTextNode(n.text));
        break;
      case 'code':
        parent.append(el(doc, 'code', undefined, n.text));
        break;
      case 'strong': {
        const s = el(doc, 'strong');
        inline(doc, n.children, s);
        parent.append(s);
        break;
      }
      case 'em': {
        const s = el(doc, 'em');
        inline(doc, n.children, s);
        parent.append(s);
        break;
      }
      case 'link': {
        const a = el(doc, 'a');
        a.setAttribute('href', n.href);
        a.setAttribute('rel', 'noopener noreferrer');
        inline(doc, n.children, a);
        parent.append(a);
        break;
      }
    }
  }
}

export function renderBlocks(doc: Doc, blocks: Block[]): DocumentFragment {
  const frag = doc.createDocumentFragment();
  for (const b of blocks) {
    switch (b.t) {
      case 'p': {
        const p = el(doc, 'p');
        inline(doc, b.children, p);
        frag.append(p);
        break;
      }
      case 'h': {
        const h = el(doc, b.level === 1 ? 'h4' : b.level === 2 ? 'h5' : 'h6');
        inline(doc, b.children, h);
        frag.append(h);
        break;
      }
      case 'pre': {
        const pre = el(doc, 'pre', 'code-block');
        const code = el(doc, 'code', undefined, b.text);
        if (b.lang) code.dataset.lang = b.lang;
        pre.append(code);
        frag.append(pre);
        break;
      }
      case 'list': {
        const list = el(doc, b.ordered ? 'ol' : 'ul', 'md-list');
        for (const item of b.items) {
          const li = el(doc, 'li');
          inline(doc, item, li);
          list.append(li);
        }
        frag.append(list);
        break;
      }
      case 'quote': {
        const q = el(doc, 'blockquote');
        inline(doc, b.children, q);
        frag.append(q);
        break;
      }
    }
  }
  return frag;
}

export function renderMarkdown(doc: Doc, text: string): DocumentFragment {
  return renderBlocks(doc, parseMarkdown(text));
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

const ICONS: Record<string, string> = { running: '●', ok: '✓', error: '✗' };
const STATE_TEXT: Record<string, string> = {
  running: 'Agent is running', awaiting_user_input: 'Agent is waiting for your input', finished: 'Agent finished',
  stopped: 'Agent stopped', paused: 'Agent paused', error: 'Agent error', rejected: 'Agent rejected the task',
  awaiting_user_confirmation: 'Agent awaits confirmation', rate_limited: 'Agent is rate limited',
};

/** One conversation entry as a DOM element (`data-key` ties patches to it). */
export function renderItem(doc: Doc, item: ChatItem): HTMLElement {
  let root: HTMLElement;
  switch (item.kind) {
    case 'message': {
      root = el(doc, 'div', `item msg ${item.role}`);
      root.append(el(doc, 'div', 'who', item.role === 'user' ? 'You' : 'Agent'));
      const body = el(doc, 'div', 'md');
      body.append(renderMarkdown(doc, item.text));
      root.append(body);
      // A message from the server's stream (key `e<id>`): a checkpoint was taken before it (V0: the
      // runtime; V1: the tab, before posting it).
      if (item.role === 'user' && /^e\d+$/.test(item.key)) {
        const revert = el(doc, 'button', 'link secondary revert', 'Revert files to before this');
        revert.dataset.revert = item.key;
        root.append(revert);
      }
      break;
    }
    case 'finish': {
      root = el(doc, 'div', 'item msg agent finish');
      root.append(el(doc, 'div', 'who', 'Agent · finished'));
      const body = el(doc, 'div', 'md');
      body.append(renderMarkdown(doc, item.text));
      root.append(body);
      break;
    }
    case 'thought': {
      root = el(doc, 'div', 'item thought');
      const body = el(doc, 'div', 'md');
      body.append(renderMarkdown(doc, item.text));
      root.append(body);
      break;
    }
    case 'action': {
      // The agent's thought stays visible; the action and its observation are collapsed.
      root = el(doc, 'div', `item action-wrap ${item.status}`);
      if (item.thought) {
        const t = el(doc, 'div', 'thought md');
        t.append(renderMarkdown(doc, item.thought));
        root.append(t);
      }
      const d = el(doc, 'details', `action ${item.status}`);
      d.dataset.action = item.action;
      const summary = el(doc, 'summary');
      summary.append(el(doc, 'span', `icon ${item.status}`, ICONS[item.status] ?? '?'));
      summary.append(el(doc, 'span', 'kind', item.action));
      summary.append(el(doc, 'span', 'title', item.title));
      const meta: string[] = [];
      if (item.exitCode !== undefined) meta.push(`exit ${item.exitCode}`);
      if (item.durationMs !== undefined) meta.push(formatDuration(item.durationMs));
      if (item.status === 'running') meta.push('running…');
      if (meta.length) summary.append(el(doc, 'span', 'meta', meta.join(' · ')));
      d.append(summary);
      if (item.diff && item.diff.length) {
        const pre = el(doc, 'pre', 'diff');
        for (const line of item.diff) {
          const cls = line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : 'ctx';
          pre.append(el(doc, 'span', cls, `${line}\n`));
        }
        d.append(pre);
      }
      if (item.output !== undefined && item.output !== '') d.append(el(doc, 'pre', 'output', item.output));
      root.append(d);
      break;
    }
    case 'error':
      root = el(doc, 'div', 'item error', item.text);
      break;
    case 'state':
      root = el(doc, 'div', `item state-change ${item.state}`, (STATE_TEXT[item.state] ?? `Agent: ${item.state}`) + (item.reason ? ` (${item.reason})` : ''));
      break;
    case 'status':
      root = el(doc, 'div', `item status ${item.level}`, item.text);
      break;
  }
  root.dataset.key = item.key;
  return root;
}

/**
 * The conversation list: appends new entries and replaces patched ones in place; never rebuilds
 * the whole list for one event. Keeps the view pinned to the bottom while the user is there.
 */
export class ChatList {
  private readonly byKey = new Map<string, HTMLElement>();

  constructor(private readonly doc: Doc, readonly container: HTMLElement, private readonly scroller: HTMLElement = container) {}

  get size(): number {
    return this.byKey.size;
  }

  reset(items: ChatItem[]): void {
    this.byKey.clear();
    this.container.replaceChildren();
    this.add(items);
  }

  add(items: ChatItem[]): void {
    if (!items.length) return;
    const stick = this.atBottom();
    const frag = this.doc.createDocumentFragment();
    for (const item of items) {
      const node = renderItem(this.doc, item);
      const old = this.byKey.get(item.key);
      this.byKey.set(item.key, node);
      if (old) old.replaceWith(node);
      else frag.append(node);
    }
    this.container.append(frag);
    if (stick) this.scrollToEnd();
  }

  patch(item: ChatItem): void {
    const old = this.byKey.get(item.key);
    if (!old) return this.add([item]);
    const stick = this.atBottom();
    const node = renderItem(this.doc, item);
    // Keep a section the user opened open.
    const was = old.querySelector('details');
    const now = node.querySelector('details');
    if (was?.open && now) now.open = true;
    old.replaceWith(node);
    this.byKey.set(item.key, node);
    if (stick) this.scrollToEnd();
  }

  private atBottom(): boolean {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 40;
  }

  private scrollToEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }
}
