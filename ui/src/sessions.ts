// The Sessions view: the agent sessions on this computer (those working first, then the latest),
// and one chat's timeline followed live: each turn's prompt, every tool call as a step (what the
// agent said it would do, what it ran or changed, what allowed it, its result), the agent's words,
// Put back for the files a turn changed, the "Allow for this chat" answers in force with Take back,
// and Stop for a running turn. Its approval cards are the window's own, above every view. A new
// chat starts here, and any chat continues here, with the composer under its timeline (composer.ts).
import { asCommandError, backend, type ControlPush, type Decided, type Grant, type ListedSession, type Step, type Timeline, type TimelineTurn } from './backend';
import { detailOf } from './card-view';
import {
  chatSettingsView, composerPush, composerSaw, composerView, connectComposer, connectionLetGo, continueHere, heldChatId, letGo, newChatView,
  pendingView,
} from './composer';
import { el } from './dom';

const state = {
  list: [] as ListedSession[],
  /** The chat the person opened, and its timeline once read (null meanwhile, and on the list). */
  openId: null as string | null,
  open: null as Timeline | null,
  /** The agent's words streamed since the timeline was last read (they are written at a step's end). */
  live: '',
  /** The agent's thinking streamed meanwhile (a model that shows it), shown until its words come. */
  thinking: '',
  error: null as string | null,
  notice: null as string | null,
};

const root = el('section', { id: 'sessions', 'aria-label': 'Sessions' });
let listening = false;
// One timeline read at a time; pushes meanwhile make one more read, not one each.
let reading = false;
let readAgain = false;

const time = (ms: number | null | undefined) => (ms ? new Date(ms).toLocaleTimeString() : '');
const where = (by: Decided['answered_by']) => (by === 'client' ? 'in LLeMbas' : by === 'desktop' ? 'on this computer' : '');

/** What let a step run or stopped it, as a person reads it: the mode, an earlier "Allow for this
 * chat", or whose answer, when and where. */
export function decidedText(d: Decided | null): string {
  if (!d) return 'Waiting for a decision, or running';
  const mode = d.mode ? ` in ${d.mode} mode` : '';
  const reason = d.reason ? `: ${d.reason}` : '';
  if (d.decision === 'allow') return d.granted ? `Allowed for this chat by an earlier answer${reason}` : `Allowed${mode}${reason}`;
  if (d.decision === 'deny') return `Refused${mode}${reason}`;
  if (d.answered_by === 'timeout') return 'Denied: nobody answered in time';
  const at = d.answered_ms ? ` at ${time(d.answered_ms)}` : '';
  const said = d.answer === 'once' ? 'Allowed once'
    : d.answer === 'session' ? 'Allowed for this chat'
      : 'Denied';
  return `${said} ${where(d.answered_by)}${at}`.replace(/\s+/g, ' ').trim();
}

const RESULT_WORDS: Record<Step['result']['status'], string> = {
  pending: 'Not finished',
  completed: 'Done',
  failed: 'Failed',
  denied: 'Not run',
};

export function grantText(g: Grant): string {
  switch (g.kind) {
    case 'writes': return 'Writing files in the chat’s folder';
    case 'command': return `Commands like ${g.pattern}`;
    default: return `The tool ${g.name}`;
  }
}

const grantKey = (g: Grant) => (g.kind === 'writes' ? 'writes' : g.kind === 'command' ? `command-${g.pattern}` : `tool-${g.name}`);

function fail(e: unknown) {
  state.error = asCommandError(e).message;
  state.notice = null;
  draw();
}

async function refreshList() {
  try {
    state.list = await backend.listSessions();
    state.error = null;
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  draw();
}

/** Reads the open chat's timeline; a read in flight makes one more, of the chat open then. */
async function readTimeline() {
  if (reading) { readAgain = true; return; }
  reading = true;
  try {
    do {
      readAgain = false;
      const id = state.openId;
      if (id === null) break;
      const timeline = await backend.timeline(id);
      // The person may have gone back to the list or to another chat meanwhile.
      if (state.openId === id) {
        state.open = timeline;
        composerSaw(timeline);
      }
      state.error = null;
    } while (readAgain);
  } catch (e) {
    state.error = asCommandError(e).message;
  } finally {
    reading = false;
  }
  draw();
}

async function openSession(id: string) {
  // The chat held here is let go when the view leaves it.
  const said = letGo(id);
  state.openId = id;
  state.open = null;
  state.live = '';
  state.thinking = '';
  state.notice = said;
  await readTimeline();
}

function onPush(push: ControlPush) {
  composerPush(push);
  const p = push.params as Record<string, unknown>;
  switch (push.method) {
    case 'session/update': {
      const update = p.update as Record<string, unknown> | undefined;
      const kind = update?.sessionUpdate;
      if (state.openId !== null && p.session_id === state.openId) {
        const text = String((update?.content as { text?: string } | undefined)?.text ?? '');
        if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
          if (kind === 'agent_message_chunk') state.live += text;
          else state.thinking += text;
          drawLive();
          return;
        }
        // A step or a turn began or ended: the words so far are in the file from here on.
        if (kind === 'tool_call' || kind === '_lembas_turn') {
          state.live = '';
          state.thinking = '';
        }
        void readTimeline();
      }
      if (kind === '_lembas_turn') void refreshList();
      break;
    }
    case 'session/missed':
      void readTimeline();
      void refreshList();
      break;
    case 'event':
      if (p.kind === 'session_deleted') void refreshList();
      break;
  }
}

function stepView(step: Step): HTMLElement {
  const did = step.did.kind === 'command'
    ? detailOf({ type: 'command', command: step.did.command })
    : step.did.kind === 'change'
      ? step.did.diff !== null
        ? detailOf({ type: 'change', path: step.did.path, diff: step.did.diff })
        : el('p', { class: 'path', text: step.did.path })
      : detailOf({ type: 'arguments', json: step.did.arguments });
  const result = step.result;
  const output = result.output
    ? el('details', { class: 'output' },
      el('summary', { text: result.cut ? 'Output (the start of it)' : 'Output' }),
      el('pre', { text: result.output }))
    : null;
  return el('li', { class: `step step-${result.status}`, 'data-tool-call-id': step.tool_call_id },
    el('h4', { class: 'headline', text: step.headline }),
    step.agent_says ? el('p', { class: 'agent-says', text: `The agent said: ${step.agent_says}` }) : null,
    did,
    el('p', { class: `decided decision-${step.decided?.decision ?? 'pending'}`, text: decidedText(step.decided) }),
    el('p', { class: 'result', text: RESULT_WORDS[result.status] ?? result.status }),
    output,
  );
}

async function putBack(sessionId: string, turnId: string) {
  try {
    const done = await backend.putBack(sessionId, turnId);
    const files = done.files.length === 1 ? '1 file' : `${done.files.length} files`;
    state.notice = done.left.length
      ? `Put back ${files}. Left as they are (the limits or a moved folder): ${done.left.join(', ')}.`
      : `Put back ${files}.`;
    state.error = null;
  } catch (e) {
    fail(e);
  }
  await readTimeline();
}

async function takeBack(sessionId: string, grant: Grant) {
  try {
    await backend.revokeGrant(sessionId, grant);
    state.notice = `Taken back: ${grantText(grant)}. It asks again.`;
    state.error = null;
  } catch (e) {
    fail(e);
  }
  await readTimeline();
}

function turnView(t: Timeline, turn: TimelineTurn, n: number): HTMLElement {
  const item = el('li', { class: turn.rewound ? 'turn rewound' : 'turn', 'data-turn-id': turn.turn_id ?? '' },
    el('p', { class: 'prompt' }, el('span', { class: 'who', text: 'You' }), ' ', el('span', { class: 'text', text: turn.prompt })),
    turn.rewound ? el('p', { class: 'hint', text: 'Taken out of the conversation (undone or rewound); this is what it did.' }) : null,
  );
  if (turn.steps.length) item.append(el('ol', { class: 'steps' }, ...turn.steps.map(stepView)));
  if (turn.reply) item.append(el('p', { class: 'reply' }, el('span', { class: 'who', text: 'Agent' }), ' ', el('span', { class: 'text', text: turn.reply })));
  if (turn.put_back) {
    const files = turn.put_back.files.length ? turn.put_back.files.join(', ') : 'no file';
    item.append(el('p', { class: 'put-back hint', text: `Put back at ${time(turn.put_back.at_ms)}: ${files}.` }));
  }
  if (turn.kept.length && turn.turn_id && !t.running) {
    const id = turn.turn_id;
    const b = el('button', { type: 'button', class: 'put-back', id: `put-back-${n}`, text: 'Put back files' });
    b.setAttribute('aria-label', `Put back the files turn ${t.earlier_turns + n + 1} and later turns changed`);
    b.title = `As they were before this turn: ${turn.kept.join(', ')} (and what later turns changed)`;
    b.addEventListener('click', () => void putBack(t.session_id, id));
    item.append(el('div', { class: 'row' }, b));
  }
  return item;
}

function grantsView(t: Timeline): HTMLElement | null {
  if (!t.grants.length) return null;
  const list = el('ul', { id: 'grants' });
  for (const g of t.grants) {
    const b = el('button', { type: 'button', id: `revoke-${grantKey(g)}`, text: 'Take back' });
    b.setAttribute('aria-label', `Take back: ${grantText(g)}`);
    b.addEventListener('click', () => void takeBack(t.session_id, g));
    list.append(el('li', { 'data-grant': g.kind }, el('span', { text: grantText(g) }), ' ', b));
  }
  return el('section', { 'aria-label': 'Allowed for this chat', class: 'grants' },
    el('h4', { text: 'Allowed for this chat without asking' }), list);
}

const liveLine = el('p', { id: 'session-live', class: 'reply live' });
const thinkingLine = el('p', { id: 'session-thinking', class: 'hint thinking' });
/** How much of the thinking is shown: its latest words. */
const THINKING_SHOWN = 400;

function drawLive() {
  liveLine.textContent = state.live;
  liveLine.hidden = !state.live;
  const thought = state.thinking.length > THINKING_SHOWN ? `…${state.thinking.slice(-THINKING_SHOWN)}` : state.thinking;
  thinkingLine.textContent = `Thinking: ${thought}`;
  thinkingLine.hidden = !state.thinking || Boolean(state.live);
}

function backToList() {
  const said = letGo();
  state.openId = null;
  state.open = null;
  state.notice = said;
  draw();
  void refreshList();
}

function timelineView(t: Timeline): HTMLElement {
  const listed = state.list.find((s) => s.id === t.session_id);
  const held = heldChatId() === t.session_id;
  const stop = el('button', { type: 'button', id: 'session-stop', text: 'Stop' });
  stop.addEventListener('click', () => {
    backend.stopSession(t.session_id).catch(fail);
  });
  const back = el('button', { type: 'button', id: 'session-back', text: 'All sessions' });
  back.addEventListener('click', backToList);
  // Held by this window: the composer has Stop (and Esc) under the timeline.
  const go = el('button', { type: 'button', id: 'chat-continue', text: 'Continue here' });
  go.title = 'Hold this chat in this window and write to it (an editor or LLeMbas lets it go to you)';
  go.addEventListener('click', () => void continueHere(t.session_id));
  drawLive();
  return el('div', { id: 'session-open', 'data-session-id': t.session_id, 'data-held': String(held) },
    el('div', { class: 'row' }, back, held ? null : go, t.running && !held ? stop : null),
    el('h3', { id: 'session-title', text: t.title || (held ? 'New chat' : t.session_id) }),
    held ? chatSettingsView() : el('p', { class: 'hint', text: [t.root, listed?.model, listed?.mode].filter(Boolean).join(' · ') }),
    t.running ? el('p', { id: 'session-running', class: 'running', text: 'Working…' }) : null,
    grantsView(t),
    t.earlier_turns ? el('p', { class: 'hint', id: 'earlier-turns', text: `${t.earlier_turns} earlier turns are not shown.` }) : null,
    el('ol', { id: 'timeline', 'aria-label': 'Timeline' }, ...t.turns.map((turn, n) => turnView(t, turn, n)), ...(held ? pendingView() : [])),
    t.running ? thinkingLine : null,
    t.running ? liveLine : null,
    held ? composerView() : null,
  );
}

function listView(): HTMLElement {
  if (!state.list.length) return el('div', {}, newChatView(), el('p', { class: 'hint', id: 'no-sessions', text: 'No sessions on this computer yet.' }));
  const list = el('ul', { id: 'session-list' });
  for (const s of state.list) {
    const b = el('button', { type: 'button', class: 'session-item', 'data-id': s.id });
    b.append(
      el('strong', { text: s.title || s.id }), ' ',
      el('span', { class: 'path', text: s.cwd }), ' ',
      s.model ? el('span', { class: 'hint', text: `${s.model} · ${s.mode}` }) : '', ' ',
      s.running ? el('span', { class: 'badge running', text: 'running' }) : '', ' ',
      s.scheduled ? el('span', { class: 'badge scheduled', text: 'scheduled' }) : '',
    );
    b.addEventListener('click', () => void openSession(s.id));
    list.append(el('li', {}, b));
  }
  return el('div', {}, newChatView(), list);
}

function draw() {
  // What the person is typing into stays in focus: the composer's box and the cards are kept
  // across redraws; anything else is found again by its id.
  const active = document.activeElement as HTMLElement | null;
  const within = active !== null && root.contains(active) ? active : null;
  root.replaceChildren(
    el('h2', { text: 'Sessions' }),
    state.error ? el('p', { class: 'error', role: 'alert', id: 'sessions-error', text: state.error }) : '',
    state.notice ? el('p', { class: 'notice', id: 'sessions-notice', text: state.notice }) : '',
    state.open ? timelineView(state.open) : listView(),
  );
  if (within && !within.isConnected && within.id) document.getElementById(within.id)?.focus();
  else if (within && document.activeElement !== within) within.focus();
}

connectComposer({
  show: (opened) => {
    state.openId = opened.session_id;
    state.open = opened.timeline;
    state.live = '';
    state.thinking = '';
    state.error = null;
    state.notice = null;
    draw();
    void refreshList();
  },
  redraw: () => draw(),
  readTimeline: () => void readTimeline(),
  failed: (message) => {
    state.error = message;
    state.notice = null;
    draw();
  },
  back: () => backToList(),
});

/** The view's element, kept across the window's redraws. */
export function sessionsView(): HTMLElement {
  if (!listening) {
    listening = true;
    void backend.onControlPush(onPush);
    void backend.onChatsLetGo(connectionLetGo);
    draw();
  }
  return root;
}

/** Opens one chat's timeline (the tray or a test asked for it by id). */
export function showSession(id: string) {
  sessionsView();
  void refreshList();
  void openSession(id);
}

/** Called when the person moves to this view: the list is read again. */
export function openSessions() {
  sessionsView();
  void refreshList();
  void readTimeline();
}
