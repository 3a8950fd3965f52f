import * as http from 'http';
import type { AddressInfo } from 'net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Consent } from '../consent';
import { MemoryMemento } from '../test/vscodeMock';
import { executorError } from '../userErrors';
import { AgentServerClient } from './agentServerClient';
import { ExecutorPool, type PooledExecutor } from './executorPool';
import { agentPlace, placeLine, remoteChannel, remoteDefaultDiscoveryDir, RemoteUrlError, type RemoteFiles } from './remote';

const ID = '0123456789abcdef0123456789abcdef';
const KEY = `v1-${ID}`;
const notLoopback = async () => ['203.0.113.7'];

describe('openhands.v1.url on another machine', () => {
  it('plain http to a host that is not this machine is refused, saying why and what fixes it', async () => {
    const e = await agentPlace('http://203.0.113.7:8000').catch((x) => x);
    expect(e).toBeInstanceOf(RemoteUrlError);
    expect((e as Error).message).toMatch(/in clear/);
    expect((e as Error).message).toContain('https://203.0.113.7:8000');
    // By address: a name that resolves elsewhere is not this machine, whatever it is called.
    await expect(agentPlace('http://localhost.example:8000', notLoopback)).rejects.toThrow(RemoteUrlError);
  });

  it('https to another machine is remote; http to this machine (by address) stays allowed and local', async () => {
    expect(await agentPlace('https://agent.example:8443', notLoopback)).toEqual({ remote: true, host: 'agent.example:8443' });
    expect(await agentPlace('http://127.0.0.1:8000')).toEqual({ remote: false, host: '127.0.0.1:8000' });
  });

  it('the tab says at all times where the agent runs and that its actions run here', () => {
    expect(placeLine({ remote: true, host: 'agent.example:8443' }, false)).toBe('Agent: on agent.example:8443 (another machine) · its commands and edits run here, in this window');
    expect(placeLine({ remote: false, host: '127.0.0.1:8000' }, false)).toContain('this machine');
    expect(placeLine(undefined, true)).toContain("this window's agent-server");
  });
});

describe('a remote discovery file', () => {
  const server = 'https://agent.example:8443';
  const file = (o: Record<string, unknown>) => ({ url: 'https://agent.example:9443', conversation_id: KEY, session_api_key: 'hub-key', workspace: '/w', ...o });

  it('is taken when it names a hub on the agent-server\'s host over https', () => {
    expect(remoteChannel(file({}), ID, server)).toEqual({ url: 'https://agent.example:9443', conversationId: KEY, sessionApiKey: 'hub-key', workspace: '/w' });
  });

  it('is refused when it names plain http, another host (this machine\'s loopback included) or another conversation', () => {
    expect(() => remoteChannel(file({ url: 'http://agent.example:9443' }), ID, server)).toThrow(/over TLS/);
    expect(() => remoteChannel(file({ url: 'https://127.0.0.1:9443' }), ID, server)).toThrow(/not the agent-server's host/);
    expect(() => remoteChannel(file({ url: 'https://evil.example:9443' }), ID, server)).toThrow(/not the agent-server's host/);
    expect(() => remoteChannel(file({ conversation_id: 'v1-other' }), ID, server)).toThrow(/is for v1-other/);
    expect(() => remoteChannel(file({ session_api_key: '' }), ID, server)).toThrow(/no key/);
  });

  it('the server\'s default folder is under its home', () => {
    expect(remoteDefaultDiscoveryDir('/home/agent/')).toBe('/home/agent/.local/state/openhands-vscode-runtime/v1');
  });
});

/** The agent-server's REST routes the pool reads (conversation search, file download, home): a stand-in over real HTTP. */
function fakeAgentServer(files: Map<string, unknown>, ids: string[]) {
  const requests: string[] = [];
  const srv = http.createServer((req, res) => {
    requests.push(`${req.url} ${req.headers['x-session-api-key']}`);
    const u = new URL(req.url ?? '/', 'http://x');
    res.setHeader('Content-Type', 'application/json');
    if (u.pathname === '/api/conversations/search') return res.end(JSON.stringify({ items: ids.map((id) => ({ id })) }));
    if (u.pathname === '/api/file/home') return res.end(JSON.stringify({ home: '/home/agent' }));
    if (u.pathname === '/api/file/download' && files.has(u.searchParams.get('path') ?? '')) return res.end(JSON.stringify(files.get(u.searchParams.get('path')!)));
    res.statusCode = 404;
    res.end('{"detail":"File not found"}');
  });
  return { srv, requests };
}

class StandInExecutor implements PooledExecutor {
  snapshot: PooledExecutor['snapshot'] = { state: 'stopped' };
  stopped = false;
  constructor(readonly key: string, readonly root: string, readonly channel: () => Promise<unknown>) {}
  async start() {
    this.snapshot = { state: 'connected', conversationId: this.key, workspaceRoot: this.root };
  }
  async stop() {
    this.stopped = true;
    this.snapshot = { state: 'stopped' };
  }
  async execute() {
    return '';
  }
  onDidChange() {
    return { dispose: () => undefined };
  }
  dispose() {}
}

describe('the pool on a remote agent-server', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  it('serves a conversation whose discovery file the agent-server\'s file API gives, refuses one naming another host, ends it when the file goes', async () => {
    const ID2 = 'fedcba9876543210fedcba9876543210';
    const dir = '/home/agent/.local/state/openhands-vscode-runtime/v1';
    const files = new Map<string, unknown>([
      [`${dir}/${KEY}.json`, { url: 'https://127.0.0.1:9443', conversation_id: KEY, session_api_key: 'hub', workspace: '/ws' }],
      [`${dir}/v1-${ID2}.json`, { url: 'https://10.9.9.9:9443', conversation_id: `v1-${ID2}`, session_api_key: 'hub2', workspace: '/ws' }],
    ]);
    const { srv, requests } = fakeAgentServer(files, [ID, ID2, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    close = () => srv.close();
    // The agent-server's URL as the user set it; its host is the one the hub must be on.
    const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const client = new AgentServerClient(base, 'server-key');
    const remote: RemoteFiles = {
      agentServerUrl: base,
      conversationIds: async () => (await client.listConversations()).map((c) => c.id),
      readJson: (p) => client.readJsonFile(p),
      discoveryDir: async () => remoteDefaultDiscoveryDir(await client.home()),
    };
    const created: StandInExecutor[] = [];
    const refused: string[] = [];
    const pool = new ExecutorPool({
      discoveryDir: () => undefined,
      remote: () => remote,
      checkWorkspace: async (w) => ({ root: w }),
      create: (k, root, channel) => {
        const e = new StandInExecutor(k, root, channel);
        created.push(e);
        return e;
      },
      limit: () => 4,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      refused: (k, reason) => refused.push(`${k}: ${reason}`),
      pollMs: 60_000,
    });
    await pool.start();
    expect(pool.keys).toEqual([KEY]);
    expect(await created[0].channel()).toMatchObject({ url: 'https://127.0.0.1:9443', sessionApiKey: 'hub' });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(new RegExp(`^v1-${ID2}: .*not the agent-server's host`));
    // Every request carried the agent-server's key (its file API is behind it).
    expect(requests.every((r) => r.endsWith(' server-key'))).toBe(true);
    files.delete(`${dir}/${KEY}.json`);
    await pool.scan();
    expect(pool.keys).toEqual([]);
    expect(created[0].stopped).toBe(true);
    await pool.stop();
  });
});

describe('consent and fixes for a remote agent-server', () => {
  it('the prompt names the remote origin and that it is another machine; another origin asks again', async () => {
    const ask = vi.fn().mockResolvedValue('Allow');
    const c = new Consent(new MemoryMemento() as never, { isTrusted: () => true, ask });
    expect(await c.ensure('ws', 'https://agent.example:8443')).toBe('granted');
    expect(ask.mock.calls[0][0]).toContain('agent.example:8443 (another machine)');
    expect(ask.mock.calls[0][1]).toContain('https://agent.example:8443, on another machine');
    expect(await c.ensure('ws', 'https://agent.example:8443/')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
    expect(await c.ensure('ws', 'https://other.example:8443')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(2);
    expect(ask.mock.calls[1][0]).toContain('other.example:8443');
  });

  it('the executor\'s refusal of a certificate offers the certificate settings, not the key', () => {
    expect(executorError('EAUTH', 'https://agent.example:8443: its TLS certificate was not accepted (unable to get local issuer certificate)').fixes).toEqual(['certificate', 'retry']);
    expect(executorError('EAUTH', "its certificate's SHA-256 fingerprint is AB, not the pinned CD").fixes).toEqual(['certificate', 'retry']);
    expect(executorError('EAUTH', 'the runtime could not prove the session key').fixes).toEqual(['key', 'retry']);
  });
});
