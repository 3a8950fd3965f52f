// The IDE tools through an OpenHands agent step: the REAL OpenHands server (VsCodeRuntime in server
// mode, CodeActAgent) with the scripted stand-in LLM (fixtures/ide-agent-llm-script.json) calling
// the tools this VS Code window announced when its executor registered. Each call is an OpenHands
// MCPAction that VsCodeRuntime sends over the executor channel to the extension, whose answer comes
// back as an MCPObservation (docs/ide-tools.md, "The OpenHands runtime path"). The agent calls
// diagnostics (TypeScript's error in an UNSAVED line), hover, and the writing tool save_document
// twice: the suite clicks "Don't Allow" on the write consent the first time (the agent gets the
// `Refused:` text and nothing is written) and "Allow" the second time. The runner clicks nothing by
// itself (no --click-dialog): every consent answer is the suite's own click.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { waitFor, assert, assertScriptFollowed, runner, uiRequester, serverRest } = require('./lib');

const SERVER = process.env.OH_TEST_SERVER;
const KEY = process.env.OH_TEST_SERVER_KEY;
const LLM_BASE_URL = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const EXT_ID = 'openhands-vscode-runtime.openhands-tab';
const RUN_PROMPT = 'Allow OpenHands to run commands and edit files';
const WRITE_PROMPT = 'to open and save files, propose edits and show reviews';
const UNSAVED = 'const broken: string = 42;\n';

/** A UI request to the runner (host.mjs); `notifications` returns the list. */
const ui = uiRequester(ARTIFACTS);
const prompts = async (text) => (await ui('notifications')).filter((n) => n.text.includes(text));

const rest = serverRest(SERVER, KEY);

async function events(api) {
  const r = await rest('GET', `/api/conversations/${api.conversation.status.conversationId}/events?limit=100`);
  assert(r.status === 200, `events ${r.status} ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body).events;
}

/** Answers the one visible consent prompt containing `text` with `label`, then waits until it is gone. */
async function answer(text, label, ms) {
  await vscode.commands.executeCommand('notifications.showList');
  await waitFor(`the prompt "${text}"`, async () => (await prompts(text)).length > 0, ms, 300);
  await ui('click-notification', { text, label });
  await waitFor(`the prompt "${text}" to close`, async () => (await prompts(text)).length === 0, 20000, 300);
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const mainTs = path.join(root, 'src', 'main.ts');
  const onDisk = fs.readFileSync(mainTs, 'utf8');
  let api;
  let doc;

  await test('IDE tools via the agent: an unsaved type error in main.ts; the tab joins the real server', async () => {
    doc = await vscode.workspace.openTextDocument(vscode.Uri.file(mainTs));
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    assert(await editor.edit((e) => e.insert(new vscode.Position(doc.lineCount - 1, 0), UNSAVED)) && doc.isDirty, 'the edit was not applied');
    await waitFor('TypeScript to report the unsaved error', () => vscode.languages.getDiagnostics(doc.uri).some((d) => d.range.start.line === 5), 90000, 300);
    const s = await rest('POST', '/api/settings', {
      llm_model: 'openai/scripted', llm_base_url: LLM_BASE_URL, llm_api_key: 'scripted-llm-key', agent: 'CodeActAgent',
      language: 'en', user_consents_to_analytics: false,
    });
    assert(s.status === 200, `POST /api/settings: ${s.status} ${s.body}`);
    api = await vscode.extensions.getExtension(EXT_ID).activate();
    await vscode.commands.executeCommand('workbench.view.extension.openhands');
    // The tab's first read of the server, without the key, is refused (the key comes next).
    const refused = await waitFor('the tab to report the refused key', () => api.conversation.status.problems.find((p) => p.id === 'server'), 30000);
    assert(refused.fixes.some((f) => f.fix === 'key'), `problem without "Set Session API Key": ${JSON.stringify(refused)}`);
    const done = vscode.commands.executeCommand('openhands.setSessionApiKey');
    // The runner types the request file's content: the key (removed right after).
    await ui('type-quickinput', KEY);
    for (const f of fs.readdirSync(ARTIFACTS).filter((n) => n.startsWith('ui-type-quickinput-') && !n.endsWith('.done'))) fs.unlinkSync(path.join(ARTIFACTS, f));
    await answer(RUN_PROMPT, 'Allow', 60000); // the executor's own consent (commands and file edits)
    await done;
    // The tab read the server's settings before the key was set (401); storing the key makes it
    // read them again by itself (a SecretStorage change reopens the tab): no Retry, no reopen here.
    try {
      await waitFor('the tab to accept messages once the key is stored', () => api.conversation.status.canSend, 60000);
    } catch (e) {
      throw new Error(`${e.message}; tab status ${JSON.stringify(api.conversation.status)}`);
    }
  });

  await test('IDE tools via the agent: the agent calls diagnostics and hover; "Don\'t Allow" refuses save_document and nothing is written', async () => {
    await vscode.commands.executeCommand('openhands.view.focus');
    await ui('webview-fill', { selector: '#input', value: 'What is wrong in src/main.ts? Save it when you are done.' });
    await ui('webview-click', { selector: '#send' });
    await answer(WRITE_PROMPT, "Don't Allow", 120000);
    const ev = await waitFor('the refusal to reach the agent', async () => {
      const list = await events(api);
      return list.some((e) => e.observation === 'mcp' && e.extras.name === 'save_document') ? list : undefined;
    }, 60000, 500);
    const refused = ev.find((e) => e.observation === 'mcp' && e.extras.name === 'save_document');
    const result = JSON.parse(refused.content);
    assert(result.isError === true && /^Refused: the user did not allow IDE tools to change this workspace/.test(result.content[0].text), `refusal ${refused.content}`);
    assert(fs.readFileSync(mainTs, 'utf8') === onDisk && doc.isDirty, 'main.ts was written although the user declined');
  });

  await test('IDE tools via the agent: asked again on the next call, "Allow" lets save_document save the unsaved buffer', async () => {
    await answer(WRITE_PROMPT, 'Allow', 60000);
    await waitFor('main.ts saved with the unsaved line', () => fs.readFileSync(mainTs, 'utf8').includes(UNSAVED), 30000);
    await waitFor('the agent to finish', () => ['finished', 'awaiting_user_input'].includes(api.conversation.status.agentState), 90000, 300);
    assert(!doc.isDirty, 'main.ts is still dirty');
  });

  await test('IDE tools via the agent: the server recorded each MCPAction and its MCPObservation with the tool\'s answer', async () => {
    const ev = await events(api);
    fs.writeFileSync(path.join(ARTIFACTS, 'ide-agent-events.json'), JSON.stringify(ev, null, 2));
    const calls = ev.filter((e) => e.action === 'call_tool_mcp' && e.source === 'agent').map((e) => [e.id, e.args.name, e.args.arguments]);
    assert(JSON.stringify(calls.map((c) => c[1])) === JSON.stringify(['diagnostics', 'hover', 'save_document', 'save_document']), `MCP actions ${JSON.stringify(calls)}`);
    const obs = (id) => ev.find((e) => e.cause === id && e.observation);
    const [diag, hover, declined, saved] = calls.map(([id]) => obs(id));
    for (const [o, [, name, args]] of [[diag, calls[0]], [hover, calls[1]], [declined, calls[2]], [saved, calls[3]]]) {
      assert(o && o.observation === 'mcp' && o.extras.name === name && JSON.stringify(o.extras.arguments) === JSON.stringify(args), `observation of ${name}: ${JSON.stringify(o)}`);
    }
    const d = JSON.parse(diag.content).structuredContent;
    const unsaved = d.diagnostics.find((x) => x.range.start.line === 6);
    assert(unsaved && unsaved.severity === 'error' && /Type 'number' is not assignable to type 'string'/.test(unsaved.message) && unsaved.path === mainTs, `diagnostics ${diag.content.slice(0, 1500)}`);
    const h = JSON.parse(hover.content).structuredContent;
    assert(/const square: Shape/.test(h.hovers.flatMap((x) => x.contents).join('\n')), `hover ${hover.content.slice(0, 800)}`);
    assert(JSON.parse(declined.content).isError === true, `declined ${declined.content}`);
    const s = JSON.parse(saved.content).structuredContent;
    assert(s.saved === true && s.was_dirty === true, `saved ${saved.content}`);
    assert(ev.some((e) => e.action === 'finish'), 'the agent did not finish');
    // A finish is also what the scripted LLM answers when an observation was not what its script expects.
    await assertScriptFollowed(LLM_BASE_URL);
  });

  run.finish('IDE tools via the agent');
};
