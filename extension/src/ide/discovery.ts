/**
 * The discovery file: how a process on this machine finds the IDE tools endpoint of a workspace.
 *
 *   ~/.openhands/vscode-mcp/<workspace-hash>.json   (dir 0700, file 0600; $OPENHANDS_VSCODE_MCP_DIR overrides the dir)
 *
 * <workspace-hash> is the first 16 hex digits of the SHA-256 of the workspace's identity (the
 * `.code-workspace` file's URI, else the folder URIs, one per line), so a client that knows the
 * folder computes the name. The file is written atomically (temp file + rename) and holds an
 * `instance` id: a window that stops removes the file only if it still holds its own instance, so
 * when a reload's new extension host has already written its file, the old host's shutdown does
 * not remove it. Two windows on the same folder: the last one started owns the file.
 */
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const DISCOVERY_VERSION = 1;

export interface DiscoveryInfo {
  version: number;
  url: string;
  transport: 'streamable-http';
  headers: { Authorization: string };
  token: string;
  workspace: { folders: string[]; workspaceFile: string | null };
  pid: number;
  instance: string;
  startedAt: string;
}

export function discoveryDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.OPENHANDS_VSCODE_MCP_DIR || path.join(os.homedir(), '.openhands', 'vscode-mcp');
}

/** The hash of a workspace's identity (see the module comment). */
export function workspaceHash(folders: readonly string[], workspaceFile: string | null): string {
  const identity = workspaceFile ?? folders.join('\n');
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

export class DiscoveryFile {
  readonly instance = randomUUID();
  readonly file: string;

  constructor(
    private readonly workspace: { folders: string[]; workspaceFile: string | null },
    readonly dir: string = discoveryDir(),
  ) {
    this.file = path.join(dir, `${workspaceHash(workspace.folders, workspace.workspaceFile)}.json`);
  }

  write(endpoint: { url: string; token: string }): DiscoveryInfo {
    const info: DiscoveryInfo = {
      version: DISCOVERY_VERSION,
      url: endpoint.url,
      transport: 'streamable-http',
      headers: { Authorization: `Bearer ${endpoint.token}` },
      token: endpoint.token,
      workspace: this.workspace,
      pid: process.pid,
      instance: this.instance,
      startedAt: new Date().toISOString(),
    };
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.${this.instance.slice(0, 8)}.tmp`;
    // mode applies at creation; 'wx' refuses to follow a planted file or symlink.
    fs.writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, this.file);
    return info;
  }

  /** Removes the file if it is still ours (synchronous: it runs while the extension host shuts down). */
  remove(): boolean {
    try {
      const current = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<DiscoveryInfo>;
      if (current.instance !== this.instance) return false;
      fs.unlinkSync(this.file);
      return true;
    } catch {
      return false;
    }
  }
}
