// A multi-root window in the real VS Code host (a .code-workspace with the folders `front` and
// `back`), the OpenHands tab on V1 in managed mode (the extension starts the REAL agent-server with
// this package's V1 tools) and the scripted stand-in LLM (fixtures/multiroot-llm-script.json).
// The executor gets both folders (`auth.roots`, which the V1 terminal tool tells the agent), the
// shell starts in the first, the tab names the folder of each edit, and the checkpoint taken
// before the message covers both folders: a revert from the tab restores each of them.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { openManagedTab, sendTask, waitFor, assert, assertScriptFollowed, runner, uiRequest: ui } = require('./lib');

const LLM = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
let seq = 0;
const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}-${++seq}.json`), { selector, value });
const note = (m) => console.log(`oh-test multiroot: ${m}`);

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const folders = (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath);
  const [front, back] = folders;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  const read = (...p) => fs.readFileSync(path.join(...p), 'utf8');
  let api;

  try {
    await test('a window with two folders: the agent is told both (the executor\'s auth.roots), its shell starts in the first', async () => {
      assert(folders.length === 2 && path.basename(front) === 'front' && path.basename(back) === 'back', `folders ${JSON.stringify(folders)}`);
      let server;
      ({ api, server } = await openManagedTab(vscode, ext, act, LLM));
      await sendTask(vscode, act, api, 'multi-root: change both folders');
      await waitFor('the agent to finish', () => {
        const s = api.conversation.status;
        const other = s.problems.find((p) => ['server', 'send', 'llm-auth'].includes(p.id));
        if (other) throw new Error(`the tab reports: ${other.message}`);
        return s.agentState === 'finished';
      }, 180000, 300);
      const conversation = api.conversation.status.conversationId;
      note(`conversation ${conversation} finished`);
      // `pwd` printed the first folder (the script's expectation), every step as scripted.
      await assertScriptFollowed(LLM);
      // What the agent was told: the terminal tool as the conversation's system prompt event carries it.
      const r = await fetch(`${server.baseUrl}/api/conversations/${conversation}/events/search?kind=SystemPromptEvent`, { headers: { 'x-session-api-key': server.sessionApiKey } });
      const tools = (await r.json()).items[0].tools;
      const sentence = `The workspace open in the user's VS Code has 2 folders: ${front} and ${back}. The shell starts in the first one, ${front};`;
      const told = tools.filter((t) => String(t.description || '').includes(sentence));
      assert(told.length === 1 && /terminal/i.test(`${told[0].kind} ${told[0].title} ${told[0].annotations && told[0].annotations.title}`),
        `the agent's tools do not name both folders: ${JSON.stringify(tools.map((t) => [t.kind, String(t.description || '').slice(-300)]))}`);
    });

    await test('the tab names the folder of each edit', async () => {
      const titles = api.conversation.items.filter((i) => i.kind === 'action' && i.action === 'edit').map((i) => i.title);
      assert(JSON.stringify(titles) === JSON.stringify(['Edited back/util.py', 'Edited front/app.txt']), `edit titles ${JSON.stringify(titles)}`);
      assert(read(back, 'util.py') === 'draft = False\n' && read(front, 'app.txt') === 'final app\n' && read(back, 'data.txt') === 'data\nfrom bash\n', 'the agent\'s changes are not on disk');
    });

    await test('the checkpoint before the message covers both folders: a revert from the tab restores each', async () => {
      await vscode.commands.executeCommand('openhands.view.focus');
      await act('webview-click', '.msg.user button.revert');
      await waitFor('the revert to restore both folders', async () => {
        await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
        return read(back, 'data.txt') === 'data\n' && read(front, 'app.txt') === 'draft app\n';
      }, 60000, 500);
      assert(read(back, 'util.py') === 'draft = True\n', `back/util.py ${JSON.stringify(read(back, 'util.py'))}`);
      const line = await waitFor('the revert line', () => api.conversation.items.find((i) => i.kind === 'status' && /^Files reverted to before message 1 /.test(i.text)), 10000);
      assert(/ 3 change\(s\) applied\./.test(line.text), `revert line ${JSON.stringify(line.text)}`);
      await vscode.commands.executeCommand('notifications.clearAll');
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('multi-root');
};
