import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { coalesce } from './coalesce';

describe('coalesce', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs once, after the delay, for any number of calls before it', () => {
    const run = vi.fn();
    const soon = coalesce(run, 50);
    for (let i = 0; i < 5; i++) soon();
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(49);
    expect(run).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(run).toHaveBeenCalledTimes(1);
    soon();
    vi.advanceTimersByTime(50);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('runs nothing after dispose', () => {
    const run = vi.fn();
    const soon = coalesce(run, 50);
    soon();
    soon.dispose();
    soon();
    vi.advanceTimersByTime(100);
    expect(run).not.toHaveBeenCalled();
  });
});
