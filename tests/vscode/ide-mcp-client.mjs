// An MCP client of the IDE tools endpoint, as any local process would be: it finds the endpoint
// through the discovery file and talks to it with the official MCP client SDK
// (@modelcontextprotocol/sdk, from extension/node_modules). Started by suite/ide.js.
//
//   node ide-mcp-client.mjs <discovery-file> <plan.json>
//
// plan.json: {"calls": [{"id", "tool", "args"}], "probes": true, "bench": {"n", "tool", "args", "readPath"}}
// Prints one JSON line: {"tools": [...], "calls": {id: {isError, text, json}}, "probes": {...}, "bench": {...}}.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '../../extension/package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const [discoveryFile, planFile] = process.argv.slice(2);
const info = JSON.parse(readFileSync(discoveryFile, 'utf8'));
const plan = JSON.parse(readFileSync(planFile, 'utf8'));

async function connect(headers) {
  const client = new Client({ name: 'oh-ide-test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers } }));
  return client;
}

const out = { url: info.url, calls: {}, probes: {} };
const client = await connect(info.headers);
out.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, readOnly: t.annotations?.readOnlyHint }));
for (const c of plan.calls ?? []) {
  try {
    const r = await client.callTool({ name: c.tool, arguments: c.args ?? {} });
    const text = r.content?.[0]?.text ?? '';
    let json;
    try { json = JSON.parse(text); } catch {}
    out.calls[c.id] = { isError: Boolean(r.isError), text, json };
  } catch (e) {
    out.calls[c.id] = { isError: true, thrown: String(e && e.message ? e.message : e) };
  }
}

const attempt = async (headers) => {
  try {
    const c = await connect(headers);
    await c.listTools();
    await c.close();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: String(e && e.message ? e.message : e) };
  }
};
const raw = async (headers) => {
  const r = await fetch(info.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  return { status: r.status, body: await r.text() };
};
if (plan.probes) {
  out.probes.noToken = await attempt({});
  out.probes.noTokenRaw = await raw({});
  out.probes.wrongToken = await attempt({ Authorization: `Bearer ${'f'.repeat(64)}` });
  out.probes.crossOrigin = await attempt({ ...info.headers, Origin: 'http://evil.example' });
  out.probes.crossOriginRaw = await raw({ ...info.headers, Origin: 'http://evil.example' });
}

// Latency of one tool call through the endpoint beside a plain file read, same process, same run.
if (plan.bench) {
  const { n, tool, args, readPath } = plan.bench;
  const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const time = async (f) => {
    const xs = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await f();
      xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    return { n, p50_ms: pct(xs, 50), p90_ms: pct(xs, 90) };
  };
  await client.callTool({ name: tool, arguments: args }); // warm-up
  out.bench = {
    tool,
    mcp: await time(async () => {
      const r = await client.callTool({ name: tool, arguments: args });
      if (r.isError) throw new Error(r.content?.[0]?.text);
    }),
    read: await time(() => readFile(readPath, 'utf8')),
  };
}
await client.close();
console.log(JSON.stringify(out));
