// Two V1 conversations at once in one real VS Code window (session `v1-parallel`): the tab on V1
// in managed mode (the extension starts the REAL agent-server with this package's V1 tools), one
// conversation typed into the tab (task alpha) and a second one created by a script on the same
// agent-server over REST, the way the SDK and Agent Canvas create theirs (task beta), both with
// the scripted stand-in LLM (fixtures/v1-parallel-llm-script.json). The window's executor pool
// serves both, each in its own executor: different shells (both children of this extension
// host), an exported variable of one invisible to the other, their slow steps overlapping in time.
const vscode = require('vscode');
const crypto = require('crypto');
const path = require('path');
const { waitFor, assert, assertScriptFollowed, runner, showConsentWhenAsked, uiRequest: ui } = require('./lib');

const LLM = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
let seq = 0;
const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}-${++seq}.json`), { selector, value });
const note = (m) => console.log(`oh-test v1-parallel: ${m}`);

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  let api;
  let server;
  const rest = async (method, p, body) => {
    const r = await fetch(`${server.baseUrl}${p}`, {
      method,
      headers: { 'x-session-api-key': server.sessionApiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(300000),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  // Everything the conversation's events say, as text (its observations hold the commands' output).
  const eventsText = async (id) => JSON.stringify(await rest('GET', `/api/conversations/${id}/events/search?limit=100`));
  const stamps = (text, name) => {
    const start = new RegExp(`name=${name} pid=(\\d+) ppid=(\\d+) start=([\\d.]+)`).exec(text);
    const end = new RegExp(`name=${name} end=([\\d.]+)`).exec(text);
    assert(start && end, `no stamps of ${name} in ${text.slice(0, 2000)}`);
    return { pid: Number(start[1]), ppid: Number(start[2]), start: Number(start[3]), end: Number(end[1]) };
  };
  let alpha;
  let beta;

  try {
    await test('the tab\'s conversation and one a script created on the same agent-server run at the same time, each in its own executor', async () => {
      api = await ext.activate();
      await vscode.commands.executeCommand('workbench.view.extension.openhands');
      await showConsentWhenAsked(vscode, api, 60000);
      await waitFor('the agent-server the extension starts', () => {
        if (api.agentServer.state === 'crashed') throw new Error(`agent-server crashed: ${api.agentServer.error}`);
        return api.agentServer.state === 'running';
      }, 180000, 300);
      server = await api.agentServer.connection();
      await waitFor('the LLM form', () => api.conversation.status.llmForm, 30000);
      await act('webview-fill', '#llm-model', 'openai/scripted');
      await act('webview-fill', '#llm-base', LLM);
      await act('webview-fill', '#llm-key', 'scripted-llm-key');
      await act('webview-click', '#llm-save');
      await waitFor('the tab to accept messages', () => api.conversation.status.canSend && !api.conversation.status.llmForm, 30000);
      await vscode.commands.executeCommand('openhands.view.focus');
      await act('webview-fill', '#input', 'parallel task alpha');
      await act('webview-click', '#send');
      await showConsentWhenAsked(vscode, api, 120000);
      await waitFor('alpha\'s slow step to run', () => api.conversation.items.some((i) => i.kind === 'action' && /ONLY_alpha/.test(i.title || '') && i.status === 'running'), 180000, 100);
      alpha = api.conversation.status.conversationId;
      // The second conversation: created by a script, never shown in the tab.
      beta = crypto.randomUUID();
      note(`alpha ${alpha} runs; creating beta ${beta} over REST`);
      await rest('POST', '/api/conversations', {
        conversation_id: beta,
        agent: { kind: 'Agent', llm: { model: 'openai/scripted', base_url: LLM, api_key: 'scripted-llm-key', usage_id: 'agent' }, tools: [{ name: 'terminal' }, { name: 'file_editor' }] },
        workspace: { working_dir: root },
        initial_message: { role: 'user', content: [{ type: 'text', text: 'parallel task beta' }], run: true },
      });
      await waitFor('both conversations to finish', async () => {
        const b = await rest('GET', `/api/conversations/${beta}`);
        if (['error', 'stuck'].includes(b.execution_status)) throw new Error(`beta ${b.execution_status}`);
        const s = api.conversation.status;
        const problem = s.problems.find((p) => ['server', 'send', 'llm-auth', 'executor'].includes(p.id));
        if (problem) throw new Error(`the tab reports: ${problem.message}`);
        return s.agentState === 'finished' && b.execution_status === 'finished';
      }, 240000, 500);
      await assertScriptFollowed(LLM);
      const a = stamps(await eventsText(alpha), 'alpha');
      const b = stamps(await eventsText(beta), 'beta');
      note(`alpha pid ${a.pid} ${a.start}..${a.end}; beta pid ${b.pid} ${b.start}..${b.end}`);
      assert(a.pid !== b.pid, `one shell for both (pid ${a.pid})`);
      assert(a.ppid === process.pid && b.ppid === process.pid, `shell parents ${a.ppid}, ${b.ppid}; the extension host is ${process.pid}`);
      assert(a.start < b.end && b.start < a.end, `the slow steps did not overlap: alpha ${a.start}..${a.end}, beta ${b.start}..${b.end}`);
    });

    await test('an exported variable of one conversation is invisible to the other', async () => {
      const a = await eventsText(alpha);
      const b = await eventsText(beta);
      assert(/seen by alpha: alpha=set beta=unset/.test(a), `alpha saw ${/seen by alpha: [^"\\]*/.exec(a)}`);
      assert(/seen by beta: alpha=unset beta=set/.test(b), `beta saw ${/seen by beta: [^"\\]*/.exec(b)}`);
    });

    await test('each conversation has its own agent terminal, named after it', async () => {
      const names = vscode.window.terminals.map((t) => t.name);
      for (const id of [alpha, beta]) {
        const name = `OpenHands Agent ${id.replace(/-/g, '').slice(0, 8)}`;
        assert(names.includes(name), `no terminal "${name}" in ${JSON.stringify(names)}`);
      }
      // Deleting the script's conversation ends its executor; the tab's keeps its own.
      await rest('DELETE', `/api/conversations/${beta}`);
      await waitFor('beta\'s terminal to close', () => !vscode.window.terminals.some((t) => t.name.endsWith(beta.replace(/-/g, '').slice(0, 8))), 30000, 200);
      assert(['connected', 'executing'].includes(api.snapshot.state) && api.snapshot.conversationId === alpha, `the tab's executor ${JSON.stringify(api.snapshot)}`);
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('v1-parallel');
};
