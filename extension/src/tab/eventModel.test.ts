import { describe, expect, it } from 'vitest';
import { EventModel, describeRuntimeStatus, lineDiff, type ServerEvent } from './eventModel';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/** A short conversation as the server broadcasts it (event_to_dict shapes). */
export function sampleEvents(): ServerEvent[] {
  return [
    { id: 0, source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'loading' } },
    { id: 1, source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'awaiting_user_input' } },
    { id: 2, source: 'user', action: 'message', args: { content: 'Fix **greet**', image_urls: [] }, timestamp: t(0) },
    { id: 3, source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'running' } },
    { id: 4, source: 'agent', action: 'think', args: { thought: 'Look first.' } },
    { id: 5, source: 'agent', action: 'run', args: { command: 'ls', thought: 'listing' }, timestamp: t(1) },
    { id: 6, source: 'agent', observation: 'run', cause: 5, content: 'a.py', extras: { command: 'ls', metadata: { exit_code: 0 } }, timestamp: t(3) },
    { id: 7, source: 'agent', action: 'run', args: { command: 'false' }, timestamp: t(4) },
    { id: 8, source: 'agent', observation: 'run', cause: 7, content: '', extras: { command: 'false', metadata: { exit_code: 1 } }, timestamp: t(4) },
    { id: 9, source: 'agent', action: 'edit', args: { path: '/ws/a.py', command: 'str_replace' }, timestamp: t(5) },
    { id: 10, source: 'agent', observation: 'edit', cause: 9, content: 'The file /ws/a.py has been edited.', extras: { path: '/ws/a.py', old_content: 'x = 1\ny = 2\n', new_content: 'x = 1\ny = 3\n' }, timestamp: t(6) },
    { id: 11, source: 'agent', action: 'finish', args: { final_thought: 'Done: `greet` fixed.', outputs: {} } },
    { id: 12, source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'finished' } },
  ];
}

describe('event model', () => {
  it('renders messages, thoughts, actions with their observation, finish and states', () => {
    const m = new EventModel();
    for (const e of sampleEvents()) m.apply(e);
    const items = m.all;
    expect(items.map((i) => i.kind)).toEqual(['state', 'message', 'state', 'thought', 'action', 'action', 'action', 'finish', 'state']);
    expect(items[1]).toMatchObject({ kind: 'message', role: 'user', text: 'Fix **greet**' });
    expect(items[4]).toMatchObject({ kind: 'action', action: 'run', title: 'ls', thought: 'listing', status: 'ok', exitCode: 0, durationMs: 2000, output: 'a.py' });
    expect(items[5]).toMatchObject({ title: 'false', status: 'error', exitCode: 1 });
    expect(items[6]).toMatchObject({ action: 'edit', title: 'Edited /ws/a.py', status: 'ok', diff: ['  x = 1', '- y = 2', '+ y = 3', '  '] });
    expect(items[7]).toMatchObject({ kind: 'finish', text: 'Done: `greet` fixed.' });
    expect(m.agentState).toBe('finished');
    expect(m.latestEventId).toBe(12);
  });

  it('an observation patches its action; a replay adds nothing twice', () => {
    const m = new EventModel();
    const events = sampleEvents();
    expect(m.apply(events[5])).toEqual([{ op: 'add', item: expect.objectContaining({ key: 'e5', status: 'running' }) }]);
    expect(m.apply(events[6])).toEqual([{ op: 'patch', item: expect.objectContaining({ key: 'e5', status: 'ok' }) }]);
    for (const e of events) m.apply(e); // the full replay after a reconnect
    const keys = m.all.map((i) => i.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(m.apply(events[2])).toEqual([]);
  });

  it('shows paths under the workspace relative to it', () => {
    const m = new EventModel('/ws/');
    m.apply({ id: 1, source: 'agent', action: 'edit', args: { path: '/ws/src/a.py', command: 'str_replace' } });
    m.apply({ id: 2, source: 'agent', action: 'run', args: { command: 'cat /wsx/a /ws/b' } });
    expect(m.all.map((i) => (i as any).title)).toEqual(['Edited src/a.py', 'cat /wsx/a b']);
  });

  it('names the folder of each path in a multi-root workspace', () => {
    const m = new EventModel(['/home/u/app', '/home/u/api']);
    m.apply({ id: 1, source: 'agent', action: 'edit', args: { path: '/home/u/api/src/a.py', command: 'str_replace' } });
    m.apply({ id: 2, source: 'agent', action: 'edit', args: { path: '/home/u/app/main.py', command: 'str_replace' } });
    m.apply({ id: 3, source: 'agent', action: 'run', args: { command: 'cp /home/u/app/x /home/u/apix/y' } });
    expect(m.all.map((i) => (i as any).title)).toEqual(['Edited api/src/a.py', 'Edited app/main.py', 'cp app/x /home/u/apix/y']);
    // One folder (as an array too): relative to it, as before.
    const one = new EventModel(['/ws']);
    one.apply({ id: 1, source: 'agent', action: 'edit', args: { path: '/ws/src/a.py', command: 'str_replace' } });
    expect((one.all[0] as any).title).toBe('Edited src/a.py');
  });

  it('an agent state replayed after newer events (the server holds the last one back) still counts; an older one does not', () => {
    const m = new EventModel();
    m.apply({ id: 5, source: 'agent', action: 'run', args: { command: 'ls' } });
    m.apply({ id: 4, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'running' } });
    expect(m.agentState).toBe('running');
    m.apply({ id: 7, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'finished' } });
    m.apply({ id: 6, source: 'environment', observation: 'agent_state_changed', extras: { agent_state: 'running' } });
    expect(m.agentState).toBe('finished');
    expect(m.latestEventId).toBe(7);
  });

  it('shows errors and hides bookkeeping events', () => {
    const m = new EventModel();
    expect(m.apply({ id: 1, source: 'agent', observation: 'error', content: 'boom' })).toEqual([{ op: 'add', item: { kind: 'error', key: 'e1', text: 'boom' } }]);
    expect(m.apply({ id: 2, source: 'agent', action: 'recall', args: {} })).toEqual([]);
    expect(m.apply({ id: 3, source: 'user', action: 'change_agent_state', args: { agent_state: 'stopped' } })).toEqual([]);
    expect(m.apply({ id: 4, source: 'agent', observation: 'null', content: '' })).toEqual([]);
    // Environment actions (e.g. a setup script) are not broadcast, so the history hides them too.
    expect(m.apply({ id: 5, source: 'environment', action: 'run', args: { command: 'git config' } })).toEqual([]);
    expect(m.latestEventId).toBe(5);
  });

  it('handles 1,000 events with one change each (no full re-render)', () => {
    const m = new EventModel();
    let adds = 0;
    let patches = 0;
    for (let i = 0; i < 1000; i += 2) {
      for (const c of m.apply({ id: i, source: 'agent', action: 'run', args: { command: `echo ${i}` } })) c.op === 'add' ? adds++ : patches++;
      for (const c of m.apply({ id: i + 1, source: 'agent', observation: 'run', cause: i, content: String(i), extras: { metadata: { exit_code: 0 } } })) c.op === 'add' ? adds++ : patches++;
    }
    expect({ adds, patches, items: m.all.length }).toEqual({ adds: 500, patches: 500, items: 500 });
  });

  it('describes runtime status updates and diffs', () => {
    expect(describeRuntimeStatus('STATUS$READY', 'STATUS$READY')).toBe('Ready');
    expect(describeRuntimeStatus('STATUS$ERROR', 'no executor')).toBe('no executor');
    expect(lineDiff('', 'a\nb')).toEqual(['+ a', '+ b']);
    expect(lineDiff('a\nb\nc', 'a\nc')).toEqual(['  a', '- b', '  c']);
  });

  it('titles an action with the one summary the executor\'s list uses: secret exports masked (the tab showed them before)', () => {
    const m = new EventModel('/ws');
    m.apply({ id: 1, source: 'agent', action: 'run', args: { command: `export GITHUB_TOKEN=$'ghp_secret'` } });
    m.apply({ id: 2, source: 'agent', action: 'edit', args: { command: 'str_replace', path: '/ws/src/a.py' } });
    const titles = m.all.map((i) => (i as { title?: string }).title);
    expect(titles[0]).not.toContain('ghp_secret');
    expect(titles[0]).toMatch(/^export GITHUB_TOKEN=/);
    expect(titles[1]).toBe('Edited src/a.py');
  });
});
