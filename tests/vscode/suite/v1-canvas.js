// Agent Canvas and an SDK script as clients of this window's agent-server (session `v1-canvas`):
// the tab on V1 in managed mode (the REAL agent-server with this package's V1 tools), the scripted
// stand-in LLM (fixtures/v1-canvas-llm-script.json). The tab's own conversation (task tab) works in
// a git worktree (New Conversation in a Worktree); while it runs, Agent Canvas 1.20.0's own page,
// in headless Chromium (canvas_page.mjs), is driven as a user: it adds this window as a backend and
// starts two conversations (canvas1, canvas2) from its home page: Open Workspace, the window's
// folder, New Worktree, the task typed and sent. One step is not the page's: the LLM is saved with
// Canvas's own compiled SettingsService (canvas_llm.mjs, a stand-in for its LLM settings page).
// All three run at once, each in its own executor of the window's pool and its own worktree; then
// a script with openhands-sdk's RemoteConversation creates one (sdk) that the window serves too.
const vscode = require('vscode');
const path = require('path');
const fs = require('fs');
const { spawn } = require('child_process');
const { openManagedTab, sendTask, waitFor, assert, assertScriptFollowed, runner, uiRequest: ui, uiRequester } = require('./lib');

const LLM = process.env.OH_TEST_LLM_BASE_URL;
const ARTIFACTS = process.env.OH_TEST_ARTIFACTS || '/tmp';
const HERE = path.join(__dirname, '..');
let seq = 0;
const act = (verb, selector, value) => ui(verb, path.join(ARTIFACTS, `ui-${verb}-${++seq}.json`), { selector, value });
const note = (m) => console.log(`oh-test v1-canvas: ${m}`);

/** Runs a client process to its end; its JSON lines parsed, its output kept in the artifacts. */
function runClient(name, argv, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      fs.writeFileSync(path.join(ARTIFACTS, `${name}.out`), out);
      fs.writeFileSync(path.join(ARTIFACTS, `${name}.err`), err);
      const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      if (code !== 0) reject(new Error(`${name} exited ${code}: ${err.slice(-1500)}`));
      else resolve(lines);
    });
  });
}

exports.run = async () => {
  const run = runner({ stopOnFailure: true });
  const test = run.test;
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const ext = vscode.extensions.getExtension('openhands-vscode-runtime.openhands-tab');
  const wtRoot = process.env.OH_CONVERSATION_WORKTREE_ROOT;
  let api;
  let server;
  const rest = async (method, p) => {
    const r = await fetch(`${server.baseUrl}${p}`, { method, headers: { 'x-session-api-key': server.sessionApiKey }, signal: AbortSignal.timeout(60000) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  const eventsText = async (id) => JSON.stringify(await rest('GET', `/api/conversations/${id}/events/search?limit=100`));
  const stamps = (text, name) => {
    const start = new RegExp(`name=${name} pid=(\\d+) ppid=(\\d+) cwd=(\\S*) branch=(\\S*) start=([\\d.]+)`).exec(text);
    const end = new RegExp(`name=${name} end=([\\d.]+)`).exec(text);
    assert(start && end, `no stamps of ${name} in ${text.slice(0, 2000)}`);
    return { pid: Number(start[1]), ppid: Number(start[2]), cwd: start[3], branch: start[4], start: Number(start[5]), end: Number(end[1]) };
  };
  const terminalOf = (id) => vscode.window.terminals.find((t) => t.name === `OpenHands Agent ${id.replace(/-/g, '').slice(0, 8)}`);
  const ids = {};
  const worktreeOf = (id) => path.join(wtRoot, id, path.basename(root));
  let canvasLines;

  try {
    await test('Agent Canvas\'s page adds the window as a backend and starts two conversations (Open Workspace, the window\'s folder, New Worktree, the task sent) while the tab\'s worktree conversation runs: all three at once, each in its own executor and worktree', async () => {
      ({ api, server } = await openManagedTab(vscode, ext, act, LLM));
      // The tab's conversation in a worktree: the command the view's branch icon runs.
      ids.tab = await vscode.commands.executeCommand('openhands.v1.newConversationInWorktree');
      assert(typeof ids.tab === 'string' && api.conversation.status.conversationId === ids.tab, `the command answered ${ids.tab}; the tab shows ${api.conversation.status.conversationId}`);
      await sendTask(vscode, act, api, 'parallel task tab with tab canvas1 canvas2');
      await waitFor('the tab\'s slow step to run', () => api.conversation.items.some((i) => i.kind === 'action' && /ONLY_tab/.test(i.title || '') && i.status === 'running'), 180000, 100);
      note(`the tab's conversation ${ids.tab} runs; Agent Canvas's page starts canvas1 and canvas2`);
      // Not the page: Canvas's own SettingsService saves the LLM (see canvas_llm.mjs).
      await runClient('canvas-llm', [process.env.OH_TEST_NODE24, path.join(HERE, 'canvas_llm.mjs'), process.env.OH_TEST_CANVAS_PACKAGE, server.baseUrl, server.sessionApiKey, LLM], 120000);
      canvasLines = await runClient('canvas-page', [process.env.OH_TEST_NODE24, path.join(HERE, 'canvas_page.mjs'), process.env.OH_TEST_PW_DIR, process.env.OH_TEST_CANVAS_PACKAGE,
        server.baseUrl, server.sessionApiKey, root, ARTIFACTS, 'Parallel task done.', 'canvas1', 'canvas2'], 600000);
      for (const l of canvasLines.filter((x) => x.created)) ids[l.task] = l.created;
      note(`Canvas's page: ${canvasLines.filter((l) => l.step || l.created).map((l) => `${l.step ?? `created ${l.task}`} @${l.at}`).join('; ')}`);
      assert(ids.canvas1 && ids.canvas2, `Canvas's page said ${JSON.stringify(canvasLines)}`);
      await waitFor('the tab\'s conversation to finish', () => {
        const s = api.conversation.status;
        const problem = s.problems.find((p) => ['server', 'send', 'llm-auth', 'executor'].includes(p.id));
        if (problem) throw new Error(`the tab reports: ${problem.message}`);
        return s.agentState === 'finished';
      }, 300000, 300);
      await assertScriptFollowed(LLM);
      const s = {};
      for (const task of ['tab', 'canvas1', 'canvas2']) s[task] = stamps(await eventsText(ids[task]), task);
      note(Object.entries(s).map(([t, x]) => `${t} pid ${x.pid} ${x.start}..${x.end} in ${x.cwd} on ${x.branch}`).join('; '));
      assert(new Set(Object.values(s).map((x) => x.pid)).size === 3, `shared shells: ${JSON.stringify(s)}`);
      for (const [t, x] of Object.entries(s)) assert(x.ppid === process.pid, `${t}'s shell parent ${x.ppid}; the extension host is ${process.pid}`);
      for (const [a, b] of [['tab', 'canvas1'], ['tab', 'canvas2'], ['canvas1', 'canvas2']]) {
        assert(s[a].start < s[b].end && s[b].start < s[a].end, `${a} and ${b} did not overlap: ${JSON.stringify([s[a], s[b]])}`);
      }
      for (const t of ['tab', 'canvas1', 'canvas2']) {
        assert(s[t].cwd === worktreeOf(ids[t]) && s[t].branch === `openhands/${ids[t]}`, `${t}'s shell is in ${s[t].cwd} on ${s[t].branch}, not ${worktreeOf(ids[t])}`);
        assert(terminalOf(ids[t]), `no agent terminal for ${t}`);
      }
    });

    await test('Canvas\'s page sent its create request (its tag, worktree: true, the window\'s folder, the typed task) and opened its WebSocket for each conversation with the key in the first frame', async () => {
      for (const t of ['canvas1', 'canvas2']) {
        const c = canvasLines.find((l) => l.created === ids[t]);
        const r = c.request;
        assert(r.worktree === true && r.tags && r.tags.clientsource === 'agentcanvas' && r.working_dir === root, `${t}'s request: ${JSON.stringify(r)}`);
        assert(r.message === `parallel task ${t} with tab canvas1 canvas2` && r.run === true, `${t}'s message: ${JSON.stringify(r)}`);
        assert(['terminal', 'file_editor'].every((x) => r.tools.includes(x)), `${t}'s tools: ${r.tools}`);
        const info = await rest('GET', `/api/conversations/${ids[t]}`);
        assert(info.workspace.working_dir === worktreeOf(ids[t]) && info.tags.clientsource === 'agentcanvas', `${t} on the agent-server: ${JSON.stringify(info.workspace)} ${JSON.stringify(info.tags)}`);
        // The page follows a conversation it shows over the agent-server's WebSocket, the key in
        // its first frame (its history comes over REST: the frames are the live events only).
        const f = canvasLines.find((l) => l.finished === ids[t]);
        note(`${t}: the page's WebSocket ${JSON.stringify(f && f.socket)}`);
        assert(f && f.socket && f.socket.opened >= 1 && f.socket.auth, `${t}'s WebSocket in the page: ${JSON.stringify(f)}`);
      }
    });

    await test('Agent Canvas\'s page shows canvas1\'s conversation done, its branch and worktree and the agent\'s file (screenshot)', async () => {
      const text = canvasLines.find((l) => l.text)?.text ?? '';
      // Its message, its end, its branch and its worktree with the agent's file.
      for (const part of ['parallel task canvas1 with tab canvas1 canvas2', 'Parallel task done.', `openhands/${ids.canvas1}`, worktreeOf(ids.canvas1), 'edit-canvas1.txt']) {
        assert(text.includes(part), `Canvas's page does not say "${part}": ${text.slice(0, 1500)}`);
      }
      for (const shot of ['agent-canvas-conversation.png', 'agent-canvas-new-worktree.png']) assert(fs.existsSync(path.join(ARTIFACTS, shot)), `no screenshot ${shot}`);
    });

    await test('the tab lists its own conversation and both Canvas ones, each in its worktree on its branch, and shows its own with the worktree actions (screenshot)', async () => {
      await waitFor('all three in the list', () => {
        const list = api.conversation.status.conversations;
        return [['tab', 'tab'], ['canvas1', 'canvas'], ['canvas2', 'canvas']].every(([t, origin]) => {
          const c = list.find((x) => x.id === ids[t]);
          return c && c.origin === origin && c.place && c.place.kind === 'worktree' && c.place.branch === `openhands/${ids[t]}`;
        });
      }, 30000, 300);
      const page = path.join(ARTIFACTS, `ui-webview-text-${++seq}.txt`);
      await ui('webview-text', page);
      const shown = fs.readFileSync(page, 'utf8');
      assert(shown.includes(`Started in the tab; works in a git worktree on branch openhands/${ids.tab}`) && shown.includes('Review changes'), `the tab says ${shown.slice(0, 600)}`);
      // The picker's entries as the page shows them (a closed <select> pictures only one).
      fs.writeFileSync(path.join(ARTIFACTS, 'v1-canvas-tab-list.txt'), `${shown.split('\nNew\n')[0]}\n`);
      await ui('screenshot', path.join(ARTIFACTS, 'v1-canvas-tab-list.png'));
      assert(fs.existsSync(path.join(ARTIFACTS, 'v1-canvas-tab-list.png')), 'no screenshot');
    });

    await test('each conversation saw only its own variable, and its file edit landed where its shell works', async () => {
      for (const [t, seen] of [['tab', 'tab=set canvas1=unset canvas2=unset'], ['canvas1', 'tab=unset canvas1=set canvas2=unset'], ['canvas2', 'tab=unset canvas1=unset canvas2=set']]) {
        const text = await eventsText(ids[t]);
        assert(text.includes(`seen by ${t}: ${seen}`), `${t} saw ${/seen by [^"\\]*/.exec(text)}`);
        const dir = worktreeOf(ids[t]);
        assert(fs.readFileSync(path.join(dir, `edit-${t}.txt`), 'utf8') === `written by ${t}\n`, `edit-${t}.txt not in ${dir}`);
        assert(!fs.existsSync(path.join(root, `edit-${t}.txt`)), `edit-${t}.txt reached the workspace`);
      }
    });

    await test('a conversation an SDK script creates (openhands-sdk RemoteConversation) on the window\'s agent-server is served by the window', async () => {
      const lines = await runClient('sdk-conversation', [process.env.OH_TEST_V1_PYTHON, path.join(HERE, 'sdk_conversation.py'), server.baseUrl, server.sessionApiKey, root, LLM, 'sdk'], 240000);
      const done = lines.find((l) => l.finished);
      assert(done && done.status === 'finished', `the script said ${JSON.stringify(lines)}`);
      ids.sdk = done.finished;
      const x = stamps(await eventsText(ids.sdk), 'sdk');
      note(`sdk ${ids.sdk}: pid ${x.pid} parent ${x.ppid} in ${x.cwd}`);
      assert(x.ppid === process.pid && x.cwd === root, `sdk's shell: ${JSON.stringify(x)}`);
      assert(terminalOf(ids.sdk), 'no agent terminal for the SDK\'s conversation');
      await waitFor('the SDK\'s conversation listed as started outside the tab', () => api.conversation.status.conversations.find((c) => c.id === ids.sdk)?.origin === 'elsewhere', 20000, 300);
    });

    await test('shown in the tab through its picker, the SDK\'s conversation (in the workspace) has no worktree actions', async () => {
      await act('webview-select', '#conversation', ids.sdk);
      await waitFor('the tab to show the SDK\'s conversation', () => api.conversation.status.conversationId === ids.sdk, 30000, 200);
      const page = path.join(ARTIFACTS, `ui-webview-text-${++seq}.txt`);
      await waitFor('its line', async () => {
        await ui('webview-text', page);
        return fs.readFileSync(page, 'utf8').includes('Started outside the tab (a script or another client); works in the workspace');
      }, 20000, 500);
      const shown = fs.readFileSync(page, 'utf8');
      assert(!shown.includes('Review changes') && !shown.includes('Apply to workspace'), `the tab says ${shown.slice(0, 600)}`);
    });

    await test('Use This Window as an Agent Canvas Backend: the API key in the clipboard, the URL said, Copy URL copies it', async () => {
      const notices = uiRequester(ARTIFACTS, 40000);
      const text = `Agent Canvas backend: ${server.baseUrl}`;
      // The offer with `label`, once it shows (a toast, else the notification list).
      const offer = () => waitFor(`the notification "${text}"`, async () => {
        const n = (await notices('notifications')).find((x) => x.text.includes(text) && x.buttons.includes('Copy URL'));
        if (!n) await vscode.commands.executeCommand('notifications.showList');
        return n;
      }, 30000, 500);
      await vscode.env.clipboard.writeText('nothing yet');
      const outcome = vscode.commands.executeCommand('openhands.v1.useAsCanvasBackend');
      const first = await offer();
      assert(first.text.includes('API key is in the clipboard') && first.text.includes('Add Backend') && first.buttons.includes('Copy API Key'), `the offer: ${JSON.stringify(first)}`);
      assert(await vscode.env.clipboard.readText() === server.sessionApiKey, 'the clipboard does not hold the agent-server\'s key');
      await notices('click-notification', { text, label: 'Copy URL' });
      await waitFor('the URL in the clipboard', async () => (await vscode.env.clipboard.readText()) === server.baseUrl, 10000, 200);
      // It offers again; closing the notification ends the command.
      await offer();
      await vscode.commands.executeCommand('notifications.clearAll');
      const done = await outcome;
      assert(done && done.backendUrl === server.baseUrl && done.keyCopied === true, `the command answered ${JSON.stringify(done)}`);
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('v1-canvas');
};
