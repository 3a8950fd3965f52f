// The MCP endpoint over real HTTP on 127.0.0.1, driven by the official MCP client SDK.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { clientConfig, IdeMcpServer, McpEndpoint } from './mcpServer';
import type { IdeTool } from './toolSupport';

const echo: IdeTool = {
  name: 'echo',
  description: 'Returns its argument.',
  readOnly: true,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: async (args) => ({ echoed: args.text }),
};

async function connect(ep: McpEndpoint, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(ep.url), { requestInit: { headers } }));
  return client;
}

const initialize = (ep: McpEndpoint, headers: Record<string, string>) =>
  fetch(ep.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });

describe('IdeMcpServer', () => {
  let server: IdeMcpServer;
  let ep: McpEndpoint;
  const clients: Client[] = [];
  beforeEach(async () => {
    server = new IdeMcpServer({
      tools: [echo],
      call: async (name, args) => {
        if (name !== 'echo') throw new Error(`Unknown tool "${name}"`);
        return echo.run(args as Record<string, unknown>);
      },
      allowedOrigins: ['http://allowed.example:8080/'],
    });
    ep = await server.start();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    await server.stop();
  });

  it('listens on 127.0.0.1 with a 256-bit random token', () => {
    expect(ep.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(ep.token).toMatch(/^[0-9a-f]{64}$/);
  });

  it('lists and calls tools for a client with the bearer token', async () => {
    const client = await connect(ep, { Authorization: `Bearer ${ep.token}` });
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo']);
    expect(tools[0].annotations?.readOnlyHint).toBe(true);
    expect(tools[0].inputSchema).toMatchObject({ type: 'object', required: ['text'] });
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(r.isError).toBeFalsy();
    expect(JSON.parse((r.content as any)[0].text)).toEqual({ echoed: 'hi' });
    expect(r.structuredContent).toEqual({ echoed: 'hi' });
  });

  it('a failing tool is an MCP tool error with the message, not a transport failure', async () => {
    const client = await connect(ep, { Authorization: `Bearer ${ep.token}` });
    clients.push(client);
    const r = await client.callTool({ name: 'nope', arguments: {} });
    expect(r.isError).toBe(true);
    expect((r.content as any)[0].text).toBe('Unknown tool "nope"');
  });

  it('refuses a request without the token, or with a wrong one (401)', async () => {
    await expect(connect(ep, {})).rejects.toThrow(/401|Unauthorized/);
    const none = await initialize(ep, {});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as any).error.message).toMatch(/Authorization: Bearer/);
    expect((await initialize(ep, { Authorization: `Bearer ${'0'.repeat(64)}` })).status).toBe(401);
    expect((await initialize(ep, { Authorization: ep.token })).status).toBe(401);
    expect((await initialize(ep, { Authorization: `Bearer ${ep.token}` })).status).toBe(200);
  });

  it('refuses a browser Origin that is not allowed, even with the token (403)', async () => {
    const auth = { Authorization: `Bearer ${ep.token}` };
    const r = await initialize(ep, { ...auth, Origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    expect(((await r.json()) as any).error.message).toBe('Forbidden: Origin "http://evil.example" is not allowed');
    expect((await initialize(ep, { ...auth, Origin: 'null' })).status).toBe(403);
    expect((await initialize(ep, { ...auth, Origin: 'http://allowed.example:8080' })).status).toBe(200);
    await expect(connect(ep, { ...auth, Origin: 'https://evil.example' })).rejects.toThrow(/403|Forbidden/);
  });

  it('refuses a request for another Host name (DNS rebinding) and other paths', async () => {
    const http = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: ep.port, path: '/mcp', method: 'POST', headers: { host: `attacker.example:${ep.port}`, authorization: `Bearer ${ep.token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
    const other = await fetch(ep.url.replace('/mcp', '/other'), { headers: { Authorization: `Bearer ${ep.token}` } });
    expect(other.status).toBe(404);
  });

  it('stop closes the port', async () => {
    await server.stop();
    await expect(fetch(ep.url, { method: 'POST' })).rejects.toThrow();
  });

  it('the client configuration carries the URL and the bearer header', () => {
    expect(JSON.parse(clientConfig(ep))).toEqual({ mcpServers: { vscode: { type: 'http', url: ep.url, headers: { Authorization: `Bearer ${ep.token}` } } } });
  });
});
