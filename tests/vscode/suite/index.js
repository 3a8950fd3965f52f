// Integration tests of the installed openhands-tab VSIX, run inside a real VS Code extension host
// (code-server) by tests/vscode/host.mjs. Contract of test-electron: `run()` throws on failure.
// The backend here is the stand-in fake_backend.py (attach mode, a conversation that exists up
// front): it delegates single actions on demand and plays a keyed backend, which the real server
// (suite/conversation.js) cannot do on request.
// Each test prints "@@oh-test PASS|FAIL <name>"; UI requests to the runner go through "@@oh-ui".
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, sleep, assert, runner, showConsentWhenAsked, uiRequest: ui, typeSessionKey } = require('./lib');
const { editorFsTests } = require('./editor-fs');

const BACKEND = process.env.OH_TEST_BACKEND;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const EXT_ID = 'openhands-vscode-runtime.openhands-tab';

async function backend(pathname, body) {
  const r = await fetch(`${BACKEND}${pathname}`, body === undefined ? {} : {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${pathname}: HTTP ${r.status} ${text}`);
  return JSON.parse(text);
}

exports.run = async () => {
  const run = runner();
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  let api;
  let conversationId;

  await test('the VSIX is installed and activates', async () => {
    const ext = vscode.extensions.getExtension(EXT_ID);
    assert(ext, `${EXT_ID} is not installed`);
    // The VSIX installed into this run's extensions dir, not the checkout's extension/ folder.
    const repo = process.env.OH_TEST_REPO;
    const installed = process.env.OH_TEST_EXTENSIONS_DIR;
    assert(repo && installed, 'OH_TEST_REPO and OH_TEST_EXTENSIONS_DIR must be set by run.sh');
    assert(ext.extensionPath.startsWith(installed + '/') && !ext.extensionPath.startsWith(repo + '/'), `loaded from ${ext.extensionPath}, not the VSIX installed in ${installed}`);
    api = await ext.activate();
    assert(api && typeof api.start === 'function', 'the extension exports no API');
    console.log(`oh-test extension at ${ext.extensionPath}, state ${api.snapshot.state}`);
  });
  if (!api) run.stop();

  await test('attach mode: opening the OpenHands view asks for consent, starts the executor and connects to the configured conversation', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    // The consent notification: open the notification list so the runner clicks "Allow" as a user would.
    await showConsentWhenAsked(vscode, api);
    const snap = await waitFor('the executor to connect (or fail)', () => {
      const s = api.snapshot;
      return ['connected', 'error', 'blocked'].includes(s.state) ? s : undefined;
    }, 60000);
    assert(snap.state === 'connected', `executor state is ${snap.state}: ${snap.message}`);
    conversationId = snap.conversationId;
    const configured = vscode.workspace.getConfiguration('openhands').get('conversation.id');
    assert(conversationId === configured, `executor serves ${conversationId}, settings say ${configured}`);
    const state = await backend('/test/state');
    assert(state[conversationId] && state[conversationId].registered, `backend has no registered executor for ${conversationId}: ${JSON.stringify(state)}`);
    assert(state[conversationId].workspace === root, `executor workspace ${state[conversationId].workspace} != ${root}`);
  });
  if (!conversationId) run.stop();

  await test('a delegated command runs and its output appears in the agent terminal', async () => {
    const obs = await backend('/test/delegate', {
      conversation_id: conversationId,
      action: { action: 'run', message: 'Running command: echo', args: { command: 'echo "hello from the agent $((6*7))" && pwd', is_input: false, thought: '', blocking: false, is_static: false, cwd: null, hidden: false, confirmation_state: 'confirmed', security_risk: -1 } },
      timeout: 60,
    });
    assert(obs.observation === 'run', `observation ${JSON.stringify(obs)}`);
    assert(obs.content.includes('hello from the agent 42'), `content ${JSON.stringify(obs.content)}`);
    assert(obs.content.includes(root), `pwd is not the workspace: ${JSON.stringify(obs.content)}`);
    assert(obs.extras && obs.extras.metadata && obs.extras.metadata.exit_code === 0, `exit code ${JSON.stringify(obs.extras)}`);
    const term = await waitFor('the OpenHands Agent terminal', () => vscode.window.terminals.find((t) => t.name === 'OpenHands Agent'), 10000);
    term.show(true);
    const file = path.join(ARTIFACTS, 'terminal.txt');
    const text = await waitFor('the command output in the terminal', async () => {
      await ui('terminal-text', file);
      const t = fs.readFileSync(file, 'utf8');
      return t.includes('hello from the agent 42') ? t : undefined;
    }, 20000, 500);
    assert(text.includes('echo "hello from the agent $((6*7))" && pwd'), `the command line is not shown:\n${text}`);
  });

  await test('an OH_ACI edit lands on disk and in the open editor', async () => {
    const file = path.join(root, 'src', 'greet.py');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'def greet(name):\n    return "Hello, " + name\n');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    await vscode.window.showTextDocument(doc, { preview: false });
    const obs = await backend('/test/delegate', {
      conversation_id: conversationId,
      action: { action: 'edit', message: '', args: { path: file, command: 'str_replace', file_text: null, old_str: 'return "Hello, " + name', new_str: 'return f"Hello, {name}!"', insert_line: null, content: '', start: 1, end: -1, thought: '', security_risk: -1, impl_source: 'oh_aci' } },
      timeout: 60,
    });
    assert(obs.observation === 'edit', `observation ${JSON.stringify(obs)}`);
    assert(/has been edited/.test(obs.content), `content ${JSON.stringify(obs.content)}`);
    const disk = fs.readFileSync(file, 'utf8');
    assert(disk === 'def greet(name):\n    return f"Hello, {name}!"\n', `disk content ${JSON.stringify(disk)}`);
    await waitFor('the editor to show the edit', () => doc.getText() === disk, 5000);
    assert(!doc.isDirty, 'the editor is dirty after the agent edit');
  });

  // Each path of the agent's reads and edits: disk bytes, editor text, undo (suite/editor-fs.js).
  await editorFsTests({ test, root, delegate: (action) => backend('/test/delegate', { conversation_id: conversationId, action, timeout: 60 }) });

  await test('the view lists the recent actions with their results', async () => {
    const items = api.actions;
    assert(items.length >= 2, `actions: ${JSON.stringify(items)}`);
    const run = items.find((a) => a.kind === 'run');
    const edit = items.find((a) => a.kind === 'edit');
    assert(run && run.status === 'ok' && /exit 0/.test(run.result || ''), `run entry ${JSON.stringify(run)}`);
    assert(edit && edit.status === 'ok', `edit entry ${JSON.stringify(edit)}`);
    assert(!items.some((a) => a.status === 'running'), `an entry is still running: ${JSON.stringify(items)}`);
    // What the user sees in the OpenHands tab (the webview's rendered text).
    await vscode.commands.executeCommand('openhands.view.focus');
    const file = path.join(ARTIFACTS, 'view.txt');
    const text = await waitFor('the view to show the actions', async () => {
      await ui('webview-text', file);
      const t = fs.readFileSync(file, 'utf8');
      return /Executor: Connected/.test(t) && t.includes('echo "hello from the agent') && t.includes('Edited ') ? t : undefined;
    }, 15000, 500);
    assert(text.includes(conversationId), `the view does not show the conversation id:\n${text}`);
    assert(/exit 0/.test(text), `the view does not show the command's result:\n${text}`);
    assert(api.snapshot.state === 'connected', `state ${api.snapshot.state}`);
  });

  // The screenshot is taken whatever happened above (it documents failures too).
  await (async () => {
    try {
      await vscode.commands.executeCommand('openhands.view.focus');
      const term = vscode.window.terminals.find((t) => t.name === 'OpenHands Agent');
      if (term) term.show(true);
      await sleep(1500);
      await ui('screenshot', path.join(ARTIFACTS, 'openhands-tab.png'));
    } catch (e) {
      console.log(`oh-test screenshot failed: ${e}`);
    }
  })();

  await test('the stop command disconnects the executor', async () => {
    await vscode.commands.executeCommand('openhands.stop');
    assert(api.snapshot.state === 'stopped', `state ${api.snapshot.state}`);
    await waitFor('the backend to see the disconnect', async () => {
      const s = await backend('/test/state');
      return s[conversationId] && !s[conversationId].registered;
    }, 10000);
  });

  await test('a server that needs a session API key: error with a fix, key stored via the command, then connected', async () => {
    const keyed = process.env.OH_TEST_KEYED_BACKEND;
    await vscode.workspace.getConfiguration('openhands').update('server.url', keyed, vscode.ConfigurationTarget.Global);
    const starting = api.start();
    // Another server origin: consent is per origin, so it is asked again (the runner clicks Allow).
    const asked = await waitFor('consent to be asked again for the new origin', () => {
      const x = api.snapshot;
      return (x.state === 'starting' && /permission to execute/.test(x.message || '')) || ['connected', 'error'].includes(x.state) ? x : undefined;
    }, 30000, 50);
    assert(asked.state === 'starting', `consent was not asked again for ${keyed}: ${JSON.stringify(asked)}`);
    await vscode.commands.executeCommand('notifications.showList');
    await starting;
    const s = api.snapshot;
    assert(s.state === 'error' && (s.fixes || []).includes('key'), `expected an error offering "Set Session API Key", got ${JSON.stringify(s)}`);
    // As a user would: the command opens a password box; the runner types the key into it.
    await typeSessionKey(vscode, process.env.OH_TEST_KEY, ARTIFACTS);
    const snap = await waitFor('the executor to connect with the key', () => {
      const x = api.snapshot;
      return ['connected', 'error'].includes(x.state) ? x : undefined;
    }, 30000);
    assert(snap.state === 'connected', `state ${snap.state}: ${snap.message}`);
    const r = await fetch(`${keyed}/test/state`);
    const st = await r.json();
    assert(st[snap.conversationId] && st[snap.conversationId].registered, `keyed backend: ${JSON.stringify(st)}`);
    const settings = fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8');
    assert(!settings.includes(process.env.OH_TEST_KEY), 'the key leaked into settings.json');
    await vscode.commands.executeCommand('openhands.stop');
  });

  run.finish('integration');
};
