import * as fs from 'fs';
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { OpenHandsContext } from './context';
import { registerIdeTools } from './ide';
import type { ExecutorSnapshot } from './executorService';
import type { ActivityEntry } from './activity';
import type { ChatItem, TabStatus } from './webview/protocol';

/** What `vscode.extensions.getExtension('openhands.openhands-tab').exports` offers. */
export interface OpenHandsApi {
  readonly snapshot: ExecutorSnapshot;
  readonly onDidChange: vscode.Event<ExecutorSnapshot>;
  readonly actions: readonly ActivityEntry[];
  /** What the OpenHands tab shows: its status and the rendered conversation (for tests and other extensions). */
  readonly conversation: { readonly status: TabStatus; readonly items: readonly ChatItem[]; reopen(): Promise<void> };
  start(): Promise<void>;
  stop(): Promise<void>;
}

// The only module-level state: the live context, so that `deactivate` can await the executor's
// shutdown (VS Code waits for the returned promise; disposables are not awaited).
let live: OpenHandsContext | undefined;

export function activate(context: vscode.ExtensionContext): OpenHandsApi {
  const ctx = new OpenHandsContext(context);
  live = ctx;
  context.subscriptions.push(ctx, ...registerCommands(ctx));
  const ide = registerIdeTools(context, ctx.log);
  context.subscriptions.push(ide);
  // The agent's path to the IDE tools: announced and run by the executor (call_tool_mcp actions).
  ctx.ideTools = ide.runtime;
  // V1 agents get the same tools through their MCP configuration (the endpoint's token from its
  // private discovery file; undefined while the endpoint is not served).
  ctx.ideEndpoint = async () => {
    const ep = ide.endpoint;
    if (!ep) return undefined;
    try {
      const info = JSON.parse(await fs.promises.readFile(ep.discoveryFile, 'utf8')) as { url?: string; headers?: Record<string, string> };
      return info.url === ep.url && info.headers ? { url: ep.url, headers: info.headers } : undefined;
    } catch {
      return undefined;
    }
  };
  // Confirmation mode: an edit the agent waits to make is shown in the diff editor.
  ctx.chat.setEditReviewer(ide.reviewEdit);
  ctx.log.info(`OpenHands extension ${context.extension?.packageJSON?.version ?? ''} activated (VS Code ${vscode.version}, ${process.platform}-${process.arch}, Node ${process.version})`);
  if (ctx.config.current.autoStart) void ctx.executor.start();
  return {
    get snapshot() {
      return ctx.executor.snapshot;
    },
    onDidChange: ctx.executor.onDidChange,
    get actions() {
      return ctx.activity.items;
    },
    conversation: {
      get status() {
        return ctx.chat.status();
      },
      get items() {
        return ctx.chat.items;
      },
      reopen: () => ctx.chat.reopen(),
    },
    start: () => ctx.executor.start(),
    stop: () => ctx.executor.stop(),
  };
}

export async function deactivate(): Promise<void> {
  const ctx = live;
  live = undefined;
  // Stop the bash session and its children before the extension host goes away; everything else
  // is disposed through context.subscriptions.
  await ctx?.executor.stop('stopped: extension deactivated');
}
