/**
 * The `present_review` panels: Markdown from an agent or MCP client (a review, a plan, a summary of
 * changes) shown in a VS Code webview panel beside the editor. One panel per title; the document
 * is kept here (reviewDocument.ts applies the modes) and re-sent when the page (re)loads. The page
 * has a strict CSP (no inline code, one nonce'd script from dist/, no remote content) and renders
 * with text nodes only (src/webview/review.ts).
 */
import * as vscode from 'vscode';
import { makeNonce, webviewPage } from '../webviewPage';
import { applyReviewUpdate, headings, ReviewMode, ReviewUpdate } from './reviewDocument';

export const REVIEW_VIEW_TYPE = 'openhands.review';

interface Review {
  panel: vscode.WebviewPanel;
  markdown: string;
  revision: number;
}

export interface ReviewResult extends Pick<ReviewUpdate, 'outcome'> {
  title: string;
  characters: number;
  sections: string[];
  revision: number;
}

export class ReviewPanels implements vscode.Disposable {
  private readonly reviews = new Map<string, Review>();

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(title: string, text: string, mode: ReviewMode, heading?: string): ReviewResult {
    let r = this.reviews.get(title);
    if (!r) r = this.open(title);
    const update = applyReviewUpdate(r.markdown, text, mode, heading);
    r.markdown = update.markdown;
    r.revision++;
    this.send(r);
    r.panel.reveal(vscode.ViewColumn.Beside, true);
    return {
      title,
      outcome: update.outcome,
      characters: r.markdown.length,
      sections: headings(r.markdown.split('\n')).map((h) => h.text),
      revision: r.revision,
    };
  }

  private open(title: string): Review {
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const panel = vscode.window.createWebviewPanel(REVIEW_VIEW_TYPE, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      enableCommandUris: false,
      enableForms: false,
      localResourceRoots: [dist],
    });
    const script = panel.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'review.js')).toString();
    panel.webview.html = reviewHtml(makeNonce(), panel.webview.cspSource, script);
    const r: Review = { panel, markdown: '', revision: 0 };
    panel.webview.onDidReceiveMessage((m: { type?: string }) => {
      if (m?.type === 'ready') this.send(r);
    });
    panel.onDidDispose(() => {
      if (this.reviews.get(title) === r) this.reviews.delete(title);
    });
    this.reviews.set(title, r);
    return r;
  }

  private send(r: Review): void {
    void r.panel.webview.postMessage({ type: 'render', markdown: r.markdown, revision: r.revision });
  }

  dispose(): void {
    for (const r of [...this.reviews.values()]) r.panel.dispose();
    this.reviews.clear();
  }
}

/** A review panel's static page (shell and CSP in webviewPage.ts): the script renders into `#review`. */
export function reviewHtml(nonce: string, cspSource: string, scriptUri: string): string {
  return webviewPage({ nonce, cspSource, scriptUri, style: REVIEW_STYLE, body: REVIEW_BODY });
}

const REVIEW_STYLE = `  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 8px 20px; line-height: 1.5; }
  pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; }
  code { font-family: var(--vscode-editor-font-family); }
  blockquote { border-left: 3px solid var(--vscode-textBlockQuote-border); margin: 0; padding-left: 10px; color: var(--vscode-descriptionForeground); }
  a { color: var(--vscode-textLink-foreground); }`;

const REVIEW_BODY = `<main id="review" data-oh-review="1"></main>`;
