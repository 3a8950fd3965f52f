import * as vscode from 'vscode';
import type { ConversationSummary } from '../webview/protocol';
import { AttentionTracker, noticeText, type Notice } from './attention';

export interface BackgroundAttentionDeps {
  /** The badge on the OpenHands view (0: none). */
  setBadge: (count: number, tooltip: string) => void;
  /** Shows conversation `id` in the tab (the notification's "Open"). */
  open: (id: string) => Promise<void>;
  /** Reloads the conversation list (its states); the tab publishes it, which calls `listed`. */
  poll: () => Promise<void>;
  /** Whether a background conversation may change state (an executor runs, or one runs): poll then. */
  busy: () => boolean;
  log: { info(m: string): void; warn(m: string): void };
  pollMs?: number;
}

/**
 * VS Code's side of AttentionTracker (attention.ts, where the rules are): every list the tab
 * publishes goes through the tracker; a notice becomes a notification with **Open**, and the
 * count of conversations needing the user the view's badge. While something may change in the
 * background the list is polled (the agent-server pushes events only for the conversation the
 * tab shows).
 */
export class BackgroundAttention implements vscode.Disposable {
  readonly tracker = new AttentionTracker();
  private readonly timer: ReturnType<typeof setInterval>;
  private polling = false;
  private badge = -1;

  constructor(private readonly deps: BackgroundAttentionDeps) {
    this.timer = setInterval(() => void this.tick(), deps.pollMs ?? 3000);
    this.timer.unref?.();
  }

  /** A list the tab published (`shown`: the conversation it shows). */
  listed(list: readonly ConversationSummary[], shown: string | undefined): void {
    for (const n of this.tracker.observe([...list], shown)) this.notify(n);
    this.updateBadge(list);
  }

  private updateBadge(list: readonly ConversationSummary[]): void {
    const count = this.tracker.count;
    if (count === this.badge) return;
    this.badge = count;
    const titles = this.tracker.needing.map((id) => list.find((c) => c.id === id)?.title ?? id.slice(0, 8));
    this.deps.setBadge(count, count ? `OpenHands: ${count} conversation(s) need you: ${titles.join(', ')}` : '');
  }

  private notify(n: Notice): void {
    this.deps.log.info(`background conversation ${n.id}: ${n.attention}`);
    const text = noticeText(n);
    const shown = n.attention === 'error' ? vscode.window.showWarningMessage(text, 'Open') : vscode.window.showInformationMessage(text, 'Open');
    void shown.then(async (answer) => {
      if (answer !== 'Open') return;
      try {
        await vscode.commands.executeCommand('openhands.view.focus');
        await this.deps.open(n.id);
      } catch (e) {
        this.deps.log.warn(`opening conversation ${n.id}: ${(e as Error).message}`);
      }
    });
  }

  private async tick(): Promise<void> {
    if (this.polling || !this.deps.busy()) return;
    this.polling = true;
    try {
      await this.deps.poll();
    } catch (e) {
      this.deps.log.warn(`polling the conversation list: ${(e as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  dispose(): void {
    clearInterval(this.timer);
  }
}
