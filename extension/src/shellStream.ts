/**
 * Splits the executor's raw shell stream into text and prompts. The executor's bash prints its
 * prompt as OpenHands' PS1 JSON block (`\n###PS1JSON###\n{...}\n###PS1END###\n`), which carries
 * the exit code and working directory of the command that just finished; the agent terminal
 * replaces each block by a short human prompt. Blocks split across chunks are handled.
 */
export const PS1_START = '###PS1JSON###';
export const PS1_END = '###PS1END###';

export type ShellSegment =
  | { type: 'text'; text: string }
  | { type: 'prompt'; exitCode?: number; cwd?: string };

export class ShellStream {
  private pending = '';
  private inBlock = false;

  /**
   * A block just ended and the newline that closes it (`###PS1END###\r\n`) has not been seen:
   * it may come in the next chunk (the addon hands over bytes as the PTY gives them, and the
   * shell's reads often split right after the marker). It must be dropped wherever it arrives,
   * or the command bash echoes next lands on a line of its own under the prompt.
   */
  private blockNewlinePending = false;

  push(chunk: string): ShellSegment[] {
    const out: ShellSegment[] = [];
    let s = this.pending + chunk;
    this.pending = '';
    if (this.blockNewlinePending) {
      if (s === '' || s === '\r') {
        this.pending = s;
        return out;
      }
      s = s.replace(/^\r?\n/, '');
      this.blockNewlinePending = false;
    }
    for (;;) {
      if (this.inBlock) {
        const end = s.indexOf(PS1_END);
        if (end < 0) {
          this.pending = s; // keep the (bounded) block until its end arrives
          if (this.pending.length > 64 * 1024) {
            out.push({ type: 'text', text: this.pending });
            this.pending = '';
            this.inBlock = false;
          }
          return out;
        }
        out.push(parsePrompt(s.slice(0, end)));
        s = s.slice(end + PS1_END.length);
        this.inBlock = false;
        if (s === '' || s === '\r') {
          this.pending = s;
          this.blockNewlinePending = true;
          return out;
        }
        s = s.replace(/^\r?\n/, '');
        continue;
      }
      const start = s.indexOf(PS1_START);
      if (start >= 0) {
        // The PS1 block starts with a newline of its own: drop it.
        const before = s.slice(0, start).replace(/\r?\n$/, '');
        if (before) out.push({ type: 'text', text: before });
        s = s.slice(start + PS1_START.length);
        this.inBlock = true;
        continue;
      }
      // Hold back a tail that could be the beginning of a marker (or of the newline before it).
      const hold = partialSuffix(s, `\n${PS1_START}`, `\r\n${PS1_START}`);
      const text = s.slice(0, s.length - hold);
      this.pending = s.slice(s.length - hold);
      if (text) out.push({ type: 'text', text });
      return out;
    }
  }
}

function partialSuffix(s: string, ...markers: string[]): number {
  let best = 0;
  for (const m of markers) {
    for (let n = Math.min(m.length - 1, s.length); n > best; n--) {
      if (s.endsWith(m.slice(0, n))) {
        best = n;
        break;
      }
    }
  }
  return best;
}

function parsePrompt(body: string): ShellSegment {
  try {
    const json = JSON.parse(body.trim()) as { exit_code?: string | number; working_dir?: string };
    const code = json.exit_code === undefined || json.exit_code === '' ? undefined : Number(json.exit_code);
    return { type: 'prompt', exitCode: Number.isFinite(code) ? code : undefined, cwd: json.working_dir || undefined };
  } catch {
    return { type: 'prompt' };
  }
}
