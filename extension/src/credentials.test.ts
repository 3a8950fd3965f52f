import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from './userErrors';
import { findExecutorCredential, isLoopbackUrl, missingCredentialMessage, tokenFilePath } from './credentials';

function deps(files: Record<string, string>, env: NodeJS.ProcessEnv = {}) {
  return {
    env,
    home: '/home/u',
    readFile: async (f: string) => {
      if (f in files) return files[f];
      throw Object.assign(new Error(`ENOENT: ${f}`), { code: 'ENOENT' });
    },
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

  it('knows loopback URLs', () => {
    for (const u of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://127.1.2.3', 'http://[::1]:3000', 'https://a.localhost'])
      expect(isLoopbackUrl(u), u).toBe(true);
    for (const u of ['http://10.0.0.2:3000', 'http://example.com', 'http://127.0.0.1.example.com', 'not a url'])
      expect(isLoopbackUrl(u), u).toBe(false);
  });

  it('prefers the key in SecretStorage', async () => {
    const c = await findExecutorCredential(' k3y ', 'http://10.0.0.2:3000', deps({ [DEFAULT_FILE]: 'tok' }));
    expect(c).toMatchObject({ key: 'k3y', source: 'secret-storage' });
  });

  it('reads the token file for a server on this machine', async () => {
    const c = await findExecutorCredential(undefined, 'http://127.0.0.1:3000', deps({ [DEFAULT_FILE]: 'tok-123\n' }));
    expect(c).toMatchObject({ key: 'tok-123', source: 'token-file' });
    expect(c.detail).toContain(DEFAULT_FILE);
  });

  it('never reads the local token file for a remote server: a clear error instead', async () => {
    const p = findExecutorCredential('', 'http://10.0.0.2:3000', deps({ [DEFAULT_FILE]: 'tok' }));
    await expect(p).rejects.toThrow(missingCredentialMessage('http://10.0.0.2:3000', DEFAULT_FILE));
    const message = (await p.catch((e: Error) => e.message)) as string;
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
    fs.writeFileSync(file, 'real-token\n', { mode: 0o600 });
    const saved = process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
    process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = file;
    try {
      expect((await findExecutorCredential(undefined, 'http://127.0.0.1:1')).key).toBe('real-token');
    } finally {
      if (saved === undefined) delete process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE;
      else process.env.OH_VSCODE_EXECUTOR_TOKEN_FILE = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
