import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as https from 'https';
import type { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverProblemOf } from '../fixes';
import { ServerError } from '../tab/http';
import { AgentServerClient } from './agentServerClient';
import { TabSession } from '../tab/tabSession';
import { V1Backend } from './v1Backend';
import { normalisePin, trustFetch, trustOf, trustSocketFactory, TlsTrustError } from './tlsClient';

/**
 * The tab's client to a remote agent-server over real TLS: a Node https server (the agent-server's
 * REST stand-in: the TLS is what is tested) with certificates of a CA this test makes with openssl.
 */
let tmp: string;
let server: https.Server;
let url: string;
let caFile: string;
let otherCaFile: string;
let selfSigned: { cert: string; key: string; pin: string };
let selfServer: https.Server;
let selfUrl: string;
const seen: string[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: tmp, stdio: 'pipe' });
}

function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${name}`);
}

function listen(s: https.Server): Promise<string> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r(`https://127.0.0.1:${(s.address() as AddressInfo).port}`)));
}

const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  seen.push(`${req.method} ${req.url} key=${req.headers['x-session-api-key']}`);
  res.setHeader('Content-Type', 'application/json');
  if (req.url?.startsWith('/api/conversations/search')) res.end(JSON.stringify({ items: [{ id: 'c1', title: 't' }] }));
  else {
    res.statusCode = 404;
    res.end('{"detail":"Not Found"}');
  }
};

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-tls-'));
  makeCa('ca');
  makeCa('other');
  // A server certificate for 127.0.0.1 signed by `ca`.
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(path.join(tmp, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext.cnf', '-out', 'srv.pem');
  // A self-signed one for a name that is not the address dialled (a pin ignores the name).
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-keyout', 'self.key', '-out', 'self.pem', '-subj', '/CN=agent.example', '-addext', 'subjectAltName=DNS:agent.example');
  caFile = path.join(tmp, 'ca.pem');
  otherCaFile = path.join(tmp, 'other.pem');
  const selfPem = fs.readFileSync(path.join(tmp, 'self.pem'), 'utf8');
  selfSigned = { cert: selfPem, key: fs.readFileSync(path.join(tmp, 'self.key'), 'utf8'), pin: new crypto.X509Certificate(selfPem).fingerprint256 };
  server = https.createServer({ cert: fs.readFileSync(path.join(tmp, 'srv.pem')), key: fs.readFileSync(path.join(tmp, 'srv.key')) }, handler);
  selfServer = https.createServer({ cert: selfSigned.cert, key: selfSigned.key }, handler);
  url = await listen(server);
  selfUrl = await listen(selfServer);
});

afterAll(() => {
  server?.close();
  selfServer?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the tab client to a remote agent-server over TLS', () => {
  it('with the CA file set: the request is answered', async () => {
    const client = new AgentServerClient(url, 'k1', trustFetch({ caFile }));
    expect((await client.listConversations()).map((c) => c.id)).toEqual(['c1']);
    expect(seen.at(-1)).toContain('key=k1');
  });

  it('with another CA: refused as a certificate problem, whose fix is the certificate settings, and the key is never sent', async () => {
    const before = seen.length;
    const client = new AgentServerClient(url, 'k2', trustFetch({ caFile: otherCaFile }));
    const e = await client.listConversations().catch((x) => x);
    expect(e).toBeInstanceOf(ServerError);
    expect((e as ServerError).kind).toBe('tls');
    expect((e as Error).message).toMatch(/certificate was not accepted.*openhands\.v1\.caFile/);
    expect(serverProblemOf(e).fixes.map((f) => f.fix)).toEqual(['certificate', 'retry']);
    expect(seen.length).toBe(before);
  });

  it('without a CA file or pin (Node\'s own store): a certificate of a test CA is refused the same way', async () => {
    const client = new AgentServerClient(url, 'k3', globalThis.fetch as never);
    const e = await client.listConversations().catch((x) => x);
    expect((e as ServerError).kind).toBe('tls');
  });

  it('a pin of the self-signed certificate: accepted whatever its host name; a wrong pin refused before the request', async () => {
    const ok = new AgentServerClient(selfUrl, 'k4', trustFetch({ certSha256: normalisePin(selfSigned.pin) }));
    expect((await ok.listConversations()).length).toBe(1);
    const before = seen.length;
    const wrong = new AgentServerClient(selfUrl, 'k5', trustFetch({ certSha256: 'ab'.repeat(32) }));
    const e = await wrong.listConversations().catch((x) => x);
    expect((e as ServerError).kind).toBe('tls');
    expect((e as Error).message).toContain('not the pinned');
    expect(seen.length).toBe(before);
    // The CA-signed server is no match for the self-signed certificate's pin either.
    const other = new AgentServerClient(url, 'k6', trustFetch({ certSha256: normalisePin(selfSigned.pin) }));
    expect(((await other.listConversations().catch((x) => x)) as ServerError).kind).toBe('tls');
  });

  it('the event stream\'s WebSocket opens with the right CA and gets a frame', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { WebSocketServer } = require('ws');
    const wss = new WebSocketServer({ server });
    wss.on('connection', (c: { send(d: string): void }) => c.send('{"kind":"hello"}'));
    try {
      const got = await new Promise<string>((resolve) => {
        const s = trustSocketFactory({ caFile })(`${url.replace('https', 'wss')}/sockets/events/c1`);
        s.onmessage = (m) => resolve(String(m.data));
        s.onerror = () => resolve('error');
        s.onclose = () => resolve('closed');
      });
      expect(got).toBe('{"kind":"hello"}');
    } finally {
      wss.close();
    }
  });

  it('the event stream\'s WebSocket checks the certificate the same way (a wrong CA never opens)', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const s = trustSocketFactory({ caFile: otherCaFile })(`${url.replace('https', 'wss')}/sockets/events/c1`);
      s.onopen = () => resolve('open');
      s.onerror = () => resolve('error');
      s.onclose = () => resolve('closed');
    });
    expect(outcome).not.toBe('open');
  });

  it('the tab (TabSession over V1Backend, the endpoint\'s own fetch): another CA is the server problem with "Set Certificate Trust", the right one lists', async () => {
    const store = () => {
      const m = new Map<string, unknown>();
      return { get: <T>(k: string) => m.get(k) as T | undefined, update: async (k: string, v: unknown) => { m.set(k, v); } };
    };
    const session = (ca: string) => new TabSession({
      backend: new V1Backend({
        endpoint: () => ({ baseUrl: url, sessionApiKey: 'k7', discoveryDir: '', fetch: trustFetch({ caFile: ca }) }),
        state: store(), llmState: store(),
        secrets: { get: async () => undefined, store: async () => undefined },
        executor: { snapshot: { state: 'stopped' }, retarget: async () => undefined, release: async () => undefined, execute: async () => '{}' },
        workspaceRoot: () => '/ws', confirmation: () => 'never', ideTools: async () => undefined,
      }),
      executor: { snapshot: { state: 'stopped' }, retarget: async () => undefined, release: async () => undefined, execute: async () => '{}' } as never,
      post: () => undefined,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    const wrong = session(otherCaFile);
    await wrong.open();
    const problem = wrong.status().problems.find((p) => p.id === 'server');
    expect(problem?.message).toMatch(/certificate was not accepted/);
    expect(problem?.fixes.map((f) => f.fix)).toEqual(['certificate', 'retry']);
    const right = session(caFile);
    await right.open();
    expect(right.status().problems.find((p) => p.id === 'server')).toBeUndefined();
    expect(right.status().conversations.map((c) => c.id)).toContain('c1');
  });

  it('settings: a pin that is not 64 hex digits, or a CA file with a pin, are refused with what to change', () => {
    expect(() => trustOf('', 'abc')).toThrow(TlsTrustError);
    expect(() => trustOf(caFile, 'ab'.repeat(32))).toThrow(/either openhands\.v1\.caFile or openhands\.v1\.certSha256/);
    expect(trustOf('', `${'AB:'.repeat(31)}AB`)).toEqual({ certSha256: 'ab'.repeat(32) });
    expect(trustOf('', '')).toBeUndefined();
  });
});
