import { describe, expect, it } from 'vitest';
import { statusLook } from './statusBar';
import { classify, executorError } from './userErrors';
import { buildViewModel, formatDuration, relativize } from './view';
import { parseLevel } from './logging';

const snap = (state: any, extra = {}) => ({ state, serverUrl: 'http://s', since: 0, ...extra });

describe('status bar', () => {
  it('shows connected / executing / error', () => {
    expect(statusLook(snap('connected', { conversationId: 'c' }))).toMatchObject({ text: '$(check) OpenHands', tooltip: expect.stringContaining('conversation c') });
    expect(statusLook(snap('executing')).text).toContain('executing');
    expect(statusLook(snap('error', { message: 'boom' }))).toMatchObject({ background: 'statusBarItem.errorBackground', tooltip: 'OpenHands: boom' });
  });
});

describe('errors', () => {
  it('offers the right fixes', () => {
    // The executor's errors by their code, whatever the message says.
    expect(executorError('EAUTH', 'connection refused: oh-executor: invalid session_api_key').fixes).toEqual(['key', 'retry']);
    expect(executorError('ENORUNTIME', 'x').fixes).toEqual(['settings', 'retry']);
    expect(executorError('EUNREACHABLE', 'x').fixes).toEqual(['settings', 'retry']);
    expect(executorError('EPROTOCOL', 'session_api_key').fixes).toEqual(['logs']);
    expect(executorError(undefined, 'something odd').fixes).toEqual(['retry', 'logs']);
    // Messages without a code (the server's HTTP API, our own checks).
    expect(classify('HTTP 401: invalid session_api_key').fixes).toEqual(['key', 'retry']);
    expect(classify('connect ECONNREFUSED 127.0.0.1:3000').fixes).toEqual(['settings', 'retry']);
    expect(classify('something odd').fixes).toEqual(['retry', 'logs']);
  });
});

describe('logging', () => {
  it('parses levels', () => {
    expect(['ERROR', 'warning', 'Info', 'DEBUG', 'trace', undefined].map(parseLevel)).toEqual(['error', 'warn', 'info', 'debug', 'trace', 'info']);
  });
});

describe('view', () => {
  it('builds a serialisable model', () => {
    const m = buildViewModel(snap('error', { message: 'bad key', fixes: ['key'], conversationId: 'c1' }) as any,
      [{ id: 1, kind: 'run', summary: 'ls', status: 'ok', result: 'exit 0', startedAt: 0, finishedAt: 1500 }], true);
    expect(m).toMatchObject({ stateLabel: 'Error', fixes: [{ fix: 'key', label: 'Set Session API Key' }], hasKey: true, conversationId: 'c1' });
    expect(m.actions[0]).toMatchObject({ summary: 'ls', duration: '1.5 s' });
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
  });

  it('shows the current activity only while executing', () => {
    expect(buildViewModel(snap('executing', { activity: 'run ls' }) as any, [], false).activity).toBe('run ls');
    expect(buildViewModel(snap('connected', { activity: 'run ls' }) as any, [], false).activity).toBeUndefined();
  });

  it('shows workspace paths relative to the workspace', () => {
    expect(relativize('str_replace /ws/src/a.py', '/ws')).toBe('str_replace src/a.py');
    expect(relativize('exit 0 · /ws', '/ws/')).toBe('exit 0 · .');
    expect(relativize('cat /wsx/a', '/ws')).toBe('cat /wsx/a');
    expect(relativize('x', undefined)).toBe('x');
  });

  it('formats durations', () => {
    expect(formatDuration(12)).toBe('12 ms');
    expect(formatDuration(61000)).toBe('1 min 1 s');
  });
});
