import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { isLoopbackUrl } from '../credentials';

/**
 * Where a V1 conversation's executor channel is: the discovery file the package's V1 tools write
 * (`openhands_vscode_runtime.v1.connection`, OH_VSCODE_SPAWN_EXECUTOR=0) while they wait for an
 * executor, `<dir>/v1-<conversation id hex>.json`, mode 0600 in a 0700 folder.
 */
export interface ExecutorChannel {
  /** The agent-server's embedded Socket.IO server (loopback). */
  url: string;
  /** The executor's conversation id on that channel (`v1-<hex>`). */
  conversationId: string;
  sessionApiKey: string;
  workspace: string;
  pid?: number;
}

/** The default folder, as the Python side computes it (`settings.v1_discovery_dir`). */
export function defaultDiscoveryDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OH_VSCODE_V1_DISCOVERY_DIR) return env.OH_VSCODE_V1_DISCOVERY_DIR;
  const state = env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  return path.join(state, 'openhands-vscode-runtime', 'v1');
}

/** The channel id of a V1 conversation id (a UUID, with or without dashes). */
export function channelId(conversationId: string): string {
  return `v1-${conversationId.replace(/-/g, '').toLowerCase()}`;
}

export class DiscoveryError extends Error {}

/**
 * Reads and checks one discovery file. It holds the executor's secret and says where this
 * window's files and shell are handed, so it is taken only if it is what the V1 tools write: a
 * regular file (not a link) of this user, readable by nobody else, for this conversation, naming
 * a URL on this machine. The file is opened without following a link and every check is made on
 * the open file (`fstat`), which is then what is read: a file swapped in after the check is not.
 * The URL's host is loopback by address (`localhost` only if it resolves to loopback addresses
 * only), as for the executor token (credentials.ts).
 */
export async function readChannel(
  file: string,
  conversationId: string,
  lookup?: Parameters<typeof isLoopbackUrl>[1],
): Promise<ExecutorChannel> {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted at the path must not hang the open.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new DiscoveryError(`${file} is a symbolic link, not a regular file`);
    throw e;
  }
  let text: string;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new DiscoveryError(`${file} is not a regular file`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new DiscoveryError(`${file} belongs to another user`);
    if ((st.mode & 0o077) !== 0) throw new DiscoveryError(`${file} is readable by others (mode ${(st.mode & 0o777).toString(8)})`);
    text = fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
  const info = JSON.parse(text) as Record<string, unknown>;
  const id = channelId(conversationId);
  if (info.conversation_id !== id) throw new DiscoveryError(`${file} is for ${String(info.conversation_id)}, not ${id}`);
  const url = String(info.url ?? '');
  try {
    new URL(url);
  } catch {
    throw new DiscoveryError(`${file} names no valid URL`);
  }
  if (!(await isLoopbackUrl(url, lookup))) throw new DiscoveryError(`${file} names ${url}, not this machine (by address)`);
  if (typeof info.session_api_key !== 'string' || !info.session_api_key) throw new DiscoveryError(`${file} has no key`);
  return {
    url,
    conversationId: id,
    sessionApiKey: info.session_api_key,
    workspace: String(info.workspace ?? ''),
    pid: typeof info.pid === 'number' ? info.pid : undefined,
  };
}

/**
 * Waits for the conversation's discovery file (its tools write it when they start waiting, inside
 * the create request or at the first run after the agent-server restarted).
 */
export async function waitForChannel(dir: string, conversationId: string, opts: { timeoutMs: number; signal?: AbortSignal; intervalMs?: number }): Promise<ExecutorChannel> {
  const file = path.join(dir, `${channelId(conversationId)}.json`);
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (opts.signal?.aborted) throw new DiscoveryError('cancelled');
    if (fs.existsSync(file)) return readChannel(file, conversationId);
    if (Date.now() > deadline) throw new DiscoveryError(`no executor channel for conversation ${conversationId} after ${Math.round(opts.timeoutMs / 1000)} s (${file})`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}
