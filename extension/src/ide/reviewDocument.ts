/**
 * The Markdown document behind a `present_review` panel and its three update modes. Pure (no
 * VS Code), so the section rules are unit-tested:
 * - `replace`: the new text is the whole document;
 * - `append`: the new text goes after the current one, separated by a blank line;
 * - `update-section`: the body of the section under the heading whose text is `heading` (any
 *   level, compared without `#`s, surrounding spaces and case; it runs to the next heading of the
 *   same or a higher level) is replaced by the new text, and the heading line stays. When the new
 *   text starts with that same heading, it replaces the heading line too. When no such heading
 *   exists, `## heading` and the text are appended. Headings inside fenced code blocks do not count.
 */
export type ReviewMode = 'replace' | 'append' | 'update-section';
export const REVIEW_MODES: readonly ReviewMode[] = ['replace', 'append', 'update-section'];

interface Heading {
  line: number;
  level: number;
  text: string;
}

const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s{0,3}(```|~~~)/;

export function normalizeHeading(text: string): string {
  return text.replace(/^ {0,3}#{1,6}\s+/, '').replace(/\s+#*\s*$/, '').trim().replace(/\s+/g, ' ').toLowerCase();
}

export function headings(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((l, i) => {
    const f = FENCE.exec(l);
    if (f) {
      if (!fence) fence = f[1];
      else if (f[1] === fence) fence = undefined;
      return;
    }
    if (fence) return;
    const m = HEADING.exec(l);
    if (m) out.push({ line: i, level: m[1].length, text: normalizeHeading(m[2]) });
  });
  return out;
}

export interface ReviewUpdate {
  markdown: string;
  /** What happened: `replaced`, `appended`, `section-replaced` or `section-appended` (heading not found). */
  outcome: 'replaced' | 'appended' | 'section-replaced' | 'section-appended';
}

function join(a: string, b: string): string {
  if (!a.trim()) return b;
  return `${a.replace(/\s+$/, '')}\n\n${b}`;
}

export function applyReviewUpdate(current: string, text: string, mode: ReviewMode, heading?: string): ReviewUpdate {
  const incoming = text.replace(/\r\n?/g, '\n');
  if (mode === 'replace') return { markdown: incoming, outcome: 'replaced' };
  if (mode === 'append') return { markdown: join(current, incoming), outcome: 'appended' };
  const want = normalizeHeading(heading ?? '');
  let body = incoming.replace(/\s+$/, '');
  const own = headings(body.split('\n'))[0];
  const lines = current.split('\n');
  const hs = headings(lines);
  const at = hs.findIndex((h) => h.text === want);
  if (at < 0) {
    const section = own && own.line === 0 && own.text === want ? body : `## ${(heading ?? '').trim()}\n\n${body}`;
    return { markdown: join(current, section), outcome: 'section-appended' };
  }
  const start = hs[at].line;
  const next = hs.slice(at + 1).find((h) => h.level <= hs[at].level);
  const end = next ? next.line : lines.length;
  if (!(own && own.line === 0 && own.text === want)) body = `${lines[start]}\n\n${body}`;
  const before = lines.slice(0, start).join('\n').replace(/\s+$/, '');
  const after = lines.slice(end).join('\n');
  let markdown = before ? `${before}\n\n${body}` : body;
  if (after.trim()) markdown += `\n\n${after}`;
  return { markdown, outcome: 'section-replaced' };
}
