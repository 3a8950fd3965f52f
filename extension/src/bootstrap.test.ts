import { describe, expect, it } from 'vitest';
import { candidatePaths, isMusl, loadNative, NativeBinaryError, platformTriple } from './bootstrap';

describe('bootstrap', () => {
  it('names the napi-rs triple', () => {
    expect(platformTriple('linux', 'x64', false)).toBe('linux-x64-gnu');
    expect(platformTriple('linux', 'arm64', false)).toBe('linux-arm64-gnu');
    expect(platformTriple('linux', 'x64', true)).toBe('linux-x64-musl');
    expect(platformTriple('darwin', 'arm64')).toBe('darwin-arm64');
    expect(platformTriple('darwin', 'x64')).toBe('darwin-x64');
    expect(platformTriple('win32', 'x64')).toBe('win32-x64-msvc');
  });

  it('searches the override, then dist/native, then the in-repo package', () => {
    const paths = candidatePaths('/ext', { OPENHANDS_EXECUTOR_ADDON: '/tmp/x.node' }, 'linux-x64-gnu');
    expect(paths[0]).toBe('/tmp/x.node');
    expect(paths[1]).toBe('/ext/dist/native/openhands-vscode-executor.linux-x64-gnu.node');
    expect(paths.slice(2)).toEqual(['/npm/executor/openhands-vscode-executor.linux-x64-gnu.node']);
  });

  it('tells musl from glibc by the glibc version of Node\'s report', () => {
    expect(isMusl(() => ({ header: { glibcVersionRuntime: '2.36' } }))).toBe(false);
    expect(isMusl(() => ({ header: { osName: 'Linux' } }))).toBe(true);
    // this machine: glibc (the suites run on Debian)
    expect(isMusl()).toBe(false);
    expect(platformTriple('linux', 'x64')).toBe('linux-x64-gnu');
  });

  it('names Remote - WSL and Remote - SSH on Windows, where no binary is built', () => {
    const err = () => loadNative('/ext', { env: {}, exists: () => false, triple: 'win32-x64-msvc' });
    expect(err).toThrow(/win32-x64-msvc was not found/);
    expect(err).toThrow(/Native Windows is not supported: open the folder in WSL \(the Remote - WSL extension\).*Remote - SSH/);
  });

  it('names the built platforms and Remote - SSH on another platform', () => {
    const err = () => loadNative('/ext', { env: {}, exists: () => false, triple: 'freebsd-x64' });
    expect(err).toThrow(/Binaries are built for linux-x64-gnu, linux-arm64-gnu, linux-x64-musl, darwin-arm64, darwin-x64: open the folder on one of them through Remote - SSH/);
    // Every platform scripts/build-dist.sh packages a VSIX for (alpine-x64 and darwin-x64 among them).
    for (const triple of ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-arm64', 'darwin-x64']) {
      expect(() => loadNative('/ext', { env: {}, exists: () => false, triple })).toThrow(/Install the VSIX for your platform/);
    }
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
