/**
 * Wires the IDE tools into VS Code: the MCP endpoint's life (trust + consent gate, settings under
 * `openhands.ide.*`), its discovery file, the terminal environment variables, the status bar entry
 * and the commands. `registerIdeTools` is the one call `extension.ts` makes.
 */
import * as vscode from 'vscode';
import { Consent, ConsentPrompt, defaultUi } from '../consent';
import { userValue } from '../config';
import { DiscoveryFile } from './discovery';
import { clientConfig, IdeMcpServer, McpLog } from './mcpServer';
import { runtimeIdeTools } from './runtimeTools';
import { SelectionTracker } from './editorTools';
import { createTools, runTool } from './tools';
import { DiffApprovals } from './diffApproval';
import { createEditReviewer } from './confirmEdit';
import { ReviewPanels } from './reviewPanel';
import { createWriteGate } from './writeGate';
import { ALLOWLIST_SETTING, EXECUTE_COMMAND_STATE_KEY, writeTools } from './writeTools';
import type { ToolCallContext } from './toolSupport';
import type { RuntimeIdeTools } from '../executorService';

export const IDE_CONSENT_KEY = 'openhands.ideToolsConsent.v1';
export const ENV_URL = 'OPENHANDS_VSCODE_MCP_URL';
export const ENV_TOKEN = 'OPENHANDS_VSCODE_MCP_TOKEN';
export const ENV_DISCOVERY = 'OPENHANDS_VSCODE_MCP_DISCOVERY';

const IDE_PROMPT: ConsentPrompt = {
  key: IDE_CONSENT_KEY,
  text: (workspaceLabel) => ({
    message: `Allow MCP clients on this machine to use VS Code's view of "${workspaceLabel}"?`,
    detail:
      'OpenHands will serve IDE tools (diagnostics, hover, definitions, references, symbols, open editors, ' +
      'selections, unsaved buffers; tools that open, save or propose changes ask separately) on 127.0.0.1, to local processes that hold the token (written to a private ' +
      'discovery file and to the environment of VS Code terminals). Revoke with "OpenHands: Revoke IDE Tools Consent".',
  }),
};

interface Settings {
  autoStart: boolean;
  allowedOrigins: string[];
}

function settings(): Settings {
  const c = vscode.workspace.getConfiguration('openhands.ide.server');
  // machine-scoped; read from the user's value only, whatever the host does with the scope
  const origins = userValue<unknown>(c, 'allowedOrigins', []);
  return {
    autoStart: c.get<boolean>('autoStart', true) !== false,
    allowedOrigins: Array.isArray(origins) ? origins.filter((o): o is string => typeof o === 'string') : [],
  };
}

function workspaceIdentity() {
  return {
    folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString()),
    workspaceFile: vscode.workspace.workspaceFile?.toString() ?? null,
  };
}

export interface IdeToolsApi {
  /** The endpoint when it is served. */
  readonly endpoint: { url: string; discoveryFile: string } | undefined;
  /** Runs one tool in-process (the OpenHands runtime's path); the same checks and gates as the endpoint. */
  call(name: string, args: unknown, ctx?: ToolCallContext): Promise<unknown>;
  /**
   * The OpenHands runtime's path (`call_tool_mcp` actions through the executor): the tool list
   * announced at registration and a call answering MCP `CallToolResult` JSON (errors as `isError`).
   */
  readonly runtime: RuntimeIdeTools;
  /** Confirmation mode: shows an awaited edit as a diff (TabSession.setEditReviewer). */
  reviewEdit(args: Record<string, unknown>, signal: AbortSignal): Promise<boolean | undefined>;
}

/** The command other extensions (and the tests) use to run a tool in-process: `(name, args) => result`. */
export const CALL_TOOL_COMMAND = 'openhands.ide.callTool';

export function registerIdeTools(context: vscode.ExtensionContext, log: McpLog & { error(m: string): void }): vscode.Disposable & IdeToolsApi {
  const selections = new SelectionTracker();
  const gate = createWriteGate(context.workspaceState);
  const diffs = new DiffApprovals(log);
  const reviews = new ReviewPanels(context.extensionUri);
  const commandPolicy = {
    enabled: () => context.workspaceState.get<boolean>(EXECUTE_COMMAND_STATE_KEY, false) === true,
    allowlist: () => {
      // application-scoped; read from the user's value only, whatever the host does with the scope
      const v = userValue<unknown>(vscode.workspace.getConfiguration(), ALLOWLIST_SETTING, []);
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : [];
    },
  };
  const tools = createTools({ selections, writing: writeTools({ gate, diffs, reviews, commands: commandPolicy }) });
  const call = (name: string, args: unknown, ctx?: ToolCallContext) => runTool(tools, name, args, ctx);
  const consent = new Consent(context.workspaceState, defaultUi, IDE_PROMPT);
  const status = vscode.window.createStatusBarItem('openhands.ide.status', vscode.StatusBarAlignment.Right, 100);
  status.name = 'OpenHands IDE tools (MCP)';
  const env = context.environmentVariableCollection;
  // Not persisted: a token from a previous window must never reach a new terminal.
  env.persistent = false;
  env.description = 'OpenHands IDE tools (MCP endpoint address and token)';
  let server: IdeMcpServer | undefined;
  let discovery: DiscoveryFile | undefined;
  let starting: Promise<void> | undefined;
  const version = String(context.extension?.packageJSON?.version ?? '0.0.0');

  const showStatus = () => {
    const ep = server?.current;
    if (ep) {
      status.text = '$(plug) MCP';
      status.tooltip = `OpenHands IDE tools served at ${ep.url} (click to copy a client configuration)`;
      status.command = 'openhands.ide.copyClientConfig';
    } else {
      status.text = '$(debug-disconnect) MCP off';
      status.tooltip = vscode.workspace.isTrusted
        ? 'OpenHands IDE tools (MCP) are not served (click to start)'
        : 'OpenHands IDE tools (MCP) are never served in an untrusted workspace';
      status.command = 'openhands.ide.startServer';
    }
    status.show();
  };

  const stop = async (why: string) => {
    const s = server;
    server = undefined;
    discovery?.remove();
    discovery = undefined;
    env.clear();
    if (s) {
      await s.stop();
      log.info(`IDE tools MCP endpoint stopped (${why})`);
    }
    showStatus();
  };

  const start = async (interactive: boolean): Promise<void> => {
    if (server?.current) return;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const label = folder?.name ?? 'this window';
    const answer = interactive ? await consent.ensure(label, '127.0.0.1') : vscode.workspace.isTrusted ? (consent.granted ? 'granted' : 'declined') : 'untrusted';
    if (answer !== 'granted') {
      if (interactive) {
        void vscode.window.showWarningMessage(
          answer === 'untrusted'
            ? 'OpenHands IDE tools are not served in an untrusted workspace.'
            : 'OpenHands IDE tools were not allowed for this workspace.',
        );
      }
      log.info(`IDE tools MCP endpoint not started: ${answer}`);
      showStatus();
      return;
    }
    const s = new IdeMcpServer({ tools, call, allowedOrigins: settings().allowedOrigins, version, log });
    const ep = await s.start();
    const d = new DiscoveryFile(workspaceIdentity(), undefined, (m) => log.warn(m));
    try {
      d.write(ep);
    } catch (e) {
      log.error(`Cannot write the IDE tools discovery file ${d.file}: ${e instanceof Error ? e.message : e}`);
    }
    server = s;
    discovery = d;
    env.replace(ENV_URL, ep.url);
    env.replace(ENV_TOKEN, ep.token);
    env.replace(ENV_DISCOVERY, d.file);
    log.info(`IDE tools discovery file: ${d.file}`);
    showStatus();
  };

  // Starts run one after the other (an automatic start and the user's command may overlap).
  const startOnce = (interactive: boolean): Promise<void> => {
    starting = (starting ?? Promise.resolve()).then(() =>
      start(interactive).catch((e) => log.error(`IDE tools MCP endpoint failed to start: ${e instanceof Error ? e.message : e}`)),
    );
    return starting;
  };

  const disposables: vscode.Disposable[] = [
    selections,
    diffs,
    reviews,
    status,
    vscode.commands.registerCommand(CALL_TOOL_COMMAND, (name: string, args: unknown) => call(name, args)),
    vscode.commands.registerCommand('openhands.ide.enableExecuteCommand', async () => {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('OpenHands: VS Code commands are never run for IDE tools in an untrusted workspace.');
        return false;
      }
      await context.workspaceState.update(EXECUTE_COMMAND_STATE_KEY, true);
      const n = commandPolicy.allowlist().length;
      void vscode.window.showInformationMessage(
        `OpenHands: IDE tools may run VS Code commands in this workspace (${n ? `${n} allowlisted` : `none allowlisted yet: add command ids to ${ALLOWLIST_SETTING}`}).`,
      );
      log.info('IDE tools: execute_command turned on for this workspace');
      return true;
    }),
    vscode.commands.registerCommand('openhands.ide.disableExecuteCommand', async () => {
      await context.workspaceState.update(EXECUTE_COMMAND_STATE_KEY, undefined);
      log.info('IDE tools: execute_command turned off for this workspace');
      return true;
    }),
    vscode.commands.registerCommand('openhands.ide.startServer', () => startOnce(true)),
    vscode.commands.registerCommand('openhands.ide.stopServer', () => stop('stopped by the user')),
    vscode.commands.registerCommand('openhands.ide.revokeConsent', async () => {
      await stop('consent revoked');
      await consent.revoke();
      await gate.revoke();
      await context.workspaceState.update(EXECUTE_COMMAND_STATE_KEY, undefined);
    }),
    vscode.commands.registerCommand('openhands.ide.copyClientConfig', async () => {
      const ep = server?.current;
      if (!ep) {
        void vscode.window.showWarningMessage('OpenHands IDE tools are not served; start them first ("OpenHands: Start IDE Tools Server").');
        return undefined;
      }
      const text = clientConfig(ep);
      await vscode.env.clipboard.writeText(text);
      void vscode.window.showInformationMessage('OpenHands: MCP client configuration copied (it contains the token: keep it private).');
      return text;
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (settings().autoStart) void startOnce(false);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('openhands.ide.server.allowedOrigins') && server) {
        // The allowlist is read at start; restart with a new port and token.
        void stop('allowed origins changed').then(() => startOnce(false));
      }
    }),
  ];
  showStatus();
  if (settings().autoStart) void startOnce(false);

  const runtime = runtimeIdeTools(
    tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    call,
    log,
  );

  return {
    call,
    runtime,
    reviewEdit: createEditReviewer(diffs),
    get endpoint() {
      const ep = server?.current;
      return ep && discovery ? { url: ep.url, discoveryFile: discovery.file } : undefined;
    },
    dispose() {
      // Synchronous part first (VS Code does not await disposables): the discovery file and env.
      discovery?.remove();
      discovery = undefined;
      env.clear();
      void server?.stop();
      server = undefined;
      for (const d of disposables) d.dispose();
    },
  };
}
