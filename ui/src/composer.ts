// The composer: a chat this window holds (ENGINE.md "Chats started at this computer"), started in a
// folder of the roots with one of the instance's models or continued from the store. Under its
// timeline: whether LLeMbas sees it (Share / Unshare, and the once-per-folder question), its cards,
// and the text box: Enter sends the prompt (Shift+Enter a new line), while a turn runs Enter steers
// it, Esc stops it; `/` completes the commands and `@` the chat's files. The window holds a chat
// from chat/open until chat/close (sessions.ts lets go when the view leaves it; the runtime lets go
// when the window's connection ends).
import {
  asCommandError, backend, cardIdOf, type ApprovalCard, type AvailableCommand, type CardAnswer, type ChatCard, type ChatModel,
  type ChatOpened, type ControlPush, type Effort, type Mode, type Sharing, type Timeline,
} from './backend';
import { cardName, cardView } from './chat-cards';
import { el } from './dom';

/** What the composer needs of the view around it (sessions.ts). */
export interface ChatHost {
  /** A chat was taken: show it, its timeline as it came. */
  show(opened: ChatOpened): void;
  redraw(): void;
  readTimeline(): void;
  /** The view's own error line: `chat/open`'s refusals, a chat let go. */
  failed(message: string): void;
  /** Back to the list (`/quit`, `/sessions`). */
  back(): void;
}

interface Held {
  opened: Omit<ChatOpened, 'timeline'>;
  sharing: Sharing;
  running: boolean;
  /** Open cards, oldest first, each with its element (made once; an approval's again when the
   * device's own card for it is read). */
  cards: Map<string, { card: ChatCard; view: HTMLElement; described: boolean }>;
  /** Prompts sent whose turn the timeline does not show yet. */
  pending: { turn_id: string; text: string }[];
  /** The commands `/` completes (chat/commands, read once). */
  commands: AvailableCommand[];
  commandsRead: boolean;
  busy: boolean;
}

/** The window's own `/` commands; the rest go to the agent as typed. */
const OWN: Record<string, string> = {
  share: 'Let LLeMbas see this chat and answer its cards',
  unshare: 'Keep this chat on this computer only',
  model: 'Change the model (/model <id>)',
  mode: 'Change the mode (/mode plan|manual|edit|auto)',
  effort: 'Change the thinking effort (/effort off|default|low|medium|high)',
  sessions: 'Back to every session',
  quit: 'Let go of this chat and go back',
  help: 'What the keys do',
};
const MODES: Mode[] = ['plan', 'manual', 'edit', 'auto'];
const EFFORTS: Effort[] = ['off', 'default', 'low', 'medium', 'high'];
const FILES_SHOWN = 20;

let host: ChatHost;
let held: Held | null = null;
let error: string | null = null;
let notice: string | null = null;
const heldListeners: (() => void)[] = [];
/** The device's approval cards as the window's state last had them, and the home folder. */
const device = { cards: new Map<string, ApprovalCard>(), home: '' };

/** The form for a new chat: the roots to choose from and the instance's models. */
const fresh = {
  open: false,
  roots: [] as string[],
  models: null as ChatModel[] | null,
  error: null as string | null,
  folder: '',
  model: '',
};

export function connectComposer(h: ChatHost) {
  host = h;
}

/** The chat this window holds, if any. */
export function heldChatId(): string | null {
  return held?.opened.session_id ?? null;
}

/** Called when the window takes or lets go of a chat (the window's own cards leave its cards out). */
export function onHeldChange(listen: () => void) {
  heldListeners.push(listen);
}

function setHeld(next: Held | null) {
  held = next;
  error = null;
  notice = null;
  completion.items = [];
  for (const listen of heldListeners) listen();
}

function say(words: string | null, wrong: string | null = null) {
  notice = words;
  error = wrong;
  host.redraw();
}

/** A call's refusal: a chat no longer held goes back to being only looked at, with the view's own
 * error line saying why; anything else is said under the box. */
function failed(e: unknown) {
  const { code, message } = asCommandError(e);
  if (code === 'not_held') {
    setHeld(null);
    host.failed(message);
    return;
  }
  say(null, message);
}

// ----- Taking and letting go ---------------------------------------------------------------------

function take(opened: ChatOpened) {
  const { timeline, ...rest } = opened;
  setHeld({
    opened: rest, sharing: opened.sharing, running: timeline.running, cards: new Map(), pending: [],
    commands: opened.commands, commandsRead: false, busy: false,
  });
  fresh.open = false;
  host.show(opened);
  box.focus();
}

/** Continues a stored chat here; a refusal (held by an editor, unknown) is the view's error. */
export async function continueHere(sessionId: string) {
  try {
    take(await backend.openChat({ session_id: sessionId }));
  } catch (e) {
    host.failed(asCommandError(e).message);
  }
}

/** Lets go of the chat held, if it is not `keep`; what that did, in words, when it stopped a
 * turn (the runtime stops the running turn of a chat its front end lets go of). */
export function letGo(keep: string | null = null): string | null {
  if (!held || held.opened.session_id === keep) return null;
  const id = held.opened.session_id;
  const stopped = held.running;
  setHeld(null);
  box.value = '';
  // Nothing to tell the person if it fails: the runtime lets go when the connection ends anyway.
  backend.closeChat(id).catch(() => {});
  return stopped ? 'Let go of the chat: the turn it was running is stopped. Continue here to go on.' : null;
}

/** The window's connection to the runtime ended, and with it the hold on the chat. */
export function connectionLetGo() {
  if (!held) return;
  setHeld(null);
  host.failed('The LLeMbas device went away, and this window no longer holds the chat: Continue here to go on once it is back.');
}

// ----- The new chat form -------------------------------------------------------------------------

async function readFresh() {
  fresh.error = null;
  try {
    const [state, models] = await Promise.all([backend.getState(), backend.chatModels()]);
    fresh.roots = state.remote.roots.map((r) => r.path);
    fresh.models = models;
    if (!fresh.roots.includes(fresh.folder)) fresh.folder = fresh.roots[0] ?? '';
    if (!models.some((m) => m.id === fresh.model)) fresh.model = models[0]?.id ?? '';
  } catch (e) {
    fresh.models = null;
    fresh.error = asCommandError(e).message;
  }
  host.redraw();
}

async function start() {
  fresh.error = null;
  try {
    take(await backend.openChat({ cwd: fresh.folder, model: fresh.model || undefined }));
  } catch (e) {
    fresh.error = asCommandError(e).message;
    host.redraw();
  }
}

/** "New chat", and its form once asked for. */
export function newChatView(): HTMLElement {
  if (!fresh.open) {
    const b = el('button', { type: 'button', id: 'new-chat', text: 'New chat' });
    b.addEventListener('click', () => { fresh.open = true; fresh.models = null; host.redraw(); void readFresh(); });
    return el('div', { class: 'row' }, b);
  }
  const folder = el('select', { id: 'new-chat-folder' }, ...fresh.roots.map((r) => el('option', { value: r, text: r })));
  folder.value = fresh.folder;
  folder.addEventListener('change', () => { fresh.folder = folder.value; });
  const model = el('select', { id: 'new-chat-model' }, ...(fresh.models ?? []).map((m) => el('option', { value: m.id, text: m.name || m.id })));
  model.value = fresh.model;
  model.addEventListener('change', () => { fresh.model = model.value; });
  const go = el('button', { type: 'submit', id: 'new-chat-start', text: 'Start', disabled: !fresh.models || !fresh.roots.length });
  const cancel = el('button', { type: 'button', id: 'new-chat-cancel', text: 'Cancel' });
  cancel.addEventListener('click', () => { fresh.open = false; fresh.error = null; host.redraw(); });
  const form = el('form', { id: 'new-chat-form', 'aria-label': 'New chat' },
    el('h3', { text: 'New chat' }),
    el('div', { class: 'row' }, el('label', { for: 'new-chat-folder', text: 'Folder' }), folder),
    el('div', { class: 'row' }, el('label', { for: 'new-chat-model', text: 'Model' }), model),
    fresh.models && !fresh.roots.length
      ? el('p', { class: 'hint', id: 'new-chat-no-roots', text: 'No folders yet: add one in Settings, then start a chat in it.' }) : null,
    fresh.models === null && !fresh.error ? el('p', { class: 'hint', text: 'Reading the instance’s models…' }) : null,
    fresh.error ? el('p', { class: 'error', role: 'alert', id: 'new-chat-error', text: fresh.error }) : null,
    el('div', { class: 'row' }, go, cancel),
  );
  form.addEventListener('submit', (event) => { event.preventDefault(); void start(); });
  return form;
}

// ----- Pushes ------------------------------------------------------------------------------------

const SETTLED_BY: Record<string, string> = {
  client: 'was answered in LLeMbas',
  desktop: 'was answered on this computer',
  terminal: 'was answered at a terminal',
  timeout: 'waited too long and was denied',
  withdrawn: 'was withdrawn (its turn ended)',
};

function showCard(card: ChatCard) {
  if (!held) return;
  const id = cardIdOf(card);
  const known = device.cards.get(id);
  const shown = held.cards.get(id);
  if (shown && (shown.described || !known)) return;
  const context = { maxMode: held.opened.max_mode, device: known, home: device.home };
  held.cards.set(id, { card, view: cardView(card, context, (c, a) => void answer(c, a)), described: known !== undefined });
}

/** The window's state read again: an approval of the chat held is described as the device has it
 * (its headline, where, what it may do), not in the model's words. */
export function knowDeviceCards(cards: ApprovalCard[], home: string) {
  device.cards = new Map(cards.map((c) => [c.id, c]));
  device.home = home;
  if (!held) return;
  const late = [...held.cards.values()].filter((c) => !c.described && device.cards.has(cardIdOf(c.card)));
  for (const c of late) showCard(c.card);
  if (late.length) host.redraw();
}

/** The chat pushes for the chat held: its cards, their settling, its sharing, its turn's start and end. */
export function composerPush(push: ControlPush) {
  if (!held) return;
  const p = push.params as { session_id?: string };
  if (p.session_id !== held.opened.session_id) return;
  switch (push.method) {
    case 'card':
      showCard((push.params as { card: ChatCard }).card);
      host.redraw();
      break;
    case 'card/settled': {
      const { tool_call_id, by } = push.params as { tool_call_id: string; by: string };
      const shown = held.cards.get(tool_call_id);
      if (!shown) return;
      held.cards.delete(tool_call_id);
      // This window's own answer is settled too, and needs no word.
      if (answering.has(tool_call_id)) host.redraw();
      else say(`${cardName(shown.card)} ${SETTLED_BY[by] ?? 'was taken down'}.`);
      break;
    }
    case 'chat/sharing':
      held.sharing = (push.params as { sharing: Sharing }).sharing;
      host.redraw();
      break;
    case 'session/update': {
      const update = (push.params as { update?: { sessionUpdate?: string; running?: boolean } }).update;
      if (update?.sessionUpdate === '_lembas_turn' && typeof update.running === 'boolean') held.running = update.running;
      break;
    }
  }
}

/** The timeline as read: whether a turn runs, and which prompts sent it shows now. */
export function composerSaw(t: Timeline) {
  if (!held || t.session_id !== held.opened.session_id) return;
  held.running = t.running;
  const ids = new Set(t.turns.map((turn) => turn.turn_id));
  held.pending = held.pending.filter((p) => !ids.has(p.turn_id) && t.running);
}

// ----- Acting ------------------------------------------------------------------------------------

/** The cards whose answer this window is sending. */
const answering = new Set<string>();

async function answer(card: ChatCard, said: CardAnswer) {
  if (!held) return;
  const id = cardIdOf(card);
  answering.add(id);
  try {
    await backend.answerCard(held.opened.session_id, id, said);
    held?.cards.delete(id);
    say(null);
  } catch (e) {
    if (asCommandError(e).code === 'not_open') {
      held?.cards.delete(id);
      say(`${cardName(card)} had been answered elsewhere first.`);
    } else failed(e);
  } finally {
    answering.delete(id);
  }
}

async function share(on: boolean, remember = false) {
  if (!held) return;
  try {
    held.sharing = await backend.share(held.opened.session_id, on, remember);
    say(on ? 'Shared: LLeMbas sees this chat and may answer its cards.' : 'Unshared: this chat is on this computer only.');
  } catch (e) {
    failed(e);
  }
}

async function configure(what: 'model' | 'mode' | 'effort', value: string | undefined) {
  if (!held) return;
  const known = what === 'mode' ? MODES : what === 'effort' ? EFFORTS : null;
  if (!value || (known && !known.includes(value as never))) {
    const now = held.opened[what];
    say(known ? `The ${what} is ${now}: /${what} ${known.join('|')}.` : `The model is ${now}: /model <id> changes it.`);
    return;
  }
  try {
    const done = await backend.configureChat(held.opened.session_id, { [what]: value });
    Object.assign(held.opened, done);
    say(`Now ${done.model} · ${done.mode} · effort ${done.effort}.`);
  } catch (e) {
    failed(e);
  }
}

/** The window's own commands; false when `text` is for the agent. */
function ownCommand(text: string): boolean {
  const [word, ...rest] = text.slice(1).split(/\s+/);
  if (!text.startsWith('/') || !(word in OWN)) return false;
  const arg = rest.join(' ').trim() || undefined;
  box.value = '';
  switch (word) {
    case 'share': void share(true); break;
    case 'unshare': void share(false); break;
    case 'model': case 'mode': case 'effort': void configure(word, arg); break;
    case 'sessions': host.back(); break;
    case 'quit': host.back(); break;
    default: say('Enter sends, Shift+Enter makes a new line; while the agent works Enter steers it and Esc stops it. / lists the commands, @ the files.');
  }
  return true;
}

async function send() {
  if (!held || held.busy) return;
  const text = box.value.trim();
  if (!text || ownCommand(text)) return;
  const id = held.opened.session_id;
  held.busy = true;
  try {
    if (held.running) {
      const steered = await backend.steer(id, text);
      box.value = '';
      say(`Sent to the running turn (${steered.queued} waiting for its next step).`);
    } else {
      const turnId = crypto.randomUUID();
      await backend.prompt(id, text, turnId);
      box.value = '';
      if (held) {
        held.pending.push({ turn_id: turnId, text });
        held.running = true;
      }
      say(null);
      host.readTimeline();
    }
  } catch (e) {
    // The turn ended before the words reached it: the next Enter sends them as a prompt.
    if (asCommandError(e).code === 'not_running' && held) {
      held.running = false;
      host.readTimeline();
    }
    failed(e);
  } finally {
    if (held) held.busy = false;
  }
}

function stop() {
  if (!held) return;
  backend.stopSession(held.opened.session_id).catch(failed);
}

// ----- Completion --------------------------------------------------------------------------------

const completion = { items: [] as { value: string; label: string; hint: string }[], at: 0, start: 0, end: 0, asked: 0 };
const completions = el('ul', { id: 'completions', role: 'listbox', 'aria-label': 'Completions', hidden: true });

function drawCompletions() {
  completions.replaceChildren(...completion.items.map((item, n) => {
    const li = el('li', { role: 'option', id: `completion-${n}`, 'data-value': item.value, 'aria-selected': String(n === completion.at) },
      el('span', { class: 'path', text: item.label }), item.hint ? el('span', { class: 'hint', text: ` ${item.hint}` }) : null);
    li.addEventListener('mousedown', (event) => { event.preventDefault(); completion.at = n; accept(); });
    return li;
  }));
  completions.hidden = !completion.items.length;
  if (completion.items.length) box.setAttribute('aria-activedescendant', `completion-${completion.at}`);
  else box.removeAttribute('aria-activedescendant');
}

function accept() {
  const item = completion.items[completion.at];
  if (!item) return;
  box.value = box.value.slice(0, completion.start) + item.value + box.value.slice(completion.end);
  const caret = completion.start + item.value.length;
  box.setSelectionRange(caret, caret);
  completion.items = [];
  drawCompletions();
}

/** The word typed is already the completion chosen: Enter sends rather than completes. */
function typedWhole(): boolean {
  const item = completion.items[completion.at];
  return item !== undefined && box.value.slice(completion.start, completion.end).trim() === item.value.trim();
}

async function commandsOf(h: Held): Promise<AvailableCommand[]> {
  if (!h.commandsRead) {
    h.commandsRead = true;
    try {
      h.commands = (await backend.chatCommands(h.opened.session_id, h.opened.cwd)).commands;
    } catch {
      // The commands the chat opened with still complete.
    }
  }
  return h.commands;
}

/** What the word at the caret completes to: a command at the start, a file after `@`. */
async function complete() {
  const h = held;
  const asked = ++completion.asked;
  const caret = box.selectionStart ?? box.value.length;
  const before = box.value.slice(0, caret);
  const command = /^\/(\S*)$/.exec(before);
  const file = /(?:^|\s)@(\S*)$/.exec(before);
  let items: typeof completion.items = [];
  if (h && command) {
    const typed = command[1];
    const theirs = (await commandsOf(h)).map((c) => ({ name: c.name, hint: c.description }));
    const ours = Object.entries(OWN).map(([name, hint]) => ({ name, hint }));
    items = [...theirs, ...ours].filter((c) => c.name.startsWith(typed)).map((c) => ({ value: `/${c.name} `, label: `/${c.name}`, hint: c.hint }));
    completion.start = 0;
  } else if (h && file) {
    try {
      const found = await backend.chatFiles(h.opened.session_id, h.opened.cwd, file[1], FILES_SHOWN);
      items = found.files.map((f) => ({ value: `@${f.path}${f.kind === 'dir' ? '/' : ' '}`, label: `@${f.path}`, hint: '' }));
    } catch {
      items = [];
    }
    completion.start = caret - file[1].length - 1;
  }
  // Only the latest keystroke's answer is shown.
  if (asked !== completion.asked) return;
  completion.end = caret;
  completion.items = items;
  completion.at = 0;
  drawCompletions();
}

// ----- The box -----------------------------------------------------------------------------------

const box = el('textarea', { id: 'composer-text', rows: '3', 'aria-label': 'Message to the agent',
  'aria-autocomplete': 'list', 'aria-controls': 'completions', 'aria-keyshortcuts': 'Enter Shift+Enter Escape',
  placeholder: 'Ask the agent: Enter sends, Shift+Enter a new line, / commands, @ files' });
box.addEventListener('input', () => void complete());
box.addEventListener('keydown', (event) => {
  if (event.isComposing) return;
  const listed = completion.items.length > 0;
  if (listed && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
    const n = completion.items.length;
    completion.at = (completion.at + (event.key === 'ArrowDown' ? 1 : n - 1)) % n;
    drawCompletions();
    event.preventDefault();
  } else if (listed && (event.key === 'Tab' || (event.key === 'Enter' && !event.shiftKey && !typedWhole()))) {
    accept();
    event.preventDefault();
  } else if (event.key === 'Escape') {
    if (listed) {
      completion.items = [];
      drawCompletions();
    } else if (held?.running) stop();
    event.preventDefault();
  } else if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    completion.items = [];
    drawCompletions();
    void send();
  }
});
box.addEventListener('blur', () => { completion.items = []; drawCompletions(); });

// ----- The view ----------------------------------------------------------------------------------

function shareView(h: Held): HTMLElement {
  const s = h.sharing;
  const line = s.shared
    ? `Shared with LLeMbas: it sees this chat and may answer its cards${s.linked ? '' : ' (when the link is up again)'}.`
    : `Only on this computer: ${s.refused ?? 'LLeMbas does not see this chat.'}`;
  const toggle = s.refused === null
    ? el('button', { type: 'button', id: 'chat-share', text: s.shared ? 'Unshare' : 'Share' })
    : null;
  toggle?.addEventListener('click', () => void share(!s.shared));
  const ask = s.ask && s.refused === null && !s.shared
    ? el('div', { id: 'share-ask', class: 'share-ask', role: 'group', 'aria-label': 'Share this folder’s chats?' },
      el('p', { text: `Share chats in ${h.opened.cwd} with LLeMbas? It then sees them and may answer their cards. Asked once for this folder.` }),
      el('div', { class: 'row' },
        el('button', { type: 'button', id: 'share-ask-yes', text: 'Share' }),
        el('button', { type: 'button', id: 'share-ask-no', text: 'Keep on this computer' })))
    : null;
  ask?.querySelector('#share-ask-yes')?.addEventListener('click', () => void share(true, true));
  ask?.querySelector('#share-ask-no')?.addEventListener('click', () => void share(false, true));
  return el('div', { class: 'share' },
    el('p', { id: 'share-line', class: s.shared ? 'shared' : 'hint', text: line }, ' ', toggle),
    ask);
}

/** The chat's model, mode and effort, as the hint under its title. */
export function chatSettingsView(): HTMLElement | null {
  if (!held) return null;
  const o = held.opened;
  // The mode, up to the ceiling, changed in place (as /mode does).
  const modes = MODES.slice(0, MODES.indexOf(o.max_mode) + 1);
  const mode = el('select', { id: 'chat-mode', 'aria-label': 'Mode' }, ...modes.map((m) => el('option', { value: m, text: m })));
  mode.value = o.mode;
  mode.addEventListener('change', () => void configure('mode', mode.value));
  return el('p', { class: 'hint', id: 'chat-settings' }, `${o.cwd} · ${o.model} · `, mode, ` · effort ${o.effort}`);
}

/** The prompts sent that the timeline does not show yet. */
export function pendingView(): HTMLElement[] {
  return (held?.pending ?? []).map((p) => el('li', { class: 'turn pending', 'data-turn-id': p.turn_id },
    el('p', { class: 'prompt' }, el('span', { class: 'who', text: 'You' }), ' ', el('span', { class: 'text', text: p.text }))));
}

/** Under the timeline of the chat held: its sharing, its cards, the box. */
export function composerView(): HTMLElement | null {
  if (!held) return null;
  const h = held;
  const sendButton = el('button', { type: 'button', id: 'composer-send', text: h.running ? 'Steer' : 'Send', disabled: h.busy });
  sendButton.setAttribute('aria-label', h.running ? 'Steer the running turn' : 'Send');
  sendButton.addEventListener('click', () => void send());
  const stopButton = h.running ? el('button', { type: 'button', id: 'composer-stop', text: 'Stop', 'aria-keyshortcuts': 'Escape' }) : null;
  stopButton?.addEventListener('click', stop);
  const cards = [...h.cards.values()].map((c) => c.view);
  return el('section', { id: 'composer', 'aria-label': 'Chat' },
    shareView(h),
    cards.length ? el('div', { id: 'chat-cards', 'aria-label': 'Waiting for you' }, ...cards) : null,
    notice ? el('p', { class: 'notice', id: 'composer-notice', role: 'status', text: notice }) : null,
    error ? el('p', { class: 'error', id: 'composer-error', role: 'alert', text: error }) : null,
    el('div', { class: 'composer-box' }, box, completions),
    el('div', { class: 'row' }, sendButton, stopButton),
  );
}
