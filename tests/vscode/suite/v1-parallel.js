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
const fs = require('fs');
const { execFileSync } = require('child_process');
const { openManagedTab, sendTask, waitFor, assert, assertScriptFollowed, runner, uiRequest: ui, uiRequester } = require('./lib');

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
    const start = new RegExp(`name=${name} pid=(\\d+) ppid=(\\d+) cwd=(\\S*) branch=(\\S*) start=([\\d.]+)`).exec(text);
    const end = new RegExp(`name=${name} end=([\\d.]+)`).exec(text);
    assert(start && end, `no stamps of ${name} in ${text.slice(0, 2000)}`);
    return { pid: Number(start[1]), ppid: Number(start[2]), cwd: start[3], branch: start[4], start: Number(start[5]), end: Number(end[1]) };
  };
  let alpha;
  let beta;
  let gamma;
  let delta;
  const notices = uiRequester(ARTIFACTS, 40000);
  // Clicks `label` in the one notification containing `text`, once it shows (a toast, else the list).
  const clickNotification = async (text, label) => {
    await waitFor(`the notification "${text}"`, async () => {
      if ((await notices('notifications')).some((n) => n.text.includes(text) && n.buttons.includes(label))) return true;
      await vscode.commands.executeCommand('notifications.showList');
      return false;
    }, 30000, 500);
    await notices('click-notification', { text, label });
  };
  // A conversation as a script or Agent Canvas creates it on this window's agent-server.
  const createElsewhere = (id, task, extra = {}) => rest('POST', '/api/conversations', {
    conversation_id: id,
    agent: { kind: 'Agent', llm: { model: 'openai/scripted', base_url: LLM, api_key: 'scripted-llm-key', usage_id: 'agent' }, tools: [{ name: 'terminal' }, { name: 'file_editor' }] },
    workspace: { working_dir: root },
    initial_message: { role: 'user', content: [{ type: 'text', text: `parallel task ${task}` }], run: true },
    ...extra,
  });

  try {
    await test('the tab\'s conversation and one a script created on the same agent-server run at the same time, each in its own executor', async () => {
      ({ api, server } = await openManagedTab(vscode, ext, act, LLM));
      await sendTask(vscode, act, api, 'parallel task alpha');
      await waitFor('alpha\'s slow step to run', () => api.conversation.items.some((i) => i.kind === 'action' && /ONLY_alpha/.test(i.title || '') && i.status === 'running'), 180000, 100)
        .catch((e) => { throw new Error(`${e.message}; the tab shows ${JSON.stringify(api.conversation.items).slice(0, 3000)}; status ${JSON.stringify(api.conversation.status).slice(0, 1500)}`); });
      alpha = api.conversation.status.conversationId;
      // The second conversation: created by a script, never shown in the tab.
      beta = crypto.randomUUID();
      note(`alpha ${alpha} runs; creating beta ${beta} over REST`);
      await createElsewhere(beta, 'beta');
      await waitFor('both conversations to finish', async () => {
        const b = await rest('GET', `/api/conversations/${beta}`);
        if (['error', 'stuck'].includes(b.execution_status)) throw new Error(`beta ${b.execution_status}`);
        const s = api.conversation.status;
        const problem = s.problems.find((p) => ['server', 'send', 'llm-auth', 'executor'].includes(p.id));
        if (problem) throw new Error(`the tab reports: ${problem.message}`);
        return s.agentState === 'finished' && b.execution_status === 'finished';
      }, 420000, 500);
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
      // The list: the tab's conversation as started in the tab, the script's (no tags) as started outside it.
      await waitFor('the list to say who started alpha and beta', () => {
        const list = api.conversation.status.conversations;
        return list.find((c) => c.id === alpha)?.origin === 'tab' && list.find((c) => c.id === beta)?.origin === 'elsewhere';
      }, 20000, 300);
      // Deleting the script's conversation ends its executor; the tab's keeps its own.
      await rest('DELETE', `/api/conversations/${beta}`);
      await waitFor('beta\'s terminal to close', () => !vscode.window.terminals.some((t) => t.name.endsWith(beta.replace(/-/g, '').slice(0, 8))), 30000, 200);
      assert(['connected', 'executing'].includes(api.snapshot.state) && api.snapshot.conversationId === alpha, `the tab's executor ${JSON.stringify(api.snapshot)}`);
    });

    await test('a conversation created with worktree: true runs in the worktree the agent-server made, on its branch', async () => {
      gamma = crypto.randomUUID();
      // With the tag Agent Canvas 1.20.0 puts on each conversation it creates.
      await createElsewhere(gamma, 'gamma', { worktree: true, tags: { clientsource: 'agentcanvas' } });
      await waitFor('gamma to finish', async () => {
        const g = await rest('GET', `/api/conversations/${gamma}`);
        if (['error', 'stuck'].includes(g.execution_status)) throw new Error(`gamma ${g.execution_status}`);
        return g.execution_status === 'finished';
      }, 120000, 500);
      const g = stamps(await eventsText(gamma), 'gamma');
      const expected = path.join(process.env.OH_CONVERSATION_WORKTREE_ROOT, gamma, path.basename(root));
      note(`gamma worked in ${g.cwd} on ${g.branch}`);
      assert(g.cwd === expected && g.branch === `openhands/${gamma}`, `gamma's shell is in ${g.cwd} on ${g.branch}, not ${expected} on openhands/${gamma}`);
      assert(g.ppid === process.pid, `gamma's shell parent ${g.ppid}`);
      assert(vscode.window.terminals.some((t) => t.name === `OpenHands Agent ${gamma.replace(/-/g, '').slice(0, 8)}`), 'no agent terminal for gamma');
    });

    await test('a conversation over the limit (openhands.v1.maxParallelConversations = 2) gets an error observation saying so, not a wait', async () => {
      // alpha and gamma hold the two executors (until they are closed or deleted).
      delta = crypto.randomUUID();
      const t0 = Date.now();
      await createElsewhere(delta, 'delta');
      const created = Date.now() - t0;
      const text = await waitFor('delta\'s error observation', async () => {
        const t = await eventsText(delta);
        return /already runs 2 conversation\(s\) at once/.test(t) && /maxParallelConversations = 2/.test(t) ? t : undefined;
      }, 60000, 500);
      note(`delta created in ${created} ms, answered with the limit`);
      assert(created < 60000, `delta's create request waited ${created} ms`);
      assert(!/name=delta pid=\d/.test(text), 'delta\'s command ran');
      assert(!vscode.window.terminals.some((t) => t.name === `OpenHands Agent ${delta.replace(/-/g, '').slice(0, 8)}`), 'delta got an executor');
    });

    await test('the list shows gamma in its worktree on its branch, started in Agent Canvas (by its tag); finished in the background, it badges the view and notifies, and Open shows it', async () => {
      const branch = `openhands/${gamma}`;
      const listed = await waitFor('gamma in the list, in its worktree', () => {
        const c = api.conversation.status.conversations.find((x) => x.id === gamma);
        return c && c.place && c.place.kind === 'worktree' && c.place.branch === branch ? c : undefined;
      }, 30000, 300);
      note(`gamma listed as ${JSON.stringify(listed.place)}`);
      assert(api.conversation.status.conversationId === alpha, `the tab shows ${api.conversation.status.conversationId}, not alpha`);
      await waitFor('the badge to count gamma', () => api.conversation.needing.includes(gamma) && api.conversation.badge === api.conversation.needing.length, 30000, 300);
      await clickNotification(`(${gamma.slice(0, 8)}) finished`, 'Open');
      await waitFor('the tab to show gamma', () => api.conversation.status.conversationId === gamma, 30000, 200);
      // The tab shows it before it publishes the list the badge is counted from.
      await waitFor('gamma to leave the badge once shown', () => !api.conversation.needing.includes(gamma), 10000, 100)
        .catch(() => { throw new Error(`gamma still needs attention: ${api.conversation.needing}`); });
      const page = path.join(ARTIFACTS, `ui-webview-text-${++seq}.txt`);
      await ui('webview-text', page);
      const shown = fs.readFileSync(page, 'utf8');
      assert(shown.includes(`on branch ${branch}`) && shown.includes('Review changes') && shown.includes('Discard'), `the tab says ${shown.slice(0, 600)}`);
      // Its tags say Agent Canvas started it (as they would for Canvas's own conversations).
      assert(shown.includes('Started in Agent Canvas') && listed.origin === 'canvas', `gamma's origin ${listed.origin}; the tab says ${shown.slice(0, 600)}`);
    });

    await test('Review changes lists what gamma\'s worktree changed in the diff editor; Apply writes it into the workspace; Discard, confirmed, removes the worktree and its branch', async () => {
      const branch = `openhands/${gamma}`;
      const wt = path.join(process.env.OH_CONVERSATION_WORKTREE_ROOT, gamma, path.basename(root));
      fs.writeFileSync(path.join(wt, 'gamma-notes.txt'), 'notes of gamma\n');
      const files = await vscode.commands.executeCommand('openhands.v1.reviewWorktree');
      // edit-gamma.txt: the agent's file edit; gamma-notes.txt: written here.
      assert(JSON.stringify(files) === JSON.stringify([{ status: 'A', path: 'edit-gamma.txt' }, { status: 'A', path: 'gamma-notes.txt' }]), `review listed ${JSON.stringify(files)}`);
      const diff = await waitFor('the diff editor of the first file', () => vscode.window.tabGroups.all.flatMap((g) => g.tabs)
        .find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.original.scheme === 'openhands-worktree-base' && t.input.modified.fsPath === path.join(fs.realpathSync(wt), 'edit-gamma.txt')), 20000, 200);
      assert((await vscode.workspace.openTextDocument(diff.input.original)).getText() === '', 'the base side of an added file is not empty');
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      const applied = await vscode.commands.executeCommand('openhands.v1.applyWorktree');
      assert(JSON.stringify(applied) === JSON.stringify(files), `apply answered ${JSON.stringify(applied)}`);
      assert(fs.readFileSync(path.join(root, 'gamma-notes.txt'), 'utf8') === 'notes of gamma\n', 'the workspace did not get gamma-notes.txt');
      const discarding = vscode.commands.executeCommand('openhands.v1.discardWorktree');
      await clickNotification(`(${gamma.slice(0, 8)})? This removes`, 'Discard');
      const gone = await discarding;
      note(`discarded ${JSON.stringify(gone)}`);
      assert(gone && gone.branch === branch, `discard answered ${JSON.stringify(gone)}`);
      assert(!fs.existsSync(wt), `${wt} is still there`);
      const branches = execFileSync('git', ['-C', root, 'branch', '--list', branch]).toString();
      assert(branches === '', `the branch is still there: ${branches}`);
      await waitFor('the list to drop the worktree', () => api.conversation.status.conversations.find((x) => x.id === gamma)?.place?.kind !== 'worktree', 20000, 300);
    });

    await test('New Conversation in a Worktree: the tab\'s conversation runs in the worktree the agent-server made (its shell there, its file edit there, on its branch, the tab says so)', async () => {
      // Free the second executor (gamma holds it; delta never got one).
      await rest('DELETE', `/api/conversations/${gamma}`);
      await rest('DELETE', `/api/conversations/${delta}`);
      const epsilon = await vscode.commands.executeCommand('openhands.v1.newConversationInWorktree');
      assert(typeof epsilon === 'string' && api.conversation.status.conversationId === epsilon, `the command answered ${epsilon}; the tab shows ${api.conversation.status.conversationId}`);
      await act('webview-fill', '#input', 'parallel task epsilon');
      await act('webview-click', '#send');
      await waitFor('epsilon to finish', () => {
        const s = api.conversation.status;
        const problem = s.problems.find((p) => ['server', 'send', 'llm-auth', 'executor'].includes(p.id));
        if (problem) throw new Error(`the tab reports: ${problem.message}`);
        return s.conversationId === epsilon && s.agentState === 'finished';
      }, 180000, 300);
      const branch = `openhands/${epsilon}`;
      const wt = path.join(process.env.OH_CONVERSATION_WORKTREE_ROOT, epsilon, path.basename(root));
      const e = stamps(await eventsText(epsilon), 'epsilon');
      note(`epsilon worked in ${e.cwd} on ${e.branch}`);
      assert(e.cwd === wt && e.branch === branch, `epsilon's shell is in ${e.cwd} on ${e.branch}, not ${wt} on ${branch}`);
      assert(e.ppid === process.pid, `epsilon's shell parent ${e.ppid}`);
      assert(fs.existsSync(path.join(wt, 'edit-epsilon.txt')) && !fs.existsSync(path.join(root, 'edit-epsilon.txt')), 'the file edit did not land in the worktree only');
      assert(vscode.window.terminals.some((t) => t.name === `OpenHands Agent ${epsilon.replace(/-/g, '').slice(0, 8)}`), 'no agent terminal for epsilon');
      await waitFor('epsilon listed in its worktree', () => api.conversation.status.conversations.find((x) => x.id === epsilon)?.place?.branch === branch, 30000, 300);
      const page = path.join(ARTIFACTS, `ui-webview-text-${++seq}.txt`);
      await ui('webview-text', page);
      const shown = fs.readFileSync(page, 'utf8');
      assert(shown.includes(`on branch ${branch}`) && shown.includes('Review changes'), `the tab says ${shown.slice(0, 600)}`);
    });
  } finally {
    await vscode.commands.executeCommand('openhands.stop');
  }
  run.finish('v1-parallel');
};
