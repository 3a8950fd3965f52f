// Two VS Code windows, two conversations on the same REAL OpenHands server: each window's executor
// serves the conversation its tab shows, and gets only that conversation's actions. run.sh starts
// this suite in two host sessions at once (OH_TEST_ROLE a and b); the scripted stand-in LLM
// (fixtures/two-windows-llm-script.json) makes each agent write its window's marker into its
// workspace. A misrouted action would land in the other workspace or the other terminal.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, showConsentWhenAsked, uiRequest: ui, typeSessionKey } = require('./lib');

const ROLE = process.env.OH_TEST_ROLE;
const OTHER = ROLE === 'a' ? 'b' : 'a';
const SHARED = process.env.OH_TEST_SHARED;
const KEY = process.env.OH_TEST_SERVER_KEY;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';

exports.run = async () => {
  const name = `two windows, two conversations: window ${ROLE} gets only its own actions`;
  try {
    const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
    const api = await vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab').activate();
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    await showConsentWhenAsked(vscode, api); // the runner clicks the consent's "Allow" in the list
    // The consent first, then the password box: the runner's click on "Allow" must not land while
    // the quick input is open.
    await waitFor('the consent answer', () => api.snapshot.state !== 'starting', 60000);
    await typeSessionKey(vscode, KEY, ARTIFACTS);
    await waitFor('the tab to accept a task', () => api.conversation.status.canSend, 30000);
    // Both windows send their task at about the same time.
    fs.writeFileSync(path.join(SHARED, `ready-${ROLE}`), 'ok');
    await waitFor(`window ${OTHER} to be ready`, () => fs.existsSync(path.join(SHARED, `ready-${OTHER}`)), 90000);
    await vscode.commands.executeCommand('openhands.view.focus');
    await ui('webview-fill', path.join(ARTIFACTS, 'fill.json'), { selector: '#input', value: `Write this window's marker (${ROLE}) into done-by-agent.txt.` });
    await ui('webview-click', path.join(ARTIFACTS, 'click.json'), { selector: '#send' });
    await waitFor('the agent to finish', () => api.conversation.status.agentState === 'finished', 120000);
    const conversation = api.conversation.status.conversationId;
    if (api.snapshot.conversationId !== conversation) throw new Error(`executor serves ${api.snapshot.conversationId}, the tab shows ${conversation}`);
    fs.writeFileSync(path.join(SHARED, `conversation-${ROLE}`), conversation);
    const written = fs.readFileSync(path.join(root, 'done-by-agent.txt'), 'utf8');
    if (written !== `window-${ROLE}\n`) throw new Error(`done-by-agent.txt says ${JSON.stringify(written)}`);
    const otherConversation = await waitFor(`window ${OTHER}'s conversation id`, () => fs.existsSync(path.join(SHARED, `conversation-${OTHER}`)) && fs.readFileSync(path.join(SHARED, `conversation-${OTHER}`), 'utf8'), 120000);
    if (otherConversation === conversation) throw new Error('both windows served the same conversation');
    const term = vscode.window.terminals.find((t) => t.name === 'OpenHands Agent');
    if (term) term.show(true);
    const file = path.join(ARTIFACTS, 'terminal.txt');
    const text = await waitFor('the commands in this window\'s agent terminal', async () => {
      await ui('terminal-text', file);
      const t = fs.readFileSync(file, 'utf8');
      return t.includes('checked-by-agent') ? t : undefined;
    }, 20000, 500);
    if (!text.includes(`window-${ROLE}`) || text.includes(`window-${OTHER}`)) throw new Error(`terminal of window ${ROLE}:\n${text}`);
    const foreign = api.actions.filter((a) => a.summary.includes(`two-${OTHER}`));
    if (foreign.length) throw new Error(`window ${ROLE} ran window ${OTHER}'s actions: ${JSON.stringify(foreign)}`);
    console.log(`@@oh-test PASS ${name}`);
    console.log('@@oh-test SUMMARY 1 passed, 0 failed');
  } catch (e) {
    console.log(`@@oh-test FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    console.log('@@oh-test SUMMARY 0 passed, 1 failed');
    throw e;
  }
};
exports.activate = () => {};
