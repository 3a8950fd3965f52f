import { constants as fsConstants } from 'node:fs';
import * as dns from 'node:dns/promises';
import * as fs from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { listeners, type ReadFile } from './procNet';

/**
 * The executor credential: what the executor presents to the runtime (`session_api_key`).
 *
 * 1. The key in SecretStorage ("OpenHands: Set Session API Key"): the OpenHands server's
 *    SESSION_API_KEY, or its executor token pasted by hand for a server on another machine.
 * 2. Otherwise, when the server is on this machine (loopback URL), the executor token file the
 *    runtime creates (same path rule as openhands_vscode_runtime/credentials.py), so the user
 *    copies nothing.
 * See docs/security.md.
 */
export type CredentialSource = 'secret-storage' | 'token-file' | 'none';

export interface ExecutorCredential {
  key: string | undefined;
  source: CredentialSource;
  /** Where it came from, or why none was found (for the log). */
  detail: string;
}

export interface CredentialDeps {
  env: NodeJS.ProcessEnv;
  home: string;
  /** Reads the token file the safe way (see `readTokenFile`). */
  readFile(file: string): Promise<string>;
  /** Every address a host name resolves to. */
  lookup(host: string): Promise<string[]>;
  /** The uids of the sockets listening on a TCP port (Linux: /proc/net/tcp{,6}); `undefined`
   * when this platform cannot tell. */
  listenerUids(port: number): Promise<number[] | undefined>;
  /** This process's uid (`undefined` where there is none, e.g. Windows). */
  uid: number | undefined;
}

const defaultDeps: CredentialDeps = {
  env: process.env,
  home: os.homedir(),
  readFile: (file) => readTokenFile(file),
  lookup: async (host) => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address),
  listenerUids: (port) => listenerUids(port),
  uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
};

/** The shortest token accepted (the runtime creates 43 characters; openhands_vscode_runtime/credentials.py
 * refuses shorter than 32 too). */
export const MIN_TOKEN_LENGTH = 32;

/**
 * Reads the executor token file without following a symlink (O_NOFOLLOW), then checks the open
 * file itself (fstat, so nothing can swap it in between): a regular file, owned by this user, not
 * readable or writable by group or others, holding a token of at least MIN_TOKEN_LENGTH characters.
 * The same rules as the runtime's `_read_token`.
 */
export async function readTokenFile(file: string, uid: number | undefined = defaultUid()): Promise<string> {
  const handle = await fs.open(file, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0)).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ELOOP') throw Object.assign(new Error(`the executor token file ${file} is a symbolic link: refused (delete it; the runtime creates a new one)`), { code: 'EUNSAFE' });
    throw e;
  });
  try {
    const st = await handle.stat();
    const unsafe = (why: string) => Object.assign(new Error(`the executor token file ${file} ${why}`), { code: 'EUNSAFE' });
    if (!st.isFile()) throw unsafe('is not a regular file');
    if (uid !== undefined && st.uid !== uid) throw unsafe(`belongs to another user (uid ${st.uid}): refused; delete it so that a new one is created`);
    if ((st.mode & 0o077) !== 0) throw unsafe(`can be read or written by other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}): refused; run \`chmod 600 ${file}\` or delete it`);
    const token = (await handle.readFile({ encoding: 'utf8' })).trim();
    if (token.length < MIN_TOKEN_LENGTH) throw unsafe(`is empty or too short (${token.length} characters, at least ${MIN_TOKEN_LENGTH}): refused; delete it`);
    return token;
  } finally {
    await handle.close();
  }
}

function defaultUid(): number | undefined {
  return typeof process.getuid === 'function' ? process.getuid() : undefined;
}

/** True for an IPv4 address in 127.0.0.0/8, `::1`, or an IPv4-mapped loopback (`::ffff:127.x.y.z`). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (net.isIPv4(a)) return a.startsWith('127.');
  if (!net.isIPv6(a)) return false;
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped !== null) return mapped[1].startsWith('127.');
  // The same, as the URL parser writes it (`::ffff:7f00:1`).
  const hex = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(a);
  return hex !== null && parseInt(hex[1], 16) >> 8 === 0x7f;
}

/** The uids of the sockets in LISTEN state on `port` (procNet.ts); `undefined` without /proc/net. */
export async function listenerUids(port: number, read?: ReadFile): Promise<number[] | undefined> {
  return (await listeners(port, read))?.map((l) => l.uid);
}

/** `$OH_VSCODE_EXECUTOR_TOKEN_FILE`, else `$XDG_STATE_HOME/openhands-vscode-runtime/executor-token`
 * (`~/.local/state/...` without XDG_STATE_HOME). */
export function tokenFilePath(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const configured = (env.OH_VSCODE_EXECUTOR_TOKEN_FILE ?? '').trim();
  if (configured) return configured.startsWith('~/') ? path.join(home, configured.slice(2)) : configured;
  const state = (env.XDG_STATE_HOME ?? '').trim();
  return path.join(state || path.join(home, '.local', 'state'), 'openhands-vscode-runtime', 'executor-token');
}

/**
 * True when the URL's host is this machine *by address*: an IP literal in 127.0.0.0/8 or `::1`,
 * or a name (`localhost`, `x.localhost`, anything) every one of whose addresses is loopback. A
 * name is never loopback by its spelling alone.
 */
export async function isLoopbackUrl(serverUrl: string, lookup: CredentialDeps['lookup'] = defaultDeps.lookup): Promise<boolean> {
  let host: string;
  try {
    host = new URL(serverUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (!host) return false;
  if (net.isIP(host)) return isLoopbackAddress(host);
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch {
    return false;
  }
  return addresses.length > 0 && addresses.every(isLoopbackAddress);
}

/** The URL's port (the scheme's default when none is written). */
function urlPort(serverUrl: string): number | undefined {
  try {
    const u = new URL(serverUrl);
    if (u.port) return Number(u.port);
    return u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : undefined;
  } catch {
    return undefined;
  }
}

/** What to do when the server is elsewhere and nothing is stored. Mentions "Session API Key", so
 * the error offers the "Set Session API Key" fix. */
export function missingCredentialMessage(serverUrl: string, tokenFile: string): string {
  return (
    `No executor credential for the OpenHands server at ${serverUrl}: it is not on this machine, so its ` +
    `executor token file cannot be read here. Run "OpenHands: Set Session API Key" and enter the ` +
    `server's SESSION_API_KEY, or, when it has none, the content of ${tokenFile} on the server's machine.`
  );
}

/** Finds the executor credential; throws with what to do when the server is remote and none is stored. */
export async function findExecutorCredential(
  stored: string | undefined,
  serverUrl: string,
  deps: CredentialDeps = defaultDeps,
): Promise<ExecutorCredential> {
  const key = (stored ?? '').trim();
  if (key) return { key, source: 'secret-storage', detail: 'the key stored with "OpenHands: Set Session API Key"' };
  const file = tokenFilePath(deps.env, deps.home);
  if (!(await isLoopbackUrl(serverUrl, deps.lookup))) throw new Error(missingCredentialMessage(serverUrl, file));
  // On Linux: the socket listening on that port must be this user's (another local user who
  // bound the port first is not handed the token; the handshake would not send it anyway).
  const port = urlPort(serverUrl);
  const uids = port === undefined ? undefined : await deps.listenerUids(port);
  if (uids !== undefined && deps.uid !== undefined && uids.some((u) => u !== deps.uid)) {
    throw new Error(
      `The server listening on ${serverUrl} belongs to another user (uid ${uids.filter((u) => u !== deps.uid).join(', ')}), ` +
        `not to you: the executor token file ${file} is not used for it. If it is your OpenHands, run "OpenHands: Set Session API Key".`,
    );
  }
  let token: string;
  try {
    token = await deps.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      key: undefined,
      source: 'none',
      detail:
        code === 'ENOENT'
          ? `no stored key and no executor token file ${file} (the server has not created one: it has a SESSION_API_KEY, or it does not run VsCodeRuntime)`
          : `no stored key, and the executor token file ${file} cannot be used: ${(e as Error).message}`,
    };
  }
  return { key: token, source: 'token-file', detail: `the executor token file ${file}` };
}
