/**
 * A small Markdown subset for the chat (the agent's and the user's messages), parsed into a plain
 * node tree that the webview turns into DOM nodes with `createElement`/`textContent`. No HTML in
 * the input is ever interpreted: `<script>` stays the text "<script>". Links keep an `href` only
 * for http(s) URLs; anything else (javascript:, data:, command:, vscode:) is shown as text.
 *
 * Supported: fenced code blocks (```lang), headings (#..###), bullet and numbered lists,
 * block quotes, paragraphs; inline `code`, **strong**, *em* / _em_, [text](url), bare URLs.
 */

export type Inline =
  | { t: 'text'; text: string }
  | { t: 'code'; text: string }
  | { t: 'strong'; children: Inline[] }
  | { t: 'em'; children: Inline[] }
  | { t: 'link'; href: string; children: Inline[] };

export type Block =
  | { t: 'p'; children: Inline[] }
  | { t: 'h'; level: 1 | 2 | 3; children: Inline[] }
  | { t: 'pre'; lang: string; text: string }
  | { t: 'list'; ordered: boolean; items: Inline[][] }
  | { t: 'quote'; children: Inline[] };

const FENCE = /^\s{0,3}(```|~~~)\s*([\w+#.-]*)\s*$/;
const HEADING = /^(#{1,3})\s+(.*)$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

/** Parses Markdown text into blocks. Linear in the input size. */
export function parseMarkdown(source: string): Block[] {
  const lines = String(source ?? '').replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push({ t: 'p', children: parseInline(para.join('\n')) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      blocks.push({ t: 'pre', lang: fence[2] ?? '', text: body.join('\n') });
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      flush();
      blocks.push({ t: 'h', level: h[1].length as 1 | 2 | 3, children: parseInline(h[2]) });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      flush();
      const ordered = Boolean(numbered);
      const re = ordered ? NUMBERED : BULLET;
      const items: Inline[][] = [];
      let m: RegExpExecArray | null = bullet ?? numbered;
      while (m) {
        let text = m[1];
        // Continuation lines (indented, not a new item) belong to the item.
        while (i + 1 < lines.length && /^\s{2,}\S/.test(lines[i + 1]) && !re.exec(lines[i + 1])) text += '\n' + lines[++i].trim();
        items.push(parseInline(text));
        m = i + 1 < lines.length ? re.exec(lines[i + 1]) : null;
        if (m) i++;
      }
      blocks.push({ t: 'list', ordered, items });
      continue;
    }
    const q = QUOTE.exec(line);
    if (q) {
      flush();
      const body = [q[1]];
      while (i + 1 < lines.length && QUOTE.test(lines[i + 1])) body.push(QUOTE.exec(lines[++i])![1]);
      blocks.push({ t: 'quote', children: parseInline(body.join('\n')) });
      continue;
    }
    para.push(line);
  }
  flush();
  return blocks;
}

/** Only absolute http(s) URLs become links. */
export function safeHref(raw: string): string | undefined {
  const s = raw.trim();
  if (!/^https?:\/\//i.test(s)) return undefined;
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Parses inline markup; unmatched markers stay text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let buf = '';
  const push = (node: Inline) => {
    if (buf) out.push({ t: 'text', text: buf });
    buf = '';
    out.push(node);
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#>-]/.test(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end > i) {
        push({ t: 'code', text: text.slice(i + 1, end) });
        i = end + 1;
        continue;
      }
    }
    if ((c === '*' && text[i + 1] === '*') || (c === '_' && text[i + 1] === '_')) {
      const marker = c + c;
      const end = text.indexOf(marker, i + 2);
      if (end > i + 2) {
        push({ t: 'strong', children: parseInline(text.slice(i + 2, end)) });
        i = end + 2;
        continue;
      }
    }
    if ((c === '*' || c === '_') && text[i + 1] && text[i + 1] !== ' ' && text[i + 1] !== c) {
      const end = text.indexOf(c, i + 1);
      // `_` inside words (snake_case) is not emphasis.
      const wordBefore = c === '_' && i > 0 && /\w/.test(text[i - 1]);
      if (end > i + 1 && !wordBefore && text[end - 1] !== ' ') {
        push({ t: 'em', children: parseInline(text.slice(i + 1, end)) });
        i = end + 1;
        continue;
      }
    }
    if (c === '[') {
      const close = text.indexOf('](', i + 1);
      const paren = close > i ? text.indexOf(')', close + 2) : -1;
      if (close > i && paren > close) {
        const label = text.slice(i + 1, close);
        const href = safeHref(text.slice(close + 2, paren));
        if (href) push({ t: 'link', href, children: parseInline(label) });
        else buf += text.slice(i, paren + 1);
        i = paren + 1;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && /^https?:\/\//i.test(text.slice(i, i + 8)) && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      const m = /^https?:\/\/[^\s<>()"'`]+/i.exec(text.slice(i));
      const url = m ? m[0].replace(/[.,;:!?]+$/, '') : '';
      const href = url ? safeHref(url) : undefined;
      if (href) {
        push({ t: 'link', href, children: [{ t: 'text', text: url }] });
        i += url.length;
        continue;
      }
    }
    buf += c;
    i++;
  }
  if (buf) out.push({ t: 'text', text: buf });
  return out;
}
