import { describe, expect, it } from 'vitest';
import { reviewHtml } from './ide/reviewPanel';
import { renderHtml } from './view';
import { makeNonce } from './webviewPage';

// Both pages come from webviewPage(); each is checked so a page-specific body cannot smuggle in
// an inline script or handler.
describe.each([
  ['tab', renderHtml],
  ['review panel', reviewHtml],
])('the %s page', (_name, render) => {
  const html = render('NONCE', 'vscode-resource:', 'vscode-resource:/ext/dist/page.js');

  it('has a strict CSP: nothing remote, nothing inline', () => {
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-NONCE' vscode-resource:");
    expect(csp).toContain("style-src 'nonce-NONCE'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it('loads exactly one script, by nonce, and has no inline code or handlers', () => {
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0][1]).toContain('nonce="NONCE"');
    expect(scripts[0][1]).toContain('src="vscode-resource:/ext/dist/page.js"');
    expect(scripts[0][2].trim()).toBe('');
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html.match(/<style nonce="NONCE">/g)).toHaveLength(1);
    expect(html).not.toMatch(/<style(?! nonce="NONCE")/);
  });
});

describe('makeNonce', () => {
  it('is fresh per call and safe inside an attribute', () => {
    const a = makeNonce();
    const b = makeNonce();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });
});
