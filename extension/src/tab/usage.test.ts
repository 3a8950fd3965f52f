import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Budget, contextPercent, usageFromV0Metrics, usageFromV1Stats, usageLine } from './usage';

// Recorded from the real agent-server 1.58.2 (see the file's `about`).
const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'v1', '__fixtures__', 'agent-server-stats.json'), 'utf8'));

describe('usage: what a conversation cost, as the server reports it', () => {
  it('V1 stats: cost, tokens and the agent LLM context from the recorded updates', () => {
    const u = usageFromV1Stats(fixture.stats_events[2].value)!;
    expect(u).toEqual({ costUsd: 0.0210275, promptTokens: 7919, completionTokens: 123, cacheReadTokens: 0, cacheWriteTokens: 0, contextTokens: 3890, contextWindow: 128000 });
    expect(usageFromV1Stats(fixture.conversation_stats)).toEqual(u);
    expect(contextPercent(u)).toBe(3);
  });

  it('V1 stats of two LLMs add up; the context is the agent\'s', () => {
    const agent = fixture.stats_events[2].value.usage_to_metrics.agent;
    const condenser = { ...agent, accumulated_cost: 0.5, accumulated_token_usage: { ...agent.accumulated_token_usage, prompt_tokens: 1000, completion_tokens: 10, per_turn_token: 90000, context_window: 8000 } };
    const u = usageFromV1Stats({ usage_to_metrics: { condenser, agent } })!;
    expect(u.costUsd).toBeCloseTo(0.5210275);
    expect([u.promptTokens, u.completionTokens, u.contextTokens, u.contextWindow]).toEqual([8919, 133, 3890, 128000]);
  });

  it('nothing usable is no usage, not zeros', () => {
    expect(usageFromV1Stats(undefined)).toBeUndefined();
    expect(usageFromV1Stats({ usage_to_metrics: {} })).toBeUndefined();
    expect(usageFromV0Metrics({})).toBeUndefined();
    expect(usageFromV0Metrics('x')).toBeUndefined();
  });

  it('V0 llm_metrics (openhands-ai 1.6.0 event field): cost, tokens, cache reads', () => {
    const u = usageFromV0Metrics({ accumulated_cost: 1.5, accumulated_token_usage: { prompt_tokens: 2_500_000, completion_tokens: 1200, cache_read_tokens: 40000, cache_write_tokens: 0, context_window: 0, per_turn_token: 5000 } })!;
    expect(usageLine(u)).toBe('$1.50 · 2.5M in, 1.2k out (40k cached) · last call 5.0k tokens');
  });

  it('Budget: reached once per crossing; raised by one setting past what was spent', () => {
    const b = new Budget();
    const at = (costUsd: number) => ({ costUsd, promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(b.reached(at(5), 0)).toBe(false);
    expect(b.reached(at(0.9), 1)).toBe(false);
    expect(b.reached(at(1), 1)).toBe(true);
    expect(b.reached(at(1.2), 1)).toBe(false);
    b.raise(at(1.2), 1);
    expect(b.current(1)).toBeCloseTo(2.2);
    expect(b.reached(at(2.1), 1)).toBe(false);
    expect(b.reached(at(2.2), 1)).toBe(true);
  });
});
