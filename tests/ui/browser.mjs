// The set-up the window's UI tests share: ui/dist served with the app's CSP as a header, Debian's
// Chromium driven by playwright-core, and the fake app (fake-backend.js) behind the Tauri IPC.
import { before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'ui/dist');
// playwright-core is a dev dependency of ui/, installed by `npm --prefix ui ci`.
const { chromium } = createRequire(join(root, 'ui/package.json'))('playwright-core');
/** The window's CSP as shipped (tauri.conf.json). */
export const shippedCsp = JSON.parse(await readFile(join(root, 'tauri.conf.json'), 'utf8')).app.security.csp;
export const fakeBackend = await readFile(new URL('./fake-backend.js', import.meta.url), 'utf8');
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

/** Serves ui/dist on loopback, each answer with `policy()` as its CSP header; its base URL and server. */
export async function serveDist(policy = () => shippedCsp) {
  const server = createServer(async (req, res) => {
    const file = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '') || 'index.html';
    try {
      const body = await readFile(join(dist, file));
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'content-security-policy': policy() });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  return { server, base: `http://127.0.0.1:${server.address().port}/` };
}

/** Debian's Chromium. Root needs --no-sandbox; the rest keeps it off a network it cannot reach. */
export const launchChromium = () => chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });

/** Registers the hooks; `current.page` is each test's page, `setUp(page)` runs before it loads. */
export function withPage(setUp) {
  const current = { page: null, violations: [] };
  let server, browser, base;
  before(async () => {
    ({ server, base } = await serveDist());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
  beforeEach(async () => {
    const page = await browser.newPage();
    current.page = page;
    current.violations = [];
    page.on('console', (m) => { if (m.type() === 'error') current.violations.push(m.text()); });
    page.on('pageerror', (e) => current.violations.push(String(e)));
    await page.addInitScript(fakeBackend);
    if (setUp) await page.addInitScript(setUp);
    await page.goto(base);
    await page.waitForSelector('#status-line');
  });
  afterEach(async () => {
    assert.deepEqual(current.violations, [], 'no script errors and no CSP violations');
    await current.page.close();
  });
  return current;
}

/** The control methods the page called, in order, with their params. */
export function controlCalls(page, method) {
  return page.evaluate((m) => window.__fake.calls
    .filter((c) => c.cmd === 'control_call' && c.args.method === m)
    .map((c) => c.args.params), method);
}

export function push(page, method, params) {
  return page.evaluate(([m, p]) => window.__fake.emit('control-push', { method: m, params: p }), [method, params]);
}
