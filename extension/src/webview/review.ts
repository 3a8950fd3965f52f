/**
 * The page script of a `present_review` panel (bundled to dist/review.js, loaded with the CSP
 * nonce). It renders the Markdown the extension host posts with the tab's renderer (text nodes
 * only, http(s) links only): text from an agent or an MCP client is never interpreted as HTML.
 */
import { renderMarkdown } from './render';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };

const vscode = acquireVsCodeApi();
const root = document.getElementById('review') as HTMLElement;

window.addEventListener('message', (e: MessageEvent) => {
  const m = e.data as { type?: string; markdown?: unknown; revision?: unknown } | undefined;
  if (!m || m.type !== 'render' || typeof m.markdown !== 'string') return;
  root.replaceChildren(renderMarkdown(document, m.markdown));
  root.dataset.revision = String(m.revision ?? '');
});
// Asks for the current document (also after VS Code reloaded a hidden panel).
vscode.postMessage({ type: 'ready' });
