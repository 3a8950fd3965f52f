import { isLoopbackUrl } from '../credentials';
import { channelId, DiscoveryError, type ExecutorChannel } from './executorDiscovery';

/**
 * A V1 agent-server on another machine as this window's backend (`openhands.v1.url` naming a host
 * that is not this one; docs/remote.md). What differs from one on this machine:
 *
 * * the URL must be `https` (`http` only when every address of its host is loopback, the rule the
 *   executor applies to its own connection): the key and this window's commands never go in clear;
 * * its conversations' executor channels are not files of this machine: each discovery file is
 *   read from the server's folder through the agent-server's own file API (`GET
 *   /api/file/download`, with the agent-server's key, over that TLS connection), and it must name a
 *   hub on the agent-server's own host over `https`, never an address of this machine;
 * * the certificate is checked by the system's store, or the CA file or pin the user set
 *   (`tlsClient.ts`), for the tab's requests and every executor alike.
 */

type Lookup = Parameters<typeof isLoopbackUrl>[1];

export class RemoteUrlError extends Error {}

/** Where the agent of a V1 tab runs: this machine, or `host` (another one). */
export interface AgentPlace {
  remote: boolean;
  /** The agent-server's host (and port) as the URL names it. */
  host: string;
}

/**
 * Checks `openhands.v1.url` and says where it is. Plain `http` to a host that is not this machine
 * (by address) is refused with why and what fixes it.
 */
export async function agentPlace(url: string, lookup?: Lookup): Promise<AgentPlace> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RemoteUrlError(`openhands.v1.url "${url}" is not a valid URL.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RemoteUrlError(`openhands.v1.url must start with https:// (or http:// for this machine), not "${u.protocol}".`);
  const local = await isLoopbackUrl(url, lookup);
  if (!local && u.protocol === 'http:') {
    throw new RemoteUrlError(
      `openhands.v1.url is ${u.origin}, plain http to another machine: the session API key, the agent's commands and your files' contents would cross the network in clear, and anything on the way could read or change them. ` +
        `Serve the agent-server over https (a certificate for ${u.hostname}; docs/remote.md) and set openhands.v1.url to https://${u.host}, or use 127.0.0.1 for an agent-server on this machine.`,
    );
  }
  return { remote: !local, host: u.host };
}

/** The line the tab shows at all times: where the agent thinks, and that its hands are here. */
export function placeLine(place: AgentPlace | undefined, managed: boolean): string {
  if (managed) return "Agent: this machine (this window's agent-server) · its commands and edits run here";
  if (!place) return '';
  return place.remote
    ? `Agent: on ${place.host} (another machine) · its commands and edits run here, in this window`
    : `Agent: this machine (${place.host}) · its commands and edits run here`;
}

/** The server's default discovery folder: `~/.local/state/openhands-vscode-runtime/v1` under its home. */
export function remoteDefaultDiscoveryDir(home: string): string {
  return `${home.replace(/\/+$/, '')}/.local/state/openhands-vscode-runtime/v1`;
}

/**
 * Checks a discovery file read from a remote agent-server (`text`, for `conversationId`): for that
 * conversation, with a key, and naming a hub on the agent-server's own host over `https`. The host
 * rule keeps a server (or a file planted there) from sending this window's executor, with its
 * shell, to another address, in particular one of this machine.
 */
export function remoteChannel(info: unknown, conversationId: string, agentServerUrl: string): ExecutorChannel {
  const o = (info && typeof info === 'object' ? info : {}) as Record<string, unknown>;
  const id = channelId(conversationId);
  if (o.conversation_id !== id) throw new DiscoveryError(`the discovery file is for ${String(o.conversation_id)}, not ${id}`);
  let hub: URL;
  try {
    hub = new URL(String(o.url ?? ''));
  } catch {
    throw new DiscoveryError('the discovery file names no valid URL');
  }
  const server = new URL(agentServerUrl);
  if (hub.protocol !== 'https:' && hub.protocol !== 'wss:') {
    throw new DiscoveryError(`the discovery file names ${hub.origin}: a remote agent-server's hub must be served over TLS (OH_VSCODE_TLS_CERT/KEY, docs/remote.md)`);
  }
  if (hub.hostname.toLowerCase() !== server.hostname.toLowerCase()) {
    throw new DiscoveryError(`the discovery file names ${hub.host}, not the agent-server's host ${server.hostname} (OH_VSCODE_SERVER_URL on the server)`);
  }
  if (typeof o.session_api_key !== 'string' || !o.session_api_key) throw new DiscoveryError('the discovery file has no key');
  return { url: hub.toString().replace(/\/+$/, ''), conversationId: id, sessionApiKey: o.session_api_key, workspace: String(o.workspace ?? '') };
}

/** What the pool needs of a remote agent-server: its conversations and their discovery files. */
export interface RemoteFiles {
  /** The ids of the server's conversations (`GET /api/conversations/search`). */
  conversationIds(): Promise<string[]>;
  /** A file of the server as JSON (`GET /api/file/download`); undefined when it does not exist (404). */
  readJson(path: string): Promise<unknown | undefined>;
  /** The folder the server's V1 tools write discovery files to. */
  discoveryDir(): Promise<string>;
  agentServerUrl: string;
}

/**
 * One look at a remote agent-server's executor channels: every conversation whose discovery file
 * exists, checked (`remoteChannel`), with an identity (URL and key: a new file for the same
 * conversation, after a restart, is a new identity). Files that fail the check are reported by
 * `refused` with the reason, not returned.
 */
export async function remoteChannels(src: RemoteFiles): Promise<Map<string, { channel?: ExecutorChannel; identity: string; refused?: string }>> {
  const dir = (await src.discoveryDir()).replace(/\/+$/, '');
  const ids = await src.conversationIds();
  const out = new Map<string, { channel?: ExecutorChannel; identity: string; refused?: string }>();
  // A few at a time: one request per conversation, on a link that may be slow.
  const queue = [...ids];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      const key = channelId(id);
      const info = await src.readJson(`${dir}/${key}.json`);
      if (info === undefined) continue;
      try {
        const channel = remoteChannel(info, id, src.agentServerUrl);
        out.set(key, { channel, identity: `${channel.url} ${channel.sessionApiKey}` });
      } catch (e) {
        out.set(key, { identity: JSON.stringify(info), refused: (e as Error).message });
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return out;
}
