/**
 * The native addon's API (crates/oh-node) as napi-rs generates it into
 * `npm/executor/index.d.ts`: that file is the one definition of the contract; this module only
 * re-exports it under the names the extension uses. Type-only: the extension loads the binary
 * itself (bootstrap.ts), so it compiles and unit-tests without it.
 */
import type * as Addon from 'openhands-vscode-executor';

export type {
  Closed,
  CloseReason,
  ConnectionState,
  DirEntry,
  ErrorCode,
  ExecutorHooks,
  ExecutorOptions,
  FileStat,
  FileType,
  FsCallbacks,
  IdeToolInfo,
} from 'openhands-vscode-executor';

/** A running `Executor`. */
export type NativeExecutor = Addon.Executor;

/** The parts of the addon module the extension uses. */
export type NativeModule = Pick<typeof Addon, 'Executor' | 'PROTOCOL_VERSION'>;

// Every ErrorCode, checked by the compiler against the generated union (no missing, no extra key).
const ERROR_CODES: Record<Addon.ErrorCode, true> = {
  ENORUNTIME: true,
  EAUTH: true,
  EREFUSED: true,
  EPROTOCOL: true,
  EUNREACHABLE: true,
  ESTOPPED: true,
  ESHELL: true,
};

/** The addon's code of a rejected `start()`/`execute()`; undefined for any other error. */
export function errorCode(e: unknown): Addon.ErrorCode | undefined {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code) ? (code as Addon.ErrorCode) : undefined;
}
