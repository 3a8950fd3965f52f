import { describe, expect, it, vi } from 'vitest';
import { CONSENT_KEY, Consent } from './consent';
import { MemoryMemento } from './test/vscodeMock';

describe('consent', () => {
  it('never asks in an untrusted workspace', async () => {
    const ask = vi.fn();
    const c = new Consent(new MemoryMemento() as any, { isTrusted: () => false, ask });
    expect(await c.ensure('ws', 'http://x')).toBe('untrusted');
    expect(ask).not.toHaveBeenCalled();
  });

  it('asks once, remembers a yes in workspaceState', async () => {
    const state = new MemoryMemento();
    const ask = vi.fn().mockResolvedValue('Allow');
    const c = new Consent(state as any, { isTrusted: () => true, ask });
    expect(await c.ensure('ws', 'http://x')).toBe('granted');
    expect(await c.ensure('ws', 'http://x')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
    expect(state.get(CONSENT_KEY)).toEqual(['http://x']);
    expect(ask.mock.calls[0][0]).toContain('"ws"');
  });

  it('does not remember a no, and shares one prompt between concurrent callers', async () => {
    const state = new MemoryMemento();
    let answer: (v: string | undefined) => void = () => {};
    const ask = vi.fn(() => new Promise<string | undefined>((r) => { answer = r; }));
    const c = new Consent(state as any, { isTrusted: () => true, ask });
    const a = c.ensure('ws', 'u');
    const b = c.ensure('ws', 'u');
    answer(undefined);
    expect(await a).toBe('declined');
    expect(await b).toBe('declined');
    expect(ask).toHaveBeenCalledTimes(1);
    expect(state.get(CONSENT_KEY)).toBeUndefined();
  });

  it('a yes given by another explicit action (Set Up and Start) is recorded for that origin only, never in an untrusted workspace', async () => {
    const state = new MemoryMemento();
    const ask = vi.fn().mockResolvedValue('Allow');
    let trusted = false;
    const c = new Consent(state as any, { isTrusted: () => trusted, ask });
    expect(await c.grant('managed')).toBe('untrusted');
    expect(state.get(CONSENT_KEY)).toBeUndefined();
    trusted = true;
    expect(await c.grant('managed')).toBe('granted');
    expect(await c.ensure('ws', 'managed')).toBe('granted');
    expect(ask).not.toHaveBeenCalled();
    expect(await c.ensure('ws', 'http://other:3000')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
  });

  it('can be revoked', async () => {
    const state = new MemoryMemento();
    await state.update(CONSENT_KEY, ['http://x:3000']);
    const c = new Consent(state as any, { isTrusted: () => true, ask: vi.fn() });
    expect(c.grantedFor('http://x:3000/')).toBe(true);
    await c.revoke();
    expect(c.grantedFor('http://x:3000')).toBe(false);
  });

  it('is per server origin: another origin asks again, the same origin does not', async () => {
    const state = new MemoryMemento();
    const ask = vi.fn().mockResolvedValue('Allow');
    const c = new Consent(state as any, { isTrusted: () => true, ask });
    expect(await c.ensure('ws', 'http://127.0.0.1:3000')).toBe('granted');
    expect(await c.ensure('ws', 'http://127.0.0.1:3000/')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
    ask.mockResolvedValueOnce("Don't Allow");
    expect(await c.ensure('ws', 'http://127.0.0.1:4000')).toBe('declined');
    expect(ask).toHaveBeenCalledTimes(2);
    expect(ask.mock.calls[1][1]).toContain('http://127.0.0.1:4000');
    expect(await c.ensure('ws', 'https://127.0.0.1:3000')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(3);
    expect(state.get(CONSENT_KEY)).toEqual(['http://127.0.0.1:3000', 'https://127.0.0.1:3000']);
  });

  it('a consent recorded before it was per origin names no server: asked again', async () => {
    const state = new MemoryMemento();
    await state.update(CONSENT_KEY, true);
    const ask = vi.fn().mockResolvedValue(undefined);
    const c = new Consent(state as any, { isTrusted: () => true, ask });
    expect(await c.ensure('ws', 'http://evil.example:3000')).toBe('declined');
    expect(ask).toHaveBeenCalledTimes(1);
  });

  it('a conversation chosen by the workspace\'s settings: consent for the server does not cover it; the prompt names it; answered per conversation', async () => {
    const state = new MemoryMemento();
    await state.update(CONSENT_KEY, ['http://127.0.0.1:3000']);
    const ask = vi.fn().mockResolvedValue('Allow');
    const c = new Consent(state as any, { isTrusted: () => true, ask });
    expect(await c.ensure('ws', 'http://127.0.0.1:3000')).toBe('granted');
    expect(ask).not.toHaveBeenCalled();
    expect(await c.ensure('ws', 'http://127.0.0.1:3000', 'conv-from-repo')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
    expect(ask.mock.calls[0][1]).toContain('conversation conv-from-repo');
    expect(ask.mock.calls[0][1]).toContain('.vscode/settings.json');
    expect(await c.ensure('ws', 'http://127.0.0.1:3000', 'conv-from-repo')).toBe('granted');
    expect(ask).toHaveBeenCalledTimes(1);
    ask.mockResolvedValueOnce(undefined);
    expect(await c.ensure('ws', 'http://127.0.0.1:3000', 'another-conv')).toBe('declined');
    expect(ask).toHaveBeenCalledTimes(2);
  });
});
