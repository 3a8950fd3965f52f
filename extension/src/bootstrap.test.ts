import { describe, expect, it } from 'vitest';
import { candidatePaths, loadNative, NativeBinaryError, platformTriple } from './bootstrap';

describe('bootstrap', () => {
  it('names the napi-rs triple', () => {
    expect(platformTriple('linux', 'x64')).toBe('linux-x64-gnu');
    expect(platformTriple('darwin', 'arm64')).toBe('darwin-arm64');
    expect(platformTriple('win32', 'x64')).toBe('win32-x64-msvc');
  });

  it('searches the override, then dist/native, then the in-repo package', () => {
    const paths = candidatePaths('/ext', { OPENHANDS_EXECUTOR_ADDON: '/tmp/x.node' }, 'linux-x64-gnu');
    expect(paths[0]).toBe('/tmp/x.node');
    expect(paths[1]).toBe('/ext/dist/native/openhands-vscode-executor.linux-x64-gnu.node');
    expect(paths.slice(2)).toEqual(['/npm/executor/openhands-vscode-executor.linux-x64-gnu.node']);
  });

  it('says clearly when the binary is missing', () => {
    expect(() => loadNative('/ext', { env: {}, exists: () => false })).toThrow(NativeBinaryError);
    expect(() => loadNative('/ext', { env: {}, exists: () => false })).toThrow(/was not found.*searched: \/ext\/dist\/native/);
  });

  it('explains loader failures', () => {
    const fail = (msg: string) => () => loadNative('/ext', { env: {}, exists: () => true, load: () => { throw new Error(msg); } });
    expect(fail("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found")).toThrow(/newer C library/);
    expect(fail('libssl.so.3: cannot open shared object file: No such file or directory')).toThrow(/shared library the binary needs is missing/);
    expect(fail('invalid ELF header')).toThrow(/another platform/);
  });

  it('checks the export and returns the module', () => {
    expect(() => loadNative('/ext', { env: {}, exists: () => true, load: () => ({}) })).toThrow(/does not export an Executor/);
    class Executor {}
    const r = loadNative('/ext', { env: {}, exists: (p) => p.endsWith('linux-x64-gnu.node') || p.endsWith('.node'), load: () => ({ Executor }) });
    expect(r.module.Executor).toBe(Executor);
  });
});
