/**
 * What a conversation has cost and how full its context is, from what the server reports: V1's
 * `stats` state (`ConversationStats.usage_to_metrics`, one metrics snapshot per LLM the
 * conversation uses: the agent's, a condenser's, ...), V0's `llm_metrics` on its events. Free of
 * `vscode`; the tab shows `usageLine`, and `TabSession` pauses the agent at the budget.
 */

export interface Usage {
  /** Accumulated cost in USD, every LLM of the conversation (0 when the server knows no price). */
  costUsd: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** The agent LLM's last call: its prompt and completion tokens (V1 `per_turn_token`). */
  contextTokens?: number;
  /** The agent LLM's context window, when the server knows it. */
  contextWindow?: number;
}

type Json = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);

/** One metrics snapshot's part: cost and accumulated tokens. */
function fromMetrics(m: Json): Usage {
  const t = obj(m.accumulated_token_usage) ?? {};
  const window = num(t.context_window);
  const turn = num(t.per_turn_token);
  return {
    costUsd: num(m.accumulated_cost),
    promptTokens: num(t.prompt_tokens),
    completionTokens: num(t.completion_tokens),
    cacheReadTokens: num(t.cache_read_tokens),
    cacheWriteTokens: num(t.cache_write_tokens),
    contextTokens: turn || undefined,
    contextWindow: window || undefined,
  };
}

/**
 * V1: the value of a `stats` state update (or `full_state.stats`). Costs and tokens add up over
 * every LLM; the context is the agent's (usage id `agent`, else the LLM with the largest last turn).
 */
export function usageFromV1Stats(stats: unknown): Usage | undefined {
  const byUsage = obj(obj(stats)?.usage_to_metrics);
  if (!byUsage) return undefined;
  const parts = Object.entries(byUsage)
    .map(([id, m]) => [id, obj(m)] as const)
    .filter((e): e is readonly [string, Json] => e[1] !== undefined)
    .map(([id, m]) => [id, fromMetrics(m)] as const);
  if (!parts.length) return undefined;
  const agent = parts.find(([id]) => id === 'agent')?.[1] ?? [...parts].sort((a, b) => (b[1].contextTokens ?? 0) - (a[1].contextTokens ?? 0))[0][1];
  const sum = (k: 'costUsd' | 'promptTokens' | 'completionTokens' | 'cacheReadTokens' | 'cacheWriteTokens') => parts.reduce((s, [, u]) => s + u[k], 0);
  return {
    costUsd: sum('costUsd'),
    promptTokens: sum('promptTokens'),
    completionTokens: sum('completionTokens'),
    cacheReadTokens: sum('cacheReadTokens'),
    cacheWriteTokens: sum('cacheWriteTokens'),
    contextTokens: agent.contextTokens,
    contextWindow: agent.contextWindow,
  };
}

/** V0: an event's `llm_metrics` (the agent's accumulated metrics when the event was made). */
export function usageFromV0Metrics(metrics: unknown): Usage | undefined {
  const m = obj(metrics);
  if (!m || (m.accumulated_cost === undefined && m.accumulated_token_usage === undefined)) return undefined;
  return fromMetrics(m);
}

function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Cost with enough digits to move while a cheap model runs: $0.0042, $1.27. */
export function dollars(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/** The share of the context window the last call used (0-100), when both are known. */
export function contextPercent(u: Usage): number | undefined {
  return u.contextTokens && u.contextWindow ? Math.min(100, Math.round((100 * u.contextTokens) / u.contextWindow)) : undefined;
}

/** One line for the tab: "$0.0123 · 12k in, 1.2k out (8.0k cached) · context 23% of 128k". */
export function usageLine(u: Usage, budgetUsd?: number): string {
  const cost = budgetUsd ? `${dollars(u.costUsd)} of ${dollars(budgetUsd)}` : dollars(u.costUsd);
  const cache = u.cacheReadTokens ? ` (${tokens(u.cacheReadTokens)} cached)` : '';
  const parts = [cost, `${tokens(u.promptTokens)} in, ${tokens(u.completionTokens)} out${cache}`];
  const pct = contextPercent(u);
  if (pct !== undefined) parts.push(`context ${pct}% of ${tokens(u.contextWindow!)}`);
  else if (u.contextTokens) parts.push(`last call ${tokens(u.contextTokens)} tokens`);
  return parts.join(' · ');
}

/**
 * The budget of one conversation: the user's setting, raised by the user each time it is reached
 * (by the setting's amount). `reached` is true once per crossing, so the agent is paused once.
 */
export class Budget {
  private limit: number | undefined;
  private paused = false;

  /** `budgetUsd`: the setting (0 or less: no budget). */
  reached(u: Usage, budgetUsd: number): boolean {
    if (!(budgetUsd > 0)) return false;
    this.limit ??= budgetUsd;
    if (u.costUsd < this.limit || this.paused) return false;
    this.paused = true;
    return true;
  }

  /** The limit now (the setting, or what the user raised it to). */
  current(budgetUsd: number): number | undefined {
    return budgetUsd > 0 ? this.limit ?? budgetUsd : undefined;
  }

  /** The user goes on: the limit moves to the cost so far plus one more setting's worth. */
  raise(u: Usage | undefined, budgetUsd: number): void {
    this.limit = (u?.costUsd ?? 0) + budgetUsd;
    this.paused = false;
  }
}
