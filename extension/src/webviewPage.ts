/**
 * The one page shell for every webview this extension opens (the OpenHands tab, the review
 * panels). The Content-Security-Policy is defined here only, so no page can drift from it: nothing
 * remote, no inline code, styles and the single script allowed by a per-load nonce. Pages carry no
 * data; their script asks the host for it and renders with text nodes.
 */
import { randomBytes } from 'node:crypto';

export interface WebviewPageParts {
  /** A fresh value per page load (see `makeNonce`). */
  nonce: string;
  /** `webview.cspSource`: where the page may load its script and images from. */
  cspSource: string;
  /** `webview.asWebviewUri(...)` of the page's script in dist/. */
  scriptUri: string;
  /** CSS rules, placed in the nonce'd `<style>`. */
  style: string;
  /** Static markup of `<body>`, without scripts or event-handler attributes. */
  body: string;
}

/** 144 bits from the OS's CSPRNG, URL-safe so it fits an attribute unescaped. */
export function makeNonce(): string {
  return randomBytes(18).toString('base64url');
}

export function contentSecurityPolicy(nonce: string, cspSource: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}' ${cspSource}; img-src ${cspSource};`;
}

export function webviewPage(p: WebviewPageParts): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(p.nonce, p.cspSource)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${p.nonce}">
${p.style}
</style>
</head>
<body>
${p.body}
<script nonce="${p.nonce}" src="${p.scriptUri}"></script>
</body>
</html>`;
}
