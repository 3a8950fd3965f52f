// Trust proofs in the real host (issue 10), against the stand-in backend (attach mode), in a
// session of its own because consent is remembered per workspace:
//   1. the consent prompt is shown once however many starts ask at the same time, "Don't Allow"
//      leaves the executor blocked, and the backend saw no request at all (its own counters);
//   2. a later start asks again, "Allow" connects, and a restart does not ask again;
//   3. an agent edit of a file with unsaved changes loses nothing (docs/reliability.md);
//   4. file changes go through `vscode.workspace.fs`: a FileSystemProvider registered here for the
//      `file` scheme serves a file that does not exist on disk; the agent reads and edits it (a
//      file on disk is read there and written through the provider).
// The runner (host.mjs) clicks nothing by itself here: the suite asks it to click a notification's
// button and to list the visible notifications, as a user would see them.
const vscode = require('vscode');
const fs = require('fs');
const fsp = require('fs/promises');
const path = require('path');
const { waitFor, sleep, assert, runner, uiRequester } = require('./lib');

const BACKEND = process.env.OH_TEST_BACKEND;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const PROMPT = 'Allow OpenHands to run commands and edit files';
/** A UI request to the runner (host.mjs); `notifications` returns the list. */
const ui = uiRequester(ARTIFACTS, 30000);

const consentPrompts = async () => (await ui('notifications')).filter((n) => n.text.includes(PROMPT));

async function backend(pathname, body) {
  const r = await fetch(`${BACKEND}${pathname}`, body === undefined ? {} : {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${pathname}: HTTP ${r.status} ${text}`);
  return JSON.parse(text);
}

const editAction = (file, oldStr, newStr) => ({
  action: 'edit', message: '',
  args: { path: file, command: 'str_replace', file_text: null, old_str: oldStr, new_str: newStr, insert_line: null, content: '', start: 1, end: -1, thought: '', security_risk: -1, impl_source: 'oh_aci' },
});

/**
 * A FileSystemProvider for the `file` scheme: everything is the disk (node:fs) except `virtual`,
 * a map of files that exist only here. Records every call. Registering it replaces the extension
 * host's own `file` provider for `vscode.workspace.fs` (one consumer for all extensions).
 */
class RecordingFs {
  constructor(virtual) {
    this.virtual = virtual;
    this.calls = [];
    this.emitter = new vscode.EventEmitter();
    this.onDidChangeFile = this.emitter.event;
  }
  note(op, uri) { this.calls.push([op, uri.fsPath]); }
  watch() { return new vscode.Disposable(() => {}); }
  async stat(uri) {
    this.note('stat', uri);
    const v = this.virtual.get(uri.fsPath);
    if (v) return { type: vscode.FileType.File, ctime: 0, mtime: v.mtime, size: v.data.length };
    try {
      const s = await fsp.stat(uri.fsPath);
      return { type: s.isDirectory() ? vscode.FileType.Directory : vscode.FileType.File, ctime: s.ctimeMs, mtime: s.mtimeMs, size: s.size };
    } catch { throw vscode.FileSystemError.FileNotFound(uri); }
  }
  async readDirectory(uri) {
    this.note('readDirectory', uri);
    const entries = await fsp.readdir(uri.fsPath, { withFileTypes: true });
    return entries.map((e) => [e.name, e.isDirectory() ? vscode.FileType.Directory : vscode.FileType.File]);
  }
  async createDirectory(uri) { this.note('createDirectory', uri); await fsp.mkdir(uri.fsPath); }
  async readFile(uri) {
    this.note('readFile', uri);
    const v = this.virtual.get(uri.fsPath);
    if (v) return v.data;
    try { return await fsp.readFile(uri.fsPath); } catch { throw vscode.FileSystemError.FileNotFound(uri); }
  }
  async writeFile(uri, content) {
    this.note('writeFile', uri);
    if (this.virtual.has(uri.fsPath)) {
      this.virtual.set(uri.fsPath, { data: content, mtime: Date.now() });
      this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
      return;
    }
    await fsp.writeFile(uri.fsPath, content);
  }
  async delete(uri, options) { this.note('delete', uri); await fsp.rm(uri.fsPath, { recursive: Boolean(options?.recursive) }); }
  async rename(from, to) { this.note('rename', from); await fsp.rename(from.fsPath, to.fsPath); }
}

exports.RecordingFs = RecordingFs; // also used by suite/v1.js

exports.run = async () => {
  const run = runner();
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const conversationId = vscode.workspace.getConfiguration('openhands').get('conversation.id');
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  assert(ext, 'openhands-tab is not installed');
  const api = await ext.activate();
  let connected = false;

  await test(`consent: the view's start and three more at once show ONE prompt; "Don't Allow" leaves the executor blocked and the backend saw no request`, async () => {
    const before = await backend('/test/connections');
    assert(api.snapshot.state === 'stopped', `state before the test: ${JSON.stringify(api.snapshot)}`);
    // The view's own start, three more at the same time, and the notification list so every
    // notification is visible (toasts hide while it is open).
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    const starts = [api.start(), api.start(), api.start()];
    await vscode.commands.executeCommand('notifications.showList');
    await waitFor('the consent prompt', async () => (await consentPrompts()).length > 0, 20000, 300);
    // A second prompt would be shown right away by a second start; give the workbench 1.5 s to
    // render one before counting (a fixed wait, listed in tests/README.md: absence has no event).
    await sleep(1500);
    const prompts = await consentPrompts();
    assert(prompts.length === 1, `consent prompts shown: ${JSON.stringify(prompts)}`);
    assert(prompts[0].buttons.includes('Allow') && prompts[0].buttons.includes("Don't Allow"), `buttons ${JSON.stringify(prompts[0].buttons)}`);
    await ui('click-notification', { text: PROMPT, label: "Don't Allow" });
    await Promise.race([Promise.all(starts), sleep(20000).then(() => { throw new Error('the starts did not return after "Don\'t Allow"'); })]);
    const s = api.snapshot;
    assert(s.state === 'blocked' && (s.fixes || []).includes('consent'), `state ${JSON.stringify(s)}`);
    assert((await consentPrompts()).length === 0, 'the consent prompt is still shown');
    const after = await backend('/test/connections');
    console.log(`oh-test backend traffic during the declined start: ${JSON.stringify(after)}`);
    assert(after.namespace_connects === before.namespace_connects, `the executor tried to connect: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
    const st = await backend('/test/state');
    assert(st[conversationId] && !st[conversationId].registered, `backend state ${JSON.stringify(st)}`);
  });

  await test('consent: a later start asks again; "Allow" connects; a restart does not ask again', async () => {
    const starting = api.start();
    await vscode.commands.executeCommand('notifications.showList');
    await waitFor('the consent prompt again', async () => (await consentPrompts()).length > 0, 20000, 300);
    assert((await consentPrompts()).length === 1, 'more than one consent prompt');
    await ui('click-notification', { text: PROMPT, label: 'Allow' });
    await starting;
    const snap = await waitFor('the executor to connect', () => (['connected', 'error'].includes(api.snapshot.state) ? api.snapshot : undefined), 60000);
    assert(snap.state === 'connected', `state ${JSON.stringify(snap)}`);
    const c1 = await backend('/test/connections');
    await api.stop();
    await api.start();
    const again = await waitFor('the executor to reconnect', () => (['connected', 'error', 'blocked'].includes(api.snapshot.state) ? api.snapshot : undefined), 60000);
    assert(again.state === 'connected', `state after the restart ${JSON.stringify(again)}`);
    assert((await consentPrompts()).length === 0, 'the restart asked for consent again');
    const c2 = await backend('/test/connections');
    assert(c2.namespace_connects === c1.namespace_connects + 1, `namespace connects ${c1.namespace_connects} -> ${c2.namespace_connects}`);
    const st = await backend('/test/state');
    assert(st[conversationId] && st[conversationId].registered, `backend state ${JSON.stringify(st)}`);
    connected = true;
  });
  if (!connected) run.stop();

  await test('an agent edit of a file with unsaved changes: the edit is on disk, the editor keeps the unsaved text, a warning offers Compare', async () => {
    const file = path.join(root, 'notes.txt');
    fs.writeFileSync(file, 'line 1\nline 2\n');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    await editor.edit((e) => e.insert(new vscode.Position(2, 0), 'my unsaved line\n'));
    assert(doc.isDirty, 'the editor is not dirty after typing');
    const obs = await backend('/test/delegate', { conversation_id: conversationId, action: editAction(file, 'line 1', 'line one (agent)'), timeout: 60 });
    assert(obs.observation === 'edit' && /has been edited/.test(obs.content), `observation ${JSON.stringify(obs)}`);
    assert(fs.readFileSync(file, 'utf8') === 'line one (agent)\nline 2\n', `disk ${JSON.stringify(fs.readFileSync(file, 'utf8'))}`);
    assert(doc.isDirty, 'the editor lost its unsaved state');
    assert(doc.getText() === 'line 1\nline 2\nmy unsaved line\n', `the editor's text changed: ${JSON.stringify(doc.getText())}`);
    await vscode.commands.executeCommand('notifications.showList');
    let shown = [];
    const warning = await waitFor('the unsaved-changes warning', async () => (shown = await ui('notifications')).find((n) => n.text.includes('notes.txt') && n.text.includes('unsaved changes')), 15000, 300)
      .catch((e) => { throw new Error(`${e.message}; visible notifications: ${JSON.stringify(shown)}`); });
    assert(warning.buttons.includes('Compare'), `warning ${JSON.stringify(warning)}`);
    // Leave the window clean for the next test: drop the user's buffer (the user's choice).
    await vscode.commands.executeCommand('workbench.action.files.revert');
    assert(!doc.isDirty && doc.getText() === 'line one (agent)\nline 2\n', `after revert: ${JSON.stringify(doc.getText())}`);
  });

  await test('file changes go through vscode.workspace.fs: a file that exists only in a FileSystemProvider registered here is read and edited', async () => {
    const virtualPath = path.join(root, 'only-in-provider.txt');
    const diskFile = path.join(root, 'on-disk.txt');
    fs.writeFileSync(diskFile, 'alpha\n');
    const virtual = new Map([[virtualPath, { data: Buffer.from('served by the test provider\n'), mtime: Date.now() }]]);
    const provider = new RecordingFs(virtual);
    const reg = vscode.workspace.registerFileSystemProvider('file', provider, { isCaseSensitive: true });
    try {
      // The hook is live for every consumer of workspace.fs in this extension host.
      const seen = Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.file(virtualPath))).toString();
      assert(seen === 'served by the test provider\n', `workspace.fs does not reach the provider: ${JSON.stringify(seen)}`);
      assert(!fs.existsSync(virtualPath), 'the virtual file exists on disk');
      const read = await backend('/test/delegate', {
        conversation_id: conversationId, timeout: 60,
        action: { action: 'read', message: '', args: { path: virtualPath, start: 0, end: -1, thought: '', security_risk: -1, impl_source: 'oh_aci', view_range: null } },
      });
      assert(read.observation === 'read' && read.content.includes('served by the test provider'), `read ${JSON.stringify(read)}`);
      const edit = await backend('/test/delegate', { conversation_id: conversationId, action: editAction(virtualPath, 'served by', 'edited by the agent through'), timeout: 60 });
      assert(edit.observation === 'edit' && /has been edited/.test(edit.content), `edit ${JSON.stringify(edit)}`);
      const now = Buffer.from(virtual.get(virtualPath).data).toString();
      assert(now === 'edited by the agent through the test provider\n', `provider content ${JSON.stringify(now)}`);
      assert(!fs.existsSync(virtualPath), 'the agent wrote the virtual file to disk, past workspace.fs');
      // A file on disk: read on the local disk (as the agent's shell commands read it), written
      // through the provider.
      const edit2 = await backend('/test/delegate', { conversation_id: conversationId, action: editAction(diskFile, 'alpha', 'beta'), timeout: 60 });
      assert(edit2.observation === 'edit' && fs.readFileSync(diskFile, 'utf8') === 'beta\n', `disk edit ${JSON.stringify(edit2)}`);
      const ops = (p) => provider.calls.filter(([, f]) => f === p).map(([op]) => op);
      assert(ops(virtualPath).includes('readFile') && ops(virtualPath).includes('writeFile'), `provider calls for the virtual file: ${JSON.stringify(ops(virtualPath))}`);
      assert(!ops(diskFile).includes('readFile') && ops(diskFile).includes('writeFile'), `provider calls for the disk file: ${JSON.stringify(ops(diskFile))}`);
      console.log(`oh-test fs provider calls: ${JSON.stringify(provider.calls.map(([op, f]) => `${op} ${path.relative(root, f)}`))}`);
    } finally {
      reg.dispose();
    }
  });

  await test('a workspace .vscode/settings.json naming another server is ignored: nothing reached it', async () => {
    const decoyUrl = process.env.OH_TEST_DECOY_URL;
    const decoyLog = process.env.OH_TEST_DECOY_LOG;
    assert(decoyUrl && decoyLog, 'the runner did not start the decoy listener');
    // The setup is what a hostile repository does: its settings file names the decoy.
    const wsSettings = JSON.parse(fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8'));
    assert(wsSettings['openhands.server.url'] === decoyUrl, `workspace settings ${JSON.stringify(wsSettings)}`);
    // The host does not even report it (application scope); the effective value is the user's.
    const inspected = vscode.workspace.getConfiguration('openhands').inspect('server.url');
    assert(inspected.workspaceValue === undefined && inspected.globalValue === BACKEND, `inspect ${JSON.stringify(inspected)}`);
    // Everything above (the view, its conversation requests, consent, the executor, the agent's
    // actions) ran; one more start and stop for good measure.
    await api.start();
    await api.stop();
    const seen = fs.existsSync(decoyLog) ? fs.readFileSync(decoyLog, 'utf8') : '';
    assert(seen === '', `the decoy server named by the workspace settings was contacted: ${seen.slice(0, 500)}`);
  });

  try { await api.stop(); } catch {}
  run.finish('trust');
};
