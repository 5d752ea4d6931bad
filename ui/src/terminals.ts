// The Terminals view: the remote terminals open on this computer, one shown in xterm.js with the
// same screen the instance sees (its recent output replayed, then followed live). The window is a
// second reader that may skip: a gap in the pushed offsets, or a `terminal/missed`, is read again
// with `terminals/replay`. Typing is off until the person turns on Type here too.
import type { IDisposable, IMarker, Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { adoptStyleElements } from './adopted-style';
import { asCommandError, backend, type ControlPush, type ListedTerminal } from './backend';
import { el } from './dom';

interface Output { id: string; offset: number; data: string }

/** The terminal on screen, with where its output has been read up to. */
interface Shown {
  id: string;
  term: Terminal;
  /** The offset the next output starts at; -1 while a replay is on its way. */
  next: number;
  /** Pushes that came while the replay was on its way. */
  held: Output[];
  folder: string | null;
  ended: boolean;
  /** Where the command running now started (OSC 133 C), for its mark when it ends (D). */
  commandStart: IMarker | null;
  disposables: IDisposable[];
}

const state = {
  list: [] as ListedTerminal[],
  shown: null as Shown | null,
  typing: false,
  error: null as string | null,
};

const root = el('section', { id: 'terminals', 'aria-label': 'Terminals' });
const screen = el('div', { id: 'terminal-screen' });
let listening = false;

function bytesOf(base64: string): Uint8Array {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** `file://host/path` (percent-encoded) → `/path`; null for anything else. */
export function folderOf(osc7: string): string | null {
  const m = /^file:\/\/[^/]*(\/.*)$/.exec(osc7);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

async function refresh() {
  try {
    state.list = await backend.listTerminals();
    state.error = null;
    // The instance resized it: the same screen needs the same size.
    const shown = state.shown;
    const listed = shown && state.list.find((t) => t.id === shown.id);
    if (shown && listed && (listed.cols !== shown.term.cols || listed.rows !== shown.term.rows)) {
      shown.term.resize(listed.cols, listed.rows);
    }
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  draw();
}

/** Marks a finished command (OSC 133 D) with its exit status, on the line where it started. */
function markCommand(shown: Shown, status: string) {
  const marker = shown.commandStart ?? shown.term.registerMarker(0);
  shown.commandStart = null;
  if (!marker) return;
  const exit = status === '' ? '?' : status;
  const decoration = shown.term.registerDecoration({ marker, x: 0, width: 1, layer: 'top' });
  decoration?.onRender((node) => {
    node.classList.add('command-mark', exit === '0' ? 'ok' : 'failed');
    node.dataset.exit = exit;
    node.title = exit === '0' ? 'Exited 0' : `Exited ${exit}`;
  });
}

/** xterm.js, loaded with the first terminal opened, not with the window (its first paint waits
 * for less script). */
let xterm: Promise<typeof import('@xterm/xterm')> | null = null;
/** The terminal last asked for: a click while xterm.js loads wins over an earlier one. */
let asked: string | null = null;

async function show(item: ListedTerminal) {
  asked = item.id;
  xterm ??= import('@xterm/xterm');
  const { Terminal } = await xterm;
  if (asked !== item.id) return;
  close();
  const term = new Terminal({ cols: item.cols || 80, rows: item.rows || 24, scrollback: 5000, disableStdin: !state.typing, convertEol: false,
    // registerDecoration is still a proposed API.
    allowProposedApi: true });
  const shown: Shown = { id: item.id, term, next: -1, held: [], folder: null, ended: false, commandStart: null, disposables: [] };
  shown.disposables.push(
    term.parser.registerOscHandler(133, (data) => {
      const [kind, status] = data.split(';');
      if (kind === 'C') shown.commandStart = term.registerMarker(0) ?? null;
      if (kind === 'D') markCommand(shown, status ?? '');
      return false;
    }),
    term.parser.registerOscHandler(7, (data) => {
      shown.folder = folderOf(data) ?? shown.folder;
      const folder = document.getElementById('terminal-folder');
      if (folder) folder.textContent = shown.folder ?? item.cwd;
      return false;
    }),
    term.onData((data) => {
      // With Type here too off, nothing typed goes anywhere.
      if (!state.typing || shown.ended || state.shown !== shown) return;
      backend.writeTerminal(shown.id, data).catch((e) => {
        state.error = asCommandError(e).message;
        draw();
      });
    }),
  );
  state.shown = shown;
  (window as unknown as { __terminal?: Terminal }).__terminal = term;
  draw();
  adoptStyleElements(() => term.open(screen));
  void replay(shown);
}

function close() {
  const shown = state.shown;
  if (!shown) return;
  for (const d of shown.disposables) d.dispose();
  shown.term.dispose();
  state.shown = null;
  screen.replaceChildren();
}

/** Reads the ring again and draws it afresh, then what was pushed meanwhile. */
async function replay(shown: Shown) {
  shown.next = -1;
  shown.held = [];
  try {
    const ring = await backend.replayTerminal(shown.id);
    if (state.shown !== shown) return;
    shown.term.reset();
    shown.term.write(bytesOf(ring.data));
    shown.next = ring.offset;
    const held = shown.held;
    shown.held = [];
    for (const output of held) take(shown, output);
  } catch (e) {
    if (state.shown !== shown) return;
    shown.ended = true;
    state.error = asCommandError(e).message;
    draw();
  }
}

function take(shown: Shown, output: Output) {
  if (shown.next < 0) {
    shown.held.push(output);
    return;
  }
  const bytes = bytesOf(output.data);
  const end = output.offset + bytes.length;
  if (end <= shown.next) return; // already drawn (it was in the replay)
  if (output.offset > shown.next) {
    void replay(shown); // skipped some: read the ring again
    return;
  }
  shown.term.write(bytes.subarray(shown.next - output.offset));
  shown.next = end;
}

function onPush(push: ControlPush) {
  const p = push.params as Record<string, unknown>;
  const shown = state.shown;
  switch (push.method) {
    case 'terminal/output':
      if (shown && p.id === shown.id) take(shown, p as unknown as Output);
      break;
    case 'terminal/missed':
      // Skipped output, or perhaps an exit: the screen and the list are read again.
      if (shown && !shown.ended) void replay(shown);
      void refresh();
      break;
    case 'terminal/exit':
      if (shown && p.id === shown.id) {
        shown.ended = true;
        state.typing = false;
      }
      void refresh();
      break;
    case 'event':
      if (p.kind === 'terminal_opened' || p.kind === 'terminal_closed') void refresh();
      break;
  }
}

function setTyping(on: boolean) {
  state.typing = on;
  if (state.shown) {
    state.shown.term.options.disableStdin = !on;
    if (on) state.shown.term.focus();
  }
  draw();
}

function draw() {
  const shown = state.shown;
  const list = el('ul', { id: 'terminal-list' });
  for (const t of state.list) {
    const b = el('button', { type: 'button', class: 'terminal-item', 'data-id': t.id, 'aria-pressed': String(shown?.id === t.id), text: `${t.id} · ${t.shell} · ${t.cwd}` });
    b.addEventListener('click', () => void show(t));
    list.append(el('li', {}, b));
  }
  const header: (HTMLElement | null)[] = [];
  if (shown) {
    const listed = state.list.find((t) => t.id === shown.id);
    const typing = el('input', { type: 'checkbox', id: 'terminal-typing', checked: state.typing, disabled: shown.ended });
    typing.addEventListener('change', () => setTyping(typing.checked));
    const hangUp = el('button', { type: 'button', id: 'terminal-hang-up', text: 'Hang up', disabled: shown.ended });
    hangUp.addEventListener('click', () => {
      backend.hangUpTerminal(shown.id).catch((e) => {
        state.error = asCommandError(e).message;
        draw();
      });
    });
    header.push(
      el('div', { class: 'row terminal-head' },
        el('strong', { text: shown.id }), ' ',
        el('span', { id: 'terminal-folder', class: 'path', text: shown.folder ?? listed?.cwd ?? '' }),
        shown.ended ? el('span', { id: 'terminal-ended', class: 'hint', text: 'Ended' }) : null,
      ),
      el('div', { class: 'row' },
        el('div', { class: 'toggle' }, typing, el('label', { for: 'terminal-typing', text: 'Type here too' })),
        hangUp,
      ),
      state.typing
        ? el('p', { id: 'typing-banner', class: 'typing-banner', role: 'status', text: 'Typing here goes to the shell on this computer, as the instance\'s does.' })
        : null,
    );
  }
  root.classList.toggle('typing-on', state.typing);
  root.replaceChildren(
    el('h2', { text: 'Remote terminals' }),
    state.list.length ? list : el('p', { class: 'hint', id: 'no-terminals', text: 'No remote terminal is open on this computer.' }),
    state.error ? el('p', { class: 'error', role: 'alert', id: 'terminals-error', text: state.error }) : '',
    ...header.filter((h): h is HTMLElement => h !== null),
    screen,
  );
}

/** The view's element, kept across the window's redraws (the terminal on it lives on). */
export function terminalsView(): HTMLElement {
  if (!listening) {
    listening = true;
    void backend.onControlPush(onPush);
    void refresh();
    draw();
  }
  return root;
}

/** Called when the person moves to this view: the list is read again. */
export function openTerminals() {
  terminalsView();
  void refresh();
}
