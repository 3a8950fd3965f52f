/**
 * Secret exports shown masked. OpenHands hands the agent's secrets (GitHub token, API keys) to its
 * shell as commands made only of exports (V0 `export A=$'…'; export B=$'…';`, V1 `export A=$'…' &&
 * export B=$'…'`); the agent terminal would show bash's echo of them and the activity list the
 * command, in clear. The extension cannot know which variables are secret, so it masks the value
 * of every export in a command made only of exports, and of any export whose name looks like a
 * credential (`…_TOKEN`, `…_API_KEY`, `…SECRET…`, `…PASSWORD…`) wherever it appears.
 */

export const MASK = '********';

// `export NAME=` then a value: ANSI-C `$'…'`, double-quoted, single-quoted, or a bare word.
// No word boundary before `export`: in the terminal, bash's echo follows an escape sequence
// (bracketed paste, `\x1b[?2004h`) that ends with a letter.
const EXPORT = /export\s+([A-Za-z_][A-Za-z0-9_]*)=(\$'(?:[^'\\]|\\[\s\S])*'|"(?:[^"\\]|\\[\s\S])*"|'[^']*'|(?!\$'|["'])[^\s;&|]*)/g;
// A quoted value that never closes on this line (a value longer than the terminal line, cut).
const DANGLING = /export\s+([A-Za-z_][A-Za-z0-9_]*)=(\$'|"|')[\s\S]*$/;
const CREDENTIAL_NAME = /(^|_)(API_?KEYS?|TOKEN|SECRET|SECRET_ACCESS_KEY|SECRET_KEY|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY|ACCESS_KEY)(_|$)/i;

/** True when the name looks like a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** `text` (one command, or one line of terminal output) with secret export values masked. */
export function maskSecretExports(text: string): string {
  if (!text.includes('export')) return text;
  // From the first `export` on (what precedes it on a terminal line may be the rest of an escape
  // sequence already shown).
  const rest = text.slice(text.indexOf('export')).replace(EXPORT, '').replace(DANGLING, '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const hasExport = text.match(EXPORT) !== null || DANGLING.test(text);
  const onlyExports = hasExport && /^[\s;&]*$/.test(rest);
  let out = text.replace(EXPORT, (whole, name: string) =>
    onlyExports || isCredentialName(name) ? `export ${name}=${MASK}` : whole,
  );
  const dangling = DANGLING.exec(out);
  if (dangling && (onlyExports || isCredentialName(dangling[1]))) {
    out = out.slice(0, dangling.index) + `export ${dangling[1]}=${MASK}`;
  }
  return out;
}

/**
 * The same masking on a live stream: whole lines are masked; a partial line that mentions
 * `export` (or could be its beginning) is held back until its end arrives, everything else goes
 * straight through so live output stays live. A held line is bounded: past `limit` it is flushed
 * masked as it is.
 */
export class SecretExportMasker {
  private pending = '';

  constructor(private readonly limit = 256 * 1024) {}

  push(chunk: string): string {
    const s = this.pending + chunk;
    this.pending = '';
    const cut = s.lastIndexOf('\n') + 1;
    const whole = cut > 0 ? maskLines(s.slice(0, cut)) : '';
    const tail = s.slice(cut);
    if (mayBeExport(tail) && tail.length <= this.limit) {
      this.pending = tail;
      return whole;
    }
    return whole + maskSecretExports(tail);
  }

  /** What is held back, masked (a prompt follows: the line is complete). */
  flush(): string {
    const s = this.pending;
    this.pending = '';
    return maskSecretExports(s);
  }
}

function maskLines(text: string): string {
  return text.split('\n').map(maskSecretExports).join('\n');
}

function mayBeExport(tail: string): boolean {
  if (tail.includes('export')) return true;
  // The line could end with the beginning of `export` (after an escape sequence, say `…2004hexp`).
  for (let n = 1; n < 'export'.length; n++) if (tail.endsWith('export'.slice(0, n))) return true;
  return false;
}
