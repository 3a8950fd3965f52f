// OpenHands' own confirmation mode in the tab, against the REAL OpenHands server (VsCodeRuntime in
// server mode, CodeActAgent) with the scripted stand-in LLM (fixtures/confirm-llm-script.json,
// every action marked security_risk HIGH). Confirmation mode is turned on the way the web UI does
// (the `confirmation_mode` field of POST /api/settings). Then: a proposed command shown with
// Confirm / Reject (it does not run before Confirm, clicked in the tab), then an edit: OpenHands
// 1.6.0 makes edits at once even in confirmation mode but still waits for an answer, which the tab
// shows as such; Reject clicked in the tab stops the agent. The answers travel as OpenHands'
// agent-state changes (user_confirmed / user_rejected), checked in the server's own event history.
// (The diff-editor review of a held-back edit is unit-tested: extension/src/v0/v0Backend.test.ts.)
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, assertScriptFollowed, runner, showConsentWhenAsked, uiRequest: ui, serverRest, typeSessionKey } = require('./lib');

const SERVER = process.env.OH_TEST_SERVER;
const KEY = process.env.OH_TEST_SERVER_KEY;
const LLM_BASE_URL = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const EXT_ID = 'openhands-vscode-runtime.openhands-tab';
const rest = serverRest(SERVER, KEY);

const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}.json`), { selector, value });


/** waitFor, whose timeout says where the conversation stands (the last items and the state). */
async function waitConv(api, what, f, ms) {
  try {
    return await waitFor(what, f, ms, 300);
  } catch (e) {
    const s = api.conversation.status;
    if (s.conversationId) {
      const r = await rest('GET', `/api/conversations/${s.conversationId}/events?limit=100`).catch(() => undefined);
      if (r) fs.writeFileSync(path.join(ARTIFACTS, 'confirm-events-at-failure.json'), r.body);
    }
    throw new Error(`${e.message}; agent ${s.agentState}, confirmation ${JSON.stringify(s.confirmation)}, last items ${JSON.stringify(api.conversation.items.slice(-4)).slice(0, 1500)}`);
  }
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
    await showConsentWhenAsked(vscode, api); // the runner clicks "Allow"
    await typeSessionKey(vscode, KEY, ARTIFACTS);
    await waitFor('the tab to accept messages', () => api.conversation.status.canSend, 60000);
  });

  await test('confirmation mode: a proposed command waits with Confirm / Reject; Confirm in the tab runs it', async () => {
    await vscode.commands.executeCommand('openhands.view.focus');
    await act('webview-fill', '#input', 'Fix add() in src/calc.py.');
    await act('webview-click', '#send');
    const c = await waitConv(api, 'the command to await confirmation', () => api.conversation.status.confirmation, 120000);
    assert(c.kind === 'command' && /^echo confirmed-run > ran.txt/.test(c.title), `confirmation ${JSON.stringify(c)}`);
    assert(api.conversation.status.agentState === 'awaiting_user_confirmation', `state ${api.conversation.status.agentState}`);
    // The server holds the action (awaiting_user_confirmation) instead of sending it to the runtime.
    assert(!fs.existsSync(path.join(root, 'ran.txt')), 'the command ran before it was confirmed');
    await ui('screenshot', path.join(ARTIFACTS, 'confirm-command.png'));
    await act('webview-click', '#confirm-yes');
    await waitFor('the confirmed command to run', () => fs.existsSync(path.join(root, 'ran.txt')), 60000);
    const item = await waitFor('the action to show its answer and output', () => api.conversation.items.find((i) => i.kind === 'action' && /confirmed-run/.test(i.title) && i.status === 'ok'), 30000);
    assert(item.confirmation === 'confirmed' && /return a - b/.test(item.output), `item ${JSON.stringify(item)}`);
  });

  await test('confirmation mode: an edit (OpenHands 1.6.0 does not hold edits back) still waits for an answer: the tab says it is done already; Reject stops the agent', async () => {
    // Upstream fact, checked here so a change shows: FileEditAction has no confirmation_state
    // field, so the event stream's copy loses the flag and the runtime makes the edit at once,
    // while the agent waits in awaiting_user_confirmation. No diff is offered for an edit already made.
    const c = await waitConv(api, 'the edit to await an answer', () => {
      const x = api.conversation.status.confirmation;
      return x && x.kind === 'edit' ? x : undefined;
    }, 90000);
    assert(c.alreadyDone === true && c.diffShown === false && /calc\.py/.test(c.title), `confirmation ${JSON.stringify(c)}`);
    await waitFor('the edit on disk', () => fs.readFileSync(calc, 'utf8') === 'def add(a, b):\n    return a + b\n', 30000);
    assert(proposedTabs().length === 0, 'a diff was offered for an edit already made');
    await ui('screenshot', path.join(ARTIFACTS, 'confirm-edit.png'));
    await act('webview-click', '#confirm-no');
    await waitConv(api, 'the agent to wait for the user', () => api.conversation.status.agentState === 'awaiting_user_input', 60000);
    const items = api.conversation.items.filter((i) => i.kind === 'action' && i.action === 'edit');
    assert(items.length >= 1 && items[0].confirmation === 'rejected', `edit items ${JSON.stringify(items)}`);
    assert(!api.conversation.status.confirmation, 'the bar is still shown');
  });

  await test('confirmation mode: the server recorded the answers as OpenHands events (user_confirmed, user_rejected)', async () => {
    const id = api.conversation.status.conversationId;
    const r = await rest('GET', `/api/conversations/${id}/events?limit=100`);
    assert(r.status === 200, `events ${r.status} ${r.body.slice(0, 200)}`);
    const events = JSON.parse(r.body).events;
    fs.writeFileSync(path.join(ARTIFACTS, 'confirm-events.json'), JSON.stringify(events, null, 2));
    const states = events.filter((e) => e.observation === 'agent_state_changed').map((e) => e.extras.agent_state);
    const answers = events.filter((e) => e.action === 'change_agent_state' && e.source === 'user').map((e) => e.args.agent_state);
    assert(JSON.stringify(answers) === JSON.stringify(['user_confirmed', 'user_rejected']), `answers ${JSON.stringify(answers)}`);
    assert(states.filter((s) => s === 'user_confirmed').length === 1 && states.filter((s) => s === 'user_rejected').length === 1, `states ${JSON.stringify(states)}`);
    assert(events.some((e) => e.action === 'run' && e.args.confirmation_state === 'confirmed' && /confirmed-run/.test(e.args.command)), 'no re-added confirmed command');
    await assertScriptFollowed(LLM_BASE_URL);
  });

  run.finish('confirmation mode');
};
