import * as vscode from 'vscode';
import type { OpenHandsContext } from './context';

/** Registers the `openhands.*` commands on the context. */
export function registerCommands(ctx: OpenHandsContext): vscode.Disposable[] {
  const run = (id: string, f: () => unknown) => vscode.commands.registerCommand(id, f);
  return [
    run('openhands.start', () => ctx.executor.start()),
    run('openhands.stop', () => ctx.executor.stop()),
    run('openhands.reconnect', () => ctx.executor.reconnect()),
    run('openhands.setSessionApiKey', async () => {
      if (await ctx.secrets.prompt(ctx.keyServerUrl())) {
        ctx.log.info('session API key updated');
        if (ctx.executor.running || ctx.executor.snapshot.state === 'error') await ctx.executor.reconnect();
      }
    }),
    run('openhands.clearSessionApiKey', async () => {
      await ctx.secrets.clear(ctx.keyServerUrl());
      ctx.log.info('session API key removed');
    }),
    run('openhands.showLogs', () => ctx.log.show()),
    run('openhands.newConversation', async () => {
      await vscode.commands.executeCommand('openhands.view.focus');
      await ctx.chat.newConversation();
    }),
    // Answers the new conversation's id (for the tests); undefined when the tab is not on V1.
    run('openhands.v1.newConversationInWorktree', async () => {
      if (ctx.config.current.backend !== 'v1') {
        void vscode.window.showInformationMessage('OpenHands: conversations in a git worktree need the V1 agent-server ("openhands.mode").');
        return undefined;
      }
      await vscode.commands.executeCommand('openhands.view.focus');
      return ctx.chat.newConversation(undefined, { worktree: true });
    }),
    run('openhands.deleteConversation', async () => {
      const id = ctx.chat.currentConversationId;
      if (!ctx.chat.canDelete || !id) return false;
      // A notification, as the consent prompts (test hosts refuse modal dialogs).
      const answer = await vscode.window.showWarningMessage(`Delete the OpenHands conversation ${id.slice(0, 8)}…? Its events are removed from the agent-server.`, 'Delete', 'Cancel');
      if (answer !== 'Delete') return false;
      await ctx.chat.deleteConversation(id);
      return true;
    }),
    run('openhands.setLlmSettings', async () => {
      await vscode.commands.executeCommand('openhands.view.focus');
      ctx.chat.showLlmForm();
    }),
    run('openhands.showTerminal', () => ctx.showTerminal()),
    run('openhands.resetConsent', async () => {
      await ctx.executor.stop('stopped: consent revoked');
      await ctx.consent.revoke();
      void vscode.window.showInformationMessage('OpenHands: execution consent for this workspace was revoked.');
    }),
  ];
}
