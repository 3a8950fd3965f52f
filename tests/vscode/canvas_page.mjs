// Agent Canvas 1.20.0's own frontend (its built page, `build/` of its npm tarball) in headless
// Chromium, driven as a user drives it (session v1-canvas, suite/v1-canvas.js). The page is served
// as files (its launcher's `--frontend-only` serves the same files behind an ingress that needs
// Canvas's npm dependencies, which do not install here); it starts with empty storage, as a first
// visit. Selectors are Canvas's own `data-testid`s (read in its tarball's `dist/` sources).
//   1. Add Backend, the first step of Canvas's onboarding on a first visit: the name, the window's
//      agent-server URL and its API key, "Next" (Canvas checks the connection and stores the
//      backend). Its analytics prompt: "no"; the rest of the onboarding: "Skip for now".
//   3. Per task: "New chat", "Open Workspace"; the first time "Add workspaces" and Canvas's folder
//      browser walked (up, then folder by folder) to the window's folder, "Add this directory";
//      "Confirm"; the workspace mode "New Worktree"; the task typed into the chat box, sent.
//      The page's own create request and its answer are what this prints ({"created"}).
//   4. Each conversation's page until it says DONE_TEXT; the first task's page last, screenshotted,
//      its text printed. The page's WebSockets to the agent-server are recorded per conversation
//      (opened, the key in the first frame, frames received).
// Usage: node canvas_page.mjs PLAYWRIGHT_DIR CANVAS_PACKAGE_DIR BACKEND_URL API_KEY WORKSPACE ARTIFACTS DONE_TEXT TASK...
// Each task's message is `parallel task <task> with tab <tasks...>` (fixtures/v1-canvas-llm-script.json).
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const [pwDir, pkg, backend, apiKey, workspace, artifacts, doneText, ...tasks] = process.argv.slice(2);
if (!tasks.length) {
  console.error('usage: canvas_page.mjs PLAYWRIGHT_DIR CANVAS_PACKAGE_DIR BACKEND_URL API_KEY WORKSPACE ARTIFACTS DONE_TEXT TASK...');
  process.exit(64);
}
const { chromium } = createRequire(`${pwDir}/`)('playwright-core');
const say = (o) => console.log(JSON.stringify(o));
const build = path.join(pkg, 'build');
const types = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml', '.json': 'application/json', '.png': 'image/png', '.woff2': 'font/woff2', '.ico': 'image/x-icon' };
// Files as they are; any other path is the single-page app's index (its client-side routes).
const server = http.createServer((req, res) => {
  let file = path.join(build, decodeURIComponent(new URL(req.url, 'http://page').pathname));
  if (!file.startsWith(build + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(build, 'index.html');
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://localhost:${server.address().port}`;
const backendOrigin = new URL(backend).origin;
const plain = (id) => id.replace(/-/g, '');

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const byId = (id) => page.getByTestId(id);

// The page's WebSockets to the agent-server, by conversation (its id as the socket's path says it).
const sockets = new Map();
page.on('websocket', (ws) => {
  const m = /\/sockets\/events\/([^/?]+)/.exec(ws.url());
  if (!m) return;
  const s = sockets.get(plain(m[1])) ?? { opened: 0, events: 0, auth: false, finished: false, urls: [] };
  sockets.set(plain(m[1]), s);
  s.opened += 1;
  s.urls.push(ws.url().replace(/session_api_key=[^&]*/, 'session_api_key=…'));
  ws.on('framesent', (f) => { if (/"type"\s*:\s*"auth"/.test(String(f.payload))) s.auth = true; });
  ws.on('framereceived', (f) => {
    s.events += 1;
    try {
      const e = JSON.parse(String(f.payload));
      if (e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status' && e.value === 'finished') s.finished = true;
    } catch { /* not an event */ }
  });
});

/** Runs one named step; on failure keeps the page's picture and text and names the step. */
async function step(name, fn) {
  say({ step: name, at: Date.now() });
  try {
    return await fn();
  } catch (e) {
    const base = path.join(artifacts, `agent-canvas-failed-${name.replace(/\W+/g, '-')}`);
    await page.screenshot({ path: `${base}.png` }).catch(() => undefined);
    fs.writeFileSync(`${base}.txt`, await page.evaluate(() => document.body.innerText).catch(() => ''));
    throw new Error(`Canvas's page, step "${name}": ${e.message}`);
  }
}

/** Canvas asks once per backend whether to send usage data: "no" (when it asks within `ms`). */
async function declineAnalytics(ms) {
  const consent = page.getByRole('button', { name: 'Confirm preferences' });
  if (!(await consent.waitFor({ timeout: ms }).then(() => true, () => false))) return;
  await page.getByRole('checkbox', { name: 'Send anonymous usage data' }).uncheck();
  await consent.click();
  await consent.waitFor({ state: 'detached', timeout: 20000 });
}

/** Walks Canvas's folder browser from where it opens to `target`: up, then folder by folder. */
async function browseTo(target) {
  const current = byId('folder-browser-current-path');
  const at = async () => (await current.textContent()).trim();
  await page.waitForFunction(() => document.querySelector('[data-testid="folder-browser-current-path"]')?.textContent.trim(), undefined, { timeout: 30000 });
  for (let here = await at(); here !== target && !target.startsWith(`${here === '/' ? '' : here}/`); here = await at()) {
    await byId('folder-browser-up').click();
    await page.waitForFunction((was) => document.querySelector('[data-testid="folder-browser-current-path"]')?.textContent.trim() !== was, here, { timeout: 30000 });
  }
  for (let here = await at(); here !== target; here = await at()) {
    const next = target.slice(here === '/' ? 1 : here.length + 1).split('/')[0];
    await byId(`folder-browser-entry-${next}`).click();
    await page.waitForFunction((was) => document.querySelector('[data-testid="folder-browser-current-path"]')?.textContent.trim() !== was, here, { timeout: 30000 });
  }
}

try {
  // A first visit shows Canvas's onboarding; with no backend yet its first step is Add Backend.
  await step('open the page', async () => {
    await page.goto(`${origin}/`);
    await byId('onboarding-step-check-backend').waitFor({ timeout: 60000 });
  });
  await step('add the window\'s backend', async () => {
    const form = byId('onboarding-backend-form');
    await form.getByTestId('onboarding-backend-name').fill('VS Code window');
    await form.getByTestId('onboarding-backend-host').fill(backend);
    await form.getByTestId('onboarding-backend-api-key').fill(apiKey);
    await form.getByTestId('onboarding-backend-next').click();
    // Canvas checks the connection, then stores the backend (its registry, in the page's storage).
    const stored = page.waitForFunction((host) => (localStorage.getItem('openhands-backends') ?? '').includes(host), backend, { timeout: 30000 });
    const refused = form.getByTestId('onboarding-backend-error').waitFor({ timeout: 30000 })
      .then(async () => { throw new Error(`Canvas says: ${await form.getByTestId('onboarding-backend-error').textContent()}`); }, () => new Promise(() => {}));
    await Promise.race([stored, refused]);
  });
  await step('decline the analytics prompt', () => declineAnalytics(20000));
  await step('skip the rest of the onboarding', async () => {
    await byId('onboarding-skip').click();
    await byId('home-chat-launcher').waitFor({ timeout: 60000 });
    await declineAnalytics(3000);
  });

  const created = [];
  for (const task of tasks) {
    const message = `parallel task ${task} with tab ${tasks.join(' ')}`;
    await step(`${task}: new chat`, async () => {
      await byId('sidebar-conversations-link').click();
      await byId('home-chat-launcher').waitFor({ timeout: 30000 });
    });
    await step(`${task}: open workspace`, async () => {
      // Canvas's home offers "Open Workspace" until a folder is picked, then a chip with that
      // folder's name in its place (the same dialog behind it). Which one a later task meets
      // depends on whether Canvas restored the last folder before the click: either will do.
      const open = byId('open-workspace-button');
      const chip = byId('home-git-control-bar-preview').locator('button').first();
      await open.or(chip).first().waitFor({ timeout: 30000 });
      await ((await open.isVisible()) ? open : chip).click();
      await byId('open-workspace-dialog-body').waitFor({ timeout: 30000 });
      const confirm = byId('workspace-launch-button');
      // The dialog remembers the folder picked last in this tab (once its list loaded); the first
      // time the folder is added.
      const remembered = task !== tasks[0] && await page.waitForFunction(() => !document.querySelector('[data-testid="workspace-launch-button"]')?.disabled,
        undefined, { timeout: 15000 }).then(() => true, () => false);
      if (!remembered) {
        await byId('workspace-dropdown').click();
        await byId('add-workspaces-button').click();
        await byId('folder-browser-modal').waitFor({ timeout: 30000 });
        await browseTo(workspace);
        await byId('folder-browser-use').click();
      }
      await page.waitForFunction(() => !document.querySelector('[data-testid="workspace-launch-button"]')?.disabled, undefined, { timeout: 30000 });
      await confirm.click();
      await byId('home-git-control-bar-preview').waitFor({ timeout: 30000 });
    });
    await step(`${task}: choose New Worktree`, async () => {
      await byId('workspace-mode-selector').click();
      await byId('workspace-mode-selector-option-new_worktree').click();
      const label = await byId('workspace-mode-selector').getAttribute('aria-label');
      if (label !== 'New Worktree') throw new Error(`the workspace mode says ${label}`);
    });
    const sent = await step(`${task}: type the task and send`, async () => {
      await byId('chat-input').click();
      await page.keyboard.type(message);
      if (task === tasks[0]) await page.screenshot({ path: path.join(artifacts, 'agent-canvas-new-worktree.png') });
      const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).origin === backendOrigin
        && new URL(r.url()).pathname === '/api/conversations', { timeout: 120000 });
      answer.catch(() => undefined); // awaited below; a failure before that is this step's
      // Canvas enables sending once its backend's LLM is usable (an active profile with a key).
      if (!(await page.waitForFunction(() => !document.querySelector('[data-testid="submit-button"]')?.disabled, undefined, { timeout: 30000 }).then(() => true, () => false))) {
        throw new Error(`its send button stays disabled; the page says: ${(await page.evaluate(() => document.body.innerText)).slice(0, 300)}`);
      }
      await byId('submit-button').click();
      const response = await answer;
      if (!response.ok()) throw new Error(`the agent-server answered ${response.status()}: ${(await response.text()).slice(0, 500)}`);
      const request = response.request().postDataJSON();
      const info = await response.json();
      await page.waitForURL((u) => plain(u.pathname).includes(plain(info.id)), { timeout: 60000 });
      return { info, request };
    });
    const r = sent.request;
    say({
      created: sent.info.id, task, at: Date.now(),
      request: {
        worktree: r.worktree, tags: r.tags, working_dir: r.workspace?.working_dir, tools: (r.agent_settings?.tools ?? []).map((t) => (typeof t === 'string' ? t : t.name)),
        message: (r.initial_message?.content ?? []).map((c) => c.text).join(''), run: r.initial_message?.run,
      },
    });
    created.push({ id: sent.info.id, task });
  }

  // Each conversation's page until it is done: the first task's last, for the picture.
  for (const c of [...created].reverse()) {
    await step(`${c.task}: its conversation page says "${doneText}"`, async () => {
      await page.goto(`${origin}/conversations/${c.id}`);
      await page.getByText(doneText).first().waitFor({ timeout: 300000 });
    });
    say({ finished: c.id, task: c.task, socket: sockets.get(plain(c.id)) ?? null });
  }
  await step('the first conversation\'s page, pictured', async () => {
    await page.waitForTimeout(1500); // its branch and files arrive after the history
    await page.screenshot({ path: path.join(artifacts, 'agent-canvas-conversation.png') });
    say({ text: await page.evaluate(() => document.body.innerText) });
  });
} finally {
  await browser.close();
  server.close();
}
