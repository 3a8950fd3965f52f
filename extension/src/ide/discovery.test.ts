import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscoveryFile, discoveryDir, workspaceHash } from './discovery';

describe('DiscoveryFile', () => {
  let dir: string;
  const ws = { folders: ['file:///home/me/app'], workspaceFile: null };
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oh-disc-')), 'vscode-mcp');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('is named by the hash of the workspace folders and written 0600 in a 0700 dir', () => {
    const d = new DiscoveryFile(ws, dir);
    const want = createHash('sha256').update('file:///home/me/app').digest('hex').slice(0, 16);
    expect(path.basename(d.file)).toBe(`${want}.json`);
    d.write({ url: 'http://127.0.0.1:1234/mcp', token: 'tok' });
    expect(fs.statSync(d.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const info = JSON.parse(fs.readFileSync(d.file, 'utf8'));
    expect(info).toMatchObject({ version: 1, url: 'http://127.0.0.1:1234/mcp', transport: 'streamable-http', token: 'tok', headers: { Authorization: 'Bearer tok' }, pid: process.pid, workspace: ws });
    expect(fs.readdirSync(dir)).toEqual([path.basename(d.file)]); // no temp file left
  });

  it('an existing folder open to others is made private before a token is written into it (with a warning)', () => {
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o777);
    const warnings: string[] = [];
    new DiscoveryFile(ws, dir, (m) => warnings.push(m)).write({ url: 'http://127.0.0.1:1234/mcp', token: 'tok' });
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(warnings).toEqual([expect.stringMatching(/was open to other users \(mode 0777\)/)]);
  });

  it.runIf(process.getuid?.() === 0)('a folder of another user (e.g. OPENHANDS_VSCODE_MCP_DIR under /tmp, made by them first) is refused: no token written (as root: handed to uid 54321)', () => {
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 54321, 54321);
    const d = new DiscoveryFile(ws, dir);
    expect(() => d.write({ url: 'http://127.0.0.1:1234/mcp', token: 'tok' })).toThrow(/belongs to another user \(uid 54321\)/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a path that is not a folder is refused', () => {
    fs.writeFileSync(dir, '');
    expect(() => new DiscoveryFile(ws, dir).write({ url: 'http://127.0.0.1:1234/mcp', token: 'tok' })).toThrow(/not a folder|ENOTDIR|EEXIST/);
  });

  it('a workspace file names the workspace, whatever its folders', () => {
    expect(workspaceHash(['file:///a', 'file:///b'], 'file:///x.code-workspace')).toBe(workspaceHash([], 'file:///x.code-workspace'));
    expect(workspaceHash(['file:///a'], null)).not.toBe(workspaceHash(['file:///b'], null));
  });

  it('a reload: the old window shutting down after the new one started leaves the new file', () => {
    const old = new DiscoveryFile(ws, dir);
    old.write({ url: 'http://127.0.0.1:1111/mcp', token: 'old' });
    const fresh = new DiscoveryFile(ws, dir);
    fresh.write({ url: 'http://127.0.0.1:2222/mcp', token: 'new' });
    expect(old.remove()).toBe(false);
    expect(JSON.parse(fs.readFileSync(fresh.file, 'utf8')).token).toBe('new');
    expect(fresh.remove()).toBe(true);
    expect(fs.existsSync(fresh.file)).toBe(false);
    expect(fresh.remove()).toBe(false);
  });

  it('OPENHANDS_VSCODE_MCP_DIR overrides the directory, else ~/.openhands/vscode-mcp', () => {
    expect(discoveryDir({ OPENHANDS_VSCODE_MCP_DIR: '/tmp/x' })).toBe('/tmp/x');
    expect(discoveryDir({})).toBe(path.join(os.homedir(), '.openhands', 'vscode-mcp'));
  });
});
