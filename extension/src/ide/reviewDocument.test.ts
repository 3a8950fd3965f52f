// The present_review update modes (pure Markdown text rules).
import { describe, expect, it } from 'vitest';
import { applyReviewUpdate, headings } from './reviewDocument';

const doc = '# Review\n\nIntro.\n\n## Findings\n\nold finding\n\n### Detail\n\nold detail\n\n## Plan\n\nthe plan\n';

describe('applyReviewUpdate', () => {
  it('replace and append', () => {
    expect(applyReviewUpdate(doc, 'new', 'replace')).toEqual({ markdown: 'new', outcome: 'replaced' });
    expect(applyReviewUpdate('a\n\n', 'b', 'append')).toEqual({ markdown: 'a\n\nb', outcome: 'appended' });
    expect(applyReviewUpdate('', 'b', 'append').markdown).toBe('b');
  });

  it('update-section replaces the body up to the next heading of the same or a higher level, keeping the heading', () => {
    const r = applyReviewUpdate(doc, 'new finding', 'update-section', 'findings');
    expect(r.outcome).toBe('section-replaced');
    expect(r.markdown).toBe('# Review\n\nIntro.\n\n## Findings\n\nnew finding\n\n## Plan\n\nthe plan\n');
  });

  it('update-section with the heading in the new text does not repeat it; a sub-section can be targeted', () => {
    expect(applyReviewUpdate(doc, '## Plan\n\nnew plan', 'update-section', '## Plan').markdown).toBe('# Review\n\nIntro.\n\n## Findings\n\nold finding\n\n### Detail\n\nold detail\n\n## Plan\n\nnew plan');
    expect(applyReviewUpdate(doc, 'd2', 'update-section', 'Detail').markdown).toContain('### Detail\n\nd2\n\n## Plan');
  });

  it('update-section of a missing heading appends it as a level-2 section', () => {
    const r = applyReviewUpdate(doc, 'text', 'update-section', 'Risks');
    expect(r.outcome).toBe('section-appended');
    expect(r.markdown.endsWith('the plan\n\n## Risks\n\ntext')).toBe(true);
  });

  it('headings inside fenced code are not sections', () => {
    expect(headings(['```', '# not', '```', '## yes']).map((h) => h.text)).toEqual(['yes']);
    const r = applyReviewUpdate('## A\n\n```\n## B\n```\n\n## C\n\nc', 'x', 'update-section', 'A');
    expect(r.markdown).toBe('## A\n\nx\n\n## C\n\nc');
  });
});
