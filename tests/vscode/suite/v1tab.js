// The OpenHands tab on V1, in the real VS Code host, against the REAL agent-server (this
// package's V1 tools, OH_VSCODE_SPAWN_EXECUTOR=0): OH_TEST_V1TAB_MODE=managed, the one the
// extension starts itself (no V0 server configured, `openhands.v1.python` = the V1 venv; its URL,
// key and discovery folder are read back from the extension's API for the checks only), or
// `attach`, one started by run.sh (`openhands.v1.url` in the user settings, the key typed into
// "Set Session API Key"); and the scripted stand-in LLM (fixtures/v1tab-llm-script.json, which refuses any key but
// `scripted-llm-key`). The user only types into the tab: the window's executor finds each
// conversation's channel by itself (its discovery file), no id or key is copied.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, sleep, assert, assertScriptFollowed, runner, showConsentWhenAsked, uiRequest: ui, typeSessionKey, fillLlmForm } = require('./lib');

const MANAGED = process.env.OH_TEST_V1TAB_MODE !== 'attach';
// Attach: given by run.sh. Managed: read from the extension's API once its agent-server runs.
let AGENT_SERVER = process.env.OH_TEST_AGENT_SERVER;
let AGENT_KEY = process.env.OH_TEST_AGENT_KEY;
const LLM = process.env.OH_TEST_LLM_BASE_URL;
let DISCOVERY = process.env.OH_TEST_V1_DISCOVERY;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';

let seq = 0;
const note = (m) => console.log(`oh-test v1tab: ${m}`);
/** `p`, or a failure naming `what` after `ms` (a command waiting on a prompt must not hang the session). */
const within = (p, ms, what) => Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))]);
const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}-${++seq}.json`), { selector, value });

async function tabText() {
  const file = path.join(ARTIFACTS, `v1tab-view-${++seq}.txt`);
  await ui('webview-text', file);
  return fs.readFileSync(file, 'utf8');
}

async function agentServer(method, pathname) {
  const r = await fetch(`${AGENT_SERVER}${pathname}`, { method, headers: { 'x-session-api-key': AGENT_KEY } });
  return { status: r.status, body: await r.text() };
}

async function llmRequests() {
  const r = await fetch(`${LLM.replace(/\/+$/, '')}/scripted/mismatches`);
  return (await r.json()).requests;
}

/** Types a task into the tab's message box and sends it, as a user does. */
async function typeTask(text) {
  await vscode.commands.executeCommand('openhands.view.focus');
  await act('webview-fill', '#input', text);
  await act('webview-click', '#send');
}

/** A fresh conversation from the tab's "New conversation" button; resolves with its id. */
async function newConversation(api, before) {
  await act('webview-click', '#new');
  return waitFor('the new conversation', () => {
    const id = api.conversation.status.conversationId;
    return id && id !== before && api.conversation.status.canSend ? id : undefined;
  }, 120000, 200);
}

function item(api, f) {
  return api.conversation.items.find(f);
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  let api;
  let convA;
  let docA;

  try {
    const how = MANAGED ? 'V1 managed: opening the tab starts the agent-server' : 'V1 attach: the tab reaches the agent-server once its key is set';
    await test(`${how}, asks for the LLM, and a refused LLM key shows a fix button`, async () => {
      api = await ext.activate();
      await vscode.commands.executeCommand('workbench.view.extension.openhands');
      // Opening the tab starts the executor, which asks for consent once per workspace (the runner clicks Allow).
      await showConsentWhenAsked(vscode, api, 60000);
      if (MANAGED) {
        const v0 = vscode.workspace.getConfiguration('openhands').inspect('server.url');
        assert(v0.globalValue === undefined, `a V0 server is configured: ${v0.globalValue}`);
        await waitFor('the agent-server the extension starts', () => {
          if (api.agentServer.state === 'crashed') throw new Error(`agent-server crashed: ${api.agentServer.error}`);
          return api.agentServer.state === 'running';
        }, 180000, 300);
        const c = await api.agentServer.connection();
        AGENT_SERVER = c.baseUrl;
        AGENT_KEY = c.sessionApiKey;
        DISCOVERY = c.discoveryDir;
        assert(/^http:\/\/127\.0\.0\.1:\d+$/.test(AGENT_SERVER) && AGENT_KEY && DISCOVERY, `connection ${AGENT_SERVER} ${DISCOVERY}`);
        note(`the extension's agent-server: ${AGENT_SERVER} (pid ${api.agentServer.pid})`);
      } else {
        const refused = await waitFor('the tab to report the missing agent-server key', () => api.conversation.status.problems.find((p) => p.id === 'server'), 30000);
        assert(refused.fixes.some((f) => f.fix === 'key'), `problem without "Set Session API Key": ${JSON.stringify(refused)}`);
        await typeSessionKey(vscode, AGENT_KEY, ARTIFACTS);
      }
      const s = await waitFor('the LLM form', () => {
        const st = api.conversation.status;
        return st.llmForm && !st.problems.some((p) => p.id === 'server') ? st : undefined;
      }, 30000);
      assert(s.llmForm.required && !s.canSend && s.serverUrl === AGENT_SERVER, `status ${JSON.stringify(s)}`);
      note('the LLM form is required; starting the IDE tools endpoint');
      // This window's IDE tools endpoint (its own consent, clicked by the runner) for the agents' MCP configuration.
      const serving = vscode.commands.executeCommand('openhands.ide.startServer');
      await sleep(1500);
      await vscode.commands.executeCommand('notifications.showList');
      await within(serving, 60000, 'the IDE tools endpoint to start (its consent)');
      const mcp = await within(vscode.commands.executeCommand('openhands.ide.copyClientConfig'), 10000, 'the MCP client configuration');
      note('IDE tools served; typing the LLM settings with a wrong key');
      assert(mcp && /127\.0\.0\.1/.test(mcp), `the IDE tools endpoint is not served: ${mcp}`);
      await fillLlmForm(act, api, { baseUrl: LLM, key: 'a-wrong-key' });
      await typeTask('conversation X: the key is wrong');
      await showConsentWhenAsked(vscode, api, 120000);
      note(`executor ${api.snapshot.state}; waiting for the refused key`);
      const problem = await waitFor('the refused LLM key in the tab', () => {
        const other = api.conversation.status.problems.find((p) => p.id === 'server' || p.id === 'send');
        if (other) throw new Error(`the tab reports: ${other.message}`);
        return api.conversation.status.problems.find((p) => p.id === 'llm-auth');
      }, 120000, 300);
      assert(problem.fixes.some((f) => f.fix === 'llm'), `no LLM fix: ${JSON.stringify(problem)}`);
      const text = await waitFor('the fix button in the tab', async () => {
        const t = await tabText();
        return t.includes('Set LLM Model and Key') && /refused the API key/.test(t) ? t : undefined;
      }, 20000, 500);
      assert(!fs.readFileSync(path.join(root, '.vscode', 'settings.json'), 'utf8').includes(AGENT_KEY), 'the agent-server key leaked into settings.json');
      // The fix: the form again, with the right key.
      await act('webview-click', 'button.fix[data-fix="llm"]');
      await waitFor('the LLM form', () => api.conversation.status.llmForm, 10000);
      await act('webview-fill', '#llm-key', 'scripted-llm-key');
      await act('webview-click', '#llm-save');
      await waitFor('the form to close', () => !api.conversation.status.llmForm && !api.conversation.status.problems.some((p) => p.id === 'llm-auth'), 30000);
      console.log(`oh-test v1tab refused-key conversation ${api.conversation.status.conversationId} (${text.length} chars of tab text)`);
    });

    await test('a task typed into the tab runs in this window: the command in the agent terminal, the edit through workspace.fs with its diff in the tab', async () => {
      note('conversation A');
      const notesA = path.join(root, 'notes-A.txt');
      docA = await vscode.workspace.openTextDocument(vscode.Uri.file(notesA));
      await vscode.window.showTextDocument(docA, { preview: false, preserveFocus: true });
      convA = await newConversation(api, api.conversation.status.conversationId);
      await typeTask('conversation A: mark the shell, edit the notes, check the diagnostics');
      const snap = await waitFor('the executor to serve conversation A', () => {
        const s = api.snapshot;
        return s.conversationId === convA && ['connected', 'executing'].includes(s.state) ? s : undefined;
      }, 120000, 200);
      assert(snap.serverUrl !== AGENT_SERVER && /^http:\/\/127\.0\.0\.1:\d+$/.test(snap.serverUrl), `executor channel ${snap.serverUrl}`);
      const run0 = await waitFor('the first command to finish', () => item(api, (i) => i.kind === 'action' && i.action === 'run' && /mark the shell|OH_TAB_VAR/.test(i.title) && i.status !== 'running'), 120000, 200);
      assert(run0.status === 'ok' && run0.exitCode === 0 && /before: unset/.test(run0.output) && /mark A/.test(run0.output), `first command ${JSON.stringify(run0)}`);
      const parent = Number(fs.readFileSync(path.join(root, 'shell-parent-A.txt'), 'utf8').trim());
      assert(parent === process.pid, `the agent's shell has parent ${parent}, the extension host is ${process.pid}`);
      const edit = await waitFor('the edit', () => item(api, (i) => i.kind === 'action' && i.action === 'edit' && i.status !== 'running'), 60000, 200);
      assert(edit.status === 'ok' && (edit.diff || []).includes('- draft notes of A') && (edit.diff || []).includes('+ final notes of A'), `edit ${JSON.stringify(edit)}`);
      assert(fs.readFileSync(notesA, 'utf8') === 'final notes of A\n', 'notes-A.txt on disk');
      await waitFor('the open editor to show the edit', () => docA.getText() === 'final notes of A\n' && !docA.isDirty, 10000);
      const file = path.join(ARTIFACTS, 'v1tab-terminal.txt');
      // Each conversation has its own agent terminal, named after it (the window's executor pool).
      const termName = `OpenHands Agent ${convA.replace(/-/g, '').slice(0, 8)}`;
      const term = vscode.window.terminals.find((t) => t.name === termName);
      assert(term, `no terminal "${termName}" in ${JSON.stringify(vscode.window.terminals.map((t) => t.name))}`);
      term.show(true);
      await waitFor('the command in the agent terminal', async () => {
        await ui('terminal-text', file);
        return fs.readFileSync(file, 'utf8').includes('mark A');
      }, 20000, 500);
    });

    await test('pause and continue: Stop pauses after the running step; Continue runs the rest (an IDE tool answers through MCP)', async () => {
      await waitFor('the slow step', () => item(api, (i) => i.kind === 'action' && /^sleep 6/.test(i.title) && i.status === 'running'), 60000, 100);
      await act('webview-click', '#stop');
      await waitFor('the conversation to pause', () => api.conversation.status.agentState === 'paused', 60000, 200);
      const slept = item(api, (i) => i.kind === 'action' && /^sleep 6/.test(i.title));
      assert(slept.status === 'ok' && /slept A var=A/.test(slept.output), `slow step ${JSON.stringify(slept)}`);
      const requests = await llmRequests();
      await sleep(2500);
      assert((await llmRequests()) === requests, 'the agent asked the LLM while paused');
      assert(api.conversation.status.canContinue, `status ${JSON.stringify(api.conversation.status)}`);
      await act('webview-click', '#continue');
      await waitFor('conversation A to finish', () => api.conversation.status.agentState === 'finished', 120000, 200);
      const tool = item(api, (i) => i.kind === 'action' && i.action === 'call_tool_mcp');
      assert(tool && tool.title === 'Tool diagnostics' && tool.status === 'ok' && /counts/.test(tool.output || ''), `IDE tool ${JSON.stringify(tool)}`);
      const finish = item(api, (i) => i.kind === 'finish');
      assert(finish && /All done/.test(finish.text), `finish ${JSON.stringify(finish)}`);
      // The agent-server's `stats`, live: tokens (the scripted LLM reports usage), $0 for a model
      // litellm has no price for.
      const usage = api.conversation.status.usage;
      assert(usage && usage.costUsd === 0 && /^\$0\.0000 · [\d.]+k? in, \d+ out/.test(usage.text), `usage ${JSON.stringify(usage)}`);
      assert((await tabText()).includes(`Cost: ${usage.text}`), 'the tab does not show the cost line');
      await assertScriptFollowed(LLM);
    });

    await test('reopen shows the history and re-runs nothing', async () => {
      const before = api.conversation.items.map((i) => `${i.kind}:${i.title || i.text || i.state || ''}:${i.status || ''}`);
      const requests = await llmRequests();
      const events = JSON.parse((await agentServer('GET', `/api/conversations/${convA}/events/count`)).body);
      await api.conversation.reopen();
      await waitFor('the history to be shown again', () => api.conversation.status.conversationId === convA && api.conversation.items.length >= before.length, 30000, 200);
      await sleep(2000);
      const after = api.conversation.items.map((i) => `${i.kind}:${i.title || i.text || i.state || ''}:${i.status || ''}`);
      assert(JSON.stringify(after) === JSON.stringify(before), `after reopen:\n${after.join('\n')}\nbefore:\n${before.join('\n')}`);
      assert((await llmRequests()) === requests, 'reopening asked the LLM');
      const eventsAfter = JSON.parse((await agentServer('GET', `/api/conversations/${convA}/events/count`)).body);
      assert(eventsAfter === events, `events ${events} -> ${eventsAfter}`);
      assert(api.snapshot.conversationId === convA, `executor serves ${api.snapshot.conversationId}`);
    });

    await test('a second conversation in the same folder is isolated: its own shell and executor', async () => {
      const convB = await newConversation(api, convA);
      await typeTask('conversation B: the same steps');
      await waitFor('conversation B to finish', () => api.conversation.status.conversationId === convB && api.conversation.status.agentState === 'finished', 180000, 200);
      const run0 = item(api, (i) => i.kind === 'action' && i.action === 'run' && /OH_TAB_VAR/.test(i.title));
      assert(run0 && /before: unset/.test(run0.output), `conversation B saw conversation A's export: ${JSON.stringify(run0)}`);
      assert(api.snapshot.conversationId === convB, `executor serves ${api.snapshot.conversationId}`);
      assert(fs.readFileSync(path.join(root, 'notes-B.txt'), 'utf8') === 'final notes of B\n', 'notes-B.txt');
      assert(fs.readFileSync(path.join(root, 'notes-A.txt'), 'utf8') === 'final notes of A\n', 'notes-A.txt changed');
      assert(!api.conversation.items.some((i) => /mark A|conversation A/.test(`${i.text || ''}${i.output || ''}`)), 'conversation A shows in B');
      await assertScriptFollowed(LLM);
    });

    await test('"Revert files to before this" on a V1 message: what the agent changed with bash and with its editor is as before the message', async () => {
      const convB = api.conversation.status.conversationId;
      const marks = path.join(root, 'marks.txt');
      const notesB = path.join(root, 'notes-B.txt');
      const shellB = path.join(root, 'shell-parent-B.txt');
      // What conversation B's one message led to: a line appended and a file created by its bash, an edit.
      const marksBefore = 'marks:\nmark A\n';
      assert(fs.readFileSync(marks, 'utf8') === `${marksBefore}mark B\n` && fs.existsSync(shellB), `marks.txt ${JSON.stringify(fs.readFileSync(marks, 'utf8'))}`);
      await vscode.commands.executeCommand('openhands.view.focus');
      await act('webview-click', '.msg.user button.revert');
      // The list of files opens; its first entry applies the revert (what Enter does), pressed
      // until the files are back (accepting before the list shows does nothing).
      await waitFor('the revert to restore marks.txt', async () => {
        await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
        return fs.readFileSync(marks, 'utf8') === marksBefore;
      }, 60000, 500);
      assert(!fs.existsSync(shellB), 'shell-parent-B.txt (created by the agent after the message) is still there');
      assert(fs.readFileSync(notesB, 'utf8') === 'draft notes of B\n', `notes-B.txt ${JSON.stringify(fs.readFileSync(notesB, 'utf8'))}`);
      // Conversation A's files (from before B's message) are untouched, in the open editor too.
      assert(fs.readFileSync(path.join(root, 'notes-A.txt'), 'utf8') === 'final notes of A\n' && docA.getText() === 'final notes of A\n', 'notes-A.txt changed');
      const line = await waitFor('the revert line in the conversation', () => item(api, (i) => i.kind === 'status' && /^Files reverted to before message 1 /.test(i.text)), 10000, 200);
      assert(api.conversation.status.conversationId === convB && /3 change\(s\) applied/.test(line.text), `revert line ${JSON.stringify(line.text)}`);
      await waitFor('the revert line in the tab', async () => (await tabText()).includes('Files reverted to before message 1'), 20000, 500);
      // The undo is offered in the notification; the conversation goes on from here.
      await vscode.commands.executeCommand('notifications.clearAll');
    });

    await test('confirmation (AlwaysConfirm): Confirm runs the command; a proposed edit shows as a diff before it is written; Reject leaves the file; Delete releases the executor', async () => {
      await vscode.workspace.getConfiguration('openhands').update('v1.confirmation', 'always', vscode.ConfigurationTarget.Global);
      const convC = await newConversation(api, api.conversation.status.conversationId);
      await typeTask('conversation C: ask before each step');
      const cmd = await waitFor('the command to wait for confirmation', () => {
        const c = api.conversation.status.confirmation;
        return c && c.kind === 'command' ? c : undefined;
      }, 120000, 200);
      assert(/OH_TAB_VAR/.test(cmd.title) && !fs.existsSync(path.join(root, 'shell-parent-C.txt')), `before Confirm: ${JSON.stringify(cmd)}`);
      await act('webview-click', '#confirm-yes');
      const notesC = path.join(root, 'notes-C.txt');
      const proposal = await waitFor('the edit to wait, shown as a diff', () => {
        const c = api.conversation.status.confirmation;
        return c && c.kind === 'edit' && c.diffShown ? c : undefined;
      }, 120000, 200);
      assert(fs.existsSync(path.join(root, 'shell-parent-C.txt')), 'the confirmed command did not run');
      const diffTab = await waitFor(`the diff editor of ${proposal.title}`, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
        .find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'openhands-proposed' && t.input.modified.path === vscode.Uri.file(notesC).path), 20000, 200);
      const proposed = (await vscode.workspace.openTextDocument(diffTab.input.modified)).getText();
      assert(proposed === 'final notes of C\n', `proposed ${JSON.stringify(proposed)}`);
      assert(fs.readFileSync(notesC, 'utf8') === 'draft notes of C\n', 'the edit was written before the answer');
      await act('webview-click', '#confirm-no');
      const rejected = await waitFor('the edit to be rejected', () => item(api, (i) => i.kind === 'action' && i.action === 'edit' && i.confirmation === 'rejected' && i.status === 'error'), 60000, 200);
      assert(fs.readFileSync(notesC, 'utf8') === 'draft notes of C\n', `notes-C.txt changed after Reject (${rejected.output})`);
      // V1 stops after a rejection (idle: the agent gets the reason with the next message); the user deletes the conversation.
      await waitFor('the agent to wait for the user', () => api.conversation.status.agentState === 'awaiting_user_input' && !api.conversation.status.confirmation, 60000, 200);
      assert(api.snapshot.conversationId === convC && ['connected', 'executing'].includes(api.snapshot.state), `executor ${JSON.stringify(api.snapshot)}`);
      const channel = path.join(DISCOVERY, `v1-${convC.replace(/-/g, '')}.json`);
      assert(fs.existsSync(channel), `no discovery file ${channel}`);
      const deleting = vscode.commands.executeCommand('openhands.deleteConversation');
      await sleep(1000);
      await vscode.commands.executeCommand('notifications.showList');
      assert(await within(deleting, 30000, 'the delete to be confirmed'), 'the delete was not confirmed');
      await waitFor('the executor to be released', () => api.snapshot.state === 'stopped', 30000, 200);
      await waitFor('the channel to close', () => !fs.existsSync(channel), 30000, 200);
      const gone = await agentServer('GET', `/api/conversations/${convC}`);
      assert(gone.status === 404, `GET the deleted conversation: ${gone.status}`);
      await assertScriptFollowed(LLM);
    });

    await test('a budget: the conversation is paused when its cost reaches it, and goes on once the user raises it', async () => {
      const openhands = vscode.workspace.getConfiguration('openhands');
      await openhands.update('v1.confirmation', undefined, vscode.ConfigurationTarget.Global);
      // A model litellm has a price for (its bundled cost map): the scripted LLM answers under any name.
      await act('webview-click', '#llm-edit');
      await waitFor('the LLM form', () => api.conversation.status.llmForm, 10000);
      await fillLlmForm(act, api, { baseUrl: LLM, model: 'openai/gpt-4o' });
      await openhands.update('budgetPerConversation', 0.015, vscode.ConfigurationTarget.Global);
      const convD = await newConversation(api, api.conversation.status.conversationId);
      await typeTask('conversation D: on a budget');
      const problem = await waitFor('the budget to be reached', () => api.conversation.status.problems.find((p) => p.id === 'budget'), 120000, 200);
      await waitFor('the conversation to pause', () => api.conversation.status.agentState === 'paused', 60000, 200);
      const usage = api.conversation.status.usage;
      assert(api.conversation.status.conversationId === convD && usage.costUsd >= 0.015 && usage.budgetUsd === 0.015, `usage ${JSON.stringify(usage)}`);
      assert(/its budget of \$0\.0150/.test(problem.message) && !item(api, (i) => i.kind === 'finish'), `problem ${JSON.stringify(problem)}`);
      const requests = await llmRequests();
      await sleep(2500);
      assert((await llmRequests()) === requests, 'the agent asked the LLM while paused at its budget');
      // The user raises the setting, then presses the button in the tab: one more budget's worth past what was spent.
      await openhands.update('budgetPerConversation', 5, vscode.ConfigurationTarget.Global);
      await act('webview-click', 'button.fix[data-fix="budget"]');
      await waitFor('conversation D to finish', () => api.conversation.status.agentState === 'finished', 120000, 200);
      const after = api.conversation.status;
      assert(!after.problems.some((p) => p.id === 'budget') && after.usage.budgetUsd > 5 && after.usage.costUsd > usage.costUsd, `after ${JSON.stringify(after.usage)}`);
      await assertScriptFollowed(LLM);
    });

    await test('review by hunk: the tab lists the changed file and opens its diff; Undo in the editor restores exactly that hunk (on disk, on the editor\'s undo stack), and the next message tells the agent', async () => {
      const notesD = path.join(root, 'notes-D.txt');
      assert(fs.readFileSync(notesD, 'utf8') === 'final notes of D\n', 'notes-D.txt before the review');
      const uri = vscode.Uri.file(notesD);
      // The tab's "Changes" list names the file with its one change; clicking it opens VS Code's diff.
      await waitFor('the tab to list notes-D.txt', () => (api.conversation.status.changes?.files || []).some((f) => f.path === notesD && f.hunks === 1), 20000, 200);
      const listPage = path.join(ARTIFACTS, `ui-webview-text-${++seq}.txt`);
      await ui('webview-text', listPage);
      const listed = fs.readFileSync(listPage, 'utf8');
      assert(listed.includes('Changes since your last message (1 file)') && /notes-D\.txt\s*\+1\s*−1/.test(listed), `the tab says ${listed.slice(0, 800)}`);
      await ui('screenshot', path.join(ARTIFACTS, 'tab-changes-list.png'));
      await act('webview-click', '#changes button.file');
      await waitFor('the diff editor of notes-D.txt since the last message', () => vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.fsPath === notesD && t.input.original.scheme === 'openhands-turn')), 20000, 200);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { preview: false });
      const lenses = await waitFor('the Keep and Undo lenses', async () => {
        const all = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
        return all.some((l) => l.command && l.command.command === 'openhands.changes.undoHunk') ? all : undefined;
      }, 20000, 300);
      const of = (name) => lenses.filter((l) => l.command && l.command.command === name);
      assert(of('openhands.changes.keepHunk').length === 1 && of('openhands.changes.undoHunk').length === 1 && of('openhands.changes.undoHunk')[0].range.start.line === 0, `lenses ${JSON.stringify(lenses.map((l) => [l.command && l.command.title, l.range.start.line]))}`);
      const undo = of('openhands.changes.undoHunk')[0].command;
      await vscode.commands.executeCommand(undo.command, ...undo.arguments);
      assert(fs.readFileSync(notesD, 'utf8') === 'draft notes of D\n' && doc.getText() === 'draft notes of D\n' && !doc.isDirty, `after Undo: disk ${JSON.stringify(fs.readFileSync(notesD, 'utf8'))}, editor ${JSON.stringify(doc.getText())}`);
      // The list: nothing left to review in the file, one undone change for the next message.
      await waitFor('the tab to count the undone change', () => api.conversation.status.changes?.undone === 1 && !api.conversation.status.changes.files.length, 10000, 100);
      // On the editor's undo stack: its Undo brings the agent's line back, Redo takes it away again.
      await vscode.window.showTextDocument(doc, { preview: false });
      await vscode.commands.executeCommand('undo');
      await waitFor('the editor\'s Undo', () => doc.getText() === 'final notes of D\n', 5000, 100);
      await vscode.commands.executeCommand('redo');
      await waitFor('the editor\'s Redo', () => doc.getText() === 'draft notes of D\n', 5000, 100);
      await doc.save();
      const after = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
      assert(!after.some((l) => l.command && /openhands\.changes\./.test(l.command.command)), 'a lens is left after the undo');
      // The next message carries the undone hunk: the scripted LLM's step 5 expects it in the request.
      const requests = await llmRequests();
      await typeTask('conversation D: thanks');
      await waitFor('the agent to answer the message', async () => (await llmRequests()) > requests && api.conversation.status.agentState === 'finished' && item(api, (i) => /as you restored them/.test(JSON.stringify(i))), 120000, 200);
      await assertScriptFollowed(LLM);
      assert(fs.readFileSync(notesD, 'utf8') === 'draft notes of D\n', 'notes-D.txt changed after the message');
      assert(api.conversation.status.changes?.undone === 0, `undone changes left after the message: ${JSON.stringify(api.conversation.status.changes)}`);
    });
  } finally {
    await vscode.workspace.getConfiguration('openhands').update('budgetPerConversation', undefined, vscode.ConfigurationTarget.Global).then(undefined, () => undefined);
    await vscode.workspace.getConfiguration('openhands').update('v1.confirmation', undefined, vscode.ConfigurationTarget.Global).then(undefined, () => undefined);
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('V1 tab');
};
