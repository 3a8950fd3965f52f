// Agent Canvas 1.20.0's own frontend (its built page, `build/` of its npm tarball) in headless
// Chromium, showing a conversation of this window's agent-server (session v1-canvas). The page is
// served as files (its launcher's `--frontend-only` serves the same files behind an ingress that
// needs Canvas's npm dependencies, which do not install here); the backend goes into the page's
// storage as Canvas's Manage Backends dialog writes it. The analytics prompt is answered "no" and
// the onboarding skipped, as a user would; then the conversation's page is opened.
// Usage: node canvas_page.mjs PLAYWRIGHT_DIR CANVAS_PACKAGE_DIR BACKEND_URL API_KEY CONVERSATION_ID PNG TEXT
// Waits until the conversation's page shows TEXT, saves the screenshot, prints {"text": <its text>}.
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const [pwDir, pkg, backend, apiKey, conversationId, png, awaited] = process.argv.slice(2);
const { chromium } = createRequire(`${pwDir}/`)('playwright-core');
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
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.addInitScript(([host, key]) => {
    localStorage.setItem('openhands-backends', JSON.stringify([{ id: 'vscode-window', name: 'VS Code window', host, apiKey: key, kind: 'local' }]));
    const selection = JSON.stringify({ backendId: 'vscode-window', orgId: null });
    localStorage.setItem('openhands-active-backend', selection);
    sessionStorage.setItem('openhands-active-backend', selection);
  }, [backend, apiKey]);
  await page.goto(`${origin}/`);
  // A backend's first visit: the analytics prompt (saved on the backend), then the onboarding.
  const consent = page.getByRole('button', { name: 'Confirm preferences' });
  const skip = page.getByText('Skip for now');
  await consent.or(skip).first().waitFor({ timeout: 30000 }).catch(() => undefined);
  if (await consent.isVisible()) {
    await page.getByRole('checkbox', { name: 'Send anonymous usage data' }).uncheck();
    await consent.click();
  }
  if (await skip.waitFor({ timeout: 10000 }).then(() => true, () => false)) await skip.click();
  await page.goto(`${origin}/conversations/${conversationId}`);
  // The conversation's history arrives over its WebSocket.
  await page.getByText(awaited).first().waitFor({ timeout: 60000 });
  await page.screenshot({ path: png });
  console.log(JSON.stringify({ text: await page.evaluate(() => document.body.innerText) }));
} finally {
  await browser.close();
  server.close();
}
