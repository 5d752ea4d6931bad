// The Terminals view (ui/src/terminals.ts) in Chromium: the list, a terminal shown in xterm.js
// with its ring replayed and its pushed output followed (a gap read again), OSC 133 command marks
// with their exit status, the OSC 7 folder, Hang up, and Type here too (off: nothing is sent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, controlCalls, push } from './browser.mjs';

const b64 = (text) => Buffer.from(text, 'utf8').toString('base64');
const ring = 'welcome\r\n\u001b]7;file://host/home/me/work%20dir\u0007$ ';

const current = withPage(() => {
  window.__fake.control['terminals/list'] = () => [
    { id: 't1', cwd: '/home/me/work', shell: 'bash', opened_ms: 1, offset: 0, cols: 80, rows: 24 },
  ];
  window.__fake.control['terminals/replay'] = () => window.__replay;
  window.__fake.control['terminals/hang_up'] = ({ id }) => ({ id });
  window.__fake.control['terminals/write'] = () => ({});
});

/** The screen's text as xterm.js holds it (its buffer API). */
const screenText = (page) => page.evaluate(() => {
  const buffer = window.__terminal.buffer.active;
  const lines = [];
  for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
  return lines.join('\n');
});

async function openT1(page, replayed) {
  await page.evaluate((r) => { window.__replay = r; }, replayed);
  await page.click('#nav-terminals');
  await page.click('.terminal-item[data-id=t1]');
  await page.waitForFunction(() => window.__terminal);
}

test('a terminal opens with its replay, follows pushes, reads a gap again, and shows marks and folder', async () => {
  const { page } = current;
  await openT1(page, { id: 't1', data: b64(ring), offset: 1000 });
  await page.waitForFunction(() => window.__terminal.buffer.active.getLine(0)?.translateToString(true) === 'welcome');
  assert.equal(await page.textContent('#terminal-folder'), '/home/me/work dir', 'the OSC 7 folder, decoded');

  // A command, its output and its end (OSC 133 D with status 3): pushed from the replay's offset.
  const out = '\u001b]133;C\u0007false-ish\r\nfailed here\r\n\u001b]133;D;3\u0007\u001b]133;A\u0007$ ';
  await push(page, 'terminal/output', { id: 't1', offset: 1000, data: b64(out) });
  await page.waitForFunction(() => document.querySelector('.command-mark[data-exit="3"]'));
  assert.match(await screenText(page), /failed here/);
  assert.ok(await page.$('.command-mark.failed'), 'a failed command is marked as failed');
  // Output already drawn is not drawn twice; another terminal's output is not drawn here.
  await push(page, 'terminal/output', { id: 't1', offset: 1000, data: b64('failed here\r\n') });
  await push(page, 'terminal/output', { id: 't2', offset: 0, data: b64('elsewhere\r\n') });
  const text = await screenText(page);
  assert.equal(text.match(/failed here/g).length, 1, text);
  assert.doesNotMatch(text, /elsewhere/);

  // A gap (the window skipped): the ring is read again and drawn afresh.
  const replays = (await controlCalls(page, 'terminals/replay')).length;
  await page.evaluate((r) => { window.__replay = r; }, { id: 't1', data: b64('after the gap\r\n'), offset: 5000 });
  await push(page, 'terminal/output', { id: 't1', offset: 4000, data: b64('lost\r\n') });
  await page.waitForFunction(() => window.__terminal.buffer.active.getLine(0)?.translateToString(true) === 'after the gap');
  assert.equal((await controlCalls(page, 'terminals/replay')).length, replays + 1);
  await push(page, 'terminal/output', { id: 't1', offset: 5000, data: b64('and on\r\n') });
  await page.waitForFunction(() => window.__terminal.buffer.active.getLine(1)?.translateToString(true) === 'and on');
});

test('typing reaches the shell only with Type here too on, and Hang up hangs up', async () => {
  const { page } = current;
  await openT1(page, { id: 't1', data: b64('$ '), offset: 2 });
  await page.click('#terminal-screen');
  await page.keyboard.type('ls');
  await page.waitForTimeout(200);
  assert.deepEqual(await controlCalls(page, 'terminals/write'), [], 'off: nothing typed is sent');
  assert.equal(await page.$('#typing-banner'), null);

  await page.click('#terminal-typing');
  assert.match(await page.textContent('#typing-banner'), /Typing here goes to the shell/);
  assert.ok(await page.$('#terminals.typing-on'), 'clearly shown while on');
  await page.click('#terminal-screen');
  await page.keyboard.type('pwd');
  await page.waitForFunction(() => window.__fake.calls.filter((c) => c.args?.method === 'terminals/write').length >= 3);
  const typed = (await controlCalls(page, 'terminals/write')).map((p) => p.data).join('');
  assert.equal(typed, 'pwd');
  assert.ok((await controlCalls(page, 'terminals/write')).every((p) => p.id === 't1'));

  await page.click('#terminal-typing');
  await page.click('#terminal-screen');
  await page.keyboard.type('x');
  await page.waitForTimeout(200);
  assert.equal((await controlCalls(page, 'terminals/write')).length, 3, 'off again: nothing more');

  await page.click('#terminal-hang-up');
  await page.waitForFunction(() => window.__fake.calls.some((c) => c.args?.method === 'terminals/hang_up'));
  assert.deepEqual(await controlCalls(page, 'terminals/hang_up'), [{ id: 't1' }]);
  await page.evaluate(() => { window.__fake.control['terminals/list'] = () => []; });
  await push(page, 'terminal/exit', { id: 't1', code: 129 });
  await page.waitForSelector('#terminal-ended');
  await page.waitForSelector('#no-terminals');
});
