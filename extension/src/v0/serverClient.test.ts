import { inspect } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { ConversationSocket } from './conversationSocket';
import { ServerClient } from './serverClient';

const reply = (status: number, body: unknown) => ({
  ok: status >= 200 && status < 300, status, statusText: String(status),
  text: async () => (typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('server client (REST)', () => {
  it('lists, creates, and sends the session API key', async () => {
    const fetch = vi.fn()
      .mockResolvedValueOnce(reply(200, { results: [{ conversation_id: 'c1', title: 'Fix tests', status: 'RUNNING', last_updated_at: '2026-01-01' }, { title: 'no id' }], next_page_id: null }))
      .mockResolvedValueOnce(reply(200, { status: 'ok', conversation_id: 'c2' }));
    const c = new ServerClient('http://s', 'k', fetch);
    expect(await c.listConversations()).toEqual([{ id: 'c1', title: 'Fix tests', status: 'RUNNING', updated: '2026-01-01' }]);
    expect(await c.createConversation()).toBe('c2');
    expect(fetch.mock.calls[0][0]).toBe('http://s/api/conversations?limit=50');
    const [url, init] = fetch.mock.calls[1];
    expect(url).toBe('http://s/api/conversations');
    expect(init).toMatchObject({ method: 'POST', headers: { 'X-Session-API-Key': 'k' } });
    // No first message in the request: the tab sends it once the executor is there.
    expect(JSON.parse(init.body)).toEqual({});
  });

  it('shows its key neither to util.inspect nor to JSON.stringify (the REST client and the UI socket)', () => {
    const client = new ServerClient('http://s', 'k3y-not-to-print', vi.fn());
    const socket = new ConversationSocket('http://s', 'c1', -1, 'k3y-not-to-print', {} as never, (() => undefined) as never);
    for (const o of [client, socket]) {
      expect(inspect(o, { depth: 5, showHidden: true })).not.toContain('k3y-not-to-print');
      expect(JSON.stringify(o) ?? '').not.toContain('k3y-not-to-print');
    }
    expect(inspect(client)).toContain('http://s');
  });

  it('reads and stores LLM settings; 404 means none', async () => {
    const fetch = vi.fn()
      .mockResolvedValueOnce(reply(404, { error: 'Settings not found' }))
      .mockResolvedValueOnce(reply(200, { llm_model: 'openai/gpt-4o', llm_base_url: null, llm_api_key: null, llm_api_key_set: true }))
      .mockResolvedValueOnce(reply(200, { message: 'Settings stored' }));
    const c = new ServerClient('http://s', undefined, fetch);
    expect(await c.llmSettings()).toBeUndefined();
    expect(await c.llmSettings()).toEqual({ model: 'openai/gpt-4o', baseUrl: '', apiKeySet: true });
    await c.storeLlmSettings({ model: 'openai/m', baseUrl: 'http://llm/v1', apiKey: 'sk-1' });
    expect(JSON.parse(fetch.mock.calls[2][1].body)).toEqual({ llm_model: 'openai/m', llm_base_url: 'http://llm/v1', llm_api_key: 'sk-1' });
    expect(fetch.mock.calls[2][1].headers['X-Session-API-Key']).toBeUndefined();
  });

  it('pages through the event history', async () => {
    const page = (from: number, n: number, more: boolean) => reply(200, { events: Array.from({ length: n }, (_, i) => ({ id: from + i })), has_more: more });
    const fetch = vi.fn().mockResolvedValueOnce(page(0, 100, true)).mockResolvedValueOnce(page(100, 5, false));
    const events = await new ServerClient('http://s', undefined, fetch).history('c 1');
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 105 }, (_, i) => i));
    expect(fetch.mock.calls.map((c) => c[0])).toEqual(['http://s/api/conversations/c%201/events?start_id=0&limit=100', 'http://s/api/conversations/c%201/events?start_id=100&limit=100']);
  });

  it('classifies failures', async () => {
    const mk = (f: any) => new ServerClient('http://s', undefined, f);
    await expect(mk(vi.fn().mockResolvedValue(reply(401, 'no'))).listConversations()).rejects.toMatchObject({ kind: 'auth' });
    await expect(mk(vi.fn().mockResolvedValue(reply(500, 'boom'))).createConversation()).rejects.toMatchObject({ kind: 'server' });
    await expect(mk(vi.fn().mockResolvedValue(reply(400, { msg_id: 'CONFIGURATION$SETTINGS_NOT_FOUND' }))).createConversation()).rejects.toMatchObject({ kind: 'no_settings' });
    await expect(mk(vi.fn().mockResolvedValue(reply(200, 'not json'))).listConversations()).rejects.toMatchObject({ kind: 'server' });
    await expect(mk(vi.fn().mockResolvedValue(reply(200, {}))).createConversation()).rejects.toThrow(/without a conversation_id/);
    const refused = vi.fn().mockRejectedValue(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    await expect(mk(refused).llmSettings()).rejects.toMatchObject({ kind: 'unreachable', message: expect.stringContaining('ECONNREFUSED') });
  });
});
