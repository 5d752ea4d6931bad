// The Sessions view (ui/src/sessions.ts) in Chromium: the list (running first, with model, mode and
// scheduled), a transcript with each tool call's decision, updated by pushes, a pending approval as
// a card answered by the control endpoint, and Stop calling sessions/stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage, controlCalls, push } from './browser.mjs';

const current = withPage(() => {
  const base = { created_ms: 1, messages: 2 };
  window.__fake.control['sessions/list'] = () => [
    { ...base, id: 'ses_run', title: 'Tidy the docs', cwd: '/home/me/work', updated_ms: 5, running: true, open: true, model: 'qwen', mode: 'edit', scheduled: true },
    { ...base, id: 'ses_old', title: '', cwd: '/home/me/old', updated_ms: 9, running: false, open: false, model: null, mode: null, scheduled: false },
  ];
  window.__fake.control['sessions/transcript'] = ({ session_id }) => ({
    session_id, title: 'Tidy the docs', root: '/home/me/work', running: true,
    turns: [
      { role: 'user', text: 'tidy README' },
      { role: 'assistant', text: 'Looking.', reasoning: '', tools: [
        { id: 'c1', name: 'read', args: {} }, { id: 'c2', name: 'bash', args: {} }, { id: 'c3', name: 'bash', args: {} },
      ] },
    ],
    decisions: {
      c1: { decision: 'allow', answeredBy: null, answer: null, outcome: 'completed' },
      c2: { decision: 'ask', answeredBy: 'client', answer: 'allowed in this session', outcome: 'completed' },
      c3: { decision: 'ask', answeredBy: 'timeout', answer: 'denied', outcome: 'denied' },
    },
  });
  window.__fake.control['approvals/list'] = () => window.__pending ?? [];
  window.__fake.control['approvals/answer'] = ({ id, answer }) => { window.__pending = []; return { id, session_id: 'ses_run', answer }; };
  window.__fake.control['sessions/stop'] = ({ session_id }) => ({ session_id, stopped: true });
});

const decisionOf = (page, id) => page.textContent(`.tool[data-tool-call-id=${id}] .decision`);

test('the list shows running sessions first with model, mode and scheduled', async () => {
  const { page } = current;
  await page.click('#nav-sessions');
  await page.waitForSelector('.session-item');
  const items = await page.$$eval('.session-item', (bs) => bs.map((b) => b.dataset.id));
  assert.deepEqual(items, ['ses_run', 'ses_old']);
  const first = await page.textContent('.session-item[data-id=ses_run]');
  assert.match(first, /Tidy the docs/);
  assert.match(first, /qwen · edit/);
  assert.match(first, /running/);
  assert.match(first, /scheduled/);
  assert.doesNotMatch(await page.textContent('.session-item[data-id=ses_old]'), /running|scheduled/);
});

test('a transcript shows decisions, follows pushes, shows a card and Stop stops', async () => {
  const { page } = current;
  await page.evaluate(() => {
    window.__pending = [{ id: 'c4', session_id: 'ses_run', title: 'Run make', kind: 'execute', reason: 'Runs a command.',
      command: 'make', diff: null, asked_ms: 1, waiting_s: 0, scheduled: null }];
  });
  await page.click('#nav-sessions');
  await page.click('.session-item[data-id=ses_run]');
  await page.waitForSelector('#transcript');
  assert.deepEqual(await controlCalls(page, 'sessions/transcript'), [{ session_id: 'ses_run' }]);
  assert.equal(await decisionOf(page, 'c1'), 'Allowed by rule');
  assert.equal(await decisionOf(page, 'c2'), 'Allowed for the session in LLeMbas');
  assert.equal(await decisionOf(page, 'c3'), 'Denied: nobody answered in time');

  // The pending approval is a card; Allow answers by the control endpoint.
  await page.waitForSelector('#session-cards .card[data-tool-call-id=c4]');
  assert.match(await page.textContent('#session-cards'), /make/);
  await page.click('#session-allow-c4');
  await page.waitForFunction(() => !document.querySelector('#session-cards'));
  assert.deepEqual(await controlCalls(page, 'approvals/answer'), [{ id: 'c4', answer: 'allow' }]);

  // Live: the agent's streamed text is joined, a tool call and its decision arrive.
  const update = (u, session_id = 'ses_run') => push(page, 'session/update', { session_id, update: u });
  await update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'and the changelog' } });
  await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'On ' } });
  await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'it.' } });
  await update({ sessionUpdate: 'tool_call', toolCallId: 'c5', title: 'Edit CHANGELOG.md', kind: 'edit', status: 'pending' });
  await update({ sessionUpdate: '_lembas_decision', decision: { toolCallId: 'c5', decision: 'ask', answeredBy: 'desktop', answer: 'allowed once', outcome: 'completed' } });
  await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'elsewhere' } }, 'ses_old');
  await page.waitForSelector('.tool[data-tool-call-id=c5] .decision');
  assert.equal(await decisionOf(page, 'c5'), 'Allowed once on this computer');
  const turns = await page.$$eval('#transcript > li', (ls) => ls.map((l) => l.querySelector('.text').textContent));
  assert.deepEqual(turns, ['tidy README', 'Looking.', 'and the changelog', 'On it.']);

  await page.click('#session-stop');
  await page.waitForFunction(() => window.__fake.calls.some((c) => c.args?.method === 'sessions/stop'));
  assert.deepEqual(await controlCalls(page, 'sessions/stop'), [{ session_id: 'ses_run' }]);
  await update({ sessionUpdate: '_lembas_turn', running: false });
  await page.waitForFunction(() => !document.querySelector('#session-stop'));
});

test('a window that missed updates reads the transcript again', async () => {
  const { page } = current;
  await page.click('#nav-sessions');
  await page.click('.session-item[data-id=ses_run]');
  await page.waitForSelector('#transcript');
  await push(page, 'session/missed', { count: 3 });
  await page.waitForFunction(() => window.__fake.calls.filter((c) => c.args?.method === 'sessions/transcript').length === 2);
});
