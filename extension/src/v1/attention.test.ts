import { describe, expect, it } from 'vitest';
import { AttentionTracker, attentionOf, noticeText } from './attention';

const c = (id: string, status?: string) => ({ id, title: `task ${id}`, status });

describe('AttentionTracker: which background conversations need the user', () => {
  it('the first look only learns; a background conversation that starts waiting, finishes or fails gives one notice each', () => {
    const t = new AttentionTracker();
    expect(t.observe([c('a', 'running'), c('b', 'running'), c('c', 'finished'), c('d', 'running')], 'a')).toEqual([]);
    expect(t.count).toBe(0);
    const n = t.observe([c('a', 'running'), c('b', 'waiting_for_confirmation'), c('c', 'finished'), c('d', 'error')], 'a');
    expect(n).toEqual([
      { id: 'b', title: 'task b', attention: 'confirmation' },
      { id: 'd', title: 'task d', attention: 'error' },
    ]);
    expect(t.needing).toEqual(['b', 'd']);
    expect(noticeText(n[0])).toBe('OpenHands: the conversation "task b" (b) waits for your confirmation.');
  });

  it('is not repeated while the state stays; again after the conversation left the state and came back', () => {
    const t = new AttentionTracker();
    t.observe([c('b', 'running')], undefined);
    expect(t.observe([c('b', 'finished')], undefined)).toHaveLength(1);
    expect(t.observe([c('b', 'finished')], undefined)).toEqual([]);
    expect(t.observe([c('b', 'FINISHED')], undefined)).toEqual([]);
    expect(t.count).toBe(1);
    // The user sends another message: it runs, then finishes again.
    expect(t.observe([c('b', 'running')], undefined)).toEqual([]);
    expect(t.count).toBe(0);
    expect(t.observe([c('b', 'finished')], undefined)).toEqual([{ id: 'b', title: 'task b', attention: 'finished' }]);
    // From waiting to finished is a new state.
    t.observe([c('b', 'waiting_for_confirmation')], undefined);
    expect(t.observe([c('b', 'error')], undefined)).toEqual([{ id: 'b', title: 'task b', attention: 'error' }]);
  });

  it('the conversation shown gives no notice, and showing one clears its attention for good', () => {
    const t = new AttentionTracker();
    t.observe([c('a', 'running'), c('b', 'running')], 'a');
    expect(t.observe([c('a', 'finished'), c('b', 'finished')], 'a')).toEqual([{ id: 'b', title: 'task b', attention: 'finished' }]);
    expect(t.seen('b')).toBe(true);
    expect(t.count).toBe(0);
    // Back to a: b stays finished, which the user has seen.
    expect(t.observe([c('a', 'finished'), c('b', 'finished')], 'a')).toEqual([]);
    expect(t.count).toBe(0);
    // Shown while it changes state: nothing pending after it.
    expect(t.observe([c('a', 'finished'), c('b', 'waiting_for_confirmation')], 'b')).toEqual([]);
    expect(t.count).toBe(0);
  });

  it('a conversation that appears after the first look already needing the user is news; one that goes is forgotten', () => {
    const t = new AttentionTracker();
    t.observe([c('a', 'idle')], 'a');
    expect(t.observe([c('a', 'idle'), c('s', 'finished')], 'a')).toEqual([{ id: 's', title: 'task s', attention: 'finished' }]);
    expect(t.observe([c('a', 'idle')], 'a')).toEqual([]);
    expect(t.count).toBe(0);
    t.reset();
    expect(t.observe([c('a', 'idle'), c('s', 'finished')], 'a')).toEqual([]);
  });

  it('maps the agent-server\'s execution states', () => {
    expect(['idle', 'running', 'paused', 'waiting_for_confirmation', 'finished', 'error', 'stuck', undefined].map(attentionOf)).toEqual([
      undefined, undefined, undefined, 'confirmation', 'finished', 'error', 'error', undefined,
    ]);
  });
});
