// OpenHands' own confirmation mode in the tab, against the REAL OpenHands server (VsCodeRuntime in
// server mode, CodeActAgent) with the scripted stand-in LLM (fixtures/confirm-llm-script.json,
// every action marked security_risk HIGH). Confirmation mode is turned on the way the web UI does
// (the `confirmation_mode` field of POST /api/settings). Then: a proposed command shown with
// Confirm / Reject (Confirm clicked in the tab: it runs), a proposed edit shown in VS Code's diff
// editor (Accept clicked in its title bar: the agent makes it), a command rejected in the tab (it
// never runs). The answers travel as OpenHands' agent-state changes (user_confirmed /
// user_rejected), checked in the server's own event history.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, sleep, assert, runner } = require('./lib');

const SERVER = process.env.OH_TEST_SERVER;
const KEY = process.env.OH_TEST_SERVER_KEY;
const LLM_BASE_URL = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const EXT_ID = 'openhands.openhands-tab';

async function ui(verb, file, payload) {
  if (payload !== undefined) fs.writeFileSync(file, typeof payload === 'string' ? payload : JSON.stringify(payload));
  try { fs.unlinkSync(`${file}.done`); } catch {}
  console.log(`@@oh-ui ${verb} ${file}`);
  await waitFor(`runner to ${verb}`, () => fs.existsSync(`${file}.done`), 40000);
  const answer = fs.readFileSync(`${file}.done`, 'utf8');
  if (answer.startsWith('error')) throw new Error(`${verb}: ${answer}`);
  return answer;
}
const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}.json`), { selector, value });

async function rest(method, pathname, body) {
  const r = await fetch(`${SERVER}${pathname}`, {
    method, headers: { 'content-type': 'application/json', 'X-Session-API-Key': KEY }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.text() };
}

const proposedTabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'openhands-proposed');

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const calc = path.join(root, 'src', 'calc.py');
  let api;

  await test('confirmation mode: the tab joins the real server; confirmation mode on as the web UI sets it', async () => {
    fs.mkdirSync(path.dirname(calc), { recursive: true });
    fs.writeFileSync(calc, 'def add(a, b):\n    return a - b\n');
    const s = await rest('POST', '/api/settings', {
      llm_model: 'openai/scripted', llm_base_url: LLM_BASE_URL, llm_api_key: 'scripted-llm-key', agent: 'CodeActAgent',
      confirmation_mode: true, language: 'en', user_consents_to_analytics: false,
    });
    assert(s.status === 200, `POST /api/settings: ${s.status} ${s.body}`);
    const got = JSON.parse((await rest('GET', '/api/settings')).body);
    assert(got.confirmation_mode === true, `settings ${JSON.stringify(got)}`);
    api = await vscode.extensions.getExtension(EXT_ID).activate();
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    await sleep(1500);
    await vscode.commands.executeCommand('notifications.showList'); // the runner clicks "Allow"
    const keyFile = path.join(ARTIFACTS, 'server-key.txt');
    fs.writeFileSync(keyFile, KEY);
    const done = vscode.commands.executeCommand('openhands.setSessionApiKey');
    await ui('type-quickinput', keyFile);
    fs.unlinkSync(keyFile);
    await done;
    await waitFor('the tab to accept messages', () => api.conversation.status.canSend, 60000);
  });

  await test('confirmation mode: a proposed command waits with Confirm / Reject; Confirm in the tab runs it', async () => {
    await vscode.commands.executeCommand('openhands.view.focus');
    await act('webview-fill', '#input', 'Fix add() in src/calc.py.');
    await act('webview-click', '#send');
    const c = await waitFor('the command to await confirmation', () => api.conversation.status.confirmation, 120000, 300);
    assert(c.kind === 'command' && /^echo confirmed-run > ran.txt/.test(c.title), `confirmation ${JSON.stringify(c)}`);
    assert(api.conversation.status.agentState === 'awaiting_user_confirmation', `state ${api.conversation.status.agentState}`);
    await sleep(1500);
    assert(!fs.existsSync(path.join(root, 'ran.txt')), 'the command ran before it was confirmed');
    await ui('screenshot', path.join(ARTIFACTS, 'confirm-command.png'));
    await act('webview-click', '#confirm-yes');
    await waitFor('the confirmed command to run', () => fs.existsSync(path.join(root, 'ran.txt')), 60000);
    const item = await waitFor('the action to show its answer and output', () => api.conversation.items.find((i) => i.kind === 'action' && /confirmed-run/.test(i.title) && i.status === 'ok'), 30000);
    assert(item.confirmation === 'confirmed' && /return a - b/.test(item.output), `item ${JSON.stringify(item)}`);
  });

  await test('confirmation mode: a proposed edit opens in the diff editor; Accept in its title bar lets the agent make it', async () => {
    await waitFor('the edit to await confirmation', () => api.conversation.status.confirmation && api.conversation.status.confirmation.kind === 'edit', 90000, 300);
    const tab = await waitFor('the diff editor of the proposed edit', () => proposedTabs()[0], 30000);
    assert(tab.input.original.fsPath === calc, `left ${tab.input.original.toString()}`);
    const proposed = (await vscode.workspace.openTextDocument(tab.input.modified)).getText();
    assert(proposed === 'def add(a, b):\n    return a + b\n', `proposed ${JSON.stringify(proposed)}`);
    assert(fs.readFileSync(calc, 'utf8').includes('a - b'), 'the edit was made before it was accepted');
    assert(api.conversation.status.confirmation.diffShown === true, 'the tab does not say the diff is open');
    await sleep(500);
    await ui('screenshot', path.join(ARTIFACTS, 'confirm-edit-diff.png'));
    await ui('workbench-click', path.join(ARTIFACTS, 'ui-accept.json'), { selector: '.editor-actions [aria-label^="Accept Proposed Change"]' });
    await waitFor('the agent to make the edit', () => fs.readFileSync(calc, 'utf8') === 'def add(a, b):\n    return a + b\n', 60000, 300);
    await waitFor('the diff tab to close', () => proposedTabs().length === 0, 10000);
  });

  await test('confirmation mode: Reject in the tab: the command never runs and the agent waits for the user', async () => {
    const c = await waitFor('the third action to await confirmation', () => {
      const x = api.conversation.status.confirmation;
      return x && /should-not-run/.test(x.title) ? x : undefined;
    }, 90000, 300);
    assert(c.kind === 'command', `confirmation ${JSON.stringify(c)}`);
    await act('webview-click', '#confirm-no');
    await waitFor('the agent to wait for the user', () => api.conversation.status.agentState === 'awaiting_user_input', 60000, 300);
    await sleep(1000);
    assert(!fs.existsSync(path.join(root, 'rejected.txt')), 'the rejected command ran');
    const item = api.conversation.items.filter((i) => i.kind === 'action' && /should-not-run/.test(i.title));
    assert(item.length === 1 && item[0].confirmation === 'rejected', `items ${JSON.stringify(item)}`);
  });

  await test('confirmation mode: the server recorded the answers as OpenHands events (user_confirmed, user_rejected)', async () => {
    const id = api.conversation.status.conversationId;
    const r = await rest('GET', `/api/conversations/${id}/events?limit=100`);
    assert(r.status === 200, `events ${r.status} ${r.body.slice(0, 200)}`);
    const events = JSON.parse(r.body).events;
    fs.writeFileSync(path.join(ARTIFACTS, 'confirm-events.json'), JSON.stringify(events, null, 2));
    const states = events.filter((e) => e.observation === 'agent_state_changed').map((e) => e.extras.agent_state);
    const answers = events.filter((e) => e.action && e.args && ['confirmed', 'rejected'].includes(e.args.confirmation_state)).map((e) => `${e.action}:${e.args.confirmation_state}`);
    assert(states.filter((s) => s === 'user_confirmed').length === 2 && states.filter((s) => s === 'user_rejected').length === 1, `states ${JSON.stringify(states)}`);
    assert(JSON.stringify(answers) === JSON.stringify(['run:confirmed', 'edit:confirmed', 'run:rejected']), `answers ${JSON.stringify(answers)}`);
  });

  run.finish('confirmation mode');
};
