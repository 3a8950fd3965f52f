import type { ConversationSummary } from '../webview/protocol';

/** Why a conversation needs the user: it waits for a confirmation, it finished, or it failed. */
export type Attention = 'confirmation' | 'finished' | 'error';

/** The attention a V1 `execution_status` asks for (undefined: none, e.g. running, idle, paused). */
export function attentionOf(status: string | undefined): Attention | undefined {
  switch (status?.toLowerCase()) {
    case 'waiting_for_confirmation':
      return 'confirmation';
    case 'finished':
      return 'finished';
    case 'error':
    case 'stuck':
      return 'error';
    default:
      return undefined;
  }
}

/** One thing to tell the user: conversation `id` (`title`) now needs them for `attention`. */
export interface Notice {
  id: string;
  title: string;
  attention: Attention;
}

/** How a notice reads (the notification's text): the title, and the id's start (titles repeat). */
export function noticeText(n: Notice): string {
  const what = n.attention === 'confirmation' ? 'waits for your confirmation' : n.attention === 'finished' ? 'finished' : 'stopped with an error';
  return `OpenHands: the conversation "${n.title}" (${n.id.slice(0, 8)}) ${what}.`;
}

/**
 * Which background conversations need the user, from successive looks at the conversation list
 * (pure: the badge and the notifications are the caller's). A conversation that is not the one
 * shown and moves into an attention state (waiting for confirmation, finished, error) gives one
 * notice; it needs attention until it is shown or leaves that state, and staying in the same
 * state gives no new notice (it may give one again once it left the state and came back). The
 * first look only learns the states: what was finished before the window looked is not news. A
 * conversation that appears later already in an attention state (a script's, finished between
 * two looks) is.
 */
export class AttentionTracker {
  /** Each conversation's attention at the last look (null: none). */
  private readonly last = new Map<string, Attention | null>();
  private readonly pending = new Map<string, Attention>();
  private primed = false;

  /** The ids that need the user now (the badge counts them). */
  get needing(): string[] {
    return [...this.pending.keys()];
  }

  get count(): number {
    return this.pending.size;
  }

  attentionOf(id: string): Attention | undefined {
    return this.pending.get(id);
  }

  /** A look at the list (`shown`: the conversation the tab shows); answers the new notices. */
  observe(list: ConversationSummary[], shown: string | undefined): Notice[] {
    const notices: Notice[] = [];
    const present = new Set<string>();
    for (const c of list) {
      present.add(c.id);
      const now = attentionOf(c.status) ?? null;
      const before = this.last.get(c.id);
      this.last.set(c.id, now);
      if (c.id === shown || now === null) {
        this.pending.delete(c.id);
        continue;
      }
      const isNew = before === undefined ? this.primed : before !== now;
      if (!isNew) continue;
      this.pending.set(c.id, now);
      notices.push({ id: c.id, title: c.title, attention: now });
    }
    for (const id of [...this.last.keys()]) {
      if (present.has(id)) continue;
      this.last.delete(id);
      this.pending.delete(id);
    }
    this.primed = true;
    return notices;
  }

  /** The user looked at `id` (the tab shows it now): it needs nothing until its next change. */
  seen(id: string): boolean {
    return this.pending.delete(id);
  }

  /** Another server: start afresh (its first look learns again). */
  reset(): void {
    this.last.clear();
    this.pending.clear();
    this.primed = false;
  }
}
