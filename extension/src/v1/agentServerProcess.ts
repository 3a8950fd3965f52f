import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

/**
 * The extension's own local OpenHands V1 agent-server (managed mode): started from a Python
 * environment with this project's V1 tools loaded, on 127.0.0.1 and a free port, with a fresh
 * random session key; supervised until the window closes. What the V1 client needs to reach it
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
  /** The module run with `-m` and its arguments before `--host`; tests substitute a stand-in. */
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

/** The arguments of `python`: no secret ever goes here (argv is readable by every local user). */
export function agentServerArgs(port: number, command: AgentServerOptions['command']): string[] {
  if (command) return ['-m', command.module, ...(command.extraArgs ?? []), '--host', '127.0.0.1', '--port', String(port)];
  return [
    '-m', 'openhands.agent_server', '--host', '127.0.0.1', '--port', String(port),
    // our terminal and file_editor; the watch that ends the server with the extension host
    '--import-modules', 'openhands_vscode_runtime.v1.register,openhands_vscode_runtime.v1.exit_with_parent',
  ];
}

/** The environment of the server: the key and the private folders, never in argv. */
export function agentServerEnv(base: NodeJS.ProcessEnv, o: { sessionApiKey: string; secretKey: string; discoveryDir: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  // Another session key inherited from a parent process (an OpenHands sandbox, a test) must not
  // become a second accepted key.
  for (const k of Object.keys(env)) if (k === 'SESSION_API_KEY' || k.startsWith('OH_SESSION_API_KEYS')) delete env[k];
  return {
    ...env,
    SESSION_API_KEY: o.sessionApiKey,
    OH_SECRET_KEY: o.secretKey,
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

/** A port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
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
    const port = await freePort();
    const sessionApiKey = randomBytes(32).toString('base64url');
    const baseUrl = `http://127.0.0.1:${port}`;
    this.tail.length = 0;
    this.stopping = false;
    this.setState('starting');
    const child = spawn(o.python, agentServerArgs(port, o.command), {
      cwd: stateDir,
      env: { ...agentServerEnv(process.env, { sessionApiKey, secretKey: o.secretKey, discoveryDir }), ...(o.env ?? {}) },
      // stdin: held open and never written (OH_VSCODE_EXIT_ON_STDIN_EOF above).
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: stop() signals the group, so whatever it started ends with it.
      detached: true,
    });
    this.child = child;
    this.connection = { baseUrl, sessionApiKey, discoveryDir };
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
    const deadline = Date.now() + (o.readyTimeoutSeconds ?? 120) * 1000;
    let gone: CrashInfo | undefined;
    void exited.then((i) => (gone = i));
    while (!gone) {
      if (await ready(baseUrl)) {
        if (gone || this.child !== child) break;
        this.setState('running');
        return this.connection;
      }
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`the agent-server did not answer ${baseUrl}/ready within ${o.readyTimeoutSeconds ?? 120} s\n${this.tail.slice(-10).join('\n')}`);
      }
      await sleep(250);
    }
    const info = gone ?? (await exited);
    throw new Error(
      `the agent-server exited during start-up (${info.signal ? `signal ${info.signal}` : `exit code ${info.code}`})\n${info.logTail.slice(-10).join('\n')}`,
    );
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
