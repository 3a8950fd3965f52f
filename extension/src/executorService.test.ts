import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ActivityLog } from './activity';
import { DEFAULTS, type OpenHandsConfig } from './config';
import { NativeBinaryError } from './bootstrap';
import { ExecutorService, stateOf, type ExecutorServiceDeps } from './executorService';
import { Logger } from './logging';
import type { Closed, ErrorCode, ExecutorHooks, ExecutorOptions } from './native';

/** What the addon rejects with: an Error with its code. */
const coded = (code: ErrorCode, message: string) => Object.assign(new Error(message), { code });
import { resetMock } from './test/vscodeMock';

class FakeExecutor {
  static last: FakeExecutor | undefined;
  static count = 0;
  started = 0;
  stopped = 0;
  constructor(readonly options: ExecutorOptions, readonly fs: unknown, readonly hooks: ExecutorHooks) {
    FakeExecutor.last = this;
    FakeExecutor.count++;
  }
  startImpl: () => Promise<void> = async () => {};
  async start() { this.started++; return this.startImpl(); }
  close: (c: Closed) => void = () => {};
  closed = new Promise<Closed>((resolve) => { this.close = resolve; });
  waitUntilClosed() { return this.closed; }
  async stop() { this.stopped++; this.close({ reason: 'stopped' }); }
}

function setup(options: Omit<Partial<ExecutorServiceDeps>, 'config'> & { config?: Partial<OpenHandsConfig> } = {}) {
  const { config, ...over } = options;
  const terminal = { data: vi.fn(), notice: vi.fn(), reveal: vi.fn() };
  const notify = vi.fn();
  const activity = new ActivityLog(50);
  const deps: ExecutorServiceDeps = {
    config: () => ({ ...DEFAULTS, ...config }),
    sessionKey: async () => 'secret',
    consent: async () => 'granted',
    conversation: () => 'conv1',
    loadNative: () => ({ module: { Executor: FakeExecutor as any, PROTOCOL_VERSION: 1 }, file: '/x.node' }),
    fsBridge: () => ({}) as any,
    workspace: () => ({ root: '/ws', label: 'ws' }),
    log: new Logger(),
    terminal,
    activity,
    notify,
    clientName: 'test',
    ...over,
  };
  return { service: new ExecutorService(deps), terminal, notify, activity };
}

describe('executor service', () => {
  beforeEach(() => {
    resetMock();
    FakeExecutor.last = undefined;
    FakeExecutor.count = 0;
  });

  it('maps the addon connection states', () => {
    expect(stateOf('connecting')).toBe('connecting');
    expect(stateOf('disconnected')).toBe('connecting');
    expect(stateOf('connected')).toBe('connected');
    expect(stateOf('executing')).toBe('executing');
    expect(stateOf('error')).toBe('error');
  });

  it('starts once (idempotent) with the right options', async () => {
    const { service, terminal } = setup();
    await Promise.all([service.start(), service.start()]);
    await service.start();
    expect(FakeExecutor.count).toBe(1);
    expect(FakeExecutor.last!.options).toMatchObject({ serverUrl: 'http://localhost:3000', conversationId: 'conv1', sessionApiKey: 'secret', workspaceRoot: '/ws', clientName: 'test', noChangeTimeoutSeconds: 30 });
    expect(service.snapshot).toMatchObject({ state: 'connected', conversationId: 'conv1' });
    expect(terminal.notice).toHaveBeenCalledWith(expect.stringContaining('connected'), true);
  });

  it('V1: connects to the conversation\'s own channel (route), asks consent for the agent-server, and a release stops it', async () => {
    const consent = vi.fn(async () => 'granted' as const);
    const sessionKey = vi.fn(async () => 'v0-key');
    const resolve = vi.fn(async (id: string) => ({ serverUrl: 'http://127.0.0.1:4321', conversationId: `v1-${id.replace(/-/g, '')}`, sessionApiKey: 'channel-key' }));
    const { service } = setup({ consent, sessionKey, conversation: () => undefined, route: { consentUrl: () => 'http://127.0.0.1:8000', resolve } });
    await service.retarget('aaaa-bbbb');
    expect(consent).toHaveBeenCalledWith('ws', 'http://127.0.0.1:8000', undefined);
    expect(sessionKey).not.toHaveBeenCalled();
    expect(resolve).toHaveBeenCalledWith('aaaa-bbbb', expect.anything());
    expect(FakeExecutor.last!.options).toMatchObject({ serverUrl: 'http://127.0.0.1:4321', conversationId: 'v1-aaaabbbb', sessionApiKey: 'channel-key' });
    expect(service.snapshot).toMatchObject({ state: 'connected', conversationId: 'aaaa-bbbb', serverUrl: 'http://127.0.0.1:4321' });
    const first = FakeExecutor.last!;
    await service.release('another');
    expect(first.stopped).toBe(0);
    await service.release('aaaa-bbbb');
    expect(first.stopped).toBe(1);
    expect(service.snapshot.state).toBe('stopped');
  });

  it('V1 remote: the CA file and pin the route gives (the user settings) reach the addon\'s options; a local route sets neither', async () => {
    const resolve = vi.fn(async () => ({ serverUrl: 'https://agent.example:9443', conversationId: 'v1-ab', sessionApiKey: 'k', caFile: '/home/u/ca.pem' }));
    const { service } = setup({ conversation: () => undefined, route: { consentUrl: () => 'https://agent.example:8443', resolve } });
    await service.retarget('ab');
    expect(FakeExecutor.last!.options).toMatchObject({ serverUrl: 'https://agent.example:9443', caFile: '/home/u/ca.pem' });
    expect(FakeExecutor.last!.options.certSha256).toBeUndefined();
    const pinned = vi.fn(async () => ({ serverUrl: 'https://agent.example:9443', conversationId: 'v1-cd', sessionApiKey: 'k', certSha256: 'ab'.repeat(32) }));
    const second = setup({ conversation: () => undefined, route: { consentUrl: () => 'https://agent.example:8443', resolve: pinned } });
    await second.service.retarget('cd');
    expect(FakeExecutor.last!.options).toMatchObject({ certSha256: 'ab'.repeat(32) });
    expect(FakeExecutor.last!.options.caFile).toBeUndefined();
  });

  it('V1: an executor attached by hand (attach mode with an id) is served as configured, not through the route', async () => {
    const consent = vi.fn(async () => 'granted' as const);
    const sessionKey = vi.fn(async () => 'channel-key-by-hand');
    const resolve = vi.fn(async () => ({ serverUrl: 'http://127.0.0.1:4321', conversationId: 'routed', sessionApiKey: 'route-key' }));
    const { service } = setup({
      consent, sessionKey,
      config: { serverUrl: 'http://127.0.0.1:5555', conversationMode: 'attach', conversationId: 'by-hand' },
      conversation: (c) => (c.conversationMode === 'attach' ? c.conversationId : undefined),
      route: { consentUrl: () => 'http://127.0.0.1:8000', resolve },
    });
    await service.start();
    expect(resolve).not.toHaveBeenCalled();
    expect(consent).toHaveBeenCalledWith('ws', 'http://127.0.0.1:5555', undefined);
    expect(FakeExecutor.last!.options).toMatchObject({ serverUrl: 'http://127.0.0.1:5555', conversationId: 'by-hand', sessionApiKey: 'channel-key-by-hand' });
  });

  it('attach mode from the workspace\'s settings: consent is asked for that conversation, named; declined, nothing starts', async () => {
    const consent = vi.fn(async () => 'declined' as const);
    const loadNative = vi.fn();
    const { service } = setup({
      consent, loadNative,
      config: { serverUrl: 'http://127.0.0.1:3000', conversationMode: 'attach', conversationId: 'repo-chosen', conversationFromWorkspace: true },
      conversation: (c) => c.conversationId,
    });
    await service.start();
    expect(consent).toHaveBeenCalledWith('ws', 'http://127.0.0.1:3000', 'repo-chosen');
    expect(loadNative).not.toHaveBeenCalled();
    expect(service.snapshot.state).toBe('blocked');
  });

  it('passes the other folders of a multi-root workspace (one folder: none)', async () => {
    await setup().service.start();
    expect(FakeExecutor.last!.options.extraRoots).toBeUndefined();
    await setup({ workspace: () => ({ root: '/ws', label: 'ws', extraRoots: ['/api', '/docs'] }) }).service.start();
    expect(FakeExecutor.last!.options).toMatchObject({ workspaceRoot: '/ws', extraRoots: ['/api', '/docs'] });
  });

  it('refuses in an untrusted workspace or without consent, and never loads the binary', async () => {
    const loadNative = vi.fn();
    const a = setup({ consent: async () => 'untrusted', loadNative });
    await a.service.start();
    expect(a.service.snapshot).toMatchObject({ state: 'blocked', fixes: ['trust'] });
    const b = setup({ consent: async () => 'declined', loadNative });
    await b.service.start();
    expect(b.service.snapshot.state).toBe('blocked');
    expect(loadNative).not.toHaveBeenCalled();
  });

  it('reports configuration, conversation and connect errors with fixes', async () => {
    const a = setup({ config: { serverUrl: 'nope' } });
    await a.service.start();
    expect(a.service.snapshot).toMatchObject({ state: 'error', fixes: ['settings'] });
    expect(a.notify).toHaveBeenCalledTimes(1);


    const d = setup();
    const orig = FakeExecutor.prototype.start;
    FakeExecutor.prototype.start = async function () { throw coded('EAUTH', 'connection refused: oh-executor: invalid session_api_key'); };
    await d.service.start();
    FakeExecutor.prototype.start = orig;
    expect(d.service.snapshot).toMatchObject({ state: 'error', fixes: ['key', 'retry'], message: expect.stringContaining('invalid session_api_key') });
    expect(FakeExecutor.last!.stopped).toBe(1);
    expect(d.service.running).toBe(false);

    // The code decides, not the text.
    const e = setup();
    FakeExecutor.prototype.start = async function () { throw coded('EPROTOCOL', 'session_api_key'); };
    await e.service.start();
    FakeExecutor.prototype.start = orig;
    expect(e.service.snapshot).toMatchObject({ state: 'error', fixes: ['logs'] });

    const f = setup({ loadNative: () => { throw new NativeBinaryError('no binary for this platform', []); } });
    await f.service.start();
    expect(f.service.snapshot).toMatchObject({ state: 'error', fixes: ['logs'], message: 'no binary for this platform' });
  });

  it('announces the IDE tools and runs their calls through the hook (none without them)', async () => {
    const call = vi.fn(async (name: string, args: string) => JSON.stringify({ content: [{ type: 'text', text: `${name} ${args}` }] }));
    const list = [{ name: 'hover', description: 'Type at a position', inputSchema: { type: 'object', properties: {} } }];
    const { service } = setup({ ideTools: () => ({ list, call }) });
    await service.start();
    const ex = FakeExecutor.last!;
    expect(ex.options.ideTools).toEqual(list);
    await expect(ex.hooks.onIdeTool!('hover', '{"line":2}', 1)).resolves.toBe(JSON.stringify({ content: [{ type: 'text', text: 'hover {"line":2}' }] }));
    expect(call).toHaveBeenCalledWith('hover', '{"line":2}', expect.any(AbortSignal));

    const bare = setup();
    await bare.service.start();
    expect(FakeExecutor.last!.options.ideTools).toBeUndefined();
    expect(FakeExecutor.last!.hooks.onIdeTool).toBeUndefined();
  });

  it('a cancel from the executor aborts the signal of that call only; unknown ids are ignored', async () => {
    const signals = new Map<string, AbortSignal>();
    const call = vi.fn((name: string, _args: string, signal?: AbortSignal) => {
      signals.set(name, signal!);
      return new Promise<string>((resolve) => signal!.addEventListener('abort', () => resolve(`${name} cancelled`)));
    });
    const { service } = setup({ ideTools: () => ({ list: [], call }) });
    await service.start();
    const hooks = FakeExecutor.last!.hooks;
    const first = hooks.onIdeTool!('open_diff', '{}', 7);
    void hooks.onIdeTool!('hover', '{}', 8);
    hooks.onIdeToolCancel!(99);
    hooks.onIdeToolCancel!(7);
    await expect(first).resolves.toBe('open_diff cancelled');
    expect(signals.get('open_diff')!.aborted).toBe(true);
    expect(signals.get('hover')!.aborted).toBe(false);
    hooks.onIdeToolCancel!(7); // finished: nothing left to cancel
  });

  it('feeds the terminal, the log and the state from the hooks', async () => {
    const { service, terminal, activity } = setup();
    await service.start();
    const hooks = FakeExecutor.last!.hooks;
    const bytes = new TextEncoder().encode('hi\n');
    hooks.onTerminalData!(bytes);
    expect(terminal.data).toHaveBeenCalledWith(bytes);
    hooks.onStatus!('executing', null);
    expect(service.snapshot).toMatchObject({ state: 'executing' });
    expect(activity.items).toHaveLength(0); // the activity list comes from onAction/onObservation only
    hooks.onStatus!('connected', null);
    expect(service.snapshot.state).toBe('connected');
    hooks.onLog!('warn', 'oh_transport', 'hello');
    hooks.onStatus!('disconnected', 'socket closed');
    expect(service.snapshot).toMatchObject({ state: 'connecting', message: 'socket closed' });
    // An error status is followed by the coded waitUntilClosed result, which decides.
    hooks.onStatus!('error', 'connection refused: oh-executor: invalid session_api_key');
    expect(service.snapshot.state).toBe('connecting');
    FakeExecutor.last!.close({ reason: 'failed', code: 'EAUTH', message: 'connection refused: oh-executor: invalid session_api_key' });
    await new Promise((r) => setTimeout(r, 10));
    expect(service.snapshot).toMatchObject({ state: 'error', fixes: ['key', 'retry'] });
    expect(service.running).toBe(false);
  });

  it('lists actions from the action/observation hooks', async () => {
    const { service, activity, terminal } = setup();
    await service.start();
    const hooks = FakeExecutor.last!.hooks;
    // The addon's order: the status, the action; then the observation, then the status.
    hooks.onStatus!('executing', null);
    hooks.onAction!(JSON.stringify({ id: 7, action: 'run', args: { command: 'echo hi' } }));
    expect(activity.items).toHaveLength(1);
    expect(terminal.reveal).toHaveBeenCalled();
    expect(service.snapshot).toMatchObject({ state: 'executing', activity: 'run echo hi' });
    hooks.onObservation!(JSON.stringify({ cause: 7, observation: 'run', content: 'hi', extras: { metadata: { exit_code: 3 } } }));
    // The state is the transport's (one place): an observation alone changes nothing.
    expect(service.snapshot.state).toBe('executing');
    hooks.onStatus!('connected', null);
    expect(service.snapshot.state).toBe('connected');
    expect(activity.items[0]).toMatchObject({ id: 7, status: 'error', result: 'exit 3 · hi' });
  });

  it('says what runs with the one summary of an action, secret exports masked', async () => {
    const { service } = setup();
    await service.start();
    const hooks = FakeExecutor.last!.hooks;
    hooks.onStatus!('executing', null);
    hooks.onAction!(JSON.stringify({ id: 8, action: 'run', args: { command: "export GITHUB_TOKEN=$'ghp_secret'" } }));
    expect(service.snapshot.activity).toBe('run export GITHUB_TOKEN=********');
    hooks.onAction!(JSON.stringify({ id: 9, action: 'v1_terminal', args: { command: "export API_KEY=$'sk-1' && export B=$'x'" } }));
    expect(service.snapshot.activity).not.toMatch(/sk-1|'x'/);
    hooks.onAction!(JSON.stringify({ id: 10, action: 'read', args: { path: '/ws/a.py' } }));
    expect(service.snapshot.activity).toBe('Read /ws/a.py');
    hooks.onStatus!('connected', null);
    expect(service.snapshot.activity).toBeUndefined();
  });

  it('reports a connection that ends for good (replaced)', async () => {
    const { service } = setup();
    await service.start();
    FakeExecutor.last!.close({ reason: 'replaced', message: 'replaced by a newer executor for this conversation' });
    await new Promise((r) => setTimeout(r, 10));
    expect(service.snapshot).toMatchObject({ state: 'stopped', fixes: ['retry'], message: expect.stringContaining('Another VS Code window') });
    expect(service.running).toBe(false);
  });

  it('stop and reconnect replace the executor and ignore the old hooks', async () => {
    const { service, terminal } = setup();
    await service.start();
    const first = FakeExecutor.last!;
    await service.reconnect();
    expect(first.stopped).toBe(1);
    expect(FakeExecutor.count).toBe(2);
    first.hooks.onTerminalData!(new TextEncoder().encode('stale'));
    expect(terminal.data).not.toHaveBeenCalled();
    await service.stop();
    expect(service.snapshot.state).toBe('stopped');
    expect(FakeExecutor.last!.stopped).toBe(1);
  });

  it('does not retry a refusal for a conversation without a runtime (the server holds early executors itself)', async () => {
    const orig = FakeExecutor.prototype.start;
    FakeExecutor.prototype.start = async function () { throw coded('ENORUNTIME', 'connection refused: oh-executor: no VsCodeRuntime for conversation conv1'); };
    const { service } = setup();
    await service.start();
    FakeExecutor.prototype.start = orig;
    expect(FakeExecutor.count).toBe(1);
    expect(service.snapshot).toMatchObject({ state: 'error', fixes: ['settings', 'retry'] });
  });

  it('follows the tab: retarget switches the conversation it serves', async () => {
    let wanted: string | undefined;
    const { service } = setup({ conversation: () => wanted });
    await service.start();
    expect(service.snapshot).toMatchObject({ state: 'stopped', message: expect.stringContaining('type a task') });
    expect(FakeExecutor.count).toBe(0);
    await service.retarget('a');
    expect(FakeExecutor.last!.options.conversationId).toBe('a');
    const first = FakeExecutor.last!;
    await service.retarget('a'); // same conversation: nothing restarts
    expect(FakeExecutor.count).toBe(1);
    await service.retarget('b');
    expect(first.stopped).toBe(1);
    expect(FakeExecutor.last!.options.conversationId).toBe('b');
    expect(service.snapshot).toMatchObject({ state: 'connected', conversationId: 'b' });
    wanted = 'fixed';
  });

  it('attach mode keeps its configured conversation when the tab retargets', async () => {
    const { service } = setup({ config: { conversationMode: 'attach', conversationId: 'cfg' }, conversation: () => 'cfg' });
    await service.retarget('other');
    expect(FakeExecutor.last!.options.conversationId).toBe('cfg');
  });

  it('blocks without a workspace folder', async () => {
    const { service } = setup({ workspace: () => undefined });
    await service.start();
    expect(service.snapshot.state).toBe('blocked');
  });
});
