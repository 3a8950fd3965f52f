import * as crypto from 'crypto';
import * as fs from 'fs';
import * as https from 'https';
import * as net from 'net';
import * as tls from 'tls';
import type { FetchLike } from '../tab/http';
import type { SocketFactory, SocketLike } from './agentServerClient';

/**
 * How the tab checks a remote agent-server's certificate: the same two user settings the window's
 * executors get (`openhands.v1.caFile`, `openhands.v1.certSha256`), with the executor's meaning
 * (docs/remote.md): a CA file replaces the system's trust store and the host name is checked; a pin
 * accepts exactly the certificate with that SHA-256 fingerprint, whatever its host name. Neither:
 * Node's own checks (its CA store, the host name), i.e. the default `fetch` and WebSocket.
 */
export interface TlsTrust {
  caFile?: string;
  /** 64 lower-case hex digits (`normalisePin`). */
  certSha256?: string;
}

export class TlsTrustError extends Error {}

/** The fingerprint as 64 lower-case hex digits; `:` and spaces allowed, anything else refused. */
export function normalisePin(raw: string): string {
  const hex = raw.replace(/[:\s]/g, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new TlsTrustError(`openhands.v1.certSha256 is not a SHA-256 fingerprint (64 hex digits, ':' allowed): "${raw}"`);
  }
  return hex;
}

/** The trust of the settings, checked: not both, a pin that is one. Empty settings: undefined. */
export function trustOf(caFile: string, certSha256: string): TlsTrust | undefined {
  if (caFile && certSha256) throw new TlsTrustError('Set either openhands.v1.caFile or openhands.v1.certSha256, not both.');
  if (caFile) return { caFile };
  if (certSha256) return { certSha256: normalisePin(certSha256) };
  return undefined;
}

/**
 * The TLS options of a connection under `trust`. A pin: the chain is not verified (a self-signed
 * certificate has none), the certificate is compared when the handshake is done, before anything
 * is sent (`pinnedAgent`).
 */
function tlsOptions(trust: TlsTrust): tls.ConnectionOptions {
  if (trust.caFile) {
    let ca: Buffer;
    try {
      ca = fs.readFileSync(trust.caFile);
    } catch (e) {
      throw new TlsTrustError(`openhands.v1.caFile cannot be read: ${(e as Error).message}`);
    }
    return { ca, rejectUnauthorized: true };
  }
  return { rejectUnauthorized: false };
}

/**
 * Opens the TLS connection of one request under `trust` and hands it over only once the server's
 * certificate was accepted: with a pin, its SHA-256 is compared first (a mismatch ends the socket
 * with `PIN_MISMATCH`; the request, and its key header, is never written). Given to the request as
 * `createConnection`, with `DIRECT`.
 */
export function trustConnect(trust: TlsTrust): (options: tls.ConnectionOptions, done: (err: Error | null, s?: tls.TLSSocket) => void) => undefined {
  const base = tlsOptions(trust);
  const pin = trust.certSha256;
  return (options, done) => {
    const host = options.host ?? 'localhost';
    // SNI takes a name, never an address.
    const servername = options.servername ?? (net.isIP(host) ? undefined : host);
    const socket = tls.connect({ host, port: options.port, servername, ALPNProtocols: ['http/1.1'], ...base });
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      if (err) {
        socket.destroy();
        done(err);
      } else {
        done(null, socket);
      }
    };
    socket.once('secureConnect', () => {
      if (!pin) return settle(null);
      const raw = socket.getPeerCertificate()?.raw;
      const seen = raw ? crypto.createHash('sha256').update(raw).digest('hex') : '';
      if (seen === pin) return settle(null);
      settle(Object.assign(new Error(`the agent-server's certificate has SHA-256 fingerprint ${seen || '(none)'}, not the pinned ${pin} (openhands.v1.certSha256)`), { code: 'PIN_MISMATCH' }));
    });
    socket.once('error', (e) => settle(e));
    return undefined;
  };
}

/**
 * Request options that keep VS Code's proxy support away from these connections. The extension
 * host patches `https.request` (@vscode/proxy-agent, `http.proxySupport` "override" by default) to
 * replace the agent of every request to a host other than localhost with its own, which makes its
 * own TLS connection: our CA file or pin would be dropped (its `createHttpPatch`, read in the
 * code-server 4.139.1 this repository tests with). The patch passes a request with a `socketPath` through untouched; Node's request
 * then opens its connection with `createConnection` (ours: TLS to the URL's host and port), and the
 * `socketPath` is never opened. A proxy configured in VS Code is not used for a remote agent-server
 * with a CA file or pin (docs/remote.md).
 */
const DIRECT = { socketPath: 'openhands-tls-direct', agent: undefined };

/** `FetchLike` over Node's https with `trust` (the tab's REST requests to a remote agent-server). */
export function trustFetch(trust: TlsTrust): FetchLike {
  const createConnection = trustConnect(trust);
  return (url, init) =>
    new Promise((resolve, reject) => {
      const opts = { ...DIRECT, method: init.method, headers: init.headers, createConnection, signal: init.signal } as unknown as https.RequestOptions;
      const req = https.request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ ok: status >= 200 && status < 300, status, statusText: res.statusMessage ?? '', text: async () => body });
        });
      });
      // Shaped like fetch's failure (`TypeError` with the cause), which `requestJson` reads.
      req.on('error', (e) => reject(Object.assign(new TypeError('fetch failed'), { cause: e })));
      if (init.body !== undefined) req.write(init.body);
      req.end();
    });
}

/** The event stream's WebSocket (the `ws` package, which takes an agent) with `trust`. */
export function trustSocketFactory(trust: TlsTrust): SocketFactory {
  const createConnection = trustConnect(trust);
  return (url) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Ws = require('ws') as new (u: string, o: Record<string, unknown>) => SocketLike;
    return new Ws(url, { ...DIRECT, createConnection });
  };
}
