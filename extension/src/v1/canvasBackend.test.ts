import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COPY_KEY, COPY_URL, OPEN_CANVAS, useAsCanvasBackend, type CanvasBackendDeps } from './canvasBackend';
import { findOnPath } from './canvasUi';

/** The command's world: an endpoint, what is on PATH, and the user's clicks in order. */
function world(opts: { key?: string; canvas?: string; clicks?: Array<string | undefined>; answers?: boolean; noServer?: boolean } = {}) {
  const did: string[] = [];
  const offers: Array<{ message: string; actions: string[] }> = [];
  const clicks = [...(opts.clicks ?? [])];
  const deps: CanvasBackendDeps = {
    endpoint: async () => (opts.noServer ? undefined : { baseUrl: 'http://127.0.0.1:45123', sessionApiKey: 'key' in opts ? opts.key : 'sk-window', discoveryDir: '/d' }),
    findOnPath: async (name) => (name === 'agent-canvas' ? opts.canvas : undefined),
    freePort: async () => 47001,
    waitForHttp: async (url) => {
      did.push(`wait ${url}`);
      return opts.answers ?? true;
    },
    ui: {
      copy: async (text) => { did.push(`copy ${text}`); },
      offer: async (message, actions) => {
        offers.push({ message, actions });
        return clicks.shift();
      },
      error: (message) => { did.push(`error ${message}`); },
      runInTerminal: (name, argv) => { did.push(`terminal ${name}: ${argv.join(' ')}`); },
      openBrowser: async (url) => { did.push(`browser ${url}`); },
    },
  };
  return { deps, did, offers };
}

describe('Use This Window as an Agent Canvas Backend', () => {
  it('copies the key, says the URL and how to add it in Canvas; Canvas not on PATH: says how to get it, offers no Open', async () => {
    const w = world({});
    const out = await useAsCanvasBackend(w.deps);
    expect(out).toEqual({ backendUrl: 'http://127.0.0.1:45123', keyCopied: true, canvas: undefined });
    expect(w.did).toEqual(['copy sk-window']);
    expect(w.offers).toHaveLength(1);
    expect(w.offers[0].message).toContain('Agent Canvas backend: http://127.0.0.1:45123');
    expect(w.offers[0].message).toContain('API key is in the clipboard');
    expect(w.offers[0].message).toContain('Manage Backends, Add Backend');
    expect(w.offers[0].message).toContain('npm install -g @openhands/agent-canvas');
    expect(w.offers[0].actions).toEqual([COPY_URL, COPY_KEY]);
  });

  it('Copy URL and Copy API Key put each in the clipboard and offer again', async () => {
    const w = world({ clicks: [COPY_URL, COPY_KEY, undefined] });
    await useAsCanvasBackend(w.deps);
    expect(w.did).toEqual(['copy sk-window', 'copy http://127.0.0.1:45123', 'copy sk-window']);
    expect(w.offers).toHaveLength(3);
  });

  it('with agent-canvas on PATH, Open Agent Canvas starts its frontend only on a free port and opens it once it answers', async () => {
    const w = world({ canvas: '/usr/local/bin/agent-canvas', clicks: [OPEN_CANVAS] });
    const out = await useAsCanvasBackend(w.deps);
    expect(w.offers[0].actions).toEqual([COPY_URL, COPY_KEY, OPEN_CANVAS]);
    expect(w.offers[0].message).not.toContain('not on PATH');
    expect(w.did).toEqual([
      'copy sk-window',
      'terminal Agent Canvas: /usr/local/bin/agent-canvas --frontend-only --port 47001',
      'wait http://localhost:47001/',
      'browser http://localhost:47001/',
    ]);
    expect(out.opened).toBe('http://localhost:47001/');
  });

  it('Canvas that never answers: an error naming its terminal, no browser', async () => {
    const w = world({ canvas: '/bin/agent-canvas', clicks: [OPEN_CANVAS], answers: false });
    const out = await useAsCanvasBackend(w.deps);
    expect(out.opened).toBeUndefined();
    expect(w.did.at(-1)).toMatch(/^error OpenHands: Agent Canvas did not answer at http:\/\/localhost:47001\/ \(see the "Agent Canvas" terminal\)/);
    expect(w.did.some((d) => d.startsWith('browser'))).toBe(false);
  });

  it('an agent-server without a key: nothing copied, no Copy API Key; no agent-server: an error, nothing copied', async () => {
    const keyless = world({ key: undefined });
    expect(await useAsCanvasBackend(keyless.deps)).toMatchObject({ keyCopied: false });
    expect(keyless.did).toEqual([]);
    expect(keyless.offers[0].actions).toEqual([COPY_URL]);
    expect(keyless.offers[0].message).toContain('takes no API key');
    const none = world({ noServer: true });
    expect(await useAsCanvasBackend(none.deps)).toEqual({ keyCopied: false });
    expect(none.did).toHaveLength(1);
    expect(none.did[0]).toMatch(/^error OpenHands: no agent-server/);
    expect(none.offers).toEqual([]);
    const failing = world({});
    failing.deps.endpoint = async () => { throw new Error('No V1 environment yet.'); };
    expect(await useAsCanvasBackend(failing.deps)).toEqual({ keyCopied: false });
    expect(failing.did).toEqual(['error OpenHands: no agent-server to offer Agent Canvas: No V1 environment yet.']);
  });
});

describe('findOnPath', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds an executable in PATH\'s folders in order, not a file that is not executable', async () => {
    dir = mkdtempSync(join(tmpdir(), 'oh-path-'));
    for (const d of ['a', 'b', 'c']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'a', 'agent-canvas'), '#!/bin/sh\n');
    chmodSync(join(dir, 'a', 'agent-canvas'), 0o644);
    writeFileSync(join(dir, 'b', 'agent-canvas'), '#!/bin/sh\n');
    chmodSync(join(dir, 'b', 'agent-canvas'), 0o755);
    const p = ['a', 'b', 'c'].map((d) => join(dir, d)).join(delimiter);
    expect(await findOnPath('agent-canvas', p)).toBe(join(dir, 'b', 'agent-canvas'));
    expect(await findOnPath('agent-canvas', join(dir, 'c'))).toBeUndefined();
  });
});
