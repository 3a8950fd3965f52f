import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { OpenHandsConfig } from '../config';
import type { Logger } from '../logging';
import { AgentServerProcess, type AgentServerConnection, type AgentServerState, type CrashInfo } from './agentServerProcess';
import {
  EnvSetupError, PYTHON_CANDIDATES, checkInterpreter, createEnv, findBasePython, findUv, isCurrent, sha256File, stampKey, venvPython,
  type EnvPlan,
} from './pythonEnv';

/** SecretStorage entry of the key the agent-server encrypts its stored secrets with (OH_SECRET_KEY). */
const SECRET_KEY_NAME = 'openhands.v1.agentServerSecretKey';
/** The plan the setup command used, kept beside the venv so a later start can check its stamp. */
const PLAN_FILE = '.openhands-v1-env-plan.json';

export interface ManagedAgentServerDeps {
  context: vscode.ExtensionContext;
  config: () => OpenHandsConfig;
  log: Logger;
}

/**
 * Managed mode: the agent-server this window runs (one per window, state per workspace), from the
 * configured interpreter or the environment `OpenHands: Set Up V1 Environment` made. The V1 client
 * gets `connection()`; the port, key and process never reach the user. A crash shows an error
 * with **Restart**; the server ends with the window.
 */
export class ManagedAgentServer implements vscode.Disposable {
  readonly output: vscode.OutputChannel;
  private server: AgentServerProcess | undefined;
  private starting: Promise<AgentServerConnection> | undefined;
  private setupRunning: Promise<string> | undefined;
  private readonly emitter = new vscode.EventEmitter<AgentServerState>();
  readonly onDidChange = this.emitter.event;
  /** Each step of the environment's set-up as it starts ("installing … (2/3)"): the tab shows it. */
  private readonly setupSteps = new vscode.EventEmitter<string>();
  readonly onDidSetupStep = this.setupSteps.event;
  private lastError: string | undefined;

  constructor(private readonly deps: ManagedAgentServerDeps) {
    this.output = vscode.window.createOutputChannel('OpenHands Agent Server');
  }

  get state(): AgentServerState {
    return this.server?.state ?? 'stopped';
  }

  get pid(): number | undefined {
    return this.server?.pid;
  }

  /** Why the last start failed, when it did. */
  get error(): string | undefined {
    return this.lastError;
  }

  /** The venv the setup command creates (global storage: one for every workspace). */
  get managedEnvDir(): string {
    return path.join(this.deps.context.globalStorageUri.fsPath, 'v1-env');
  }

  /** The pure-Python wheel the VSIX carries (scripts/package.sh puts it there). */
  get bundledWheel(): string | undefined {
    const dir = path.join(this.deps.context.extensionPath, 'dist', 'python');
    const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.endsWith('-py3-none-any.whl')) : undefined;
    return name ? path.join(dir, name) : undefined;
  }

  /** The lock the VSIX carries beside the wheel (scripts/lock-v1.sh), when it does. */
  get bundledLock(): string | undefined {
    const lock = path.join(this.deps.context.extensionPath, 'dist', 'python', 'v1-lock.txt');
    return fs.existsSync(lock) ? lock : undefined;
  }

  /** Where its V1 tools write their discovery files (the same folder at every start). */
  get discoveryDir(): string {
    return path.join(this.stateDir, 'discovery');
  }

  /** State per workspace (its conversations), else global; a private folder either way. */
  private get stateDir(): string {
    const base = this.deps.context.storageUri ?? this.deps.context.globalStorageUri;
    return path.join(base.fsPath, 'agent-server');
  }

  /** The running server's connection, starting it first when needed (concurrent calls share one start). */
  connection(): Promise<AgentServerConnection> {
    const current = this.server?.current;
    if (current) return Promise.resolve(current);
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  /**
   * Starts the server for a user action (the tab opened, a command): failures are shown with what
   * fixes them instead of thrown.
   */
  async ensure(): Promise<AgentServerConnection | undefined> {
    try {
      return await this.connection();
    } catch (e) {
      this.showStartError(e as Error);
      return undefined;
    }
  }

  async restart(): Promise<AgentServerConnection | undefined> {
    await this.stop();
    return this.ensure();
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (s) {
      this.deps.log.info('V1 agent-server: stopping');
      await s.stop();
    }
  }

  /** The interpreter to run: the setting, else the managed env when it is complete and current. */
  private async interpreter(): Promise<string> {
    const configured = this.deps.config().v1Python;
    if (configured) {
      const problem = await checkInterpreter(configured);
      if (problem) throw new EnvSetupError('failed', `openhands.v1.python: ${problem}`);
      return configured;
    }
    const plan = this.recordedPlan();
    if (!plan) throw new EnvSetupError('no-python', 'No Python environment for OpenHands V1 yet.');
    const wheel = this.bundledWheel;
    const lock = this.bundledLock;
    // An environment made from another version of the bundled package (or lock) is redone by the setup command.
    if (!wheel || !isCurrent(plan.venvDir, stampKey({ ...plan, wheel }, sha256File(wheel), lock ? sha256File(lock) : undefined))) {
      throw new EnvSetupError('no-python', 'The OpenHands V1 environment is out of date (the extension was updated).');
    }
    return venvPython(plan.venvDir);
  }

  private recordedPlan(): EnvPlan | undefined {
    try {
      const plan = JSON.parse(fs.readFileSync(path.join(this.managedEnvDir, PLAN_FILE), 'utf8')) as EnvPlan;
      return { ...plan, venvDir: this.managedEnvDir };
    } catch {
      return undefined;
    }
  }

  private async secretKey(): Promise<string> {
    const secrets = this.deps.context.secrets;
    let key = await secrets.get(SECRET_KEY_NAME);
    if (!key) {
      key = randomBytes(32).toString('base64url');
      await secrets.store(SECRET_KEY_NAME, key);
    }
    return key;
  }

  private async start(): Promise<AgentServerConnection> {
    this.lastError = undefined;
    try {
      const python = await this.interpreter();
      const server = new AgentServerProcess({
        python,
        stateDir: this.stateDir,
        secretKey: await this.secretKey(),
        // The V1 tools answer a conversation over the limit with an error (v1/connection.py).
        env: { OH_VSCODE_V1_MAX_CONVERSATIONS: String(this.deps.config().v1MaxParallel) },
        onOutput: (line) => this.output.appendLine(line),
      });
      this.server?.kill();
      this.server = server;
      server.onState((s) => this.emitter.fire(s));
      server.onCrash((c) => this.crashed(c));
      this.deps.log.info(`V1 agent-server: starting ${python} -m openhands_vscode_runtime.v1.launch (the agent-server; log: "OpenHands Agent Server" output)`);
      const t0 = Date.now();
      const c = await server.start();
      // The key is never logged: the URL and the process id are enough to find it.
      this.deps.log.info(`V1 agent-server: ready at ${c.baseUrl} (pid ${server.pid}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      return c;
    } catch (e) {
      this.lastError = (e as Error).message;
      this.deps.log.error(`V1 agent-server: ${this.lastError}`);
      this.emitter.fire(this.state);
      throw e;
    }
  }

  private crashed(c: CrashInfo): void {
    const how = c.signal ? `was killed (${c.signal})` : `exited with code ${c.code}`;
    this.lastError = `the agent-server ${how}`;
    this.deps.log.error(`V1 agent-server ${how}; its last lines:\n${c.logTail.slice(-20).join('\n')}`);
    void vscode.window.showErrorMessage(`OpenHands: the local agent-server ${how}.`, 'Restart', 'Show Logs').then((picked) => {
      if (picked === 'Restart') void this.ensure();
      else if (picked === 'Show Logs') this.output.show(true);
    });
  }

  /** Whether a start failed only for want of the environment the set-up command makes. */
  needsSetup(e: unknown): boolean {
    return e instanceof EnvSetupError && e.kind === 'no-python' && !this.deps.config().v1Python;
  }

  showStartError(e: Error): void {
    const noEnv = e instanceof EnvSetupError && e.kind === 'no-python' && !this.deps.config().v1Python;
    const actions = noEnv ? ['Set Up V1 Environment', 'Open Settings'] : ['Restart', 'Show Logs', 'Open Settings'];
    void vscode.window.showErrorMessage(`OpenHands: cannot start the V1 agent-server: ${e.message.split('\n')[0]}`, ...actions).then((picked) => {
      if (picked === 'Set Up V1 Environment') void vscode.commands.executeCommand('openhands.v1.setUpEnvironment');
      else if (picked === 'Restart') void this.ensure();
      else if (picked === 'Show Logs') this.output.show(true);
      else if (picked === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.v1.python');
    });
  }

  /**
   * "OpenHands: Set Up V1 Environment": creates (or confirms) the managed environment with
   * progress in a notification and every command's output in the "OpenHands Agent Server" channel.
   * Resolves with the interpreter; errors are shown and rethrown.
   */
  setUpEnvironment(): Promise<string> {
    if (!this.setupRunning) {
      this.setupRunning = this.runSetup().finally(() => {
        this.setupRunning = undefined;
      });
    }
    return this.setupRunning;
  }

  private async runSetup(): Promise<string> {
    const out = this.output;
    out.show(true);
    const t0 = Date.now();
    try {
      const python = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'OpenHands: setting up the V1 environment', cancellable: false },
        async (progress) => {
          const wheel = this.bundledWheel;
          if (!wheel) throw new EnvSetupError('no-wheel', `This build of the extension carries no openhands-vscode-runtime wheel (dist/python/).`);
          progress.report({ message: 'looking for Python 3.12+ and uv' });
          this.setupSteps.fire('looking for Python 3.12+ and uv');
          const uv = await findUv();
          const basePython = await findBasePython(PYTHON_CANDIDATES);
          const plan: EnvPlan = {
            venvDir: this.managedEnvDir, basePython, installer: uv ? 'uv' : 'uv-bootstrap', uv, wheel, constraints: this.bundledLock,
          };
          out.appendLine(`OpenHands V1 environment: ${plan.venvDir} (Python ${basePython}, ${plan.installer})`);
          const r = await createEnv(plan, {
            onStep: (step, i, n) => {
              progress.report({ message: `${step.title} (${i + 1}/${n})`, increment: 100 / n });
              this.setupSteps.fire(`${step.title} (${i + 1}/${n})`);
            },
            onOutput: (t) => out.append(t),
          });
          fs.writeFileSync(path.join(plan.venvDir, PLAN_FILE), JSON.stringify({ basePython, installer: plan.installer, uv, wheel: path.basename(wheel) }));
          out.appendLine(r.created ? `created in ${((Date.now() - t0) / 1000).toFixed(1)} s` : 'already up to date');
          return r.python;
        },
      );
      this.deps.log.info(`V1 environment ready: ${python} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      // A running server keeps its interpreter until restarted; a stopped one starts on next use.
      return python;
    } catch (e) {
      const err = e as Error;
      out.appendLine(`setup failed: ${err.message}`);
      this.deps.log.error(`V1 environment setup failed: ${err.message}`);
      const advice = err instanceof EnvSetupError && err.kind === 'no-python' ? ['Open Settings', 'Show Logs'] : ['Show Logs'];
      void vscode.window.showErrorMessage(`OpenHands: ${err.message.split('\n')[0]}`, ...advice).then((picked) => {
        if (picked === 'Show Logs') out.show(true);
        else if (picked === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'openhands.v1.python');
      });
      throw err;
    }
  }

  /** Synchronous: VS Code does not await disposables; `deactivate` awaits `stop()` first. */
  dispose(): void {
    this.server?.kill();
    this.emitter.dispose();
    this.setupSteps.dispose();
    this.output.dispose();
  }
}
