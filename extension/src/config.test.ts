import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONNECTION_KEYS, DEFAULTS, EXTENSION_ID, ignoredWorkspaceValues, normaliseServerUrl, readConfig, serverOrigin, USER_ONLY_KEYS, validateConfig } from './config';

const getter = (values: Record<string, unknown>) => ({
  get: <T>(key: string, def: T): T => (key in values ? (values[key] as T) : def),
});

describe('config', () => {
  it('uses the defaults when nothing is set', () => {
    expect(readConfig(getter({}))).toEqual(DEFAULTS);
  });

  it('normalises values', () => {
    const c = readConfig(getter({
      'server.url': ' http://example.com:3000/// ',
      'conversation.mode': 'attach',
      'conversation.id': ' abc ',
      'executor.noChangeTimeoutSeconds': -3,
    }));
    expect(c.serverUrl).toBe('http://example.com:3000');
    expect(c.conversationMode).toBe('attach');
    expect(c.conversationId).toBe('abc');
    expect(c.noChangeTimeoutSeconds).toBe(DEFAULTS.noChangeTimeoutSeconds);
  });

  it('treats an unknown mode as tab and an empty URL as the default', () => {
    expect(readConfig(getter({ 'conversation.mode': 'weird' })).conversationMode).toBe('tab');
    expect(normaliseServerUrl('  ')).toBe(DEFAULTS.serverUrl);
  });

  it('validates the URL and attach mode', () => {
    expect(validateConfig(DEFAULTS)).toBeUndefined();
    expect(validateConfig({ ...DEFAULTS, serverUrl: 'not a url' })).toMatch(/not a valid URL/);
    expect(validateConfig({ ...DEFAULTS, serverUrl: 'ftp://x' })).toMatch(/http:\/\/ or https:\/\//);
    expect(validateConfig({ ...DEFAULTS, conversationMode: 'attach' })).toMatch(/no conversation id/);
  });

  it('reads every setting the extension contributes (none that does nothing), outside the IDE tools', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    const contributed = pkg.contributes.configuration
      .flatMap((group: { properties: Record<string, unknown> }) => Object.keys(group.properties))
      .map((k: string) => k.replace(/^openhands\./, ''))
      .filter((k: string) => !k.startsWith('ide.')); // read by src/ide
    const read: string[] = [];
    readConfig({ get: <T>(key: string, def: T): T => (read.push(key), def) });
    expect(read.sort()).toEqual(contributed.sort());
    for (const k of CONNECTION_KEYS) expect(contributed).toContain(k);
  });

  it('takes the V1 agent-server URL and discovery folder from the user settings only', () => {
    const values: Record<string, { globalValue?: string; workspaceValue?: string }> = {
      'v1.url': { globalValue: 'http://127.0.0.1:8000/', workspaceValue: 'http://127.0.0.1:9999' },
      'v1.discoveryDir': { workspaceValue: '/tmp/planted' },
    };
    const inspected = {
      get: <T>(key: string, def: T): T => ((values[key]?.workspaceValue ?? values[key]?.globalValue ?? def) as T),
      inspect: <T>(key: string) => values[key] as unknown as { globalValue?: T } | undefined,
    };
    const c = readConfig(inspected);
    expect(c.v1Url).toBe('http://127.0.0.1:8000');
    expect(c.v1DiscoveryDir).toBe('');
    expect(ignoredWorkspaceValues(inspected).map((v) => v.key)).toEqual(['openhands.v1.url', 'openhands.v1.discoveryDir']);
  });

  it('takes where secrets go from the user settings only: a workspace value is ignored and reported', () => {
    const inspected = {
      get: <T>(_key: string, def: T): T => def,
      inspect: <T>(key: string) =>
        key === 'server.url'
          ? ({ defaultValue: 'http://localhost:3000', globalValue: 'http://127.0.0.1:3000', workspaceValue: 'http://127.0.0.1:4444' } as unknown as { globalValue?: T })
          : undefined,
    };
    expect(readConfig(inspected).serverUrl).toBe('http://127.0.0.1:3000');
    expect(ignoredWorkspaceValues(inspected)).toEqual([{ key: 'openhands.server.url', value: 'http://127.0.0.1:4444' }]);
    const onlyWorkspace = { ...inspected, inspect: <T>(key: string) => (key === 'server.url' ? ({ workspaceFolderValue: 'http://evil:1' } as unknown as { globalValue?: T }) : undefined) };
    expect(readConfig(onlyWorkspace).serverUrl).toBe(DEFAULTS.serverUrl);
  });

  it('declares those settings application-scoped, so VS Code itself ignores workspace values', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    const props = Object.assign({}, ...pkg.contributes.configuration.map((g: { properties: object }) => g.properties));
    for (const k of USER_ONLY_KEYS) expect(props[`openhands.${k}`].scope).toBe('application');
  });

  it('auto: V1 unless the user set a V0 server URL; the mode setting overrides; a workspace cannot choose', () => {
    const withUser = (globals: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
      get: <T>(key: string, def: T): T => (key in workspace ? (workspace[key] as T) : key in globals ? (globals[key] as T) : def),
      inspect: <T>(key: string) => ({ globalValue: globals[key] as T | undefined, workspaceValue: workspace[key] as T | undefined }),
    });
    expect(readConfig(withUser({})).backend).toBe('v1');
    expect(readConfig(withUser({ 'server.url': 'http://127.0.0.1:3000' })).backend).toBe('v0');
    expect(readConfig(withUser({ 'server.url': 'http://127.0.0.1:3000', mode: 'v1' })).backend).toBe('v1');
    expect(readConfig(withUser({ mode: 'v0' })).backend).toBe('v0');
    expect(readConfig(withUser({ mode: 'nonsense' })).backendSetting).toBe('auto');
    // a repository's settings choose neither the mode, nor the V0 server, nor the interpreter
    const repo = readConfig(withUser({}, { mode: 'v0', 'server.url': 'http://evil:1', 'v1.python': '/tmp/evil/python' }));
    expect([repo.backend, repo.serverUrl, repo.v1Python]).toEqual(['v1', DEFAULTS.serverUrl, '']);
  });

  it('the identifier is package.json publisher.name, and no longer openhands.openhands-tab (used by enyst/OpenHands-Tab)', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    expect(`${pkg.publisher}.${pkg.name}`).toBe(EXTENSION_ID);
    expect(EXTENSION_ID).not.toBe('openhands.openhands-tab');
    expect(pkg.displayName).toBe('OpenHands');
  });

  it('normalises server origins', () => {
    expect(serverOrigin('http://127.0.0.1:3000/')).toBe('http://127.0.0.1:3000');
    expect(serverOrigin('HTTP://LocalHost:80/x')).toBe('http://localhost');
    expect(serverOrigin('https://a.example:443')).toBe('https://a.example');
  });
});
