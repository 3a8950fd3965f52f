/**
 * Makes untrusted command output safe and well-formed for a Pseudoterminal:
 *
 * - keeps text, tabs, backspaces, SGR colour sequences (`CSI ... m`) and erase-in-line (`CSI K`);
 * - drops every other escape sequence (cursor movement, screen clears, mode switches, OSC window
 *   titles, hyperlinks and clipboard writes, DCS/APC/PM/SOS strings), other C0 controls and all
 *   C1 controls;
 * - turns a lone `\n` into `\r\n` (a Pseudoterminal gets no tty line discipline), keeping `\r\n`
 *   and lone `\r` (progress bars) as they are.
 *
 * It is stateful: an escape sequence or a `\r\n` pair split across two chunks is handled.
 */
const ESC = 0x1b;
const MAX_CSI = 64;
const MAX_STRING = 4096;

type State = 'text' | 'esc' | 'escIntermediate' | 'csi' | 'string' | 'stringEsc';

export class TerminalSanitizer {
  private state: State = 'text';
  private csi = '';
  private stringLength = 0;
  private lastWasCr = false;

  /** Sanitises one chunk; the returned text is ready for `Pseudoterminal.onDidWrite`. */
  push(chunk: string): string {
    let out = '';
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      const c = chunk.charCodeAt(i);
      switch (this.state) {
        case 'text':
          if (c === ESC) {
            this.state = 'esc';
          } else if (c === 0x0a) {
            out += this.lastWasCr ? '\n' : '\r\n';
            this.lastWasCr = false;
          } else if (c === 0x0d) {
            out += '\r';
            this.lastWasCr = true;
          } else if (c === 0x09 || c === 0x08) {
            out += ch;
            this.lastWasCr = false;
          } else if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) {
            // other C0 controls, DEL and C1 controls (0x9b is an 8-bit CSI): dropped
          } else {
            out += ch;
            this.lastWasCr = false;
          }
          break;
        case 'esc':
          if (ch === '[') {
            this.state = 'csi';
            this.csi = '';
          } else if (ch === ']' || ch === 'P' || ch === '_' || ch === '^' || ch === 'X') {
            this.state = 'string';
            this.stringLength = 0;
          } else if (c >= 0x20 && c <= 0x2f) {
            this.state = 'escIntermediate';
          } else if (c === ESC) {
            this.state = 'esc';
          } else {
            this.state = 'text'; // a two-byte escape (ESC 7, ESC c, ...): dropped
          }
          break;
        case 'escIntermediate':
          if (c >= 0x30 && c <= 0x7e) this.state = 'text';
          else if (c < 0x20 || c > 0x7e) this.state = 'text';
          break;
        case 'csi':
          if (c >= 0x40 && c <= 0x7e) {
            out += this.finishCsi(ch);
            this.state = 'text';
          } else if (c >= 0x20 && c <= 0x3f && this.csi.length < MAX_CSI) {
            this.csi += ch;
          } else {
            this.state = c === ESC ? 'esc' : 'text'; // malformed or oversized: dropped
          }
          break;
        case 'string':
          if (c === 0x07 || c === 0x9c || ++this.stringLength > MAX_STRING) this.state = 'text';
          else if (c === ESC) this.state = 'stringEsc';
          break;
        case 'stringEsc':
          this.state = ch === '\\' ? 'text' : 'string';
          break;
      }
    }
    return out;
  }

  /** Forgets any half-read sequence (call between unrelated streams, e.g. after a command). */
  reset(): void {
    this.state = 'text';
    this.csi = '';
  }

  private finishCsi(final: string): string {
    if (final === 'm' && /^[0-9;:]*$/.test(this.csi)) return `\x1b[${this.csi}m`;
    if (final === 'K' && /^[0-2]?$/.test(this.csi)) return `\x1b[${this.csi}K`;
    return '';
  }
}

/** One-shot helper for whole strings. */
export function sanitize(text: string): string {
  return new TerminalSanitizer().push(text);
}
