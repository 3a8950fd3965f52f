/**
 * The shape of the native addon (`openhands-vscode-executor`, napi-rs) as this extension uses
 * it. Kept structural so the extension compiles and unit-tests without the binary.
 */
import type { FsCallbacks } from './fsBridge';

export interface ExecutorOptions {
  serverUrl: string;
  conversationId: string;
  sessionApiKey?: string;
  workspaceRoot: string;
  noChangeTimeoutSeconds?: number;
  shell?: string;
  client?: string;
}

/** A tracing record forwarded by the addon. */
export interface NativeLogRecord {
  level: string;
  target?: string;
  message: string;
}

/** Connection / activity status pushed by the addon. */
export interface NativeStatus {
  state: string;
  message?: string;
}

export interface ExecutorHooks {
  onTerminalData?: (data: string) => void;
  onLog?: (record: NativeLogRecord) => void;
  onStatus?: (status: NativeStatus) => void;
  onAction?: (event: unknown) => void;
  onObservation?: (event: unknown) => void;
}

export interface NativeExecutor {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface NativeModule {
  Executor: new (options: ExecutorOptions, fs: FsCallbacks, hooks: ExecutorHooks) => NativeExecutor;
}
