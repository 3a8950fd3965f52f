import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { portOwnedBy } from './socketOwner';

/**
 * The extension's own local OpenHands V1 agent-server (managed mode): started from a Python
 * environment with this project's V1 tools loaded, on 127.0.0.1 and a port it binds itself and
 * reports over a pipe (checked on Linux to be its own listening socket), with a fresh random
 * session key given over another pipe, never its environment; supervised until the window closes. What the V1 client needs to reach it
 * is the `AgentServerConnection` triple (the same shape attach mode gets from the user).
 * Free of `vscode` (v1/agentServer.ts adds the notifications).
 */

/** Where a running agent-server is and how to talk to it. */
export interface AgentServerConnection {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** Sent as `X-Session-API-Key` (REST) and `session_api_key` (WebSocket); held in memory only. */
  readonly sessionApiKey: string;
  /** Where the V1 tools write one discovery file per conversation waiting for an executor. */
  readonly discoveryDir: string;
}

export interface AgentServerOptions {
  /** The interpreter of an environment with openhands-vscode-runtime[v1]. */
  python: string;
  /**
   * A private folder (made 0700) for the server's state: its working directory (the agent-server
   * keeps conversations, bash events and its config under `workspace/` relative to it) and the
   * discovery folder.
   */
  stateDir: string;
  /**
   * Encrypts the secrets the agent-server persists (OH_SECRET_KEY); kept by the caller across
   * restarts so stored conversations stay readable. Without it the session key would be used,
   * which changes on every start.
   */
  secretKey: string;
  /** Seconds to wait for `/ready` (default 120: the first import of the SDK is slow). */
  readyTimeoutSeconds?: number;
  /** Every line the server prints (stdout and stderr). */
  onOutput?: (line: string) => void;
  /** Extra environment (tests). */
  env?: Record<string, string>;
  /** The module run with `-m` (given the two descriptors) and its arguments; tests substitute a stand-in. */
  command?: { module: string; extraArgs?: string[] };
}

export type AgentServerState = 'stopped' | 'starting' | 'running' | 'crashed';

/** How the server ended without being asked to. */
export interface CrashInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines it printed. */
  logTail: string[];
}

/** The descriptors the server is given beside stdio: its keys come in on one, its port goes out on the other. */
export const SECRETS_FD = 3;
export const PORT_FD = 4;

/**
 * The arguments of `python`: no secret and no port ever goes here (argv is readable by every
 * local user). The launcher binds its own port and reports it on PORT_FD
 * (openhands_vscode_runtime/v1/launch.py).
 */
export function agentServerArgs(command: AgentServerOptions['command']): string[] {
  const fds = ['--secrets-fd', String(SECRETS_FD), '--port-fd', String(PORT_FD)];
  if (command) return ['-m', command.module, ...fds, ...(command.extraArgs ?? [])];
  return [
    '-m', 'openhands_vscode_runtime.v1.launch', ...fds,
    // our terminal and file_editor; the watch that ends the server with the extension host
    '--import-modules', 'openhands_vscode_runtime.v1.register,openhands_vscode_runtime.v1.exit_with_parent',
  ];
}

/** Names the server reads its keys under; sent over SECRETS_FD, and never left in its environment. */
const SECRET_ENV = ['SESSION_API_KEY', 'OH_SECRET_KEY'];

/**
 * The environment of the server: its private folders and switches, never a key (an inherited one
 * is removed: it would be readable in /proc/<pid>/environ and, for a session key, a second key
 * the server accepts). The keys go over SECRETS_FD (`agentServerSecrets`).
 */
export function agentServerEnv(base: NodeJS.ProcessEnv, o: { discoveryDir: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of Object.keys(env)) if (SECRET_ENV.includes(k) || k.startsWith('OH_SESSION_API_KEYS')) delete env[k];
  return {
    ...env,
    // The executor is this window's addon, which attaches through the discovery file.
    OH_VSCODE_SPAWN_EXECUTOR: '0',
    OH_VSCODE_V1_DISCOVERY_DIR: o.discoveryDir,
    // The agent-server would otherwise start its own VS Code server on port 8001.
    OH_ENABLE_VSCODE: 'false',
    // litellm fetches its model price list from the network at import without it.
    LITELLM_LOCAL_MODEL_COST_MAP: 'True',
    OPENHANDS_SUPPRESS_BANNER: '1',
    // Its stdin is a pipe this process holds: EOF (the extension host ended, even by SIGKILL,
    // when no `deactivate` runs) ends the server's process group (v1/exit_with_parent.py).
    OH_VSCODE_EXIT_ON_STDIN_EOF: '1',
    PYTHONUNBUFFERED: '1',
  };
}

/** What goes over SECRETS_FD: a JSON object the launcher puts into its own `os.environ`. */
export function agentServerSecrets(o: { sessionApiKey: string; secretKey: string }): string {
  return JSON.stringify({ SESSION_API_KEY: o.sessionApiKey, OH_SECRET_KEY: o.secretKey });
}

/** Makes `dir` (and parents) and restricts it to its owner. */
export function privateDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

const LOG_TAIL = 40;

/**
 * One agent-server process at a time. `start()` resolves with the connection once `/ready`
 * answers; `stop()` ends its whole process group; an exit nobody asked for fires `onCrash`.
 */
export class AgentServerProcess {
  private child: ChildProcess | undefined;
  private connection: AgentServerConnection | undefined;
  private stateValue: AgentServerState = 'stopped';
  private readonly tail: string[] = [];
  private stopping = false;
  private readonly crashListeners = new Set<(c: CrashInfo) => void>();
  private readonly stateListeners = new Set<(s: AgentServerState) => void>();

  constructor(private readonly options: AgentServerOptions) {}

  get state(): AgentServerState {
    return this.stateValue;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get current(): AgentServerConnection | undefined {
    return this.stateValue === 'running' ? this.connection : undefined;
  }

  get logTail(): readonly string[] {
    return this.tail;
  }

  onCrash(listener: (c: CrashInfo) => void): { dispose(): void } {
    this.crashListeners.add(listener);
    return { dispose: () => this.crashListeners.delete(listener) };
  }

  onState(listener: (s: AgentServerState) => void): { dispose(): void } {
    this.stateListeners.add(listener);
    return { dispose: () => this.stateListeners.delete(listener) };
  }

  private setState(s: AgentServerState): void {
    this.stateValue = s;
    for (const l of [...this.stateListeners]) l(s);
  }

  private line(text: string): void {
    this.tail.push(text);
    if (this.tail.length > LOG_TAIL) this.tail.shift();
    this.options.onOutput?.(text);
  }

  async start(): Promise<AgentServerConnection> {
    if (this.child) throw new Error('the agent-server is already running');
    const o = this.options;
    const stateDir = privateDir(o.stateDir);
    const discoveryDir = privateDir(path.join(stateDir, 'discovery'));
    const sessionApiKey = randomBytes(32).toString('base64url');
    const timeoutSeconds = o.readyTimeoutSeconds ?? 120;
    const deadline = Date.now() + timeoutSeconds * 1000;
    this.tail.length = 0;
    this.stopping = false;
    this.connection = undefined;
    this.setState('starting');
    const child = spawn(o.python, agentServerArgs(o.command), {
      cwd: stateDir,
      env: { ...agentServerEnv(process.env, { discoveryDir }), ...(o.env ?? {}) },
      // stdin: held open and never written (OH_VSCODE_EXIT_ON_STDIN_EOF above); then stdout,
      // stderr, SECRETS_FD (we write the keys and close it) and PORT_FD (it writes its port).
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
      // Its own process group: stop() signals the group, so whatever it started ends with it.
      detached: true,
    });
    this.child = child;
    const secretsOut = child.stdio[SECRETS_FD] as Writable;
    const portIn = child.stdio[PORT_FD] as Readable;
    // A child that dies before reading must not turn EPIPE into an unhandled error of the host.
    secretsOut.on('error', () => undefined);
    portIn.on('error', () => undefined);
    secretsOut.end(agentServerSecrets({ sessionApiKey, secretKey: o.secretKey }));
    const split = (stream: NodeJS.ReadableStream) => {
      let rest = '';
      stream.on('data', (b: Buffer) => {
        const parts = (rest + b.toString()).split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) this.line(p);
      });
      stream.on('end', () => rest && this.line(rest));
    };
    split(child.stdout!);
    split(child.stderr!);
    const exited = new Promise<CrashInfo>((resolve) => {
      child.once('error', (e) => {
        this.line(`cannot start ${o.python}: ${e.message}`);
        resolve({ code: null, signal: null, logTail: [...this.tail] });
      });
      child.once('exit', (code, signal) => resolve({ code, signal, logTail: [...this.tail] }));
    });
    void exited.then((info) => {
      if (this.child !== child) return;
      this.child = undefined;
      const asked = this.stopping;
      // Whatever the server started outlives it otherwise (same process group).
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      const wasRunning = this.stateValue === 'running';
      this.setState(asked ? 'stopped' : 'crashed');
      // A failed start is reported by start()'s rejection; a crash after it by onCrash.
      if (!asked && wasRunning) for (const l of [...this.crashListeners]) l(info);
    });
    let gone: CrashInfo | undefined;
    void exited.then((i) => (gone = i));
    const exitedDuringStart = async () => {
      const info = gone ?? (await exited);
      return new Error(
        `the agent-server exited during start-up (${info.signal ? `signal ${info.signal}` : `exit code ${info.code}`})\n${info.logTail.slice(-10).join('\n')}`,
      );
    };
    const timedOut = async (what: string) => {
      await this.stop();
      return new Error(`the agent-server did not ${what} within ${timeoutSeconds} s\n${this.tail.slice(-10).join('\n')}`);
    };

    // 1. The port it bound itself (never one we picked and let go of).
    const reported = await Promise.race([
      readPortLine(portIn),
      exited.then(() => 'exited' as const),
      sleep(Math.max(0, deadline - Date.now())).then(() => 'timeout' as const),
    ]);
    if (reported === 'exited' || gone) throw await exitedDuringStart();
    if (reported === 'timeout') throw await timedOut('report its port');
    const port = Number(reported);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      await this.stop();
      throw new Error(`the agent-server reported no port (got ${JSON.stringify(reported)})\n${this.tail.slice(-10).join('\n')}`);
    }
    // 2. On Linux: the socket listening there is the child's, or nothing is sent to it.
    const owner = await portOwnedBy(child.pid!, port);
    if (owner.kind === 'foreign') {
      // A server that is exiting has let go of its socket already: say that it exited.
      await Promise.race([exited, sleep(300)]);
      if (gone) throw await exitedDuringStart();
      await this.stop();
      throw new Error(`the agent-server reported port ${port}, but ${owner.reason}: refused, nothing was sent there`);
    }
    const baseUrl = `http://127.0.0.1:${port}`;
    this.connection = { baseUrl, sessionApiKey, discoveryDir };

    // 3. Ready: /ready answers 200 (the SDK's import takes most of the start).
    while (!gone) {
      if (await ready(baseUrl)) {
        if (gone || this.child !== child) break;
        this.setState('running');
        return this.connection;
      }
      if (Date.now() > deadline) throw await timedOut(`answer ${baseUrl}/ready`);
      await sleep(250);
    }
    throw await exitedDuringStart();
  }

  /** Ends the server's process group: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 3000): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) {
      this.setState('stopped');
      return;
    }
    this.stopping = true;
    const done = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    killGroup(child.pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), graceMs);
    await done;
    clearTimeout(timer);
    // Whatever of the group outlived its leader (e.g. a child that ignores SIGTERM).
    killGroup(child.pid, 'SIGKILL');
  }

  /** Synchronous end for `dispose()` (VS Code does not await disposables): SIGKILL the group. */
  kill(): void {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    this.stopping = true;
    killGroup(child.pid, 'SIGKILL');
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The first line on `stream` (the launcher's port), or what it wrote before it closed. */
function readPortLine(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => {
      stream.removeListener('data', onData);
      resolve(text.split('\n')[0].trim());
    };
    const onData = (b: Buffer) => {
      text += b.toString();
      if (text.includes('\n') || text.length > 64) done();
    };
    stream.on('data', onData);
    stream.once('end', done);
    stream.once('close', done);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `GET /ready` answers 200 (the agent-server finished its start-up). */
async function ready(baseUrl: string): Promise<boolean> {
  try {
    const r = await fetch(`${baseUrl}/ready`, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer().catch(() => undefined);
    return r.status === 200;
  } catch {
    return false;
  }
}
