import * as fs from 'fs';
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { registerHunkReview } from './review/hunkReview';
import { OpenHandsContext } from './context';
import { registerIdeTools } from './ide';
import type { ExecutorSnapshot } from './executorService';
import type { ActivityEntry } from './activity';
import type { ChatItem, TabStatus } from './webview/protocol';
import type { AgentServerConnection, AgentServerState } from './v1/agentServerProcess';
import { registerV1Commands } from './v1/commands';
import { registerCanvasCommand } from './v1/canvasUi';
import { EXTENSION_ID } from './config';

/** What `vscode.extensions.getExtension(EXTENSION_ID).exports` offers. */
export interface OpenHandsApi {
  readonly snapshot: ExecutorSnapshot;
  readonly onDidChange: vscode.Event<ExecutorSnapshot>;
  readonly actions: readonly ActivityEntry[];
  /** What the OpenHands tab shows: its status and the rendered conversation (for tests and other extensions). */
  readonly conversation: {
    readonly status: TabStatus;
    readonly items: readonly ChatItem[];
    reopen(): Promise<void>;
    /** V1: the view's badge (background conversations that need the user) and their ids. */
    readonly badge: number;
    readonly needing: readonly string[];
  };
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether this workspace allowed execution for a server (its origin, or the managed server's label). */
  consentGrantedFor(who: string): boolean;
  /** V1 managed mode: this window's agent-server (for the V1 client, tests and other extensions). */
  readonly agentServer: {
    readonly state: AgentServerState;
    readonly pid: number | undefined;
    readonly error: string | undefined;
    readonly onDidChange: vscode.Event<AgentServerState>;
    connection(): Promise<AgentServerConnection>;
  };
}

// The only module-level state: the live context, so that `deactivate` can await the executor's
// shutdown (VS Code waits for the returned promise; disposables are not awaited).
let live: OpenHandsContext | undefined;

export function activate(context: vscode.ExtensionContext): OpenHandsApi {
  const ctx = new OpenHandsContext(context);
  live = ctx;
  const backendIsV1 = () => ctx.config.current.backend === 'v1';
  context.subscriptions.push(ctx, ...registerCommands(ctx), ...registerV1Commands(ctx.agentServer, backendIsV1), registerCanvasCommand(() => ctx.agentServerEndpoint(), backendIsV1));
  context.subscriptions.push(...registerHunkReview({ changes: ctx.chat.changes, sendUndoneNow: () => ctx.chat.sendUndoneNow(), log: ctx.log }));
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
  ctx.log.info(`OpenHands extension ${context.extension?.packageJSON?.version ?? ''} activated as ${EXTENSION_ID} in ${ctx.config.current.backend} mode (VS Code ${vscode.version}, ${process.platform}-${process.arch}, Node ${process.version})`);
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
      get badge() {
        return ctx.view.badgeValue;
      },
      get needing() {
        return ctx.attention?.tracker.needing ?? [];
      },
    },
    start: () => ctx.executor.start(),
    stop: () => ctx.executor.stop(),
    consentGrantedFor: (who: string) => ctx.consent.grantedFor(who),
    agentServer: {
      get state() {
        return ctx.agentServer.state;
      },
      get pid() {
        return ctx.agentServer.pid;
      },
      get error() {
        return ctx.agentServer.error;
      },
      onDidChange: ctx.agentServer.onDidChange,
      connection: () => ctx.agentServer.connection(),
    },
  };
}

export async function deactivate(): Promise<void> {
  const ctx = live;
  live = undefined;
  // Stop the bash session and its children before the extension host goes away; everything else
  // is disposed through context.subscriptions.
  await Promise.all([ctx?.executor.stop('stopped: extension deactivated'), ctx?.agentServer.stop()]);
}
