import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import fsObject from 'fs';
import { syncBuiltinESMExports } from 'module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelId, defaultDiscoveryDir, readChannel, waitForChannel } from './executorDiscovery';

const ID = '06361ce1-f09a-48c9-a6e5-a6ddebfada8a';
let dir: string;
const write = (info: Record<string, unknown>, mode = 0o600, id = ID) => {
  const file = path.join(dir, `${channelId(id)}.json`);
  fs.writeFileSync(file, JSON.stringify(info), { mode });
  fs.chmodSync(file, mode);
  return file;
};
const good = { url: 'http://127.0.0.1:4321', namespace: '/oh-executor', conversation_id: `v1-${ID.replace(/-/g, '')}`, session_api_key: 'secret', workspace: '/w', pid: 1 };

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-v1-discovery-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('V1 executor discovery', () => {
  it('names the file and folder as the Python side does', () => {
    expect(channelId(ID)).toBe('v1-06361ce1f09a48c9a6e5a6ddebfada8a');
    expect(defaultDiscoveryDir({ XDG_STATE_HOME: '/s' })).toBe('/s/openhands-vscode-runtime/v1');
    expect(defaultDiscoveryDir({ OH_VSCODE_V1_DISCOVERY_DIR: '/d', XDG_STATE_HOME: '/s' })).toBe('/d');
  });

  it('reads the channel of the conversation', async () => {
    await expect(readChannel(write(good), ID)).resolves.toEqual({ url: good.url, conversationId: good.conversation_id, sessionApiKey: 'secret', workspace: '/w', pid: 1 });
  });

  it('refuses a file others can read, a link, another conversation, a URL off this machine', async () => {
    await expect(readChannel(write(good, 0o644), ID)).rejects.toThrow(/readable by others/);
    const target = path.join(dir, 'real.json');
    fs.writeFileSync(target, JSON.stringify(good), { mode: 0o600 });
    const link = path.join(dir, `${channelId(ID)}.json`);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(target, link);
    await expect(readChannel(link, ID)).rejects.toThrow(/not a regular file/);
    fs.rmSync(link);
    await expect(readChannel(write({ ...good, conversation_id: 'v1-other' }), ID)).rejects.toThrow(/is for v1-other/);
    await expect(readChannel(write({ ...good, url: 'http://attacker.example:80' }), ID, async () => ['203.0.113.7'])).rejects.toThrow(/not this machine/);
  });

  it('localhost is loopback by its resolved addresses, not its spelling', async () => {
    const url = 'http://localhost:4321';
    await expect(readChannel(write({ ...good, url }), ID, async () => ['127.0.0.1', '::1'])).resolves.toMatchObject({ url });
    // a hosts file (or resolver) that sends localhost elsewhere
    await expect(readChannel(write({ ...good, url }), ID, async () => ['127.0.0.1', '192.0.2.10'])).rejects.toThrow(/not this machine \(by address\)/);
    await expect(readChannel(write({ ...good, url: 'http://[::1]:4321' }), ID, async () => { throw new Error('no lookup for an IP literal'); })).resolves.toMatchObject({ url: 'http://[::1]:4321' });
  });

  it('reads the file it checked: a link swapped in after the check is not followed', async () => {
    // The swap, at the worst moment: right after the check of the file's kind, owner and mode
    // (whichever stat call makes it), before the content is read.
    const file = write(good);
    const planted = path.join(dir, 'planted.json');
    fs.writeFileSync(planted, JSON.stringify({ ...good, url: 'http://127.0.0.1:6666', session_api_key: 'planted' }), { mode: 0o600 });
    const swap = () => {
      fs.rmSync(file);
      fs.symlinkSync(planted, file);
    };
    // Node's own way to patch a builtin for ES module importers: the CommonJS object, then
    // syncBuiltinESMExports() (the module under test imports `* as fs from 'fs'`).
    let swapped = false;
    const names = ['lstatSync', 'statSync', 'fstatSync'] as const;
    const originals = names.map((n) => fsObject[n]);
    names.forEach((name, i) => {
      const real = originals[i] as (...a: unknown[]) => unknown;
      (fsObject as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        const r = real(...a);
        if (!swapped) {
          swapped = true;
          swap();
        }
        return r;
      };
    });
    syncBuiltinESMExports();
    try {
      const c = await readChannel(file, ID).catch((e: Error) => e);
      expect(swapped).toBe(true);
      expect(c).not.toMatchObject({ sessionApiKey: 'planted' });
      expect(c).toMatchObject({ sessionApiKey: 'secret', url: good.url });
    } finally {
      names.forEach((name, i) => ((fsObject as unknown as Record<string, unknown>)[name] = originals[i]));
      syncBuiltinESMExports();
    }
  });

  it('waits for the file, and gives up at its deadline or when cancelled', async () => {
    const waiting = waitForChannel(dir, ID, { timeoutMs: 5000, intervalMs: 20 });
    setTimeout(() => write(good), 100);
    await expect(waiting).resolves.toMatchObject({ sessionApiKey: 'secret' });
    await expect(waitForChannel(dir, '11111111-1111-1111-1111-111111111111', { timeoutMs: 50, intervalMs: 10 })).rejects.toThrow(/no executor channel/);
    const abort = new AbortController();
    const cancelled = waitForChannel(dir, '22222222-2222-2222-2222-222222222222', { timeoutMs: 5000, intervalMs: 10, signal: abort.signal });
    abort.abort();
    await expect(cancelled).rejects.toThrow(/cancelled/);
  });
});
