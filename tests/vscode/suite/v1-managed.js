// OpenHands V1, managed mode, in the real VS Code host: no V0 server is configured, so the tab is
// in V1 mode and the extension runs the REAL agent-server itself (openhands-agent-server from a
// venv, `--import-modules openhands_vscode_runtime.v1.register,...`): from `openhands.v1.python`
// (the repository's V1 venv, fast), then killed (the crash notification's Restart brings it back),
// then from the environment the tab's "Set Up and Start" creates in the extension's storage from the
// VSIX's wheel and lock (venv, uv fetched by its pip, uv installs the lock's versions); a second
// run of "OpenHands: Set Up V1 Environment" finds it current.
// run.sh checks after the
// window closed that no agent-server it started is left (agent-server-pids.txt).
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, runner, uiRequester, answerPrompt } = require('./lib');

const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const V1_PYTHON = process.env.OH_TEST_V1_PYTHON;
const ui = uiRequester(ARTIFACTS, 30000);
const PIDS = path.join(ARTIFACTS, 'agent-server-pids.txt');

const cmdline = (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The server answers its API with the key and refuses it without (what the V1 client relies on). */
async function checkAnswers(c) {
  assert(/^http:\/\/127\.0\.0\.1:\d+$/.test(c.baseUrl), `baseUrl ${c.baseUrl}`);
  const without = await fetch(`${c.baseUrl}/api/conversations/search`);
  assert(without.status === 401, `without the key: HTTP ${without.status}`);
  const withKey = await fetch(`${c.baseUrl}/api/conversations/search`, { headers: { 'X-Session-API-Key': c.sessionApiKey } });
  assert(withKey.status === 200, `with the key: HTTP ${withKey.status} ${await withKey.text()}`);
}

async function running(api, notPid, timeoutMs) {
  await waitFor('the agent-server to run', () => {
    if (api.agentServer.state === 'running' && api.agentServer.pid !== notPid) return true;
    if (api.agentServer.error && api.agentServer.state !== 'starting') throw new Error(`agent-server: ${api.agentServer.error}`);
    return false;
  }, timeoutMs, 250);
  fs.appendFileSync(PIDS, `${api.agentServer.pid}\n`);
  return api.agentServer.connection();
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  assert(ext, 'openhands-vscode-runtime.openhands-tab is not installed');
  const api = await ext.activate();
  fs.rmSync(PIDS, { force: true });
  let first;

  try {
    await test('no V0 server configured: opening the tab starts this window\'s agent-server (V1 mode) from openhands.v1.python, on 127.0.0.1 with a key it requires', async () => {
      const cfg = vscode.workspace.getConfiguration('openhands');
      assert(cfg.inspect('server.url').globalValue === undefined, 'a server URL is configured');
      assert(api.agentServer.state === 'stopped', `state before the tab opened: ${api.agentServer.state}`);
      const t0 = Date.now();
      await vscode.commands.executeCommand('openhands.view.focus');
      const c = await running(api, undefined, 240000);
      console.log(`oh-test v1-managed warm start (tab opened -> agent-server ready): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await checkAnswers(c);
      const argv = cmdline(api.agentServer.pid);
      assert(argv[0] === V1_PYTHON, `interpreter ${argv[0]}, configured ${V1_PYTHON}`);
      assert(argv.includes('openhands_vscode_runtime.v1.launch') && argv.join(' ').includes('openhands_vscode_runtime.v1.register'), `argv ${argv.join(' ')}`);
      assert(!argv.join(' ').includes(c.sessionApiKey), 'the session key is in the command line');
      assert(!argv.includes(new URL(c.baseUrl).port), 'the port is in the command line (the server binds its own)');
      // What the agent's bash (same user) could read of the server: not its key.
      assert(!fs.readFileSync(`/proc/${api.agentServer.pid}/environ`, 'utf8').includes(c.sessionApiKey), 'the session key is in the server\'s /proc environ');
      assert((fs.statSync(c.discoveryDir).mode & 0o777) === 0o700, 'discovery folder not 0700');
      first = { pid: api.agentServer.pid, key: c.sessionApiKey };
    });

    await test('a crashed agent-server shows an error with Restart, which brings it back on a new key', async () => {
      process.kill(first.pid, 'SIGKILL');
      await waitFor('the crash to be seen', () => api.agentServer.state === 'crashed', 20000, 100);
      const shown = await answerPrompt(vscode, ui, 'local agent-server was killed', 'Restart', 60000);
      assert(shown === 1, `${shown} crash notifications`);
      const c = await running(api, first.pid, 240000);
      assert(c.sessionApiKey !== first.key, 'the restarted server has the old key');
      await checkAnswers(c);
    });

    await test('no environment: the tab offers "Set Up and Start", whose one click creates it in the extension\'s storage from the VSIX\'s wheel and lock (its steps shown in the tab) and starts the server from it', async () => {
      await vscode.workspace.getConfiguration('openhands').update('v1.python', undefined, vscode.ConfigurationTarget.Global);
      const before = api.agentServer.pid;
      // The server stops; the tab's next look (Retry) finds no environment to start it from.
      await vscode.commands.executeCommand('openhands.v1.stopAgentServer');
      await vscode.commands.executeCommand('openhands.view.focus');
      await ui('webview-click', { selector: '#refresh' });
      await waitFor('the unreachable server in the tab', () => api.conversation.status.problems.find((p) => p.id === 'server'), 60000, 200);
      await ui('webview-click', { selector: 'button.fix[data-fix="retry"]' });
      const offer = await waitFor('the set-up offer in the tab', () => api.conversation.status.problems.find((p) => p.id === 'setup' && p.fixes.some((f) => f.fix === 'setup')), 60000, 200);
      assert(/No Python environment for OpenHands V1 yet/.test(offer.message) && /allows the agent to run commands/.test(offer.message), `offer ${JSON.stringify(offer)}`);
      // The click is also the yes to execution here (its text says so): no prompt after it.
      const MANAGED = "this window's own agent-server (127.0.0.1)";
      assert(!api.consentGrantedFor(MANAGED), 'execution was allowed before the set-up was clicked');
      const t0 = Date.now();
      await ui('webview-click', { selector: 'button.fix[data-fix="setup"]' });
      const steps = new Set();
      await waitFor('the set-up to finish', () => {
        const p = api.conversation.status.problems.find((x) => x.id === 'setup');
        if (p && /^The set-up failed/.test(p.message)) throw new Error(p.message);
        if (p) steps.add(p.message);
        return api.agentServer.state === 'running' && api.agentServer.pid !== before;
      }, 240000, 100);
      const cold = (Date.now() - t0) / 1000;
      assert(api.consentGrantedFor(MANAGED), 'Set Up and Start did not record the yes to execution');
      assert([...steps].some((m) => /^Setting up the OpenHands V1 environment: .* \(\d\/\d\)…$/.test(m)), `no step shown in the tab: ${JSON.stringify([...steps])}`);
      const c = await running(api, before, 240000);
      await waitFor('the tab to reach the new server', () => api.conversation.status.serverUrl === c.baseUrl && !api.conversation.status.problems.some((p) => ['setup', 'server'].includes(p.id)), 60000, 200);
      console.log(`oh-test v1-managed cold set-up from the tab (create the environment + start the agent-server): ${cold.toFixed(1)} s; steps shown: ${[...steps].length}`);
      const python = cmdline(api.agentServer.pid)[0];
      assert(/\/v1-env\/bin\/python$/.test(python) && python !== V1_PYTHON, `the server runs ${python}`);
      const stamp = path.join(path.dirname(path.dirname(python)), '.openhands-v1-env-stamp');
      assert(fs.existsSync(stamp), 'no stamp in the created environment');
      // No uv on PATH here: the environment's pip fetched uv, which installed the rest at the
      // versions of the lock the VSIX carries (a fallback to pip would leave no uv there).
      const envDir = path.dirname(path.dirname(python));
      const plan = JSON.parse(fs.readFileSync(path.join(envDir, '.openhands-v1-env-plan.json'), 'utf8'));
      assert(plan.installer === 'uv-bootstrap' && fs.existsSync(path.join(envDir, 'bin', 'uv')), `installer ${JSON.stringify(plan)}`);
      const ext = vscode.extensions.all.find((e) => fs.existsSync(path.join(e.extensionPath, 'dist', 'python', 'v1-lock.txt')));
      assert(ext, 'no extension carries dist/python/v1-lock.txt');
      const pins = Object.fromEntries(fs.readFileSync(path.join(ext.extensionPath, 'dist', 'python', 'v1-lock.txt'), 'utf8')
        .split('\n').map((l) => /^([A-Za-z0-9_.-]+)==(\S+)$/.exec(l)).filter(Boolean).map((m) => [m[1].toLowerCase(), m[2]]));
      const installed = require('child_process').execFileSync(python, ['-c',
        'import importlib.metadata as m; print(" ".join(f"{n}=={m.version(n)}" for n in ("litellm", "openhands-sdk", "fastapi")))']).toString().trim();
      const expected = ['litellm', 'openhands-sdk', 'fastapi'].map((n) => `${n}==${pins[n]}`).join(' ');
      assert(installed === expected, `installed ${installed}, the lock says ${expected}`);
      await checkAnswers(c);
      // A second run finds the stamp current and reinstalls nothing.
      const mtime = fs.statSync(stamp).mtimeMs;
      const t1 = Date.now();
      const again = api.agentServer.pid;
      await vscode.commands.executeCommand('openhands.v1.setUpEnvironment');
      await running(api, again, 240000);
      console.log(`oh-test v1-managed warm set-up (environment current + restart): ${((Date.now() - t1) / 1000).toFixed(1)} s`);
      assert(fs.statSync(stamp).mtimeMs === mtime, 'the environment was made again');
    });
  } finally {
    fs.writeFileSync(path.join(ARTIFACTS, 'agent-server-state.txt'), `${api.agentServer.state} ${api.agentServer.error ?? ''}\n`);
  }
  run.finish('V1 managed');
};
