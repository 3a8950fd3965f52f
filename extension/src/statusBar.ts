import * as vscode from 'vscode';
import type { ExecutorSnapshot } from './executorService';

interface Look {
  text: string;
  tooltip: string;
  background?: string;
}

/** The status bar text, tooltip and colour for a snapshot. */
export function statusLook(s: ExecutorSnapshot): Look {
  const where = s.conversationId ? `${s.serverUrl} · conversation ${s.conversationId}` : s.serverUrl;
  switch (s.state) {
    case 'connected':
      return { text: '$(check) OpenHands', tooltip: `OpenHands: connected to ${where}` };
    case 'executing':
      return { text: '$(sync~spin) OpenHands: executing', tooltip: `OpenHands: the agent is running an action (${where})` };
    case 'starting':
    case 'connecting':
      return { text: '$(loading~spin) OpenHands', tooltip: `OpenHands: connecting to ${where}${s.message ? ` — ${s.message}` : ''}` };
    case 'error':
      return { text: '$(error) OpenHands', tooltip: `OpenHands: ${s.message ?? 'error'}`, background: 'statusBarItem.errorBackground' };
    case 'blocked':
      return { text: '$(shield) OpenHands', tooltip: `OpenHands: ${s.message ?? 'not allowed to execute'}`, background: 'statusBarItem.warningBackground' };
    default:
      return { text: '$(circle-slash) OpenHands', tooltip: 'OpenHands: executor stopped (click to open the OpenHands view)' };
  }
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('openhands.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'OpenHands';
    this.item.command = 'openhands.view.focus';
  }

  update(s: ExecutorSnapshot): void {
    const look = statusLook(s);
    this.item.text = look.text;
    this.item.tooltip = look.tooltip;
    this.item.backgroundColor = look.background ? new vscode.ThemeColor(look.background) : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
