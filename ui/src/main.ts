// The window: approval cards waiting for an answer above every view; the Home view first (the
// link, the limits in one sentence, what runs now, the last activity; the login when there is
// none), then Settings (login, the switches, the folders, what the instance sees), Sessions,
// Terminals, Shown and the Activity log.
import './style.css';
import { asCommandError, backend, type ActivityPage, type ApprovalCard, type ApprovalOption, type CommandError, type ListedSession, type ListedTerminal, type Mode, type Snapshot, type View } from './backend';
import { approvalParts, shownFolder } from './card-view';
import { heldChatId, knowDeviceCards, onHeldChange } from './composer';
import { el } from './dom';
import { openSessions, sessionsView, showSession } from './sessions';
import { openTerminals, terminalsView } from './terminals';
import { mountViewer, refresh as refreshShown } from './viewer';

const app = document.getElementById('app') as HTMLElement;
// The only live regions: the link's status line and the notice, made once and changed only when
// their words change, so a screen reader hears those and not the whole window on every push.
const statusLine = el('h1', { id: 'status-line' });
const statusRegion = el('div', { id: 'status-region', role: 'status' }, statusLine);
const noticeLine = el('p', { class: 'notice', id: 'notice', role: 'status', hidden: true });
// What is redrawn from the state, around the parts that stay in place.
const statusExtras = el('div', { id: 'status-extras' });
const statusHost = el('section', { id: 'status-host', 'aria-label': 'Link' }, statusRegion, statusExtras);
const viewHost = el('div', { id: 'view-host' });
// The Shown view lives beside the redrawn part, so a redraw never reloads a shown page.
const viewerHost = el('div', { id: 'viewer-host', hidden: true });
app.after(viewerHost);

/** What the person is in the middle of, kept across redraws. */
const local = {
  snapshot: null as Snapshot | null,
  error: null as (CommandError & { where: string }) | null,
  notice: null as string | null,
  busy: false,
  serverDraft: '',
  relogin: false,
  view: 'home' as 'home' | 'settings' | 'activity' | 'sessions' | 'terminals' | 'shown',
  /** A file was shown since the Shown view was last open: its tab says so (it never takes the view). */
  shownUnseen: false,
  /** The card a clicked notification asked for, shown highlighted until it is gone. */
  focusCard: null as string | null,
  /** Home's rows of what runs now (chats at work, terminals), read when the counts change. */
  nowRows: null as { key: string; sessions: ListedSession[]; terminals: ListedTerminal[] } | null,
  nowRowsAsked: '',
  activity: null as ActivityPage | null,
  /** The Activity view's kind filter; '' is every kind. */
  kind: '',
  readingActivity: false,
};

function fail(where: string, e: unknown) {
  local.error = { ...asCommandError(e), where };
  local.notice = null;
}

async function act(where: string, action: () => Promise<Snapshot | string | { message: string } | void>) {
  local.busy = true;
  local.error = null;
  draw();
  try {
    const result = await action();
    if (result && typeof result === 'object' && 'link' in result) local.snapshot = result;
    else if (typeof result === 'string') local.notice = result;
    else if (result && typeof result === 'object' && 'message' in result) local.notice = result.message;
  } catch (e) {
    fail(where, e);
  } finally {
    local.busy = false;
    try {
      local.snapshot = await backend.getState();
    } catch (e) {
      fail('state', e);
    }
    draw();
  }
}

function errorFor(where: string): HTMLElement | null {
  const e = local.error;
  if (!e || e.where !== where) return null;
  return el('p', { class: 'error', role: 'alert', 'data-error-code': e.code, text: e.message });
}

/** Sets a persistent element's words only when they change (a live region then speaks once). */
function say(node: HTMLElement, text: string) {
  if (node.textContent !== text) node.textContent = text;
}

function drawStatus(s: Snapshot) {
  statusHost.className = `status state-${s.link.state}`;
  say(statusLine, s.link.line);
  statusExtras.replaceChildren(
    s.held_by ? el('p', { class: 'note', id: 'held-by', text: `The device runs in ${s.held_by}: this window shows it and answers its approvals; settings reach it through the config file.` }) : '',
    s.settings_error ? el('p', { class: 'error', id: 'settings-error', text: s.settings_error }) : '',
  );
}

/** A login the instance still takes. */
function hasLogin(s: Snapshot): boolean {
  return s.server !== null && s.link.state !== 'token_refused';
}

function loginSection(s: Snapshot): HTMLElement {
  const loggedIn = hasLogin(s) && !local.relogin;
  if (loggedIn) {
    return el('section', { 'aria-label': 'Login' },
      el('h2', { text: 'Login' }),
      el('p', { id: 'logged-in', text: `Logged in to ${s.connection ?? s.server} (${s.server}).` }),
      el('div', { class: 'row' },
        button('Log in again…', 'relogin', () => { local.relogin = true; local.serverDraft = s.server ?? ''; draw(); }),
        button('Log out', 'logout', () => act('login', async () => {
          const said = await backend.logout();
          local.relogin = false;
          return said;
        })),
      ),
      errorFor('login'),
    );
  }
  // Plain text, not type=url: the core judges the address and says what is wrong with it.
  const server = el('input', { id: 'server', type: 'text', inputmode: 'url', spellcheck: 'false', placeholder: 'https://llm.example.org', value: local.serverDraft || s.server || '', autocomplete: 'url' });
  const token = el('input', { id: 'token', type: 'password', placeholder: 'Device token', autocomplete: 'off' });
  server.addEventListener('input', () => { local.serverDraft = server.value; });
  const form = el('form', { id: 'login-form' },
    el('label', { for: 'server', text: 'Server' }), server,
    el('label', { for: 'token', text: 'Device token' }), token,
    el('button', { type: 'submit', id: 'login', disabled: local.busy, text: 'Log in' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const [url, secret] = [server.value.trim(), token.value];
    token.value = ''; // the token lives no longer than the call
    void act('login', async () => {
      const done = await backend.login(url, secret);
      local.relogin = false;
      return done;
    });
  });
  return el('section', { 'aria-label': 'Login' },
    el('h2', { text: 'Log in' }),
    el('p', { class: 'hint', text: 'Paste a device token from your LLeMbas. It is kept in the OS keychain.' }),
    form,
    errorFor('login'),
  );
}

function button(text: string, id: string, onClick: () => void, disabled = false): HTMLButtonElement {
  const b = el('button', { type: 'button', id, text, disabled: disabled || local.busy });
  b.addEventListener('click', onClick);
  return b;
}

function toggle(id: string, label: string, checked: boolean, onChange: (on: boolean) => void, description?: string): HTMLElement {
  const input = el('input', { type: 'checkbox', id, checked, disabled: local.busy });
  input.addEventListener('change', () => onChange(input.checked));
  return el('div', { class: 'toggle' },
    input,
    el('label', { for: id, text: label }),
    description ? el('p', { class: 'hint', id: `${id}-description`, text: description }) : null,
  );
}

function remoteSection(s: Snapshot): HTMLElement {
  const r = s.remote;
  const change = (setting: 'remote_enabled' | 'scheduled' | 'terminal' | 'require_trust') =>
    (value: boolean) => act('remote', () => backend.change({ setting, value }));
  const mode = el('select', { id: 'max-mode', disabled: local.busy });
  for (const m of s.modes) mode.append(el('option', { value: m, text: m }));
  mode.value = r.max_mode;
  mode.addEventListener('change', () => act('remote', () => backend.change({ setting: 'max_mode', value: mode.value as Mode })));
  return el('section', { 'aria-label': 'Remote work' },
    el('h2', { text: 'Remote work' }),
    toggle('remote-enabled', 'Remote work', r.enabled, change('remote_enabled')),
    toggle('scheduled', s.scheduled_setting.label, r.scheduled, change('scheduled'), s.scheduled_setting.description),
    toggle('terminal', 'Terminals allowed', r.terminal, change('terminal')),
    toggle('require-trust', 'Only trusted folders', r.require_trust, change('require_trust')),
    el('div', { class: 'row' }, el('label', { for: 'max-mode', text: 'Max mode' }), mode),
    el('p', { class: 'hint', id: 'sandbox-line', text: r.sandbox }),
    ...nowLines(s),
  );
}

/** Reads the chats at work and the terminals open when the device's counts of them change (not on
 * every push); Home redraws with them. A failed read keeps the last rows: the line and Stop all hold. */
function readNowRows(s: Snapshot) {
  const key = `${s.now.turns}/${s.now.terminals}`;
  if (local.nowRows?.key === key || local.nowRowsAsked === key) return;
  local.nowRowsAsked = key;
  if (s.now.turns === 0 && s.now.terminals === 0) {
    local.nowRows = { key, sessions: [], terminals: [] };
    return;
  }
  void Promise.all([backend.listSessions(), backend.listTerminals()]).then(([sessions, terminals]) => {
    local.nowRows = { key, sessions: sessions.filter((x) => x.running), terminals };
    draw();
  }).catch(() => { local.nowRowsAsked = ''; });
}

/** A row each for what runs now, with its own Stop. */
function nowRows(home: string): HTMLElement | null {
  const rows = local.nowRows;
  if (!rows || rows.sessions.length + rows.terminals.length === 0) return null;
  const list = el('ul', { id: 'now-rows' });
  // Each button named for its row, so a screen reader does not hear "Stop, Stop".
  const row = (what: string, label: string, id: string, stop: () => Promise<unknown>) => {
    const b = button(label, id, () => act('remote', async () => { await stop(); }));
    b.setAttribute('aria-label', `${label}: ${what}`);
    list.append(el('li', {}, el('span', { text: what }), ' ', b));
  };
  for (const x of rows.sessions) {
    row(`Agent at work: ${x.title || 'a chat'} in ${shownFolder(x.cwd, home)}`, 'Stop', `stop-session-${x.id}`, () => backend.stopSession(x.id));
  }
  for (const t of rows.terminals) {
    row(`Terminal (${t.shell}) in ${shownFolder(t.cwd, home)}`, 'Hang up', `hang-up-${t.id}`, () => backend.hangUpTerminal(t.id));
  }
  return list;
}

/** What runs now, a row each, and the one switch that stops it all (Home and Settings both show it). */
function nowLines(s: Snapshot): (HTMLElement | null)[] {
  readNowRows(s);
  return [
    el('p', { id: 'now-line', text: s.now_line }),
    nowRows(s.home),
    button('Stop all remote work', 'stop-all', () => act('remote', () => backend.stopRemoteWork()),
      !s.remote.enabled && s.now.terminals + s.now.watches === 0),
    errorFor('remote'),
  ];
}

function foldersSection(s: Snapshot): HTMLElement {
  const list = el('ul', { id: 'roots' });
  for (const root of s.remote.roots) {
    const trusted = el('input', { type: 'checkbox', checked: root.trusted, disabled: local.busy, 'aria-label': `Trust ${root.path}` });
    trusted.addEventListener('change', () => act('folders', () =>
      backend.change({ setting: trusted.checked ? 'trust' : 'untrust', value: root.path })));
    list.append(el('li', { 'data-path': root.path },
      el('span', { class: 'path', text: root.path }),
      el('label', { class: 'trust' }, trusted, 'trusted'),
      button('Remove', `remove-${s.remote.roots.indexOf(root)}`, () =>
        act('folders', () => backend.change({ setting: 'remove_root', value: root.path }))),
    ));
  }
  return el('section', { 'aria-label': 'Folders' },
    el('h2', { text: 'Folders remote work may use' }),
    s.remote.roots.length ? list : el('p', { class: 'hint', id: 'no-roots', text: 'No folders yet: remote work can use none.' }),
    button('Add folder…', 'add-root', () => act('folders', () => backend.pickRoot())),
    errorFor('folders'),
  );
}

function seenSection(s: Snapshot): HTMLElement {
  return el('section', { 'aria-label': 'What the instance sees' },
    el('h2', { text: 'What the instance sees' }),
    s.limits === null || s.limits === undefined
      ? el('p', { class: 'hint', id: 'limits', text: 'Nothing sent yet: the instance hears the limits when the link is up.' })
      : el('pre', { id: 'limits', text: JSON.stringify(s.limits, null, 2) }),
    s.last_error ? el('p', { class: 'error', id: 'last-error', text: `Last error: ${s.last_error}` }) : null,
  );
}

function activitySection(s: Snapshot): HTMLElement {
  const list = el('ol', { id: 'activity' });
  for (const entry of s.activity) {
    const at = new Date(entry.at_ms).toLocaleTimeString();
    list.append(el('li', { class: `kind-${entry.kind}` }, el('time', { text: at }), ' ', entry.text));
  }
  return el('section', { 'aria-label': 'Activity' },
    el('h2', { text: 'Activity on this computer' }),
    s.activity.length ? list : el('p', { class: 'hint', text: 'Nothing yet.' }),
  );
}

async function answer(card: ApprovalCard, option: ApprovalOption) {
  await act(`card-${card.id}`, async () => {
    const first = await backend.answerApproval(card.id, option);
    if (local.focusCard === card.id) local.focusCard = null;
    return first ? undefined : 'It had been answered elsewhere first.';
  });
}

/** The cards waiting, less those of the chat the Sessions view holds (its composer shows them). */
function waiting(s: Snapshot): ApprovalCard[] {
  const held = local.view === 'sessions' ? heldChatId() : null;
  return held === null ? s.cards : s.cards.filter((c) => c.session_id !== held);
}

function cardsSection(s: Snapshot): HTMLElement | null {
  const cards = waiting(s);
  if (!cards.length) return null;
  const list = el('div', { id: 'cards' });
  for (const card of cards) {
    const { headline, parts } = approvalParts(card, s.home);
    // No default button: Enter on the card answers nothing; d, a and shift+a do (keysOf).
    const deny = button('Deny', `deny-${card.id}`, () => void answer(card, 'deny'));
    const allow = button('Allow once', `allow-${card.id}`, () => void answer(card, 'once'));
    const always = button('Allow for this chat', `always-${card.id}`, () => void answer(card, 'session'));
    deny.classList.add('deny');
    allow.classList.add('allow');
    always.classList.add('allow');
    deny.setAttribute('aria-label', `Deny: ${headline}`);
    allow.setAttribute('aria-label', `Allow once: ${headline}`);
    always.setAttribute('aria-label', `Allow for this chat: ${headline}`);
    deny.setAttribute('aria-keyshortcuts', 'D');
    allow.setAttribute('aria-keyshortcuts', 'A');
    always.setAttribute('aria-keyshortcuts', 'Shift+A');
    list.append(el('article', {
      class: card.id === local.focusCard ? 'card focused' : 'card',
      id: `card-${card.id}`, 'data-tool-call-id': card.id, tabindex: '-1',
    },
      ...parts,
      el('div', { class: 'row' }, deny, allow, always),
      errorFor(`card-${card.id}`),
    ));
  }
  return el('section', { 'aria-label': 'Waiting for you', class: 'approvals' },
    el('h2', { text: cards.length === 1 ? 'An approval is waiting for you' : `${cards.length} approvals are waiting for you` }),
    list,
  );
}

/**
 * Keys on the cards: j and k move between cards; on the card in focus, d denies, a allows once and
 * shift+a allows for the chat. A key pressed anywhere else answers nothing.
 */
function onCardKey(event: KeyboardEvent) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target as HTMLElement | null;
  if (target?.closest('input, textarea, select, [contenteditable]')) return;
  const cards = [...document.querySelectorAll<HTMLElement>('#cards article.card, #chat-cards .card')];
  if (!cards.length) return;
  const current = target?.closest<HTMLElement>('.card') ?? null;
  const at = current ? cards.indexOf(current) : -1;
  const key = event.key;
  if (key === 'j' || key === 'k') {
    const next = cards[Math.min(cards.length - 1, Math.max(0, at + (key === 'j' ? 1 : -1)))];
    next?.focus();
    event.preventDefault();
    return;
  }
  const id = current?.dataset.toolCallId;
  const chosen = { d: 'deny', a: 'allow', A: 'always' }[key];
  if (!id || !chosen) return;
  document.getElementById(`${chosen}-${id}`)?.click();
  event.preventDefault();
}

async function readActivity() {
  if (local.readingActivity) return;
  local.readingActivity = true;
  try {
    local.activity = await backend.readActivity();
    if (local.error?.where === 'activity') local.error = null;
  } catch (e) {
    fail('activity', e);
  } finally {
    local.readingActivity = false;
  }
  draw();
}

function activityView(): HTMLElement {
  const page = local.activity;
  const kinds = [...new Set((page?.lines ?? []).map((l) => l.kind))].sort();
  if (local.kind && !kinds.includes(local.kind)) kinds.push(local.kind);
  const filter = el('select', { id: 'activity-kind' }, el('option', { value: '', text: 'Every kind' }));
  for (const k of kinds) filter.append(el('option', { value: k, text: k.replaceAll('_', ' ') }));
  filter.value = local.kind;
  filter.addEventListener('change', () => { local.kind = filter.value; draw(); });
  const lines = (page?.lines ?? []).filter((l) => !local.kind || l.kind === local.kind);
  const list = el('ol', { id: 'activity-log' });
  for (const line of lines) {
    const at = new Date(line.at_ms);
    list.append(el('li', { class: `kind-${line.kind}`, 'data-kind': line.kind },
      el('time', { datetime: at.toISOString(), text: `${at.toLocaleDateString()} ${at.toLocaleTimeString()}` }), ' ',
      el('span', { class: 'kind', text: line.kind.replaceAll('_', ' ') }), ' ', line.text));
  }
  const refresh = el('button', { type: 'button', id: 'activity-refresh', text: 'Refresh' });
  refresh.addEventListener('click', () => void readActivity());
  return el('section', { 'aria-label': 'Activity log' },
    el('h2', { text: 'Activity log' }),
    el('div', { class: 'row' }, el('label', { for: 'activity-kind', text: 'Show' }), filter, refresh),
    page ? el('p', { class: 'hint', id: 'activity-path', text: `Newest first, from ${page.path}${page.unreadable ? ` (${page.unreadable} unreadable line${page.unreadable === 1 ? '' : 's'} skipped)` : ''}.` }) : null,
    page === null ? el('p', { class: 'hint', text: 'Reading…' })
      : lines.length ? list : el('p', { class: 'hint', id: 'activity-empty', text: local.kind ? 'Nothing of this kind.' : 'Nothing logged yet.' }),
    errorFor('activity'),
  );
}

/** The limits in one sentence, each part a way into the settings that change it. */
function limitsLine(s: Snapshot): HTMLElement {
  const r = s.remote;
  const folders = r.roots.length === 0 ? 'May use no folder yet'
    : r.roots.length === 1 ? 'May use 1 folder' : `May use ${r.roots.length} folders`;
  const parts: [string, string][] = r.enabled
    ? [
        [folders, 'roots'],
        [`at most ${r.max_mode}`, 'max-mode'],
        [r.terminal ? 'terminals on' : 'terminals off', 'terminal'],
        [r.scheduled ? 'scheduled work on' : 'scheduled work off', 'scheduled'],
      ]
    : [['Remote work is off', 'remote-enabled']];
  const line = el('p', { id: 'limits-line' });
  parts.forEach(([text, target], i) => {
    if (i) line.append(' · ');
    // An id, so the focus is found again after a redraw.
    const link = el('button', { type: 'button', class: 'link', id: `limit-${target}`, 'data-target': target, text });
    link.addEventListener('click', () => {
      local.view = 'settings';
      draw();
      document.getElementById(target)?.focus();
    });
    line.append(link);
  });
  return line;
}

/** The first view: the limits, what runs now (with Stop), the last activity; the login when none. */
function homeView(s: Snapshot): HTMLElement[] {
  const loggedIn = hasLogin(s);
  const now = el('section', { 'aria-label': 'Now' }, el('h2', { text: 'Now' }), ...nowLines(s));
  return [
    ...(loggedIn ? [] : [loginSection(s)]),
    el('section', { 'aria-label': 'Limits' }, el('h2', { text: 'What remote work may do' }), limitsLine(s)),
    now,
    activitySection(s),
  ];
}

const VIEWS: [typeof local.view, string][] = [
  ['home', 'Home'], ['settings', 'Settings'], ['sessions', 'Sessions'], ['terminals', 'Terminals'],
  ['shown', 'Shown'], ['activity', 'Activity'],
];

/** The tabs, made once and kept in place: a redraw (a push from the device) never replaces a button
 * under the person's click, it only marks which is pressed and whether Shown has something new. */
const navBar = el('nav', { class: 'row' });
for (const [view, text] of VIEWS) {
  const b = el('button', { type: 'button', id: `nav-${view}`, text });
  b.addEventListener('click', () => {
    // Sessions, Terminals and Shown keep their own state (sessions.ts, terminals.ts, viewer.ts).
    if (view === 'sessions' || view === 'terminals' || view === 'shown') {
      local.view = view;
      if (view === 'sessions') openSessions();
      else if (view === 'terminals') openTerminals();
      else {
        local.shownUnseen = false;
        void refreshShown();
      }
      draw();
    } else if (view === 'settings' || view === 'home') {
      local.view = view;
      draw();
    } else go({ view: 'activity' });
  });
  navBar.append(b);
}
const badge = el('span', { class: 'badge', 'aria-hidden': 'true', text: '•' });

function markNav() {
  for (const [view] of VIEWS) {
    document.getElementById(`nav-${view}`)?.setAttribute('aria-pressed', String(local.view === view));
  }
  const shown = document.getElementById('nav-shown');
  if (local.shownUnseen) {
    shown?.append(badge);
    shown?.setAttribute('aria-label', 'Shown, something new');
  } else {
    badge.remove();
    shown?.removeAttribute('aria-label');
  }
}

/** Moves to a view: the activity log, a chat's timeline, a card (on the Home view; the cards head
 * every view), or home (with the tray's notice, if any). */
function go(view: View | null) {
  if (view?.view === 'activity') {
    local.view = 'activity';
    local.activity = null;
    void readActivity();
  } else if (view?.view === 'session') {
    local.view = 'sessions';
    showSession(view.session_id);
  } else {
    local.view = 'home';
    if (view?.view === 'card') local.focusCard = view.tool_call_id;
    // The tray's word at start (no tray host): what this window is for.
    if (view?.view === 'home' && view.notice) local.notice = view.notice;
  }
  draw();
  if (view?.view === 'card') {
    const card = document.getElementById(`card-${view.tool_call_id}`);
    card?.scrollIntoView({ block: 'center' });
    card?.focus();
  }
}

function draw() {
  const s = local.snapshot;
  const focused = document.activeElement?.id;
  // A half-typed token survives a redraw in the new field (it is never stored anywhere else).
  const typedToken = (document.getElementById('token') as HTMLInputElement | null)?.value ?? '';
  if (!s) {
    app.replaceChildren(el('p', { text: 'Loading…' }), errorFor('state') ?? '');
    return;
  }
  viewerHost.hidden = local.view !== 'shown';
  const body = local.view === 'activity' ? [activityView()]
    : local.view === 'sessions' ? [sessionsView()]
    : local.view === 'terminals' ? [terminalsView()]
    : local.view === 'shown' ? []
    : local.view === 'settings' ? [loginSection(s), remoteSection(s), foldersSection(s), seenSection(s)]
    : homeView(s);
  // The title counts the cards waiting, for the taskbar and a window switcher.
  const title = s.cards.length ? `(${s.cards.length}) LLeMbas Desktop` : 'LLeMbas Desktop';
  if (title !== document.title) {
    document.title = title;
    void backend.setTitle(title).catch((e) => fail('state', e));
  }
  if (app.firstChild !== statusHost) app.replaceChildren(statusHost, navBar, noticeLine, viewHost);
  drawStatus(s);
  markNav();
  say(noticeLine, local.notice ?? '');
  noticeLine.hidden = !local.notice;
  // The chat held here draws its approval cards as the device describes them too.
  knowDeviceCards(s.cards, s.home);
  viewHost.replaceChildren(cardsSection(s) ?? '', ...body);
  const token = document.getElementById('token') as HTMLInputElement | null;
  if (token && typedToken && !local.busy) token.value = typedToken;
  if (focused) document.getElementById(focused)?.focus();
  else if (!s.server) document.getElementById('server')?.focus(); // ready to type into
}

async function start() {
  // A file a session just showed marks the Shown tab; it never takes the view (the page is the
  // agent's, and the person may be in the middle of something).
  mountViewer(viewerHost, () => {
    if (local.view === 'shown') return;
    local.shownUnseen = true;
    draw();
  });
  // Both listeners at once (each an IPC round trip), and the state only after them: a change
  // between reading the state and listening for changes would be missed.
  await Promise.all([
    backend.onState((s) => {
      local.snapshot = s;
      draw();
      // Something happened: the log has a new line.
      if (local.view === 'activity') void readActivity();
    }),
    backend.onView(go),
  ]);
  try {
    local.snapshot = await backend.getState();
  } catch (e) {
    fail('state', e);
  }
  draw();
  // The frame after this one is the first painted with the state in it.
  requestAnimationFrame(() => setTimeout(() => void backend.drawn(performance.now()).catch(() => {}), 0));
  try {
    const view = await backend.takeView();
    if (view) go(view);
  } catch (e) {
    fail('state', e);
  }
}

document.addEventListener('keydown', onCardKey);
// A chat taken or let go in the Sessions view: its cards move between the composer and the top.
onHeldChange(() => { if (local.snapshot) draw(); });
void start();
