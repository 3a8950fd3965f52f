import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { mock, resetMock, workspace } from './test/vscodeMock';
import { Config, CONNECTION_KEYS, DEFAULTS, EXTENSION_ID, ignoredWorkspaceValues, normaliseServerUrl, readConfig, serverOrigin, USER_ONLY_KEYS, userValue, validateConfig } from './config';

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

  it('takes the parallel-conversation limit from the user only: a workspace cannot raise it', () => {
    const withUser = (globals: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
      get: <T>(key: string, def: T): T => (key in workspace ? (workspace[key] as T) : key in globals ? (globals[key] as T) : def),
      inspect: <T>(key: string) => ({ defaultValue: undefined as T | undefined, globalValue: globals[key] as T | undefined, workspaceValue: workspace[key] as T | undefined }),
    });
    expect(readConfig(withUser({})).v1MaxParallel).toBe(4);
    expect(readConfig(withUser({ 'v1.maxParallelConversations': 2 })).v1MaxParallel).toBe(2);
    expect(readConfig(withUser({ 'v1.maxParallelConversations': 2 }, { 'v1.maxParallelConversations': 64 })).v1MaxParallel).toBe(2);
    expect(readConfig(withUser({}, { 'v1.maxParallelConversations': 64 })).v1MaxParallel).toBe(4);
    expect(ignoredWorkspaceValues(withUser({}, { 'v1.maxParallelConversations': 64 })).map((v) => v.key)).toEqual(['openhands.v1.maxParallelConversations']);
    for (const bad of [0, -1, 2.5, 'many', 65]) expect(readConfig(withUser({ 'v1.maxParallelConversations': bad })).v1MaxParallel).toBe(4);
  });

  it('new conversations in a worktree: off by default, on when the user sets it (true only); a workspace value is ignored', () => {
    const withUser = (globals: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
      get: <T>(key: string, def: T): T => (key in workspace ? (workspace[key] as T) : key in globals ? (globals[key] as T) : def),
      inspect: <T>(key: string) => ({ defaultValue: undefined as T | undefined, globalValue: globals[key] as T | undefined, workspaceValue: workspace[key] as T | undefined }),
    });
    expect(readConfig(withUser({})).v1NewConversationInWorktree).toBe(false);
    expect(readConfig(withUser({ 'v1.newConversationInWorktree': true })).v1NewConversationInWorktree).toBe(true);
    expect(readConfig(withUser({ 'v1.newConversationInWorktree': 'yes' })).v1NewConversationInWorktree).toBe(false);
    expect(readConfig(withUser({}, { 'v1.newConversationInWorktree': true })).v1NewConversationInWorktree).toBe(false);
    expect(ignoredWorkspaceValues(withUser({}, { 'v1.newConversationInWorktree': true })).map((v) => v.key)).toEqual(['openhands.v1.newConversationInWorktree']);
  });

  it('takes the budget per conversation from the user only: a workspace cannot raise it (nor set one the user has not)', () => {
    const withUser = (globals: Record<string, unknown>, workspace: Record<string, unknown> = {}) => ({
      get: <T>(key: string, def: T): T => (key in workspace ? (workspace[key] as T) : key in globals ? (globals[key] as T) : def),
      inspect: <T>(key: string) => ({ defaultValue: undefined as T | undefined, globalValue: globals[key] as T | undefined, workspaceValue: workspace[key] as T | undefined }),
    });
    expect(readConfig(withUser({})).budgetPerConversation).toBe(0);
    expect(readConfig(withUser({ budgetPerConversation: 2.5 })).budgetPerConversation).toBe(2.5);
    expect(readConfig(withUser({ budgetPerConversation: 2.5 }, { budgetPerConversation: 1000 })).budgetPerConversation).toBe(2.5);
    expect(ignoredWorkspaceValues(withUser({}, { budgetPerConversation: 1000 })).map((v) => v.key)).toEqual(['openhands.budgetPerConversation']);
    for (const bad of [-1, 'lots', Number.NaN, Infinity]) expect(readConfig(withUser({ budgetPerConversation: bad })).budgetPerConversation).toBe(0);
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

  // A host's settings at each level, as `getConfiguration('openhands')` sees them: `get` is the
  // effective value (folder over workspace over user over default), `inspect` every level.
  const levels = (user: Record<string, unknown>, workspace: Record<string, unknown> = {}, folder: Record<string, unknown> = {}) => ({
    get: <T>(key: string, def: T): T => (key in folder ? folder[key] : key in workspace ? workspace[key] : key in user ? user[key] : def) as T,
    inspect: <T>(key: string) => ({ globalValue: user[key] as T | undefined, workspaceValue: workspace[key] as T | undefined, workspaceFolderValue: folder[key] as T | undefined }),
  });

  it('openhands.v1.confirmation with a workspace value: the strictest of the user\'s and the workspace\'s', () => {
    const policy = (user: unknown, workspace?: unknown, folder?: unknown) =>
      readConfig(levels({ 'v1.confirmation': user }, workspace === undefined ? {} : { 'v1.confirmation': workspace }, folder === undefined ? {} : { 'v1.confirmation': folder })).v1Confirmation;
    // a repository cannot lower the user's choice
    expect(policy('always', 'never')).toBe('always');
    expect(policy('always', 'risky')).toBe('always');
    expect(policy('risky', 'never')).toBe('risky');
    expect(policy('always', undefined, 'never')).toBe('always');
    // it may raise it
    expect(policy('never', 'risky')).toBe('risky');
    expect(policy('risky', 'never', 'always')).toBe('always');
    expect(policy(undefined, 'nonsense')).toBe('never');
    expect(policy('always')).toBe('always');
  });

  it('openhands.conversation.mode / .id with a workspace value: the executor knows the workspace chose the conversation', () => {
    const c = (user: Record<string, unknown>, workspace: Record<string, unknown> = {}, folder: Record<string, unknown> = {}) => {
      const r = readConfig(levels(user, workspace, folder));
      return [r.conversationMode, r.conversationId, r.conversationFromWorkspace];
    };
    expect(c({}, { 'conversation.mode': 'attach', 'conversation.id': 'repo-conv' })).toEqual(['attach', 'repo-conv', true]);
    expect(c({ 'conversation.mode': 'attach' }, { 'conversation.id': 'repo-conv' })).toEqual(['attach', 'repo-conv', true]);
    expect(c({ 'conversation.id': 'mine' }, {}, { 'conversation.mode': 'attach' })).toEqual(['attach', 'mine', true]);
    expect(c({ 'conversation.mode': 'attach', 'conversation.id': 'mine' })).toEqual(['attach', 'mine', false]);
    // the tab's own conversation is never the repository's choice
    expect(c({}, { 'conversation.id': 'repo-conv' })).toEqual(['tab', 'repo-conv', false]);
  });

  it('openhands.executor.autoStart with a workspace value: it only starts the gate (trust, then the consent that names a workspace-chosen conversation)', () => {
    expect(readConfig(levels({}, { 'executor.autoStart': true })).autoStart).toBe(true);
  });

  it('openhands.executor.noChangeTimeoutSeconds, terminal.revealOnCommand with workspace values: taken (they decide nothing about what runs or where secrets go)', () => {
    const r = readConfig(levels({ 'executor.noChangeTimeoutSeconds': 30 }, { 'executor.noChangeTimeoutSeconds': 5, 'terminal.revealOnCommand': false }));
    expect([r.noChangeTimeoutSeconds, r.revealOnCommand]).toEqual([5, false]);
  });

  it('user-only settings with a workspace value (server.url, v1.url, v1.discoveryDir, mode, v1.python): ignored, the user\'s or the default taken', () => {
    const repo = { 'server.url': 'http://evil:1', 'v1.url': 'http://evil:2', 'v1.discoveryDir': '/tmp/planted', mode: 'v0', 'v1.python': '/tmp/evil/python' };
    const r = readConfig(levels({}, repo, repo));
    expect([r.serverUrl, r.v1Url, r.v1DiscoveryDir, r.backend, r.v1Python]).toEqual([DEFAULTS.serverUrl, '', '', 'v1', '']);
  });

  it('ide.server.allowedOrigins (machine) and ide.executeCommand.allowlist (application) with a workspace value: ignored (ide/index.ts reads them with userValue)', () => {
    const origins = levels({ allowedOrigins: ['https://mine.example'] }, { allowedOrigins: ['https://evil.example'] });
    expect(userValue(origins, 'allowedOrigins', [])).toEqual(['https://mine.example']);
    const allow = levels({}, { 'openhands.ide.executeCommand.allowlist': ['workbench.action.terminal.sendSequence'] });
    expect(userValue(allow, 'openhands.ide.executeCommand.allowlist', [])).toEqual([]);
  });
});

/**
 * The settings a repository's `.vscode/settings.json` can set (scope `window`, `resource`,
 * `language-overridable`, or none) whose name or description says they could decide what runs or
 * where a secret goes. Each was reviewed (docs/security.md, "Settings a repository can set"); a new
 * one must be reviewed and added here, or be `application`/`machine`-scoped.
 */
const REVIEWED_WORKSPACE_SETTINGS: Record<string, string> = {
  'openhands.conversation.mode': 'attach from a workspace value: the consent prompt names the conversation and is answered apart (consent.ts)',
  'openhands.conversation.id': 'the same as conversation.mode',
  'openhands.executor.autoStart': 'starts only the gate: trust, then consent (which names a workspace-chosen conversation)',
  'openhands.executor.noChangeTimeoutSeconds': 'how long a command runs before its partial output returns; decides nothing about what runs',
  'openhands.ide.server.autoStart': 'serves the IDE tools only after the user consented in this workspace; default already on',
  'openhands.v1.confirmation': 'the strictest of the user\'s and the workspace\'s values (config.ts)',
  'openhands.terminal.revealOnCommand': 'whether the agent terminal is shown; decides nothing about what runs',
};

describe('settings a repository can set', () => {
  const RISKY = /url|path|python|interpreter|mode|\bid\b|\.id$|confirm|key|token|secret|command|autostart|origin|allow|dir|folder|executable|server|env/i;

  it('every workspace-settable setting whose name or description looks risky is in the reviewed list, and the list has no stale entry', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
    const props: Record<string, { scope?: string; description?: string; markdownDescription?: string }> = Object.assign(
      {}, ...pkg.contributes.configuration.map((g: { properties: object }) => g.properties),
    );
    const workspaceSettable = Object.entries(props).filter(([, p]) => !['application', 'machine'].includes(p.scope ?? 'window'));
    const risky = workspaceSettable.filter(([k, p]) => RISKY.test(k) || RISKY.test(p.description ?? p.markdownDescription ?? '')).map(([k]) => k);
    expect(risky.filter((k) => !(k in REVIEWED_WORKSPACE_SETTINGS))).toEqual([]);
    for (const k of Object.keys(REVIEWED_WORKSPACE_SETTINGS)) expect(workspaceSettable.map(([key]) => key)).toContain(k);
  });
});

describe('Config.current', () => {
  it('is read from VS Code again only after a configuration change, and then has the new value', () => {
    resetMock();
    const config = new Config();
    const reads = vi.spyOn(workspace, 'getConfiguration');
    try {
      mock.config['openhands.conversation.id'] = 'one';
      expect(config.current.conversationId).toBe('one');
      expect(config.current.conversationId).toBe('one');
      expect(reads).toHaveBeenCalledTimes(1);
      mock.config['openhands.conversation.id'] = 'two';
      mock.onDidChangeConfiguration.fire({ affectsConfiguration: (s: string) => s === 'openhands' || s.startsWith('openhands.') });
      expect(config.current.conversationId).toBe('two');
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      reads.mockRestore();
      config.dispose();
    }
  });
});
