import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NativeModule } from './native';

/**
 * Whether this Linux process runs on musl (Alpine) rather than glibc: Node's diagnostic report
 * names the glibc it runs with, and has no such field on musl (napi-rs' loader decides the same way).
 */
export function isMusl(report: () => unknown = () => process.report?.getReport()): boolean {
  const header = (report() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return !!header && !header.glibcVersionRuntime;
}

/** The platforms a VSIX is built for (scripts/build-dist.sh), as napi-rs names their binaries. */
export const BUILT_PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-arm64', 'darwin-x64'];

/** The addon's binary name for this platform, as napi-rs names it. */
export function platformTriple(platform = process.platform, arch = process.arch, musl = platform === 'linux' && isMusl()): string {
  if (platform === 'linux') return `linux-${arch}-${musl ? 'musl' : 'gnu'}`;
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

/**
 * What to do where no binary is found. Native Windows has none (the executor drives bash on a
 * PTY): the extension runs where the workspace is, so a Remote - WSL or Remote - SSH window runs
 * it on Linux or macOS. On a built platform the VSIX was simply another platform's.
 */
export function missingBinaryRoute(triple: string): string {
  if (triple.startsWith('win32-')) {
    return 'Native Windows is not supported: open the folder in WSL (the Remote - WSL extension) or on a Linux or macOS machine ' +
      'through Remote - SSH; the extension then runs there. Or set OPENHANDS_EXECUTOR_ADDON to a .node file you built.';
  }
  if (BUILT_PLATFORMS.includes(triple)) {
    return 'Install the VSIX for your platform (VS Code picks it from the Marketplace; a downloaded .vsix must match), ' +
      'or set OPENHANDS_EXECUTOR_ADDON to the .node file.';
  }
  return `Binaries are built for ${BUILT_PLATFORMS.join(', ')}: open the folder on one of them through Remote - SSH, ` +
    'or set OPENHANDS_EXECUTOR_ADDON to a .node file you built for this platform.';
}

type Loader = (file: string) => unknown;
// esbuild leaves a `require` of a computed path alone; keep the .node out of the bundle.
const defaultLoader: Loader = (file) => require(file);

/**
 * Finds and loads the native executor. Throws a NativeBinaryError that says what was searched
 * and why loading failed (missing file, wrong platform, missing shared library, old glibc...).
 */
export function loadNative(
  extensionRoot: string,
  options: { env?: NodeJS.ProcessEnv; exists?: (p: string) => boolean; load?: Loader; triple?: string } = {},
): { module: NativeModule; file: string } {
  const exists = options.exists ?? fs.existsSync;
  const load = options.load ?? defaultLoader;
  const searched = candidatePaths(extensionRoot, options.env ?? process.env, options.triple ?? platformTriple());
  const file = searched.find((p) => exists(p));
  if (!file) {
    const triple = options.triple ?? platformTriple();
    throw new NativeBinaryError(
      `The OpenHands executor binary for ${triple} was not found. This build of the extension does not ship one for this platform ` +
        `(searched: ${searched.join(', ')}). ${missingBinaryRoute(triple)}`,
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
