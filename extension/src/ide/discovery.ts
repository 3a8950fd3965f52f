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

/**
 * Creates `dir` (0700) or checks the existing one, as the runtime's `ensure_private_dir` does: it
 * must be a folder of this user (another user's folder, or one at a path another user chose,
 * e.g. under /tmp, would let them read every token written there), and a mode looser than 0700
 * is tightened (`onLoosened` says so).
 */
export function ensurePrivateDir(dir: string, onLoosened?: (message: string) => void): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new Error(`the folder ${dir} belongs to another user (uid ${st.uid}); it must be yours and private: remove it or choose another location (OPENHANDS_VSCODE_MCP_DIR)`);
  }
  if ((st.mode & 0o077) !== 0) {
    fs.chmodSync(dir, 0o700);
    onLoosened?.(`the folder ${dir} was open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); it holds tokens: set it to 0700`);
  }
}

export class DiscoveryFile {
  readonly instance = randomUUID();
  readonly file: string;

  constructor(
    private readonly workspace: { folders: string[]; workspaceFile: string | null },
    readonly dir: string = discoveryDir(),
    private readonly onLoosened?: (message: string) => void,
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
    ensurePrivateDir(this.dir, this.onLoosened);
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
