import { describe, expect, it } from 'vitest';
import { SessionKeyStore, sessionKeyName } from './secrets';

function storage() {
  const m = new Map<string, string>();
  const listeners: ((e: { key: string }) => void)[] = [];
  const api = {
    get: async (k: string) => m.get(k),
    store: async (k: string, v: string) => { m.set(k, v); listeners.forEach((l) => l({ key: k })); },
    delete: async (k: string) => { m.delete(k); listeners.forEach((l) => l({ key: k })); },
    onDidChange: (l: (e: { key: string }) => void) => { listeners.push(l); return { dispose() {} }; },
  };
  return { m, api };
}

describe('session key store', () => {
  it('keeps one key per server origin; another origin gets none', async () => {
    const { m, api } = storage();
    const s = new SessionKeyStore(api as any);
    await s.set('http://127.0.0.1:3000', ' k-local ');
    expect(await s.get('http://127.0.0.1:3000/')).toBe('k-local');
    expect(await s.get('http://127.0.0.1:4000')).toBeUndefined();
    expect(await s.get('http://attacker.example:3000')).toBeUndefined();
    expect(await s.get('https://127.0.0.1:3000')).toBeUndefined();
    expect([...m.keys()]).toEqual([sessionKeyName('http://127.0.0.1:3000')]);
    await s.clear('http://127.0.0.1:3000');
    expect(m.size).toBe(0);
  });

  it('moves a key stored before keys were per origin to the first (user-configured) origin only', async () => {
    const { m, api } = storage();
    m.set('openhands.sessionApiKey', 'k-old');
    const s = new SessionKeyStore(api as any);
    expect(await s.get('http://127.0.0.1:3000')).toBe('k-old');
    expect(await s.get('http://127.0.0.1:4000')).toBeUndefined();
    expect(m.has('openhands.sessionApiKey')).toBe(false);
  });
});
