// OpenHands V1 in the real VS Code host: a conversation on the REAL V1 agent-server (started by
// run.sh with `--import-modules openhands_vscode_runtime.v1.register` and
// OH_VSCODE_SPAWN_EXECUTOR=0, the scripted stand-in LLM) whose `terminal` and `file_editor` run
// in this window's executor (the addon in this extension host, files through workspace.fs).
// The extension does not list V1 conversations (docs/v1.md says why): it attaches to one the way a
// user does, with attach mode in the settings and the key through "Set Session API Key", all
// three read from the discovery file the V1 tools write while they wait for an executor.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, assertScriptFollowed, runner, showConsentWhenAsked } = require('./lib');
const { RecordingFs } = require('./trust');

const AGENT_SERVER = process.env.OH_TEST_AGENT_SERVER;
const AGENT_KEY = process.env.OH_TEST_AGENT_KEY;
const LLM = process.env.OH_TEST_LLM_BASE_URL;
const DISCOVERY = process.env.OH_TEST_V1_DISCOVERY;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';

async function ui(verb, file) {
  try { fs.unlinkSync(`${file}.done`); } catch {}
  console.log(`@@oh-ui ${verb} ${file}`);
  await waitFor(`runner to ${verb}`, () => fs.existsSync(`${file}.done`), 30000);
}

async function agentServer(method, pathname, body) {
  const r = await fetch(`${AGENT_SERVER}${pathname}`, {
    method, headers: { 'content-type': 'application/json', 'x-session-api-key': AGENT_KEY },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${pathname}: HTTP ${r.status} ${text}`);
  return JSON.parse(text);
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  assert(ext, 'openhands-tab is not installed');
  const api = await ext.activate();
  const virtualPath = path.join(root, 'only-in-provider.txt');
  const provider = new RecordingFs(new Map([[virtualPath, { data: Buffer.from('served by the test provider\n'), mtime: Date.now() }]]));
  // Registered once the executor is attached (settings and SecretStorage writes are not its
  // business); the agent's first command waits for `provider-ready`.
  let reg;
  let conversation;
  let posting;
  let discovery;

  try {
    await test('a V1 conversation on the real agent-server waits for an executor and says where in a 0600 discovery file', async () => {
      // The POST may not answer before an executor attaches (the tools may connect while the
      // conversation is set up), so the discovery file is awaited alongside it.
      let postError;
      posting = agentServer('POST', '/api/conversations', {
        agent: { kind: 'Agent', llm: { model: 'openai/scripted', base_url: LLM, api_key: 'x', usage_id: 'agent', num_retries: 0 },
                 tools: [{ name: 'terminal' }, { name: 'file_editor' }] },
        workspace: { working_dir: root },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true },
      });
      posting.catch((e) => { postError = e; });
      const file = await waitFor('the discovery file of this workspace', () => {
        if (postError) throw postError;
        for (const name of fs.existsSync(DISCOVERY) ? fs.readdirSync(DISCOVERY) : []) {
          const info = JSON.parse(fs.readFileSync(path.join(DISCOVERY, name), 'utf8'));
          if (info.workspace === root) return path.join(DISCOVERY, name);
        }
        return undefined;
      }, 180000, 250);
      discovery = JSON.parse(fs.readFileSync(file, 'utf8'));
      const mode = fs.statSync(file).mode & 0o777;
      assert(mode === 0o600, `discovery file mode ${mode.toString(8)}`);
      assert(/^http:\/\/127\.0\.0\.1:\d+$/.test(discovery.url), `url ${discovery.url}`);
      assert(discovery.namespace === '/oh-executor' && discovery.session_api_key, `discovery ${JSON.stringify({ ...discovery, session_api_key: '…' })}`);
      console.log(`oh-test v1 executor channel ${discovery.conversation_id} at ${discovery.url}`);
    });

    await test('attach: settings + "Set Session API Key", then consent; the executor connects to the V1 channel', async () => {
      const cfg = vscode.workspace.getConfiguration('openhands');
      await cfg.update('server.url', discovery.url, vscode.ConfigurationTarget.Global);
      await cfg.update('conversation.mode', 'attach', vscode.ConfigurationTarget.Workspace);
      await cfg.update('conversation.id', discovery.conversation_id, vscode.ConfigurationTarget.Workspace);
      const keyFile = path.join(ARTIFACTS, 'v1-key.txt');
      fs.writeFileSync(keyFile, discovery.session_api_key, { mode: 0o600 });
      // As a user would: the command's password box, typed into by the runner.
      const done = vscode.commands.executeCommand('openhands.setSessionApiKey');
      let stored = false;
      done.then(() => { stored = true; }, () => { stored = true; });
      await ui('type-quickinput', keyFile);
      fs.unlinkSync(keyFile);
      // The command resolves after it reconnected an executor that was running or had failed; that
      // start may ask for consent (once per workspace), so the notification list is opened for it.
      let shown = false;
      await waitFor('the key to be stored', async () => {
        const s = api.snapshot;
        if (!shown && s.state === 'starting' && /permission to execute/.test(s.message || '')) {
          shown = true;
          await vscode.commands.executeCommand('notifications.showList');
        }
        return stored;
      }, 90000, 100);
      await done;
      // Then the user starts the executor (the view's Start button), once. The settings change may
      // already have started it (the tab follows the attached conversation) and storing the key
      // reconnects one that failed without it: the command joins such a start, never a second one.
      // From here on the executor must connect without stopping or failing on the way.
      const states = [];
      const watch = api.onDidChange(() => states.push(api.snapshot.state));
      const starting = vscode.commands.executeCommand('openhands.start');
      await showConsentWhenAsked(vscode, api, 90000);
      await starting;
      const snap = await waitFor('the executor to connect (or fail)', () => {
        const s = api.snapshot;
        states.push(s.state);
        return ['connected', 'executing', 'error', 'blocked', 'stopped'].includes(s.state) ? s : undefined;
      }, 60000, 100);
      watch.dispose();
      console.log(`oh-test v1 executor states after the start: ${[...new Set(states)].join(' ')}`);
      assert(['connected', 'executing'].includes(snap.state), `executor state ${snap.state}: ${snap.message}`);
      assert(!states.includes('error') && !states.includes('stopped'), `the executor failed or stopped after the start: ${states.join(' ')}`);
      assert(snap.conversationId === discovery.conversation_id, `serves ${snap.conversationId}`);
      const settings = fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8');
      assert(!settings.includes(discovery.session_api_key), 'the key leaked into settings.json');
      reg = vscode.workspace.registerFileSystemProvider('file', provider, { isCaseSensitive: true });
      const seen = Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.file(virtualPath))).toString();
      assert(seen === 'served by the test provider\n', `workspace.fs does not reach the provider: ${JSON.stringify(seen)}`);
      fs.writeFileSync(path.join(root, 'provider-ready'), '');
      conversation = (await posting).id;
      console.log(`oh-test v1 conversation ${conversation}`);
    });

    await test('the V1 agent finishes; its terminal ran in this extension host and its file_editor edit went through workspace.fs', async () => {
      const status = await waitFor('the V1 conversation to finish', async () => {
        const s = (await agentServer('GET', `/api/conversations/${conversation}`)).execution_status;
        return ['finished', 'error', 'stuck'].includes(s) ? s : undefined;
      }, 180000, 500);
      assert(status === 'finished', `conversation ${status}`);
      // The scripted LLM finishes on a mismatch too: finished must also mean the script was followed.
      await assertScriptFollowed(LLM);
      // The shell's parent process is this extension host (the addon runs bash from here).
      const parent = Number(fs.readFileSync(path.join(root, 'v1-shell-parent.txt'), 'utf8').trim());
      assert(parent === process.pid, `the agent's shell has parent ${parent}, the extension host is ${process.pid}`);
      // The file exists only in the provider registered above: only workspace.fs could edit it.
      const now = Buffer.from(provider.virtual.get(virtualPath).data).toString();
      assert(now === 'edited by the V1 agent\n', `provider file: ${JSON.stringify(now)}`);
      assert(!fs.existsSync(virtualPath), 'the edited file exists on disk');
      assert(provider.calls.some(([op, p]) => op === 'writeFile' && p === virtualPath), `provider calls ${JSON.stringify(provider.calls.slice(-10))}`);
      const terminal = (api.snapshot.recent || []).length;
      console.log(`oh-test v1 executor snapshot: state ${api.snapshot.state}, recent actions ${terminal}`);
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
    if (reg) reg.dispose();
  }
  run.finish('V1');
};
