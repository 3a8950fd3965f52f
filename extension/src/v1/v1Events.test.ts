import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventModel } from '../tab/eventModel';
import type { V1Event } from './agentServerClient';
import { V1EventAdapter } from './v1Events';

// Recorded from the real agent-server 1.58.2 (see the file's `about`).
const fixture = JSON.parse(readFileSync(join(__dirname, '__fixtures__', 'agent-server-events.json'), 'utf8'));

function render(events: V1Event[], adapter = new V1EventAdapter(), model = new EventModel('/tmp/v1chat/ws')) {
  for (const e of events) {
    for (const step of adapter.adapt(e)) {
      if ('event' in step) model.apply(step.event);
      else if ('holdBack' in step) model.holdBack(step.holdBack, step.args);
    }
  }
  return { adapter, model };
}

describe('V1EventAdapter (recorded agent-server 1.58.2 events)', () => {
  it('renders a finished conversation as the V0 tab does: message, command with exit code, edit diff, finish, states', () => {
    const { model } = render(fixture.finished as V1Event[]);
    const items = model.all;
    expect(items.find((i) => i.kind === 'message')).toMatchObject({ role: 'user', text: 'go' });
    const run = items.find((i) => i.kind === 'action' && i.action === 'run');
    expect(run).toMatchObject({ title: 'echo hi; exit 3', status: 'error', exitCode: 3, thought: 'run it' });
    expect((run as { output: string }).output).toMatch(/^hi\nexit\n\[The command completed with exit code 3/);
    const edit = items.find((i) => i.kind === 'action' && i.action === 'edit');
    expect(edit).toMatchObject({ title: 'Edited a.txt', status: 'ok', diff: ['  one', '- two', '+ TWO', '  '] });
    expect(items.find((i) => i.kind === 'finish')).toMatchObject({ text: 'done **ok**' });
    expect(items.filter((i) => i.kind === 'state').map((i) => (i as { state: string }).state)).toEqual(['running', 'finished']);
    expect(model.agentState).toBe('finished');
  });

  it('takes each event once: the stream replays the whole history on every connect', () => {
    const events = fixture.finished as V1Event[];
    const adapter = new V1EventAdapter();
    const model = new EventModel();
    render(events, adapter, model);
    const n = model.all.length;
    render(events, adapter, model);
    expect(model.all.length).toBe(n);
  });

  it('confirmation: the action named before waiting_for_confirmation is the one held back, with its arguments', () => {
    const events = fixture.confirm as V1Event[];
    // Up to the first wait: the terminal action is held back.
    const firstWait = events.findIndex((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' && e.value === 'waiting_for_confirmation');
    const { adapter, model } = render(events.slice(0, firstWait + 1));
    expect(model.agentState).toBe('awaiting_user_confirmation');
    expect(model.awaiting).toMatchObject({ action: 'run', heldBack: true, args: { command: 'echo hi; exit 3' } });
    expect(model.all.find((i) => i.kind === 'action')).toMatchObject({ confirmation: 'awaiting', status: 'running' });
    // The tab's answer marks the action when the wait ends.
    adapter.answered(true);
    render(events.slice(firstWait + 1), adapter, model);
    expect(model.all.find((i) => i.kind === 'action' && i.action === 'run')).toMatchObject({ confirmation: 'confirmed', status: 'error', exitCode: 3 });
    // The last wait is on the str_replace: its arguments are what the diff is computed from.
    expect(model.awaiting).toMatchObject({ action: 'edit', heldBack: true, args: { command: 'str_replace', old_str: 'two', new_str: 'TWO' } });
  });

  it('a rejected action ends as rejected (UserRejectObservation)', () => {
    const adapter = new V1EventAdapter();
    const model = new EventModel();
    const action = { kind: 'ActionEvent', id: 'a1', source: 'agent', tool_name: 'file_editor', thought: [], action: { kind: 'FileEditorAction', command: 'create', path: '/w/x', file_text: 'x' } };
    render([action, { kind: 'ConversationStateUpdateEvent', id: 's1', key: 'execution_status', value: 'waiting_for_confirmation' }], adapter, model);
    adapter.answered(false);
    render([
      { kind: 'UserRejectObservation', id: 'r1', action_id: 'a1', rejection_reason: 'no' },
      { kind: 'ConversationStateUpdateEvent', id: 's2', key: 'execution_status', value: 'idle' },
    ], adapter, model);
    expect(model.all.find((i) => i.kind === 'action')).toMatchObject({ confirmation: 'rejected', status: 'error', output: 'Rejected by the user: no.' });
  });

  it('agent and conversation errors are shown; an LLM error of an action ends that action', () => {
    const { model } = render([
      { kind: 'ConversationErrorEvent', id: 'c1', code: 'AuthenticationError', detail: 'litellm.AuthenticationError: Incorrect API key provided' },
    ]);
    expect(model.all).toEqual([expect.objectContaining({ kind: 'error', text: 'AuthenticationError: litellm.AuthenticationError: Incorrect API key provided' })]);
  });
});
