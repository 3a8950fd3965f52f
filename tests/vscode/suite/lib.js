// Helpers shared by the real-host suites (they run inside the extension host; test-electron's
// contract: `exports.run` throws to fail). Each suite reports one `@@oh-test PASS|FAIL` line per
// test and one `@@oh-test SUMMARY` line, which run.sh requires from every session.

const fs = require('fs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `f` until it returns something truthy (returned), or throws after `timeoutMs`. */
async function waitFor(what, f, timeoutMs = 30000, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await f();
    if (v) return v;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/**
 * A sequence of named tests. After `stop()` (or, with `stopOnFailure`, after any failure) the
 * remaining tests are reported as failed, never silently left out.
 */
function runner({ stopOnFailure = false } = {}) {
  const results = [];
  let stopped = false;
  return {
    async test(name, f) {
      if (stopped) {
        console.log(`@@oh-test FAIL ${name}: skipped (an earlier test this depends on failed)`);
        results.push({ name, ok: false });
        return;
      }
      const t0 = Date.now();
      try {
        await f();
        console.log(`@@oh-test PASS ${name} (${Date.now() - t0} ms)`);
        results.push({ name, ok: true });
      } catch (e) {
        console.log(`@@oh-test FAIL ${name}: ${e && e.stack ? e.stack : e}`);
        results.push({ name, ok: false });
        if (stopOnFailure) stopped = true;
      }
    },
    stop() {
      stopped = true;
    },
    /** Prints the summary line; throws when a test failed, which fails the host session. */
    finish(what) {
      const failed = results.filter((r) => !r.ok).length;
      console.log(`@@oh-test SUMMARY ${results.length - failed} passed, ${failed} failed`);
      if (failed) throw new Error(`${failed} ${what} test(s) failed`);
    },
  };
}

/**
 * Opens the notification list once the executor is asking for consent (the notification exists
 * then: it was requested before the state changed), so the runner can click "Allow" in it as a
 * user would. The list must be opened after the notification exists: opened earlier, the
 * notification never shows. Returns at once when the start got past consent without asking.
 */
async function showConsentWhenAsked(vscode, api, timeoutMs = 60000) {
  const asking = await waitFor('the executor to ask for consent (or get past it)', () => {
    const s = api.snapshot;
    if (s.state === 'starting' && /permission to execute/.test(s.message || '')) return 'asking';
    return ['connecting', 'connected', 'executing', 'error', 'blocked'].includes(s.state) ? 'past' : undefined;
  }, timeoutMs, 50);
  if (asking === 'asking') await vscode.commands.executeCommand('notifications.showList');
}

/**
 * Asks the runner (host.mjs) for a UI action: `payload` (if any) is written to `file`, the request
 * is the console line `@@oh-ui <verb> <file>`, and the runner answers in `<file>.done` with "ok" or
 * "error: ...". Resolves with "ok"; throws with the runner's error. Verbs that produce something
 * write it to `file` or `<file>.json` (see host.mjs).
 */
async function uiRequest(verb, file, payload, timeoutMs = 40000) {
  if (payload !== undefined) fs.writeFileSync(file, typeof payload === 'string' ? payload : JSON.stringify(payload));
  fs.rmSync(`${file}.done`, { force: true }); // an earlier answer for the same file must not count
  console.log(`@@oh-ui ${verb} ${file}`);
  // Non-empty: the runner's write creates the file before it fills it.
  const read = () => (fs.existsSync(`${file}.done`) ? fs.readFileSync(`${file}.done`, 'utf8') : '');
  const answer = await waitFor(`the runner to ${verb}`, read, timeoutMs, 100);
  if (answer !== 'ok') throw new Error(`${verb} ${file}: ${answer}`);
  return answer;
}

/** `rest(method, pathname, body)` against an OpenHands server with its session API key. */
function serverRest(server, key) {
  return async (method, pathname, body) => {
    const r = await fetch(`${server}${pathname}`, {
      method,
      headers: { 'content-type': 'application/json', 'X-Session-API-Key': key },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.text() };
  };
}

/**
 * Enters the session API key as a user would: runs "OpenHands: Set Session API Key" and has the
 * runner type the key into its password box. The key file exists only while the runner reads it.
 */
async function typeSessionKey(vscode, key, artifacts) {
  const keyFile = require('path').join(artifacts, 'session-key.txt');
  fs.writeFileSync(keyFile, key, { mode: 0o600 });
  try {
    const done = vscode.commands.executeCommand('openhands.setSessionApiKey');
    await uiRequest('type-quickinput', keyFile);
    await done;
  } finally {
    fs.rmSync(keyFile, { force: true });
  }
}

/**
 * `ui(verb, body)`: a runner request with a numbered request file of its own under `artifacts`.
 * Resolves with "ok", or for `notifications` with the visible notifications (host.mjs writes them
 * into the request file).
 */
function uiRequester(artifacts, timeoutMs) {
  let seq = 0;
  return async (verb, body) => {
    const file = require('path').join(artifacts, `ui-${verb}-${++seq}.json`);
    await uiRequest(verb, file, body ?? {}, timeoutMs);
    return verb === 'notifications' ? JSON.parse(fs.readFileSync(file, 'utf8')) : 'ok';
  };
}

/**
 * Throws unless the scripted stand-in LLM at `llmBaseUrl` (its ".../v1" base URL) answered every
 * request from its script: on a mismatch it answers `finish` with "SCRIPT MISMATCH ...", which a
 * test that only waits for the agent to finish would take for success.
 */
async function assertScriptFollowed(llmBaseUrl) {
  assert(llmBaseUrl, 'no scripted LLM base URL to ask');
  const r = await fetch(`${llmBaseUrl.replace(/\/+$/, '')}/scripted/mismatches`);
  assert(r.ok, `the scripted LLM's mismatch list: HTTP ${r.status}`);
  const { mismatches, requests } = await r.json();
  assert(mismatches.length === 0, `the agent left the LLM's script: ${mismatches.join('; ')}`);
  assert(requests > 0, 'the scripted LLM answered no request');
}

/**
 * Answers a notification prompt as a user would, for sessions whose runner clicks nothing by
 * itself: waits for the prompt containing `text` (a toast, or in the list, opened when no toast
 * shows within 5 s), waits 1.5 s more so a second prompt would be rendered (absence has no event;
 * listed in tests/README.md), counts the prompts then shown, clicks `label` and waits until it is
 * gone. Returns the count (a caller asserting "asked once" checks it is 1).
 */
async function answerPrompt(vscode, ui, text, label, timeoutMs = 60000) {
  const prompts = async () => (await ui('notifications')).filter((n) => n.text.includes(text));
  const t0 = Date.now();
  let listShown = false;
  await waitFor(`the prompt "${text}"`, async () => {
    if ((await prompts()).length > 0) return true;
    if (!listShown && Date.now() - t0 > 5000) {
      listShown = true;
      await vscode.commands.executeCommand('notifications.showList');
    }
    return false;
  }, timeoutMs, 300);
  await sleep(1500);
  const shown = (await prompts()).length;
  await ui('click-notification', { text, label });
  await waitFor(`the prompt "${text}" to close`, async () => (await prompts()).length === 0, 20000, 300);
  return shown;
}

/** Types the tab's LLM form (model, base URL, key), saves it, and waits until the tab accepts messages. */
async function fillLlmForm(act, api, { baseUrl, model = 'openai/scripted', key = 'scripted-llm-key' }) {
  await act('webview-fill', '#llm-model', model);
  await act('webview-fill', '#llm-base', baseUrl);
  await act('webview-fill', '#llm-key', key);
  await act('webview-click', '#llm-save');
  await waitFor('the tab to accept messages', () => api.conversation.status.canSend && !api.conversation.status.llmForm, 30000);
}

/**
 * The tab on the agent-server this window runs (managed mode), as a new user opens it: the
 * extension activated, its view shown, execution allowed, the server running, the scripted LLM
 * entered in the form. Resolves with the extension's API and the server's connection.
 */
async function openManagedTab(vscode, ext, act, llmBaseUrl) {
  const api = await ext.activate();
  await vscode.commands.executeCommand('workbench.view.extension.openhands');
  await showConsentWhenAsked(vscode, api, 60000);
  await waitAgentServerRunning(api);
  const server = await api.agentServer.connection();
  await waitFor('the LLM form', () => api.conversation.status.llmForm, 30000);
  await fillLlmForm(act, api, { baseUrl: llmBaseUrl });
  return { api, server };
}

/** Until the agent-server the extension starts runs (a crash fails at once). */
function waitAgentServerRunning(api) {
  return waitFor('the agent-server the extension starts', () => {
    if (api.agentServer.state === 'crashed') throw new Error(`agent-server crashed: ${api.agentServer.error}`);
    return api.agentServer.state === 'running';
  }, 180000, 300);
}

/** Types a task into the tab's message box and sends it, as a user does (then allows execution if asked). */
async function sendTask(vscode, act, api, text) {
  await vscode.commands.executeCommand('openhands.view.focus');
  await act('webview-fill', '#input', text);
  await act('webview-click', '#send');
  await showConsentWhenAsked(vscode, api, 120000);
}

module.exports = { openManagedTab, waitAgentServerRunning, sendTask, answerPrompt, fillLlmForm, assertScriptFollowed, sleep, waitFor, assert, runner, showConsentWhenAsked, uiRequest, uiRequester, serverRest, typeSessionKey };
