/**
 * The IDE tools as an MCP endpoint (streamable HTTP, official SDK) for any MCP client on this
 * machine. Security, in the order a request meets it:
 * 1. bound to 127.0.0.1 only, on a port the OS picks (no clash between windows or reloads);
 * 2. `Host` must be this loopback address (a DNS-rebinding page names another host);
 * 3. a browser `Origin` is refused unless it is listed in `allowedOrigins` (clients that are not
 *    browsers send none);
 * 4. `Authorization: Bearer <token>`, a random 256-bit token made per start, compared in constant time.
 * Only then does the MCP transport see the request. Stateless: each HTTP request gets its own MCP
 * server/transport pair, so a crashed or abandoned client leaves nothing behind.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { IdeTool } from './toolSupport';

export const MCP_PATH = '/mcp';
/** Request bodies above this size are refused before parsing (tool arguments are small). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface McpLog {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
}

export interface McpServerOptions {
  tools: readonly IdeTool[];
  /** Runs one tool (argument checks included); throws with a message for the client on failure. */
  call(name: string, args: unknown, ctx?: { signal?: AbortSignal }): Promise<unknown>;
  /** Browser origins allowed to call (exact `scheme://host[:port]`); empty refuses every browser. */
  allowedOrigins?: readonly string[];
  version?: string;
  log?: McpLog;
  /** For tests: a given token instead of a random one. */
  token?: string;
}

export interface McpEndpoint {
  readonly url: string;
  readonly port: number;
  readonly token: string;
}

const normalizeOrigin = (o: string) => o.trim().replace(/\/+$/, '').toLowerCase();

function refuse(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  // A JSON-RPC error shape, so MCP clients show the message.
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

export class IdeMcpServer {
  private server: http.Server | undefined;
  private endpoint: McpEndpoint | undefined;
  private readonly allowedOrigins: Set<string>;

  constructor(private readonly opts: McpServerOptions) {
    this.allowedOrigins = new Set((opts.allowedOrigins ?? []).map(normalizeOrigin));
  }

  get current(): McpEndpoint | undefined {
    return this.endpoint;
  }

  async start(): Promise<McpEndpoint> {
    if (this.endpoint) return this.endpoint;
    const token = this.opts.token ?? randomBytes(32).toString('hex');
    const server = http.createServer((req, res) => {
      void this.handle(req, res, token).catch((e) => {
        this.opts.log?.warn(`MCP request failed: ${e instanceof Error ? e.stack ?? e.message : e}`);
        if (!res.headersSent) refuse(res, 500, 'Internal error');
        else res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    this.server = server;
    this.endpoint = { url: `http://127.0.0.1:${port}${MCP_PATH}`, port, token };
    this.opts.log?.info(`IDE tools MCP endpoint listening on ${this.endpoint.url}`);
    return this.endpoint;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.endpoint = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse, token: string): Promise<void> {
    const port = (this.server?.address() as AddressInfo | null)?.port;
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      this.opts.log?.warn(`MCP: refused a request for host "${host}" (DNS rebinding?)`);
      return refuse(res, 403, `Forbidden: Host "${host}" is not this endpoint`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowedOrigins.has(normalizeOrigin(origin))) {
      this.opts.log?.warn(`MCP: refused a request from browser origin "${origin}" (not in openhands.ide.server.allowedOrigins)`);
      return refuse(res, 403, `Forbidden: Origin "${origin}" is not allowed`);
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== MCP_PATH) return refuse(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}`);
    if (!authorized(req.headers.authorization, token)) {
      this.opts.log?.warn('MCP: refused a request without a valid bearer token');
      return refuse(res, 401, 'Unauthorized: send "Authorization: Bearer <token>" (the token is in the discovery file and in $OPENHANDS_VSCODE_MCP_TOKEN)', {
        'www-authenticate': 'Bearer realm="openhands-vscode"',
      });
    }
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > MAX_BODY_BYTES) return refuse(res, 413, `Request body larger than ${MAX_BODY_BYTES} bytes`);

    const mcp = this.mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  }

  private mcpServer(): Server {
    const server = new Server(
      { name: 'openhands-vscode', version: this.opts.version ?? '0.0.0' },
      { capabilities: { tools: {} }, instructions: 'VS Code\'s own view of this workspace: diagnostics, navigation, editors and selections (1-based lines and columns), and, with the user\'s consent, opening and saving files, diffs the user accepts or rejects, reviews shown in a panel and allowlisted VS Code commands.' },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: this.opts.tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        annotations: { readOnlyHint: t.readOnly, openWorldHint: false },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params;
      const t0 = Date.now();
      try {
        // The signal aborts when the client cancels or its connection closes (open_diff then withdraws its proposal).
        const result = await this.opts.call(name, args, { signal: extra.signal });
        this.opts.log?.debug(`MCP tool ${name} answered in ${Date.now() - t0} ms`);
        return toolResult(result);
      } catch (e) {
        const failed = toolError(e);
        this.opts.log?.debug(`MCP tool ${name} failed in ${Date.now() - t0} ms: ${failed.content[0].text}`);
        return failed;
      }
    });
    return server;
  }
}

/** A tool's result as MCP's `CallToolResult` (the MCP endpoint and the OpenHands runtime path). */
export function toolResult(result: unknown) {
  const structured = result !== null && typeof result === 'object' && !Array.isArray(result) ? (result as Record<string, unknown>) : { result };
  return { content: [{ type: 'text' as const, text: JSON.stringify(result, null, 2) }], structuredContent: structured };
}

/** A tool's error (bad argument, refusal, failure) as a `CallToolResult` with `isError`. */
export function toolError(e: unknown) {
  const message = e instanceof Error ? e.message : String(e);
  return { content: [{ type: 'text' as const, text: message }], isError: true as const };
}

function authorized(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** The client configuration the "copy" command puts on the clipboard (Claude Code / Cursor style). */
export function clientConfig(endpoint: McpEndpoint, name = 'vscode'): string {
  return JSON.stringify(
    { mcpServers: { [name]: { type: 'http', url: endpoint.url, headers: { Authorization: `Bearer ${endpoint.token}` } } } },
    null,
    2,
  );
}
