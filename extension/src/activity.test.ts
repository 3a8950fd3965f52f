import { describe, expect, it } from 'vitest';
import { ActivityLog, summariseAction, summariseObservation } from './activity';

describe('activity', () => {
  it('summarises actions', () => {
    expect(summariseAction({ action: 'run', args: { command: 'ls  -la\n' } })).toEqual({ kind: 'run', summary: 'ls -la' });
    expect(summariseAction({ action: 'run', args: { command: 'C-c', is_input: true } }).summary).toBe('input: C-c');
    expect(summariseAction({ action: 'edit', args: { command: 'str_replace', path: '/ws/a.py' } }).summary).toBe('Edited /ws/a.py');
    expect(summariseAction({ action: 'v1_file_editor', args: { command: 'create', path: '/ws/b.py' } }).summary).toBe('Created /ws/b.py');
    expect(summariseAction({ action: 'read', args: { path: '/ws/a' } }).summary).toBe('Read /ws/a');
    expect(summariseAction({ action: 'browse', message: 'x' }).kind).toBe('browse');
  });

  it('summarises observations', () => {
    expect(summariseObservation({ observation: 'run', content: 'a\nb\n', extras: { metadata: { exit_code: 0 } } })).toEqual({ status: 'ok', result: 'exit 0 · b' });
    expect(summariseObservation({ observation: 'run', content: 'nope', extras: { metadata: { exit_code: 2 } } }).status).toBe('error');
    expect(summariseObservation({ observation: 'run', content: 'x', extras: { metadata: { exit_code: -1 } } }).result).toMatch(/still running/);
    expect(summariseObservation({ observation: 'error', content: 'bad' })).toEqual({ status: 'error', result: 'bad' });
    expect(summariseObservation({ observation: 'read', content: '1\n2\n3' }).result).toBe('3 lines');
  });

  it('tracks running actions, ignores re-deliveries and keeps a bounded newest-first list', () => {
    let t = 0;
    const log = new ActivityLog(3, () => (t += 10));
    log.action({ id: 1, action: 'run', args: { command: 'a' } });
    log.action({ id: 1, action: 'run', args: { command: 'a' } });
    expect(log.items).toHaveLength(1);
    expect(log.running).toBe(1);
    log.observation({ cause: 1, observation: 'run', content: '', extras: { metadata: { exit_code: 0 } } });
    expect(log.running).toBe(0);
    expect(log.items[0].finishedAt! - log.items[0].startedAt).toBe(10);
    for (let i = 2; i <= 5; i++) log.action({ id: i, action: 'read', args: { path: `/f${i}` } });
    expect(log.items.map((e) => e.id)).toEqual([5, 4, 3]);
  });
});
