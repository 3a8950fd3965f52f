import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The executor credential: what the executor presents to the runtime (`session_api_key`).
 *
 * 1. The key in SecretStorage ("OpenHands: Set Session API Key"): the OpenHands server's
 *    SESSION_API_KEY, or its executor token pasted by hand for a server on another machine.
 * 2. Otherwise, when the server is on this machine (loopback URL), the executor token file the
 *    runtime creates (same path rule as openhands_vscode_runtime/credentials.py), so the user
 *    copies nothing.
 * See docs/security.md.
 */
export type CredentialSource = 'secret-storage' | 'token-file' | 'none';

export interface ExecutorCredential {
  key: string | undefined;
  source: CredentialSource;
  /** Where it came from, or why none was found (for the log). */
  detail: string;
}

export interface CredentialDeps {
  env: NodeJS.ProcessEnv;
  home: string;
  readFile(file: string): Promise<string>;
}

const defaultDeps: CredentialDeps = {
  env: process.env,
  home: os.homedir(),
  readFile: (file) => fs.readFile(file, 'utf8'),
};

/** `$OH_VSCODE_EXECUTOR_TOKEN_FILE`, else `$XDG_STATE_HOME/openhands-vscode-runtime/executor-token`
 * (`~/.local/state/...` without XDG_STATE_HOME). */
export function tokenFilePath(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const configured = (env.OH_VSCODE_EXECUTOR_TOKEN_FILE ?? '').trim();
  if (configured) return configured.startsWith('~/') ? path.join(home, configured.slice(2)) : configured;
  const state = (env.XDG_STATE_HOME ?? '').trim();
  return path.join(state || path.join(home, '.local', 'state'), 'openhands-vscode-runtime', 'executor-token');
}

/** True when the URL's host is this machine (localhost, 127.0.0.0/8, ::1). */
export function isLoopbackUrl(serverUrl: string): boolean {
  let host: string;
  try {
    host = new URL(serverUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** What to do when the server is elsewhere and nothing is stored. Mentions "Session API Key", so
 * the error offers the "Set Session API Key" fix. */
export function missingCredentialMessage(serverUrl: string, tokenFile: string): string {
  return (
    `No executor credential for the OpenHands server at ${serverUrl}: it is not on this machine, so its ` +
    `executor token file cannot be read here. Run "OpenHands: Set Session API Key" and enter the ` +
    `server's SESSION_API_KEY, or, when it has none, the content of ${tokenFile} on the server's machine.`
  );
}

/** Finds the executor credential; throws with what to do when the server is remote and none is stored. */
export async function findExecutorCredential(
  stored: string | undefined,
  serverUrl: string,
  deps: CredentialDeps = defaultDeps,
): Promise<ExecutorCredential> {
  const key = (stored ?? '').trim();
  if (key) return { key, source: 'secret-storage', detail: 'the key stored with "OpenHands: Set Session API Key"' };
  const file = tokenFilePath(deps.env, deps.home);
  if (!isLoopbackUrl(serverUrl)) throw new Error(missingCredentialMessage(serverUrl, file));
  let token: string;
  try {
    token = (await deps.readFile(file)).trim();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      key: undefined,
      source: 'none',
      detail:
        code === 'ENOENT'
          ? `no stored key and no executor token file ${file} (the server has not created one: it has a SESSION_API_KEY, or it does not run VsCodeRuntime)`
          : `no stored key, and the executor token file ${file} cannot be read: ${(e as Error).message}`,
    };
  }
  if (!token) return { key: undefined, source: 'none', detail: `the executor token file ${file} is empty` };
  return { key: token, source: 'token-file', detail: `the executor token file ${file}` };
}
