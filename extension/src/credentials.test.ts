import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from './userErrors';
import * as net from 'node:net';
import {
  findExecutorCredential,
  isLoopbackAddress,
  isLoopbackUrl,
  listenerUids,
  missingCredentialMessage,
  readTokenFile,
  tokenFilePath,
} from './credentials';

const TOKEN = 'tok-0123456789abcdefghijklmnopqrstuvwxyz';
const names: Record<string, string[]> = { localhost: ['127.0.0.1', '::1'], 'a.localhost': ['127.0.0.1'], 'evil.localhost': ['10.0.0.7'] };

function deps(files: Record<string, string>, env: NodeJS.ProcessEnv = {}, listeners: number[] | undefined = [1000]) {
  return {
    env,
    home: '/home/u',
    readFile: async (f: string) => {
      if (f in files) return files[f].trim();
      throw Object.assign(new Error(`ENOENT: ${f}`), { code: 'ENOENT' });
    },
    lookup: async (host: string) => {
      if (host in names) return names[host];
      throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
    listenerUids: async () => listeners,
    uid: 1000,
  };
}

const DEFAULT_FILE = '/home/u/.local/state/openhands-vscode-runtime/executor-token';

describe('credentials', () => {
  it('computes the same token path as the runtime', () => {
    expect(tokenFilePath({}, '/home/u')).toBe(DEFAULT_FILE);
    expect(tokenFilePath({ XDG_STATE_HOME: '/s' }, '/home/u')).toBe('/s/openhands-vscode-runtime/executor-token');
    expect(tokenFilePath({ OH_VSCODE_EXECUTOR_TOKEN_FILE: '/t/tok', XDG_STATE_HOME: '/s' }, '/home/u')).toBe('/t/tok');
    expect(tokenFilePath({ OH_VSCODE_EXECUTOR_TOKEN_FILE: '~/tok' }, '/home/u')).toBe('/home/u/tok');
  });

  it('knows loopback URLs by address, not by name', async () => {
    const { lookup } = deps({});
    for (const u of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://127.1.2.3', 'http://[::1]:3000', 'https://a.localhost', 'http://[::ffff:127.0.0.1]:1'])
      expect(await isLoopbackUrl(u, lookup), u).toBe(true);
    // `*.localhost` is not loopback by its spelling: it is what it resolves to.
    for (const u of ['http://10.0.0.2:3000', 'http://example.com', 'http://127.0.0.1.example.com', 'not a url', 'http://evil.localhost:3000', 'http://unknown.localhost'])
      expect(await isLoopbackUrl(u, lookup), u).toBe(false);
    expect(isLoopbackAddress('127.0.0.53') && isLoopbackAddress('::1') && !isLoopbackAddress('::ffff:10.0.0.1') && !isLoopbackAddress('0.0.0.0')).toBe(true);
    // The real resolver: localhost is loopback on this machine.
    expect(await isLoopbackUrl('http://localhost:1')).toBe(true);
  });

  it('refuses a token file that is a symlink, not ours, readable by others, or short', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cred-'));
    try {
      const good = path.join(dir, 'good');
      fs.writeFileSync(good, TOKEN + '\n', { mode: 0o600 });
      expect(await readTokenFile(good)).toBe(TOKEN);
      const link = path.join(dir, 'link');
      fs.symlinkSync(good, link);
      await expect(readTokenFile(link)).rejects.toThrow(/is a symbolic link: refused/);
      const loose = path.join(dir, 'loose');
      fs.writeFileSync(loose, TOKEN, { mode: 0o600 });
      fs.chmodSync(loose, 0o644);
      await expect(readTokenFile(loose)).rejects.toThrow(/can be read or written by other users \(mode 0644\)/);
      const short = path.join(dir, 'short');
      fs.writeFileSync(short, 'tok-123\n', { mode: 0o600 });
      await expect(readTokenFile(short)).rejects.toThrow(/too short/);
      // Owned by someone else: as seen by a process of another uid.
      await expect(readTokenFile(good, fs.statSync(good).uid + 1)).rejects.toThrow(/belongs to another user/);
      await expect(readTokenFile(dir)).rejects.toThrow(/not a regular file/);
      // Through findExecutorCredential with the default reader: refused, with the reason.
      const saved = process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
      process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = link;
      try {
        const c = await findExecutorCredential(undefined, 'http://127.0.0.1:1');
        expect(c).toMatchObject({ key: undefined, source: 'none' });
        expect(c.detail).toContain('symbolic link');
      } finally {
        if (saved === undefined) delete process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
        else process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = saved;
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the uid of the socket listening on a port (Linux /proc/net/tcp)', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as net.AddressInfo).port;
      expect(await listenerUids(port)).toEqual([process.getuid!()]);
    } finally {
      server.close();
    }
    const table = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' +
      '   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 1 1\n' +
      '   1: 0100007F:0BB8 0100007F:9000 01 00000000:00000000 00:00000000 00000000  1000        0 2 1\n';
    expect(await listenerUids(3000, async () => table)).toEqual([1001, 1001]);
    expect(await listenerUids(3000, async () => { throw new Error('no /proc'); })).toBeUndefined();
  });

  it('does not hand the token to a port another user listens on', async () => {
    const p = findExecutorCredential(undefined, 'http://127.0.0.1:3000', deps({ [DEFAULT_FILE]: TOKEN }, {}, [1001]));
    await expect(p).rejects.toThrow(/belongs to another user \(uid 1001\)/);
    // Where the platform cannot tell, the address rule alone applies.
    const c = await findExecutorCredential(undefined, 'http://127.0.0.1:3000', deps({ [DEFAULT_FILE]: TOKEN }, {}, undefined));
    expect(c.key).toBe(TOKEN);
  });

  it('prefers the key in SecretStorage', async () => {
    const c = await findExecutorCredential(' k3y ', 'http://10.0.0.2:3000', deps({ [DEFAULT_FILE]: 'tok' }));
    expect(c).toMatchObject({ key: 'k3y', source: 'secret-storage' });
  });

  it('reads the token file for a server on this machine', async () => {
    const c = await findExecutorCredential(undefined, 'http://127.0.0.1:3000', deps({ [DEFAULT_FILE]: TOKEN + '\n' }));
    expect(c).toMatchObject({ key: TOKEN, source: 'token-file' });
    expect(c.detail).toContain(DEFAULT_FILE);
  });

  it('never reads the local token file for a remote server: a clear error instead', async () => {
    const p = findExecutorCredential('', 'http://10.0.0.2:3000', deps({ [DEFAULT_FILE]: 'tok' }));
    await expect(p).rejects.toThrow(missingCredentialMessage('http://10.0.0.2:3000', DEFAULT_FILE));
    const message = await p.then(() => "", (e: Error) => e.message);
    expect(message).toContain('OpenHands: Set Session API Key');
    expect(classify(message).fixes).toContain('key');
  });

  it('says why there is none on loopback (the server then explains what it needs)', async () => {
    const c = await findExecutorCredential(undefined, 'http://localhost:3000', deps({}));
    expect(c).toMatchObject({ key: undefined, source: 'none' });
    expect(c.detail).toContain('no executor token file');
  });

  it('reads a real file with the default dependencies', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cred-'));
    const file = path.join(dir, 'executor-token');
    fs.writeFileSync(file, TOKEN + '\n', { mode: 0o600 });
    const saved = process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
    process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = file;
    try {
      expect((await findExecutorCredential(undefined, 'http://127.0.0.1:1')).key).toBe(TOKEN);
    } finally {
      if (saved === undefined) delete process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
      else process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
