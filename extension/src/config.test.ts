import { describe, expect, it } from 'vitest';
import { DEFAULTS, normaliseServerUrl, readConfig, validateConfig } from './config';

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
      'terminal.shell': ' /bin/zsh ',
    }));
    expect(c.serverUrl).toBe('http://example.com:3000');
    expect(c.conversationMode).toBe('attach');
    expect(c.conversationId).toBe('abc');
    expect(c.noChangeTimeoutSeconds).toBe(DEFAULTS.noChangeTimeoutSeconds);
    expect(c.shell).toBe('/bin/zsh');
  });

  it('treats an unknown or the former create mode as tab and an empty URL as the default', () => {
    expect(readConfig(getter({ 'conversation.mode': 'weird' })).conversationMode).toBe('tab');
    expect(readConfig(getter({ 'conversation.mode': 'create' })).conversationMode).toBe('tab');
    expect(normaliseServerUrl('  ')).toBe(DEFAULTS.serverUrl);
  });

  it('validates the URL and attach mode', () => {
    expect(validateConfig(DEFAULTS)).toBeUndefined();
    expect(validateConfig({ ...DEFAULTS, serverUrl: 'not a url' })).toMatch(/not a valid URL/);
    expect(validateConfig({ ...DEFAULTS, serverUrl: 'ftp://x' })).toMatch(/http:\/\/ or https:\/\//);
    expect(validateConfig({ ...DEFAULTS, conversationMode: 'attach' })).toMatch(/no conversation id/);
  });
});
