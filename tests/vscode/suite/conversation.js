// The OpenHands tab against the REAL OpenHands server (openhands.server.listen:app with
// VsCodeRuntime in server mode, the real CodeActAgent and agent controller; the LLM is the
// scripted stand-in of tests/vscode/fixtures/conversation-llm-script.json). Run by run.sh through
// host.mjs; a user's steps, from nothing to a first task done:
//   session API key (command + password box) -> the tab says the server has no LLM settings and
//   shows the form -> model, base URL, key typed into the form -> the task typed into the message
//   box -> the agent's commands in the agent terminal, its edit on disk and in the open editor,
//   its final message and the finished state in the tab.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, sleep, assert, assertScriptFollowed, runner, showConsentWhenAsked, uiRequest: ui, serverRest, typeSessionKey, fillLlmForm } = require('./lib');

const SERVER = process.env.OH_TEST_SERVER;
const KEY = process.env.OH_TEST_SERVER_KEY;
const LLM_BASE_URL = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const EXT_ID = 'openhands-vscode-runtime.openhands-tab';
const rest = serverRest(SERVER, KEY);
const TASK = 'Make greet() in src/greet.py greet with an exclamation mark, then check it.';


const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}.json`), { selector, value });

async function tabText() {
  const file = path.join(ARTIFACTS, 'conversation-view.txt');
  await ui('webview-text', file);
  return fs.readFileSync(file, 'utf8');
}


exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const greet = path.join(root, 'src', 'greet.py');
  let api;
  let doc;

  await test('real server: the tab says the session API key is needed, then that the server has no LLM settings', async () => {
    api = await vscode.extensions.getExtension(EXT_ID).activate();
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    // The one-time consent notification: the runner clicks "Allow" as a user would.
    await showConsentWhenAsked(vscode, api);
    const refused = await waitFor('the tab to report the refused key', () => api.conversation.status.problems.find((p) => p.id === 'server'), 30000);
    assert(refused.fixes.some((f) => f.fix === 'key'), `problem without "Set Session API Key": ${JSON.stringify(refused)}`);
    await typeSessionKey(vscode, KEY, ARTIFACTS);
    const status = await waitFor('the LLM settings form', () => (api.conversation.status.llmForm ? api.conversation.status : undefined), 30000);
    assert(status.llmForm.required && !status.canSend, `status ${JSON.stringify(status)}`);
    const text = await waitFor('the form in the tab', async () => {
      const t = await tabText();
      return /no LLM settings/.test(t) && /LLM settings of the OpenHands server/.test(t) ? t : undefined;
    }, 20000, 500);
    assert(text.includes('Set LLM Model and Key'), `the problem has no fix button:\n${text}`);
  });

  await test('real server: model, base URL and key typed into the form reach the server (the key never in settings.json)', async () => {
    await fillLlmForm(act, api, { baseUrl: LLM_BASE_URL });
    const s = await rest('GET', '/api/settings');
    assert(s.status === 200, `GET /api/settings: ${s.status} ${s.body}`);
    const settings = JSON.parse(s.body);
    assert(settings.llm_model === 'openai/scripted' && settings.llm_base_url === LLM_BASE_URL && settings.llm_api_key_set === true, `server settings ${s.body}`);
    const local = fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8');
    assert(!local.includes('scripted-llm-key') && !local.includes(KEY), 'a key leaked into settings.json');
  });

  await test('real server: the task typed into the tab runs: commands in the agent terminal, the edit on disk and in the open editor', async () => {
    fs.mkdirSync(path.dirname(greet), { recursive: true });
    fs.writeFileSync(greet, 'def greet(name):\n    return "Hello, " + name\n');
    doc = await vscode.workspace.openTextDocument(vscode.Uri.file(greet));
    await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: true });
    await vscode.commands.executeCommand('openhands.view.focus');
    await act('webview-fill', '#input', TASK);
    await act('webview-click', '#send');
    // The executor follows the tab: it serves the conversation the tab just created.
    const snap = await waitFor('the executor to serve the new conversation', () => {
      const s = api.snapshot;
      const c = api.conversation.status.conversationId;
      return c && s.conversationId === c && ['connected', 'executing'].includes(s.state) ? s : undefined;
    }, 90000);
    console.log(`oh-test conversation ${snap.conversationId}`);
    // Mid-conversation: the slow check command is running. Photograph the tab.
    await waitFor('the agent to run its check', () => api.conversation.items.find((i) => i.kind === 'action' && /^sleep 8/.test(i.title) && i.status === 'running'), 90000, 200);
    // What the picture below is meant to show, asserted in the webview's rendered text: the check
    // command listed as running (the picture itself asserts nothing and is not counted).
    await waitFor('the tab to show the check command running', async () => {
      const t = await tabText();
      return t.includes('sleep 8') && t.includes('running…') ? t : undefined;
    }, 6000, 300);
    const term = vscode.window.terminals.find((t) => t.name === 'OpenHands Agent');
    if (term) term.show(true);
    // A wider side bar (and no empty secondary one), so the photographed conversation reads well.
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar').then(undefined, () => undefined);
    await vscode.commands.executeCommand('workbench.action.focusSideBar');
    for (let i = 0; i < 4; i++) await vscode.commands.executeCommand('workbench.action.increaseViewSize');
    await vscode.commands.executeCommand('openhands.view.focus');
    await sleep(1200);
    await ui('screenshot', path.join(ARTIFACTS, 'openhands-tab-conversation.png'));
    await waitFor('the agent to finish', () => api.conversation.status.agentState === 'finished', 90000);
    const disk = fs.readFileSync(greet, 'utf8');
    assert(disk === 'def greet(name):\n    return f"Hello, {name}!"\n', `disk content ${JSON.stringify(disk)}`);
    await waitFor('the editor to show the edit', () => doc.getText() === disk, 5000);
    assert(!doc.isDirty, 'the editor is dirty after the agent edit');
    const file = path.join(ARTIFACTS, 'conversation-terminal.txt');
    const text = await waitFor('the commands in the agent terminal', async () => {
      if (term) term.show(true);
      await ui('terminal-text', file);
      const t = fs.readFileSync(file, 'utf8');
      return t.includes('ls src && cat src/greet.py') && t.includes('Hello, VS Code!') ? t : undefined;
    }, 20000, 500);
    assert(text.includes('sleep 8 && python3'), `the check command is not in the terminal:\n${text}`);
    // The whole prompt before each command: the one left waiting as the cursor's line (which
    // xterm.js does not reflow) was cut to its first 19 columns when the panel was laid out.
    assert(text.includes(`${root} $ ls src && cat src/greet.py`), `the prompt before the first command is not whole:\n${text}`);
  });

  await test('real server: the tab shows the conversation, the agent\'s final message and the finished state', async () => {
    const items = api.conversation.items;
    const kinds = items.map((i) => i.kind);
    assert(items.some((i) => i.kind === 'message' && i.role === 'user' && i.text === TASK), `no user message: ${JSON.stringify(kinds)}`);
    const actions = items.filter((i) => i.kind === 'action');
    assert(actions.length >= 3 && actions.every((a) => a.status === 'ok'), `actions ${JSON.stringify(actions.map((a) => [a.title, a.status, a.exitCode]))}`);
    const edit = actions.find((a) => a.action === 'edit');
    assert(edit && (edit.diff || []).some((l) => l.includes('Hello, {name}!')), `the edit shows no diff: ${JSON.stringify(edit)}`);
    const finish = items.find((i) => i.kind === 'finish');
    assert(finish && finish.text.includes('Hello, <name>!'), `final message ${JSON.stringify(finish)}`);
    await assertScriptFollowed(LLM_BASE_URL); // a mismatch also ends in a finish
    const text = await waitFor('the final message and state in the tab', async () => {
      const t = await tabText();
      return t.includes('Agent: Finished') && t.includes('now returns Hello, <name>!') ? t : undefined;
    }, 20000, 500);
    assert(text.includes('Agent finished'), `no finished state line:\n${text}`);
    assert(!text.includes('**'), `Markdown was not rendered:\n${text}`);
    assert(api.conversation.status.canContinue, 'a finished conversation cannot be continued');
  });

  await test('real server: reopening the conversation shows it again without sending anything twice', async () => {
    const before = api.conversation.items.map((i) => `${i.key}:${i.kind}`);
    const users = api.conversation.items.filter((i) => i.kind === 'message' && i.role === 'user').length;
    const id = api.conversation.status.conversationId;
    // What a new window does: the conversation from workspaceState, its history from the server,
    // the socket from the latest event id on.
    await api.conversation.reopen();
    await waitFor('the tab to show the same conversation again', () => api.conversation.status.conversationId === id && api.conversation.status.joined && api.conversation.items.length >= before.length, 30000)
      .catch((e) => { throw new Error(`${e.message}: before ${JSON.stringify(before)}, now ${JSON.stringify(api.conversation.items.map((i) => `${i.key}:${i.kind}`))} ${JSON.stringify(api.conversation.status)}`); });
    const now = api.conversation.items.map((i) => `${i.key}:${i.kind}`);
    assert(before.every((k) => now.includes(k)), `entries missing after reopening: before ${JSON.stringify(before)}, now ${JSON.stringify(now)}`);
    await sleep(2000); // anything sent twice would have been echoed by now
    const after = api.conversation.items.filter((i) => i.kind === 'message' && i.role === 'user').length;
    assert(after === users, `user messages ${users} -> ${after}`);
    const events = JSON.parse((await rest('GET', `/api/conversations/${id}/events?start_id=0&limit=100`)).body).events;
    const sent = events.filter((e) => e.action === 'message' && e.source === 'user');
    assert(sent.length === 1, `the server received the task ${sent.length} times`);
  });

  await test('real server: the executor follows the tab: New and the picker retarget it', async () => {
    const first = api.conversation.status.conversationId;
    await act('webview-click', '#new');
    const second = await waitFor('a new conversation served by the executor', () => {
      const c = api.conversation.status.conversationId;
      const s = api.snapshot;
      return c && c !== first && s.conversationId === c && ['connected', 'executing'].includes(s.state) ? c : undefined;
    }, 90000);
    await waitFor('the new conversation to be joined', () => api.conversation.status.joined, 30000);
    assert(!api.conversation.items.some((i) => i.kind === 'message'), 'the new conversation shows messages of the old one');
    // Back to the first one through the conversation picker, as a user would.
    await act('webview-select', '#conversation', first);
    await waitFor('the executor to serve the first conversation again', () => {
      const s = api.snapshot;
      return api.conversation.status.conversationId === first && s.conversationId === first && ['connected', 'executing'].includes(s.state);
    }, 90000);
    await waitFor('its history in the tab', () => api.conversation.items.some((i) => i.kind === 'finish'), 30000);
    console.log(`oh-test switched ${first} -> ${second} -> ${first}`);
  });

  await test('real server: "Revert files to before this" restores the agent\'s edit on disk and in the open editor, and reports a dirty editor', async () => {
    const before = 'def greet(name):\n    return "Hello, " + name\n';
    // A file created after the message, open with unsaved changes: the revert would delete it,
    // so it must be left alone and reported.
    const notes = path.join(root, 'notes.txt');
    fs.writeFileSync(notes, 'saved\n');
    const notesDoc = await vscode.workspace.openTextDocument(vscode.Uri.file(notes));
    const notesEditor = await vscode.window.showTextDocument(notesDoc, { preview: false, preserveFocus: true });
    await notesEditor.edit((b) => b.insert(new vscode.Position(0, 0), 'unsaved '));
    assert(notesDoc.isDirty, 'notes.txt is not dirty');
    await vscode.commands.executeCommand('openhands.view.focus');
    await act('webview-click', '.msg.user button.revert');
    // The list of files opens; its first entry applies the revert (what Enter does). Accepting
    // before the list shows does nothing, so it is pressed until the file is back.
    await waitFor('the revert to restore src/greet.py', async () => {
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      return fs.readFileSync(greet, 'utf8') === before;
    }, 60000, 500);
    await waitFor('the open editor to show the file as before', () => doc.getText() === before && !doc.isDirty, 10000);
    const lines = () => JSON.stringify(api.conversation.items.filter((i) => i.kind === 'status').map((i) => i.text));
    const onDisk = fs.existsSync(notes) ? fs.readFileSync(notes, 'utf8') : '(deleted)';
    assert(onDisk === 'saved\n', `the dirty file was changed on disk: ${JSON.stringify(onDisk)}; dirty ${notesDoc.isDirty}; ${lines()}`);
    assert(notesDoc.isDirty && notesDoc.getText() === 'unsaved saved\n', `the dirty editor changed: ${JSON.stringify(notesDoc.getText())}`);
    const note = await waitFor('the revert line in the conversation', () => api.conversation.items.find((i) => i.kind === 'status' && /^Files reverted to before message/.test(i.text)), 10000);
    assert(note.text.includes(`Left alone: ${notes} (has unsaved changes in an editor)`), `revert line ${JSON.stringify(note.text)}`);
    const text = await waitFor('the revert line in the tab', async () => {
      const t = await tabText();
      return t.includes('Files reverted to before message') ? t : undefined;
    }, 20000, 500);
    assert(text.includes('has unsaved changes in an editor'), `the tab does not report the dirty editor:\n${text}`);
    // No save prompt at exit.
    await vscode.window.showTextDocument(notesDoc);
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  run.finish('conversation');
};
exports.activate = () => {};
