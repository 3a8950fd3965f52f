import * as fs from 'node:fs/promises';

/**
 * Linux: the sockets in LISTEN state on a TCP port, from `/proc/net/tcp` and `/proc/net/tcp6`
 * (rows whose state column is `0A`), with the two columns the extension asks about: the owner's
 * uid (credentials.ts: is the server on this port this user's?) and the socket's inode
 * (v1/socketOwner.ts: is it one of the agent-server's descriptors?). `undefined` when neither
 * file can be read (another platform): the caller then cannot tell who listens.
 */
export interface Listener {
  uid: number;
  inode: string;
}

export type ReadFile = (file: string) => Promise<string>;

export async function listeners(port: number, read: ReadFile = (f) => fs.readFile(f, 'utf8')): Promise<Listener[] | undefined> {
  const out: Listener[] = [];
  let readAny = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await read(file);
    } catch {
      continue;
    }
    readAny = true;
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const localPort = parseInt(cols[1].split(':')[1] ?? '', 16);
      if (cols[3] === '0A' && localPort === port) out.push({ uid: Number(cols[7]), inode: cols[9] });
    }
  }
  return readAny ? out : undefined;
}
