// The Sessions view: the agent sessions on this computer (those working first, then the latest),
// and one session's transcript followed live: the person's and the agent's messages, each tool call
// with its decision and who gave it, the approvals waiting as cards, and Stop for a running turn.
import { asCommandError, backend, type ControlPush, type Decision, type ListedSession, type Pending, type Tool, type Transcript, type Turn } from './backend';
import { el } from './dom';

const state = {
  list: [] as ListedSession[],
  open: null as Transcript | null,
  pending: [] as Pending[],
  error: null as string | null,
};

const root = el('section', { id: 'sessions', 'aria-label': 'Sessions' });
let listening = false;

const who = (by: Decision['answeredBy']) =>
  by === 'client' ? 'in LLeMbas' : by === 'desktop' ? 'on this computer' : by === 'timeout' ? 'by the timeout' : '';

/** The decision as a person reads it: by rule, or who answered and how. */
export function decisionText(d: Decision): string {
  if (d.decision === 'allow') return 'Allowed by rule';
  if (d.decision === 'deny') return 'Denied by rule';
  if (d.answeredBy === 'timeout') return 'Denied: nobody answered in time';
  if (d.answer === 'allowed once') return `Allowed once ${who(d.answeredBy)}`;
  if (d.answer === 'allowed in this session') return `Allowed for the session ${who(d.answeredBy)}`;
  if (d.answer === 'denied' || d.outcome === 'denied') return `Denied ${who(d.answeredBy)}`.trim();
  return 'Asked';
}

function fail(e: unknown) {
  state.error = asCommandError(e).message;
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

async function refreshPending() {
  try {
    state.pending = await backend.listApprovals();
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  draw();
}

async function openSession(id: string) {
  try {
    state.open = await backend.transcript(id);
    state.error = null;
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  await refreshPending();
}

function lastAssistant(t: Transcript): Turn {
  const last = t.turns[t.turns.length - 1];
  if (last?.role === 'assistant') return last;
  const turn: Turn = { role: 'assistant', text: '', tools: [] };
  t.turns.push(turn);
  return turn;
}

function findTool(t: Transcript, id: string): Tool | undefined {
  for (const turn of t.turns) for (const tool of turn.tools ?? []) if (tool.id === id) return tool;
  return undefined;
}

/** One ACP update (or the window's own `_lembas_*` ones) applied to the open transcript. */
function apply(t: Transcript, u: Record<string, unknown>) {
  const content = u.content as { type?: string; text?: string } | undefined;
  switch (u.sessionUpdate) {
    case 'user_message_chunk':
      t.turns.push({ role: 'user', text: content?.text ?? '' });
      break;
    case 'agent_message_chunk':
      lastAssistant(t).text += content?.text ?? '';
      break;
    case 'tool_call': {
      const turn = lastAssistant(t);
      turn.tools = turn.tools ?? [];
      turn.tools.push({ id: String(u.toolCallId), title: String(u.title ?? ''), status: String(u.status ?? '') });
      break;
    }
    case 'tool_call_update': {
      const tool = findTool(t, String(u.toolCallId));
      if (tool && u.status) tool.status = String(u.status);
      break;
    }
    case '_lembas_decision': {
      const d = u.decision as Decision & { toolCallId: string };
      t.decisions[d.toolCallId] = d;
      break;
    }
    case '_lembas_turn':
      t.running = Boolean(u.running);
      void refreshList();
      break;
  }
}

function onPush(push: ControlPush) {
  const p = push.params as Record<string, unknown>;
  switch (push.method) {
    case 'session/update': {
      const open = state.open;
      if (open && p.session_id === open.session_id) {
        apply(open, p.update as Record<string, unknown>);
        draw();
      } else if ((p.update as Record<string, unknown>)?.sessionUpdate === '_lembas_turn') {
        void refreshList();
      }
      break;
    }
    case 'session/missed':
      // Skipped some: the transcript is read again.
      if (state.open) void openSession(state.open.session_id);
      void refreshList();
      break;
    case 'event':
      if (p.kind === 'approval_asked' || p.kind === 'approval_settled') void refreshPending();
      if (p.kind === 'session_deleted') void refreshList();
      break;
  }
}

function card(p: Pending): HTMLElement {
  const answer = (verdict: 'allow' | 'deny') => {
    backend.answer(p.id, verdict)
      .then(() => refreshPending())
      .catch(fail);
  };
  const allow = el('button', { type: 'button', class: 'allow', id: `session-allow-${p.id}`, text: 'Allow' });
  const deny = el('button', { type: 'button', class: 'deny', id: `session-deny-${p.id}`, text: 'Deny' });
  allow.addEventListener('click', () => answer('allow'));
  deny.addEventListener('click', () => answer('deny'));
  const detail = p.command !== null ? el('pre', { class: 'command', text: p.command })
    : p.diff ? el('div', {}, el('p', { class: 'path', text: p.diff.path }), el('pre', { class: 'diff', text: p.diff.new_text }))
      : p.plan ? el('div', {}, el('p', { class: 'path', text: p.plan.path }), el('pre', { class: 'plan', text: p.plan.text }))
        : el('pre', { class: 'arguments', text: JSON.stringify(p.arguments ?? {}, null, 2) });
  return el('article', { class: 'card', 'data-tool-call-id': p.id },
    el('h3', { text: p.title || 'A tool call' }),
    p.reason ? el('p', { class: 'reason', text: p.reason }) : null,
    detail,
    el('div', { class: 'row' }, allow, deny),
  );
}

function transcriptView(t: Transcript): HTMLElement {
  const listed = state.list.find((s) => s.id === t.session_id);
  const turns = el('ol', { id: 'transcript' });
  for (const turn of t.turns) {
    const item = el('li', { class: `turn ${turn.role}` },
      el('span', { class: 'who', text: turn.role === 'user' ? 'You' : 'Agent' }), ' ',
      el('span', { class: 'text', text: turn.text }));
    for (const tool of turn.tools ?? []) {
      const d = t.decisions[tool.id];
      item.append(el('div', { class: 'tool', 'data-tool-call-id': tool.id },
        el('span', { class: 'tool-title', text: tool.title || tool.name || tool.id }), ' ',
        tool.status ? el('span', { class: 'hint', text: tool.status }) : null, ' ',
        d ? el('span', { class: `decision decision-${d.decision}`, text: decisionText(d) }) : null));
    }
    turns.append(item);
  }
  const stop = el('button', { type: 'button', id: 'session-stop', text: 'Stop' });
  stop.addEventListener('click', () => {
    backend.stopSession(t.session_id).catch(fail);
  });
  const back = el('button', { type: 'button', id: 'session-back', text: 'All sessions' });
  back.addEventListener('click', () => { state.open = null; draw(); void refreshList(); });
  const cards = state.pending.filter((p) => p.session_id === t.session_id);
  return el('div', { id: 'session-open', 'data-session-id': t.session_id },
    el('div', { class: 'row' }, back, t.running ? stop : null),
    el('h3', { id: 'session-title', text: t.title || t.session_id }),
    el('p', { class: 'hint', text: [t.root, listed?.model, listed?.mode].filter(Boolean).join(' · ') }),
    t.running ? el('p', { id: 'session-running', class: 'running', text: 'Working…' }) : null,
    cards.length ? el('div', { id: 'session-cards' }, ...cards.map(card)) : null,
    turns,
  );
}

function listView(): HTMLElement {
  if (!state.list.length) return el('p', { class: 'hint', id: 'no-sessions', text: 'No sessions on this computer yet.' });
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
  return list;
}

function draw() {
  root.replaceChildren(
    el('h2', { text: 'Sessions' }),
    state.error ? el('p', { class: 'error', role: 'alert', id: 'sessions-error', text: state.error }) : '',
    state.open ? transcriptView(state.open) : listView(),
  );
}

/** The view's element, kept across the window's redraws. */
export function sessionsView(): HTMLElement {
  if (!listening) {
    listening = true;
    void backend.onControlPush(onPush);
    draw();
  }
  return root;
}

/** Called when the person moves to this view: the list is read again. */
export function openSessions() {
  sessionsView();
  void refreshList();
  if (state.open) void openSession(state.open.session_id);
}
