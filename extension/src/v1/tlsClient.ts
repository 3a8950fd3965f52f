import * as crypto from 'crypto';
import * as fs from 'fs';
import * as https from 'https';
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
 * An https agent whose connections are handed to the request only after the server's certificate
 * was accepted: with a pin, its SHA-256 is compared first (a mismatch ends the socket with
 * `PIN_MISMATCH`; the request, and its key header, is never written).
 */
export function trustAgent(trust: TlsTrust): https.Agent {
  const base = tlsOptions(trust);
  if (!trust.certSha256) return new https.Agent({ ...base, keepAlive: false });
  const pin = trust.certSha256;
  const agent = new https.Agent({ keepAlive: false });
  (agent as unknown as { createConnection: unknown }).createConnection = (options: tls.ConnectionOptions, done: (err: Error | null, s?: tls.TLSSocket) => void) => {
    const socket = tls.connect({ ...options, ...base });
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate()?.raw;
      const seen = raw ? crypto.createHash('sha256').update(raw).digest('hex') : '';
      if (seen !== pin) {
        const err = Object.assign(new Error(`the agent-server's certificate has SHA-256 fingerprint ${seen || '(none)'}, not the pinned ${pin} (openhands.v1.certSha256)`), { code: 'PIN_MISMATCH' });
        socket.destroy();
        done(err);
        return;
      }
      done(null, socket);
    });
    socket.once('error', (e) => done(e));
    return undefined;
  };
  return agent;
}

/** `FetchLike` over Node's https with `trust` (the tab's REST requests to a remote agent-server). */
export function trustFetch(trust: TlsTrust): FetchLike {
  const agent = trustAgent(trust);
  return (url, init) =>
    new Promise((resolve, reject) => {
      const req = https.request(url, { method: init.method, headers: init.headers, agent, signal: init.signal }, (res) => {
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
  const agent = trustAgent(trust);
  return (url) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Ws = require('ws') as new (u: string, o: Record<string, unknown>) => SocketLike;
    return new Ws(url, { agent });
  };
}
