import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NativeModule } from './native';

/** The addon's binary name for this platform, as napi-rs names it. */
export function platformTriple(platform = process.platform, arch = process.arch): string {
  if (platform === 'linux') return `linux-${arch}-gnu`;
  if (platform === 'darwin') return `darwin-${arch}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

export const BINARY_BASENAME = 'openhands-vscode-executor';

export class NativeBinaryError extends Error {
  constructor(message: string, readonly searched: string[]) {
    super(message);
    this.name = 'NativeBinaryError';
  }
}

/**
 * Where the addon may be, in order: an explicit override (OPENHANDS_EXECUTOR_ADDON), the copy
 * shipped in the VSIX beside the bundle (dist/native/), and the in-repository npm package
 * (../npm/executor) for development builds.
 */
export function candidatePaths(extensionRoot: string, env: NodeJS.ProcessEnv = process.env, triple = platformTriple()): string[] {
  const file = `${BINARY_BASENAME}.${triple}.node`;
  const out: string[] = [];
  if (env.OPENHANDS_EXECUTOR_ADDON) out.push(path.resolve(env.OPENHANDS_EXECUTOR_ADDON));
  out.push(path.join(extensionRoot, 'dist', 'native', file));
  out.push(path.join(extensionRoot, '..', 'npm', 'executor', file));
  return out;
}

type Loader = (file: string) => unknown;
// esbuild leaves a `require` of a computed path alone; keep the .node out of the bundle.
const defaultLoader: Loader = (file) => require(file);

/**
 * Finds and loads the native executor. Throws a NativeBinaryError that says what was searched
 * and why loading failed (missing file, wrong platform, missing shared library, old glibc...).
 */
export function loadNative(extensionRoot: string, options: { env?: NodeJS.ProcessEnv; exists?: (p: string) => boolean; load?: Loader } = {}): { module: NativeModule; file: string } {
  const exists = options.exists ?? fs.existsSync;
  const load = options.load ?? defaultLoader;
  const searched = candidatePaths(extensionRoot, options.env ?? process.env);
  const file = searched.find((p) => exists(p));
  if (!file) {
    throw new NativeBinaryError(
      `The OpenHands executor binary for ${platformTriple()} was not found. This build of the extension does not ship one for this platform ` +
        `(searched: ${searched.join(', ')}). Install the VSIX for your platform or set OPENHANDS_EXECUTOR_ADDON to the .node file.`,
      searched,
    );
  }
  let mod: unknown;
  try {
    mod = load(file);
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    let hint = '';
    if (/GLIBC_[0-9.]+' not found/.test(msg)) hint = ' The binary needs a newer C library (glibc) than this system has.';
    else if (/lib[a-z0-9_.-]+\.so[0-9.]*: cannot open shared object/.test(msg)) hint = ' A shared library the binary needs is missing on this system.';
    else if (/invalid ELF header|wrong ELF class|not a valid Win32/.test(msg)) hint = ' The binary was built for another platform.';
    throw new NativeBinaryError(`Loading the OpenHands executor binary ${file} failed: ${msg}.${hint}`, searched);
  }
  const m = mod as Partial<NativeModule>;
  if (!m || typeof m.Executor !== 'function') {
    throw new NativeBinaryError(`${file} loaded but does not export an Executor class; the binary does not match this extension version.`, searched);
  }
  return { module: m as NativeModule, file };
}
