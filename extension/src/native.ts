/**
 * The shape of the native addon (`openhands-vscode-executor`, napi-rs; crates/oh-node) as this
 * extension uses it — a structural copy of the parts of its index.d.ts we call, so the extension
 * compiles and unit-tests without the binary.
 */
import type { FsCallbacks } from './fsBridge';

export interface ExecutorOptions {
  /** Base URL of the OpenHands server / runtime, e.g. `http://127.0.0.1:3000`. */
  serverUrl: string;
  conversationId: string;
  sessionApiKey?: string;
  /** Absolute workspace root: the shell starts there, file actions are rooted there. */
  workspaceRoot: string;
  noChangeTimeoutSeconds?: number;
  /** Extra environment for the shell. */
  env?: Record<string, string>;
  /** `auth.client` (`name/version`). */
  clientName?: string;
  /** Shell program; not (yet) read by the addon, which always runs /bin/bash. */
  shell?: string;
  /** Minimum level of records sent to `onLog`. */
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
}

/** Notification hooks; the addon holds them weakly and calls them non-blocking. */
export interface ExecutorHooks {
  /** Raw bytes the shell prints (readline echo, output, PS1 JSON prompts). */
  onTerminalData?: (data: Uint8Array) => void;
  onLog?: (level: string, target: string, message: string) => void;
  /** `connecting`, `connected`, `executing` (message: "run <command>" / "edit <path>"), `disconnected`, `error`. */
  onStatus?: (status: string, message: string | null) => void;
  /** Each delegated action as it starts, and each observation sent back (event_to_dict JSON). Older builds lack them: the activity list then falls back to the status stream. */
  onAction?: (eventJson: string) => void;
  onObservation?: (eventJson: string) => void;
}

export interface NativeExecutor {
  /** Resolves once registered with the runtime; rejects with the server's message if refused. */
  start(): Promise<void>;
  /** Resolves when the connection has ended for good (stopped, replaced, refused). */
  waitUntilClosed?(): Promise<string>;
  stop(): Promise<void>;
}

export interface NativeModule {
  Executor: new (options: ExecutorOptions, fs: FsCallbacks, hooks?: ExecutorHooks) => NativeExecutor;
  PROTOCOL_VERSION?: number;
}
