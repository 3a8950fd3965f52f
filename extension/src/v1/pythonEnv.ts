import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The Python environment the managed agent-server runs in: openhands-sdk, openhands-tools and
 * openhands-agent-server with this project's V1 tools (the `[v1]` extra of
 * openhands-vscode-runtime). Either the user names an interpreter (`openhands.v1.python`), or
 * "OpenHands: Set Up V1 Environment" creates a venv in the extension's global storage from the
 * pure-Python wheel bundled in the VSIX (`dist/python/`, built by scripts/build-pure-wheel.py).
 * Free of `vscode`: the command (v1/setupCommand.ts) adds progress and notifications.
 */

/** The file in a created venv that records the inputs it was made from (see `stampKey`). */
export const STAMP_FILE = '.openhands-v1-env-stamp';

/** The Python releases the SDK supports (openhands-sdk 1.58 requires >= 3.12). */
export const MIN_PYTHON: readonly [number, number] = [3, 12];

/** Interpreters tried, in order, when the user names none: the newest supported first. */
export const PYTHON_CANDIDATES = ['python3.13', 'python3.12', 'python3'];

/**
 * `uv` on PATH; else `uv-bootstrap`: the venv's own pip fetches uv (UV_BOOTSTRAP_VERSION) from the
 * package index, which then installs the rest (seconds where pip takes minutes: docs in
 * extension/README.md); `pip` only when asked (or as the fallback below).
 */
export type Installer = 'uv' | 'uv-bootstrap' | 'pip';

/** The uv the bootstrap installs: the one scripts/lock-v1.sh resolves the lock with (UV_VERSION, scripts/venv-lib.sh). */
export const UV_BOOTSTRAP_VERSION = '0.13.9';

export interface EnvPlan {
  /** Folder of the venv to create. */
  venvDir: string;
  /** The interpreter the venv is made from (checked >= 3.12). */
  basePython: string;
  /** `uv` when it is on PATH (fast, what OpenHands tells its users to install), else venv + pip. */
  installer: Installer;
  /** Path of `uv` when `installer` is `uv`. */
  uv?: string;
  /** The openhands-vscode-runtime wheel to install with its `[v1]` extra. */
  wheel: string;
  /**
   * The lock the VSIX carries (`dist/python/v1-lock.txt`: every package at the version the suites
   * ran), passed as constraints: nothing is left for the installer to choose.
   */
  constraints?: string;
}

export interface Step {
  title: string;
  command: string;
  args: string[];
  /**
   * Run instead of the remaining steps when this one fails: uv fetched from an index that has no
   * build of it for this machine, or uv not reaching the index pip is configured for (uv reads
   * `UV_*`, not `pip.conf`) falls back to pip.
   */
  fallback?: Step[];
}

/** The interpreter inside a venv. */
export function venvPython(venvDir: string): string {
  return process.platform === 'win32' ? path.join(venvDir, 'Scripts', 'python.exe') : path.join(venvDir, 'bin', 'python');
}

/** The commands that create the environment, in order. */
export function creationSteps(plan: EnvPlan): Step[] {
  const python = venvPython(plan.venvDir);
  const requirement = `${plan.wheel}[v1]`;
  const constraints = plan.constraints ? ['-c', plan.constraints] : [];
  const uvInstall = (uv: string): Step => ({
    title: 'Installing openhands-vscode-runtime[v1] (uv)', command: uv, args: ['pip', 'install', '--python', python, ...constraints, requirement],
  });
  if (plan.installer === 'uv') {
    const uv = plan.uv ?? 'uv';
    return [{ title: 'Creating the Python environment (uv)', command: uv, args: ['venv', '--python', plan.basePython, plan.venvDir] }, uvInstall(uv)];
  }
  const pipInstall: Step = {
    title: 'Installing openhands-vscode-runtime[v1] (pip)', command: python,
    args: ['-m', 'pip', 'install', '--disable-pip-version-check', ...constraints, requirement],
  };
  const venv: Step[] = [
    { title: 'Creating the Python environment (venv)', command: plan.basePython, args: ['-m', 'venv', plan.venvDir] },
    // A venv's own pip is what ensurepip bundled; it is asked first so that a Python without pip
    // (Debian's python3 without python3-venv) is reported as such, not as an install failure.
    { title: 'Checking pip', command: python, args: ['-m', 'pip', '--version'] },
  ];
  if (plan.installer === 'pip') return [...venv, pipInstall];
  const uvInVenv = process.platform === 'win32' ? path.join(plan.venvDir, 'Scripts', 'uv.exe') : path.join(plan.venvDir, 'bin', 'uv');
  return [
    ...venv,
    {
      title: 'Fetching uv (pip)', command: python, fallback: [pipInstall],
      args: ['-m', 'pip', 'install', '--disable-pip-version-check', `uv==${UV_BOOTSTRAP_VERSION}`],
    },
    { ...uvInstall(uvInVenv), fallback: [pipInstall] },
  ];
}

/**
 * What decides whether an existing venv is current: the wheel's content (a new extension version
 * ships a new one), the base interpreter and the installer. Recorded in `STAMP_FILE` after the last
 * step succeeded, so an interrupted creation is redone.
 */
export function stampKey(plan: EnvPlan, wheelSha256: string, constraintsSha256?: string): string {
  const inputs = { wheel: path.basename(plan.wheel), wheelSha256, basePython: plan.basePython, installer: plan.installer, constraintsSha256 };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex');
}

export function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export function isCurrent(venvDir: string, key: string): boolean {
  try {
    return fs.readFileSync(path.join(venvDir, STAMP_FILE), 'utf8').trim() === key && fs.existsSync(venvPython(venvDir));
  } catch {
    return false;
  }
}

/** Why an environment could not be made; `kind` chooses the advice shown. */
export class EnvSetupError extends Error {
  constructor(
    readonly kind: 'no-python' | 'no-pip' | 'no-wheel' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

export interface RunResult {
  code: number | null;
  output: string;
}

/** Runs one command, streaming its output lines; never throws for a non-zero exit. */
export type Runner = (command: string, args: string[], onOutput: (text: string) => void) => Promise<RunResult>;

/**
 * Runs in a fresh empty folder of its own (removed after), never the extension host's working
 * directory: `python -c` and `python -m` put their working directory first on `sys.path`, so a
 * folder holding e.g. `openhands/__init__.py` or `venv.py` (a repository VS Code was started in)
 * would run its code in the probes below and in the environment's creation.
 */
export const runProcess: Runner = (command, args, onOutput) =>
  new Promise((resolve) => {
    let output = '';
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'oh-python-probe-'));
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_NO_INPUT: '1' } });
    child.on('close', () => fs.rmSync(cwd, { recursive: true, force: true }));
    child.on('error', () => fs.rmSync(cwd, { recursive: true, force: true }));
    const take = (b: Buffer) => {
      const text = b.toString();
      output += text;
      onOutput(text);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => resolve({ code: null, output: `${output}${e.message}\n` }));
    child.on('close', (code) => resolve({ code, output }));
  });

/** The version `python` reports, or undefined when it cannot run. */
export async function pythonVersion(python: string, run: Runner = runProcess): Promise<[number, number] | undefined> {
  const r = await run(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], () => undefined);
  const m = /^(\d+)\.(\d+)\s*$/m.exec(r.output);
  return r.code === 0 && m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function supported(v: [number, number]): boolean {
  return v[0] > MIN_PYTHON[0] || (v[0] === MIN_PYTHON[0] && v[1] >= MIN_PYTHON[1]);
}

/** The first candidate that runs and is Python >= 3.12; else an `EnvSetupError('no-python')`. */
export async function findBasePython(candidates: readonly string[], run: Runner = runProcess): Promise<string> {
  const seen: string[] = [];
  for (const c of candidates) {
    const v = await pythonVersion(c, run);
    if (v && supported(v)) return c;
    seen.push(v ? `${c} is ${v.join('.')}` : `${c} not found`);
  }
  throw new EnvSetupError(
    'no-python',
    `No Python ${MIN_PYTHON.join('.')} or newer found (${seen.join(', ')}). Install Python 3.12+ (or uv), or set "openhands.v1.python" to the interpreter of an environment with openhands-vscode-runtime[v1].`,
  );
}

/** `uv` on PATH, or undefined. */
export async function findUv(run: Runner = runProcess): Promise<string | undefined> {
  const r = await run('uv', ['--version'], () => undefined);
  return r.code === 0 ? 'uv' : undefined;
}

/**
 * Creates the environment of `plan` unless a current one is there (stamp). Returns its
 * interpreter. Errors say what is missing: no Python, no pip (ensurepip), or the failed step
 * with the tail of its output.
 */
export async function createEnv(
  plan: EnvPlan,
  hooks: { onStep?: (step: Step, index: number, total: number) => void; onOutput?: (text: string) => void; run?: Runner } = {},
): Promise<{ python: string; created: boolean }> {
  const run = hooks.run ?? runProcess;
  if (!fs.existsSync(plan.wheel)) throw new EnvSetupError('no-wheel', `The package to install is missing: ${plan.wheel}`);
  const key = stampKey(plan, sha256File(plan.wheel), plan.constraints ? sha256File(plan.constraints) : undefined);
  const python = venvPython(plan.venvDir);
  if (isCurrent(plan.venvDir, key)) return { python, created: false };
  // A half-made or outdated venv is replaced whole: a venv cannot be moved to another base Python.
  fs.rmSync(plan.venvDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(plan.venvDir), { recursive: true });
  let steps = creationSteps(plan);
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    hooks.onStep?.(step, i, steps.length);
    hooks.onOutput?.(`$ ${step.command} ${step.args.join(' ')}\n`);
    const r = await run(step.command, step.args, (t) => hooks.onOutput?.(t));
    if (r.code === 0) continue;
    if (step.fallback) {
      hooks.onOutput?.(`${step.title} failed (exit ${r.code}); going on with pip\n`);
      steps = [...steps.slice(0, i + 1), ...step.fallback];
      continue;
    }
    const tail = r.output.trim().split('\n').slice(-8).join('\n');
    if (/ensurepip is not available|No module named pip|No module named ensurepip/.test(r.output)) {
      throw new EnvSetupError(
        'no-pip',
        `${plan.basePython} cannot create an environment with pip (ensurepip is missing; on Debian/Ubuntu install python3-venv, or install uv).\n${tail}`,
      );
    }
    if (r.code === null && /ENOENT/.test(r.output)) {
      throw new EnvSetupError('no-python', `${step.command} was not found.\n${tail}`);
    }
    throw new EnvSetupError('failed', `${step.title} failed (exit ${r.code}).\n${tail}`);
  }
  fs.writeFileSync(path.join(plan.venvDir, STAMP_FILE), `${key}\n`);
  return { python, created: true };
}

/**
 * Checks that an interpreter has the agent-server and our V1 tools (without importing them,
 * which takes seconds): the message says what is missing, or undefined when both are there.
 */
export async function checkInterpreter(python: string, run: Runner = runProcess): Promise<string | undefined> {
  const probe =
    'import importlib.util as u, sys\n' +
    'def found(m):\n' +
    '    try:\n' +
    '        return u.find_spec(m) is not None\n' +
    '    except ImportError:\n' +
    '        return False\n' +
    'missing = [m for m in ("openhands.agent_server", "openhands_vscode_runtime.v1.register", "openhands_vscode_runtime.v1.launch") if not found(m)]\n' +
    'print("missing:" + ",".join(missing)); sys.exit(1 if missing else 0)';
  const r = await run(python, ['-c', probe], () => undefined);
  if (r.code === 0) return undefined;
  const m = /missing:(.*)/.exec(r.output);
  if (m && m[1]) return `${python} lacks ${m[1].split(',').join(' and ')} (install openhands-vscode-runtime[v1] there, or run "OpenHands: Set Up V1 Environment")`;
  return `${python} cannot run: ${r.output.trim().split('\n').slice(-3).join(' ')}`;
}
