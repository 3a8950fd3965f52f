import * as fs from 'node:fs/promises';

import { listeners, type ReadFile } from '../procNet';

/**
 * Linux: whose is the socket listening on a TCP port? The managed agent-server reports the port
 * it bound (v1/agentServerProcess.ts); before anything secret goes there, the extension checks that
 * every socket listening on that port is one of the server process's open descriptors.
 * `/proc/net/tcp{,6}` gives each LISTEN socket's inode, `/proc/<pid>/fd/*` links read
 * `socket:[<inode>]` for the sockets a process holds (readable for a process of the same user).
 */

/** How the check ended: `owned` (every listener is the process's), `foreign` (one is not, or none listens), `unknown` (no /proc). */
export type SocketOwnership = { kind: 'owned' } | { kind: 'foreign'; reason: string } | { kind: 'unknown' };

type Read = ReadFile;

/** The inodes of the sockets in LISTEN state on `port` (any address); `undefined` without /proc/net. */
export async function listeningInodes(port: number, read?: Read): Promise<string[] | undefined> {
  return (await listeners(port, read))?.map((l) => l.inode);
}

/** The socket inodes among `pid`'s open descriptors (`socket:[N]` links). */
export async function socketInodesOf(pid: number): Promise<Set<string>> {
  const out = new Set<string>();
  const dir = `/proc/${pid}/fd`;
  for (const fd of await fs.readdir(dir)) {
    const target = await fs.readlink(`${dir}/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) out.add(m[1]);
  }
  return out;
}

/** Whether every socket listening on `port` belongs to process `pid` (and at least one does). */
export async function portOwnedBy(pid: number, port: number, read?: Read): Promise<SocketOwnership> {
  const inodes = await listeningInodes(port, read);
  if (inodes === undefined) return { kind: 'unknown' };
  if (inodes.length === 0) return { kind: 'foreign', reason: `nothing listens on port ${port}` };
  let own: Set<string>;
  try {
    own = await socketInodesOf(pid);
  } catch (e) {
    return { kind: 'foreign', reason: `cannot read the descriptors of process ${pid}: ${(e as Error).message}` };
  }
  const others = inodes.filter((i) => !own.has(i));
  if (others.length > 0) return { kind: 'foreign', reason: `port ${port} has a listening socket (inode ${others.join(', ')}) that process ${pid} does not hold` };
  return { kind: 'owned' };
}
