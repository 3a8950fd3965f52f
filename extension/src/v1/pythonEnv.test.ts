import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EnvSetupError, STAMP_FILE, UV_BOOTSTRAP_VERSION, checkInterpreter, createEnv, creationSteps, findBasePython, runProcess, stampKey, venvPython,
  type EnvPlan, type Runner,
} from './pythonEnv';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-v1-env-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A real wheel with no dependencies at all (its `[v1]` extra is empty): pip installs it offline. */
function tinyWheel(dir: string, body = 'VALUE = 1\n'): string {
  const wheel = path.join(dir, 'oh_tiny-0.1.0-py3-none-any.whl');
  execFileSync('python3', ['-c', `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("oh_tiny/__init__.py", sys.argv[2])
    z.writestr("oh_tiny-0.1.0.dist-info/METADATA", "Metadata-Version: 2.1\\nName: oh-tiny\\nVersion: 0.1.0\\nProvides-Extra: v1\\n")
    z.writestr("oh_tiny-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr("oh_tiny-0.1.0.dist-info/RECORD", "")
`, wheel, body]);
  return wheel;
}

function recording(into: string[][], inner: Runner = runProcess): Runner {
  return (c, a, o) => {
    into.push([c, ...a]);
    return inner(c, a, o);
  };
}

const base: EnvPlan = { venvDir: '/s/venv', basePython: '/usr/bin/python3.12', installer: 'pip', wheel: '/x/openhands_vscode_runtime-0.1.0-py3-none-any.whl' };

describe('creationSteps', () => {
  it('venv + pip: the venv, a pip check, then the wheel with its [v1] extra', () => {
    expect(creationSteps(base).map((s) => [s.command, ...s.args])).toEqual([
      ['/usr/bin/python3.12', '-m', 'venv', '/s/venv'],
      ['/s/venv/bin/python', '-m', 'pip', '--version'],
      ['/s/venv/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check', '/x/openhands_vscode_runtime-0.1.0-py3-none-any.whl[v1]'],
    ]);
  });
  it('uv: uv venv with the base Python, uv pip install into it', () => {
    expect(creationSteps({ ...base, installer: 'uv', uv: '/bin/uv' }).map((s) => [s.command, ...s.args])).toEqual([
      ['/bin/uv', 'venv', '--python', '/usr/bin/python3.12', '/s/venv'],
      ['/bin/uv', 'pip', 'install', '--python', '/s/venv/bin/python', '/x/openhands_vscode_runtime-0.1.0-py3-none-any.whl[v1]'],
    ]);
  });
});

describe('creationSteps with the lock, uv fetched by pip', () => {
  const locked: EnvPlan = { ...base, installer: 'uv-bootstrap', constraints: '/x/v1-lock.txt' };
  it('venv, pip check, pip fetches the pinned uv, uv installs the wheel with the lock as constraints', () => {
    const steps = creationSteps(locked);
    expect(steps.map((s) => [s.command, ...s.args])).toEqual([
      ['/usr/bin/python3.12', '-m', 'venv', '/s/venv'],
      ['/s/venv/bin/python', '-m', 'pip', '--version'],
      ['/s/venv/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check', `uv==${UV_BOOTSTRAP_VERSION}`],
      ['/s/venv/bin/uv', 'pip', 'install', '--python', '/s/venv/bin/python', '-c', '/x/v1-lock.txt', '/x/openhands_vscode_runtime-0.1.0-py3-none-any.whl[v1]'],
    ]);
    // Either uv step failing goes on with pip, with the same constraints.
    const pip = ['/s/venv/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check', '-c', '/x/v1-lock.txt', '/x/openhands_vscode_runtime-0.1.0-py3-none-any.whl[v1]'];
    expect(steps.slice(0, 2).map((s) => s.fallback)).toEqual([undefined, undefined]);
    for (const s of steps.slice(2)) expect(s.fallback?.map((f) => [f.command, ...f.args])).toEqual([pip]);
    expect(creationSteps({ ...locked, installer: 'uv', uv: '/bin/uv' })[1].args).toContain('/x/v1-lock.txt');
  });
  it('the uv it fetches is the one scripts/lock-v1.sh resolves the lock with (UV_VERSION of scripts/venv-lib.sh)', () => {
    const script = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'scripts', 'venv-lib.sh'), 'utf8');
    expect(/^UV_VERSION=(\S+)$/m.exec(script)?.[1]).toBe(UV_BOOTSTRAP_VERSION);
  });
});

describe('stampKey', () => {
  it('changes with the wheel contents, the base Python and the installer, and only with them', () => {
    const k = stampKey(base, 'aaa');
    expect(stampKey({ ...base }, 'aaa')).toBe(k);
    expect(stampKey({ ...base, venvDir: '/elsewhere' }, 'aaa')).toBe(k);
    expect(stampKey(base, 'bbb')).not.toBe(k);
    expect(stampKey({ ...base, basePython: '/usr/bin/python3.13' }, 'aaa')).not.toBe(k);
    expect(stampKey({ ...base, installer: 'uv' }, 'aaa')).not.toBe(k);
    expect(stampKey(base, 'aaa', 'lock1')).not.toBe(k);
    expect(stampKey(base, 'aaa', 'lock1')).not.toBe(stampKey(base, 'aaa', 'lock2'));
  });
});

describe('createEnv (real python3 -m venv and pip, offline: a wheel without dependencies)', () => {
  it('creates once, stamps, skips while current, recreates when the wheel changes', { timeout: 180000 }, async () => {
    const dir = tmp();
    const plan: EnvPlan = { venvDir: path.join(dir, 'venv'), basePython: 'python3', installer: 'pip', wheel: tinyWheel(dir) };
    const calls: string[][] = [];
    const first = await createEnv(plan, { run: recording(calls) });
    expect(first).toEqual({ python: venvPython(plan.venvDir), created: true });
    expect(calls.length).toBe(3);
    expect(execFileSync(first.python, ['-c', 'import oh_tiny; print(oh_tiny.VALUE)']).toString().trim()).toBe('1');
    expect(fs.readFileSync(path.join(plan.venvDir, STAMP_FILE), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);

    calls.length = 0;
    expect(await createEnv(plan, { run: recording(calls) })).toEqual({ python: first.python, created: false });
    expect(calls).toEqual([]);

    tinyWheel(dir, 'VALUE = 2\n');
    const again = await createEnv(plan, { run: recording(calls) });
    expect(again.created).toBe(true);
    expect(execFileSync(again.python, ['-c', 'import oh_tiny; print(oh_tiny.VALUE)']).toString().trim()).toBe('2');
  });

  it('an interrupted creation (no stamp) is redone', { timeout: 180000 }, async () => {
    const dir = tmp();
    const plan: EnvPlan = { venvDir: path.join(dir, 'venv'), basePython: 'python3', installer: 'pip', wheel: tinyWheel(dir) };
    await createEnv(plan);
    fs.rmSync(path.join(plan.venvDir, STAMP_FILE));
    const calls: string[][] = [];
    expect((await createEnv(plan, { run: recording(calls) })).created).toBe(true);
    expect(calls.length).toBe(3);
  });

  it('uv cannot be fetched (stand-in: the fetch step fails): pip installs the wheel instead', { timeout: 180000 }, async () => {
    const dir = tmp();
    const lock = path.join(dir, 'v1-lock.txt');
    fs.writeFileSync(lock, 'oh-tiny==0.1.0\n');
    const plan: EnvPlan = { venvDir: path.join(dir, 'venv'), basePython: 'python3', installer: 'uv-bootstrap', wheel: tinyWheel(dir), constraints: lock };
    const calls: string[][] = [];
    // An index without uv, offline here: the real pip would fail the same way, only slower.
    const noUv: Runner = (c, a, o) => (a.includes(`uv==${UV_BOOTSTRAP_VERSION}`) ? Promise.resolve({ code: 1, output: 'No matching distribution found for uv\n' }) : runProcess(c, a, o));
    const out: string[] = [];
    const r = await createEnv(plan, { run: recording(calls, noUv), onOutput: (t) => out.push(t) });
    expect(r.created).toBe(true);
    expect(calls.map((c) => c.slice(1, 4).join(' '))).toEqual(['-m venv ' + plan.venvDir, '-m pip --version', '-m pip install', '-m pip install']);
    expect(calls[3]).toContain(lock);
    expect(out.join('')).toMatch(/Fetching uv \(pip\) failed \(exit 1\); going on with pip/);
    expect(execFileSync(r.python, ['-c', 'import oh_tiny; print(oh_tiny.VALUE)']).toString().trim()).toBe('1');
  });

  it('a Python whose venv has no pip (no ensurepip) is reported as such', async () => {
    const dir = tmp();
    // Stand-in for Debian's python3 without python3-venv: its `-m venv` fails with that message.
    const fake = path.join(dir, 'python-without-ensurepip');
    fs.writeFileSync(fake, '#!/bin/sh\necho "The virtual environment was not created successfully because ensurepip is not available." >&2\nexit 1\n', { mode: 0o755 });
    const plan: EnvPlan = { venvDir: path.join(dir, 'venv'), basePython: fake, installer: 'pip', wheel: tinyWheel(dir) };
    const err = await createEnv(plan).catch((e) => e);
    expect(err).toBeInstanceOf(EnvSetupError);
    expect(err.kind).toBe('no-pip');
    expect(err.message).toMatch(/python3-venv/);
    expect(fs.existsSync(path.join(plan.venvDir, STAMP_FILE))).toBe(false);
  });

  it('a failed install names the step and keeps no stamp', { timeout: 180000 }, async () => {
    const dir = tmp();
    const bad = path.join(dir, 'not_a_wheel-0.1.0-py3-none-any.whl');
    fs.writeFileSync(bad, 'not a zip');
    const plan: EnvPlan = { venvDir: path.join(dir, 'venv'), basePython: 'python3', installer: 'pip', wheel: bad };
    const err = await createEnv(plan).catch((e) => e);
    expect(err.kind).toBe('failed');
    expect(err.message).toMatch(/^Installing openhands-vscode-runtime\[v1\] \(pip\) failed \(exit \d+\)/);
    expect(fs.existsSync(path.join(plan.venvDir, STAMP_FILE))).toBe(false);
  });

  it('a missing wheel is reported before anything runs', async () => {
    const dir = tmp();
    const calls: string[][] = [];
    const err = await createEnv({ ...base, venvDir: path.join(dir, 'v'), wheel: path.join(dir, 'none.whl') }, { run: recording(calls) }).catch((e) => e);
    expect(err.kind).toBe('no-wheel');
    expect(calls).toEqual([]);
  });
});

describe('findBasePython and checkInterpreter', () => {
  it('no Python >= 3.12 among the candidates: no-python, naming what was found', async () => {
    const dir = tmp();
    const old = path.join(dir, 'python3.8');
    fs.writeFileSync(old, '#!/bin/sh\necho 3.8\n', { mode: 0o755 });
    const err = await findBasePython([path.join(dir, 'missing'), old]).catch((e) => e);
    expect(err.kind).toBe('no-python');
    expect(err.message).toContain(`${old} is 3.8`);
    expect(err.message).toContain('missing not found');
  });
  it('picks the first candidate that is >= 3.12', async () => {
    const dir = tmp();
    const mk = (n: string, v: string) => {
      const p = path.join(dir, n);
      fs.writeFileSync(p, `#!/bin/sh\necho ${v}\n`, { mode: 0o755 });
      return p;
    };
    expect(await findBasePython([mk('a', '3.11'), mk('b', '3.12'), mk('c', '3.13')])).toBe(path.join(dir, 'b'));
  });
  it('an interpreter without the agent-server and our tools is named with what it lacks', async () => {
    expect(await checkInterpreter('python3')).toMatch(/lacks openhands\.agent_server and openhands_vscode_runtime\.v1\.register and openhands_vscode_runtime\.v1\.launch/);
  });
  it('the probes do not import from the extension host\'s working directory (a repository with an openhands/ package)', async () => {
    const repo = tmp();
    const marker = path.join(repo, 'ran');
    fs.mkdirSync(path.join(repo, 'openhands'));
    fs.writeFileSync(path.join(repo, 'openhands', '__init__.py'), `open(${JSON.stringify(marker)}, 'w').write('planted code ran')\n`);
    const before = process.cwd();
    process.chdir(repo);
    try {
      expect(await checkInterpreter('python3')).toMatch(/lacks openhands\.agent_server/);
    } finally {
      process.chdir(before);
    }
    expect(fs.existsSync(marker)).toBe(false);
  });
});
