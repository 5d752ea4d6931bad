// The window under load, in Chromium: open → drawn with 20 approval cards waiting, and a chat's
// timeline of 500 steps drawn after a click. The figures are printed (the note on issue 24 quotes
// them); the bounds are four times the goal of 500 ms, so a slow machine does not fail them but a
// drawing that grew with the square of the steps would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withPage } from './browser.mjs';

const GOAL_MS = 500;
const BOUND_MS = 4 * GOAL_MS;

const current = withPage(() => {
  const diff = ['--- a/src/main.rs', '+++ b/src/main.rs', '@@ -1,3 +1,3 @@', ' fn main() {', '-    old();', '+    new();', ' }'].join('\n');
  window.__fake.state.link = { state: 'linked', line: 'Linked to example' };
  window.__fake.state.server = 'https://example';
  window.__fake.state.cards = Array.from({ length: 20 }, (_, i) => ({
    id: `call_${i}`, session_id: 'ses_big', title: `Step ${i}`, reason: 'Needs approval in manual mode.',
    detail: i % 2 ? { type: 'command', command: `cargo test --package p${i} && rm -rf target/p${i}` } : { type: 'change', path: 'src/main.rs', diff },
    asked_ms: Date.now(), scheduled: null, headline: i % 2 ? 'Run a command in ~/work' : 'Change src/main.rs',
    cwd: '/home/me/work', session_title: 'A long chat', deadline_ms: Date.now() + 600_000, risks: ['deletes', 'writes'],
    agent_says: 'The agent’s words', unified_diff: i % 2 ? null : diff,
  }));
  window.__fake.control['sessions/list'] = () => [{ id: 'ses_big', title: 'A long chat', cwd: '/home/me/work', created_ms: 1,
    updated_ms: 2, messages: 1000, running: false, open: true, model: 'qwen', mode: 'manual', scheduled: false }];
  const turns = Array.from({ length: 50 }, (_, t) => ({
    turn_id: `t${t}`, prompt: `Do part ${t} of the work`, reply: `Part ${t} is done.`, rewound: false, kept: t > 45 ? ['/home/me/work/src/main.rs'] : [],
    put_back: null,
    steps: Array.from({ length: 10 }, (_, s) => ({
      tool_call_id: `c${t}_${s}`, tool: s % 2 ? 'bash' : 'edit', headline: s % 2 ? 'Run a command in ~/work' : 'Change src/main.rs',
      agent_says: 'Checking the build', did: s % 2 ? { kind: 'command', command: `cargo build -p part${t}` } : { kind: 'change', path: 'src/main.rs', diff },
      decided: { decision: 'ask', mode: 'manual', reason: 'Needs approval in manual mode.', granted: false, answered_by: 'client',
        answer: 'once', answered_ms: 1_700_000_000_000, at_ms: 1_700_000_000_000 },
      result: { status: 'completed', output: 'Compiling part\nFinished in 1.2s\n'.repeat(20), cut: false },
    })),
  }));
  window.__fake.control['sessions/timeline'] = ({ session_id }) => ({ session_id, title: 'A long chat', root: '/home/me/work',
    running: false, grants: [{ kind: 'writes' }], earlier_turns: 0, turns });
});

test('open → drawn with 20 cards, and a 500-step timeline, stay within the goal', async () => {
  const { page } = current;
  await page.waitForFunction(() => document.querySelectorAll('#cards article.card').length === 20);
  const drawn = await page.evaluate(() => window.__fake.calls.find((c) => c.cmd === 'drawn')?.args?.ms);
  assert.equal(typeof drawn, 'number', 'the window says when it first drew the device state');
  await page.click('#nav-sessions');
  await page.waitForSelector('.session-item');
  const timeline = await page.evaluate(() => new Promise((done) => {
    const start = performance.now();
    document.querySelector('.session-item').click();
    const wait = () => (document.querySelectorAll('#timeline .step').length === 500
      ? requestAnimationFrame(() => done(performance.now() - start))
      : requestAnimationFrame(wait));
    wait();
  }));
  console.log(`open → drawn with 20 cards: ${drawn.toFixed(0)} ms; a 500-step timeline drawn: ${timeline.toFixed(0)} ms (goal ${GOAL_MS} ms)`);
  assert.ok(drawn < BOUND_MS, `open → drawn took ${drawn} ms`);
  assert.ok(timeline < BOUND_MS, `the timeline took ${timeline} ms`);
  assert.equal(await page.$$eval('#timeline > li.turn', (ls) => ls.length), 50);
});
