// The OpenHands tab on a V1 agent-server reached as another machine (session `v1-remote`,
// v1-remote-session.sh): the REAL agent-server with this package's tools, its REST API behind a TLS
// proxy and its tools' hub served with TLS (OH_VSCODE_TLS_CERT/KEY), both on a non-loopback address
// of this machine with certificates of a CA the session made; `openhands.v1.url` is that https URL,
// `openhands.v1.caFile` starts as ANOTHER CA's file (set in the user settings by run.sh). The user's
// steps only: the key typed into "Set Session API Key", the refused certificate seen with its fix,
// the CA setting corrected, consent allowed (the runner clicks Allow); a conversation created on the
// server then runs its command in this window.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, assertScriptFollowed, runner, showConsentWhenAsked, uiRequest: ui, typeSessionKey } = require('./lib');

const REMOTE_URL = process.env.OH_TEST_REMOTE_URL; // https://<address>:<proxy port>
const REST = process.env.OH_TEST_AGENT_SERVER; // the same agent-server on loopback, for the suite's own calls
const AGENT_KEY = process.env.OH_TEST_AGENT_KEY;
const CA = process.env.OH_TEST_CA_FILE;
const LLM = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const note = (m) => console.log(`oh-test v1-remote: ${m}`);
let seq = 0;

async function tabText() {
  const file = path.join(ARTIFACTS, `v1-remote-view-${++seq}.txt`);
  await ui('webview-text', file);
  return fs.readFileSync(file, 'utf8');
}

async function agentServer(method, pathname, body) {
  const r = await fetch(`${REST}${pathname}`, {
    method, headers: { 'content-type': 'application/json', 'x-session-api-key': AGENT_KEY },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${pathname}: HTTP ${r.status} ${text}`);
  return JSON.parse(text);
}

/** What the tab shows, for a failure's message. */
function statusLine(api) {
  const st = api.conversation.status;
  return JSON.stringify({ serverUrl: st.serverUrl, place: st.place, problems: st.problems, executor: api.snapshot.state, message: api.snapshot.message });
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  const host = new URL(REMOTE_URL).host;
  let api;

  try {
    await test('a wrong CA file: the tab refuses the remote agent-server\'s certificate and offers "Set Certificate Trust", not the key', async () => {
      api = await ext.activate();
      const cfg = vscode.workspace.getConfiguration('openhands');
      assert(cfg.inspect('v1.caFile').globalValue && cfg.inspect('v1.caFile').globalValue !== CA, 'the session should start with another CA file');
      await vscode.commands.executeCommand('workbench.view.extension.openhands');
      // Opening the tab starts the pool, which asks for consent once for this origin (the runner clicks Allow).
      await showConsentWhenAsked(vscode, api, 60000);
      await typeSessionKey(vscode, AGENT_KEY, ARTIFACTS);
      const problem = await waitFor('the refused certificate in the tab', () => api.conversation.status.problems.find((p) => p.id === 'server' && /certificate was not accepted/.test(p.message)), 60000, 300)
        .catch((e) => { throw new Error(`${e.message}; the tab: ${statusLine(api)}`); });
      const fixes = problem.fixes.map((f) => f.fix);
      assert(fixes.includes('certificate') && !fixes.includes('key'), `fixes ${JSON.stringify(fixes)}: ${problem.message}`);
      const text = await waitFor('the fix button in the tab', async () => {
        const t = await tabText();
        return t.includes('Set Certificate Trust') ? t : undefined;
      }, 20000, 500);
      note(`refused: ${problem.message.slice(0, 200)} (${text.length} chars of tab text)`);
    });

    await test('the CA file set right: the tab reaches the agent-server and says it runs on another machine, its actions here', async () => {
      await vscode.workspace.getConfiguration('openhands').update('v1.caFile', CA, vscode.ConfigurationTarget.Global);
      const s = await waitFor('the tab to reach the agent-server', () => {
        const st = api.conversation.status;
        return !st.problems.some((p) => p.id === 'server') && st.place ? st : undefined;
      }, 60000, 300).catch((e) => { throw new Error(`${e.message}; the tab: ${statusLine(api)}`); });
      assert(s.place === `Agent: on ${host} (another machine) · its commands and edits run here, in this window`, `place ${s.place}`);
      const text = await waitFor('the place line in the tab', async () => {
        const t = await tabText();
        return t.includes(`on ${host} (another machine)`) ? t : undefined;
      }, 20000, 500);
      note(`tab: ${text.length} chars`);
    });

    await test('a conversation on the remote agent-server: consent names its origin, its command runs in this window over the TLS hub', async () => {
      const posting = agentServer('POST', '/api/conversations', {
        agent: { kind: 'Agent', llm: { model: 'openai/scripted', base_url: LLM, api_key: 'x', usage_id: 'agent', num_retries: 0 },
                 tools: [{ name: 'terminal' }, { name: 'file_editor' }] },
        workspace: { working_dir: root },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'go' }], run: true },
      });
      const conversation = (await posting).id;
      assert(api.consentGrantedFor(REMOTE_URL), `no consent recorded for ${REMOTE_URL}`);
      const status = await waitFor('the conversation to finish', async () => {
        const st = (await agentServer('GET', `/api/conversations/${conversation}`)).execution_status;
        return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
      }, 180000, 500);
      assert(status === 'finished', `conversation ${status}`);
      await assertScriptFollowed(LLM);
      const parent = Number(fs.readFileSync(path.join(root, 'remote-shell-parent.txt'), 'utf8').trim());
      assert(parent === process.pid, `the agent's shell has parent ${parent}, the extension host is ${process.pid}`);
      const ran = api.actions.find((a) => /remote-shell-parent/.test(a.summary || ''));
      assert(ran, `the window's activity does not list the command: ${JSON.stringify(api.actions.slice(-3))}`);
      note(`conversation ${conversation} finished; shell parent ${parent}`);
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('V1 remote');
};
