import { describe, expect, it, vi } from 'vitest';
import { DEFAULTS } from './config';
import { ConversationResolver } from './conversation';
import { MemoryMemento } from './test/vscodeMock';

const reply = (status: number, body: unknown) => ({
  ok: status >= 200 && status < 300, status, statusText: String(status),
  text: async () => (typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('conversation resolver', () => {
  it('attaches to the configured id', async () => {
    const fetch = vi.fn();
    const r = new ConversationResolver(new MemoryMemento() as any, fetch);
    expect(await r.resolve({ ...DEFAULTS, conversationMode: 'attach', conversationId: 'abc' }, undefined)).toEqual({ id: 'abc', created: false });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('creates one with POST /api/conversations, sends the key, and remembers it', async () => {
    const fetch = vi.fn().mockResolvedValue(reply(200, { status: 'ok', conversation_id: 'c1' }));
    const r = new ConversationResolver(new MemoryMemento() as any, fetch);
    const cfg = { ...DEFAULTS, initialMessage: 'hello' };
    expect(await r.resolve(cfg, 'k')).toEqual({ id: 'c1', created: true });
    expect(await r.resolve(cfg, 'k')).toEqual({ id: 'c1', created: false });
    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('http://localhost:3000/api/conversations');
    expect(init.method).toBe('POST');
    expect(init.headers['X-Session-API-Key']).toBe('k');
    expect(JSON.parse(init.body)).toEqual({ initial_user_msg: 'hello' });
    await r.forget(cfg.serverUrl);
    expect(r.remembered(cfg.serverUrl)).toBeUndefined();
  });

  it('classifies failures', async () => {
    const mk = (f: any) => new ConversationResolver(new MemoryMemento() as any, f);
    await expect(mk(vi.fn().mockResolvedValue(reply(401, 'no'))).resolve(DEFAULTS, undefined)).rejects.toMatchObject({ kind: 'auth' });
    await expect(mk(vi.fn().mockResolvedValue(reply(500, 'boom'))).resolve(DEFAULTS, undefined)).rejects.toMatchObject({ kind: 'server' });
    await expect(mk(vi.fn().mockResolvedValue(reply(200, 'not json'))).resolve(DEFAULTS, undefined)).rejects.toMatchObject({ kind: 'server' });
    await expect(mk(vi.fn().mockResolvedValue(reply(200, {}))).resolve(DEFAULTS, undefined)).rejects.toThrow(/without a conversation_id/);
    const refused = vi.fn().mockRejectedValue(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    await expect(mk(refused).resolve(DEFAULTS, undefined)).rejects.toMatchObject({ kind: 'unreachable', message: expect.stringContaining('ECONNREFUSED') });
    await expect(mk(vi.fn()).resolve({ ...DEFAULTS, conversationMode: 'attach' }, undefined)).rejects.toMatchObject({ kind: 'config' });
  });
});
