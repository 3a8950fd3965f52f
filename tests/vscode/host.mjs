// Runs one extension-test session inside a real VS Code extension host (code-server from npm)
// driven by headless Chromium through playwright-core. See README.md.
//
//   node host.mjs --workspace DIR|FILE.code-workspace --dev DIR --tests FILE [--env JSON] [--extensions-dir DIR]
//                 [--artifacts DIR] [--timeout SECONDS] [--click-dialog LABEL]... [--untrusted 1]
//
// Exit code: the extension host's exit code (0 pass), 2 on a harness failure or timeout.
// UI requests from inside the tests travel as console lines:
//   @@oh-ui screenshot <absolute png path>   -> the runner saves a screenshot there
//   @@oh-ui terminal-text <path>            -> the runner writes the visible terminal's text there
//   @@oh-ui webview-text <path>             -> the runner writes the OpenHands view's text there
//   @@oh-ui type-quickinput <path>          -> the runner types that file's text into the quick input
//   @@oh-ui webview-fill <path>             -> fills {"selector","value"} (JSON in the file) in the OpenHands webview
//   @@oh-ui webview-click <path>            -> clicks {"selector"} in the OpenHands webview
//   @@oh-ui webview-select <path>           -> picks the option {"value"} of the <select> {"selector"}
//   @@oh-ui notifications <path>            -> writes the visible notifications (toasts and the
//                                              notification center) as JSON [{where, text, buttons}]
//   @@oh-ui click-notification <path>       -> clicks the button {"label"} of the one visible
//                                              notification whose text contains {"text"}
//   @@oh-ui workbench-click <path>          -> clicks {"selector"} in the workbench itself (e.g. an editor title action)
//   @@oh-ui webview-dom <path>              -> writes {"text", "tags"} of {"selector"} in whichever webview frame has it to <path>.json
// and the runner acknowledges by creating "<path>.done" (the tests poll for it).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const CACHE = process.env.VSCODE_HOST_CACHE ?? path.join(os.homedir(), '.cache/openhands-vscode-runtime/vscode-host');
const require = createRequire(path.join(CACHE, 'pw/package.json'));
const { chromium } = require('playwright-core');

function parseArgs(argv) {
  const args = { env: '{}', timeout: 240, clickDialog: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    const v = argv[i + 1];
    if (k === 'click-dialog') args.clickDialog.push(v);
    else args[k.replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = v;
  }
  for (const r of ['workspace', 'dev', 'tests']) if (!args[r]) throw new Error(`--${r} is required`);
  return args;
}

const log = (...a) => console.log(`[host ${new Date().toISOString().slice(11, 19)}]`, ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitHealthy(port, child, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error('code-server did not become healthy');
}

function killGroup(child) {
  if (!child || child.exitCode !== null) return;
  try { process.kill(-child.pid, 'SIGTERM'); } catch {}
  setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} }, 3000).unref();
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const session = mkdtempSync(path.join(os.tmpdir(), 'oh-vscode-host-'));
  const artifacts = args.artifacts ?? session;
  mkdirSync(artifacts, { recursive: true });
  const userDir = path.join(session, 'user');
  const extDir = args.extensionsDir ?? path.join(session, 'ext');
  mkdirSync(path.join(userDir, 'User'), { recursive: true });
  mkdirSync(extDir, { recursive: true });
  // Keep the workbench quiet and deterministic.
  writeFileSync(path.join(userDir, 'User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    // --untrusted 1: workspace trust on, and the folder is never trusted (restricted mode).
    'security.workspace.trust.enabled': Boolean(args.untrusted),
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.emptyWindow': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'chat.disableAIFeatures': true,
    'workbench.colorTheme': 'Default Dark Modern',
    'window.commandCenter': false,
    'terminal.integrated.gpuAcceleration': 'off',
    ...(args.settings ? JSON.parse(args.settings) : {}),
  }, null, 2));

  const port = await freePort();
  const nodeDir = path.join(CACHE, 'node24');
  const csDir = path.join(CACHE, 'code-server/node_modules/code-server');
  const env = {
    ...process.env,
    PATH: `${nodeDir}/bin:${process.env.PATH}`,
    npm_config_nodedir: nodeDir,
    XDG_CONFIG_HOME: path.join(session, 'xdg-config'),
    XDG_DATA_HOME: path.join(session, 'xdg-data'),
    XDG_CACHE_HOME: path.join(session, 'xdg-cache'),
  };
  const csArgs = [
    path.join(csDir, 'out/node/entry.js'),
    '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry',
    '--disable-update-check', ...(args.untrusted ? [] : ['--disable-workspace-trust']), '--reconnection-grace-time', '5',
    '--user-data-dir', userDir, '--extensions-dir', extDir,
    '--vscode-option', 'enable-smoke-test-driver',
  ];
  const csLog = path.join(artifacts, 'code-server.log');
  const { openSync } = await import('node:fs');
  const fd = openSync(csLog, 'a');
  const cs = spawn(path.join(nodeDir, 'bin/node'), csArgs, { env, detached: true, stdio: ['ignore', fd, fd] });
  let browser;
  const cleanup = () => { killGroup(cs); };
  process.on('exit', cleanup);
  process.on('SIGINT', () => { cleanup(); process.exit(130); });
  process.on('SIGTERM', () => { cleanup(); process.exit(143); });

  let exitCode = 2;
  try {
    await waitHealthy(port, cs);
    log(`code-server healthy on ${port} after ${((Date.now() - started) / 1000).toFixed(1)}s`);
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage'],
    });
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    let resolveExit;
    const exited = new Promise((r) => { resolveExit = r; });
    await page.exposeFunction('codeAutomationExit', (code) => resolveExit(Number(code)));

    const uiQueue = [];
    let uiBusy = Promise.resolve();
    const handleUi = (line) => {
      const m = /@@oh-ui (\S+) (.*)$/.exec(line);
      if (!m) return;
      const [, verb, arg] = m;
      uiBusy = uiBusy.then(async () => {
        try {
          if (verb === 'screenshot') {
            await page.waitForTimeout(600);
            await page.screenshot({ path: arg });
            writeFileSync(`${arg}.done`, 'ok');
            log(`screenshot ${arg}`);
          } else if (verb === 'terminal-text') {
            // Text of the visible terminal as xterm renders it (DOM renderer: gpuAcceleration off).
            const text = await page.evaluate(() => [...document.querySelectorAll('.xterm-rows')]
              .map((rows) => [...rows.children].map((r) => r.textContent.replace(/\u00a0/g, ' ').trimEnd()).join('\n')).join('\n----\n'));
            writeFileSync(arg, text);
            writeFileSync(`${arg}.done`, 'ok');
          } else if (verb === 'webview-text') {
            // Text of the OpenHands webview (the frame that holds its #state element).
            let text = '';
            for (const f of page.frames()) {
              const t = await f.evaluate(() => (document.getElementById('state') ? document.body.innerText : '')).catch(() => '');
              if (t) { text = t; break; }
            }
            writeFileSync(arg, text);
            writeFileSync(`${arg}.done`, 'ok');
          } else if (verb === 'webview-fill' || verb === 'webview-click' || verb === 'webview-select') {
            // Acts on the OpenHands webview like a user: the file holds {"selector", "value"}.
            // The answer file says "ok" or "error: ..." (the tests read it).
            const { readFileSync } = await import('node:fs');
            try {
              const req = JSON.parse(readFileSync(arg, 'utf8'));
              // The webview's frames come and go while the workbench lays out: look for up to 20 s.
              let frame;
              for (let tries = 0; !frame && tries < 40; tries++) {
                for (const f of page.frames()) {
                  if (await f.evaluate(() => Boolean(document.getElementById('state'))).catch(() => false)) { frame = f; break; }
                }
                if (!frame) await page.waitForTimeout(500);
              }
              if (!frame) throw new Error('the OpenHands webview is not open');
              const target = frame.locator(req.selector).first();
              await target.waitFor({ state: 'visible', timeout: 20000 });
              if (verb === 'webview-fill') await target.fill(String(req.value ?? ''));
              else if (verb === 'webview-select') await target.selectOption(String(req.value ?? ''));
              else await target.click();
              writeFileSync(`${arg}.done`, 'ok');
              log(`${verb} ${req.selector}`);
            } catch (e) {
              writeFileSync(`${arg}.done`, `error: ${e.message}`);
              log(`${verb} failed: ${e.message}`);
            }
          } else if (verb === 'notifications') {
            const items = await page.evaluate(() => [...document.querySelectorAll('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item')]
              .filter((el) => el.offsetParent !== null)
              .map((el) => ({
                where: el.closest('.notifications-center') ? 'center' : 'toast',
                text: (el.querySelector('.notification-list-item-message') || el).textContent,
                buttons: [...el.querySelectorAll('.monaco-button')].map((b) => b.textContent.trim()).filter(Boolean),
              })));
            writeFileSync(arg, JSON.stringify(items));
            writeFileSync(`${arg}.done`, 'ok');
          } else if (verb === 'click-notification') {
            // Clicks like a user: exactly one visible notification must match (else an error).
            const { readFileSync } = await import('node:fs');
            try {
              const req = JSON.parse(readFileSync(arg, 'utf8'));
              const items = page.locator('.notifications-toasts .notification-list-item, .notifications-center .notification-list-item', { hasText: req.text });
              const visible = [];
              for (let i = 0; i < await items.count(); i++) if (await items.nth(i).isVisible()) visible.push(items.nth(i));
              if (visible.length !== 1) throw new Error(`${visible.length} visible notifications contain ${JSON.stringify(req.text)}`);
              await visible[0].locator('.monaco-button', { hasText: new RegExp(`^${req.label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).first().click({ timeout: 10000 });
              writeFileSync(`${arg}.done`, 'ok');
              log(`clicked "${req.label}" in the notification "${req.text}"`);
            } catch (e) {
              writeFileSync(`${arg}.done`, `error: ${e.message}`);
              log(`click-notification failed: ${e.message}`);
            }
          } else if (verb === 'workbench-click' || verb === 'webview-dom') {
            // The answer file says "ok" or "error: ..." (the tests read it).
            const { readFileSync } = await import('node:fs');
            try {
              const req = JSON.parse(readFileSync(arg, 'utf8'));
              if (verb === 'workbench-click') {
                const target = page.locator(req.selector).first();
                await target.waitFor({ state: 'visible', timeout: 20000 });
                await target.click();
                log(`clicked ${req.selector}`);
              } else {
                // Webview frames load late: look for up to 20 s. Tags: element counts inside the selector (what was really built).
                let found;
                for (let tries = 0; !found && tries < 40; tries++) {
                  for (const f of page.frames()) {
                    found = await f.evaluate((sel) => {
                      const e = document.querySelector(sel);
                      if (!e) return undefined;
                      const tags = {};
                      for (const x of e.querySelectorAll('*')) tags[x.tagName.toLowerCase()] = (tags[x.tagName.toLowerCase()] ?? 0) + 1;
                      return { text: e.innerText, tags, revision: e.dataset.revision ?? null };
                    }, req.selector).catch(() => undefined);
                    if (found && (req.revision === undefined || found.revision === String(req.revision))) break;
                    found = undefined;
                  }
                  if (!found) await page.waitForTimeout(500);
                }
                if (!found) throw new Error(`no webview frame has ${req.selector}${req.revision !== undefined ? ` at revision ${req.revision}` : ''}`);
                writeFileSync(`${arg}.json`, JSON.stringify(found));
              }
              writeFileSync(`${arg}.done`, 'ok');
            } catch (e) {
              writeFileSync(`${arg}.done`, `error: ${e.message}`);
              log(`${verb} failed: ${e.message}`);
            }
          } else if (verb === 'type-quickinput') {
            // Types the content of the file into the open quick input (e.g. a password box) + Enter.
            const { readFileSync } = await import('node:fs');
            const input = page.locator('.quick-input-widget input').first();
            await input.waitFor({ state: 'visible', timeout: 20000 });
            await input.fill(readFileSync(arg, 'utf8'));
            await input.press('Enter');
            writeFileSync(`${arg}.done`, 'ok');
            log('typed into the quick input');
          } else if (verb === 'click-dialog') {
            const btn = page.locator('.monaco-dialog-box .monaco-button', { hasText: arg }).first();
            await btn.waitFor({ timeout: 20000 });
            await btn.click();
            log(`clicked dialog button "${arg}"`);
          }
        } catch (e) {
          log(`ui request ${verb} failed: ${e.message}`);
        }
      });
    };
    page.on('console', (msg) => {
      const text = msg.text();
      if (text.includes('@@oh-ui ')) { handleUi(text); return; }
      if (/\[Extension Host\]|@@oh-test|oh-test/.test(text) || process.env.OH_HOST_VERBOSE) console.log(`  | ${text}`);
    });
    page.on('pageerror', (e) => { if (process.env.OH_HOST_VERBOSE) log(`pageerror ${e.message}`); });

    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(path.resolve(args.dev))],
      ['extensionTestsPath', remote(path.resolve(args.tests))],
      ['extensionEnvironment', JSON.stringify(JSON.parse(args.env))],
    ];
    // A folder, or a multi-root workspace (`.code-workspace` file: every folder it lists).
    const opens = args.workspace.endsWith('.code-workspace') ? 'workspace' : 'folder';
    const url = `http://127.0.0.1:${port}/?${opens}=${encodeURIComponent(path.resolve(args.workspace))}` +
      `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);
    // Dialog buttons the runner should click whenever they show up (e.g. a consent prompt).
    let watching = true;
    const watcher = (async () => {
      while (watching && args.clickDialog.length > 0) {
        for (const label of args.clickDialog) {
          const btn = page.locator('.monaco-dialog-box .monaco-button, .notification-toast .monaco-button, .notifications-center .monaco-button', { hasText: new RegExp(`^${label}$`) }).first();
          if (await btn.isVisible().catch(() => false)) {
            await btn.click().catch(() => {});
            log(`clicked dialog button "${label}"`);
          }
        }
        await page.waitForTimeout(300).catch(() => {});
      }
    })();
    const timeout = new Promise((r) => setTimeout(() => r('timeout'), Number(args.timeout) * 1000));
    const result = await Promise.race([exited, timeout]);
    watching = false;
    if (result === 'timeout') {
      log(`TIMEOUT after ${args.timeout}s`);
      await page.screenshot({ path: path.join(artifacts, 'timeout.png') }).catch(() => {});
      exitCode = 2;
    } else {
      exitCode = result;
    }
    await watcher.catch(() => {});
  } catch (e) {
    log(`harness error: ${e.stack ?? e}`);
    exitCode = 2;
  } finally {
    await browser?.close().catch(() => {});
    const gone = cs.exitCode !== null || cs.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => { cs.once('exit', resolve); setTimeout(resolve, 4000).unref(); });
    killGroup(cs);
    await gone;
    // The extension's own logs (its OpenHands and OpenHands Agent Server output channels) go with
    // the artifacts: what the executor pool and the agent-server did is often the only way to
    // tell why a session failed.
    keepExtensionLogs(path.join(userDir, 'logs'), path.join(artifacts, 'extension-logs'));
    // The session folder (code-server's user data, and the extensions without --extensions-dir)
    // goes once code-server is (killGroup's SIGKILL comes at 3 s); kept when it holds the artifacts.
    if (artifacts !== session) rmSync(session, { recursive: true, force: true });
  }
  log(`session done in ${((Date.now() - started) / 1000).toFixed(1)}s, exit ${exitCode}`);
  process.exitCode = exitCode;
  setTimeout(() => process.exit(exitCode), 4000).unref();
}

/** Copies every log file under `from` whose name says OpenHands into `to` (flat, made unique). */
function keepExtensionLogs(from, to) {
  const walk = (dir) => {
    let entries = [];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/OpenHands/.test(e.name)) {
        mkdirSync(to, { recursive: true });
        copyFileSync(p, path.join(to, `${path.basename(dir)}-${e.name}`));
      }
    }
  };
  walk(from);
}

main();
