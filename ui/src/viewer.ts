// The Shown view: the files agent sessions showed (the `show` tool), listed by session, newest
// first, and the one opened rendered. The runtime keeps them (control `shown/list`, `shown/read`)
// and pushes an `event` of kind `shown` for each new one, which opens it here.
//
// What a file says is untrusted (the model chose it): markdown is rendered and then sanitized,
// code is highlighted (highlight.js escapes it), text goes in as text, and HTML runs only in a
// sandboxed frame — scripts allowed, but an opaque origin (no allow-same-origin: no cookies, no
// storage, no reach into this page), no top navigation, no popups, no forms — loaded from the
// window's own `shown` protocol (src-tauri/src/shown_page.rs), which serves the page with a CSP of
// its own that allows no network at all. The window's CSP (tauri.conf.json) allows frames from that
// protocol only, so the frame cannot navigate itself anywhere else either. The viewer's element lives outside the window's
// redrawn part, so redraws never reload the frame.
import { convertFileSrc } from '@tauri-apps/api/core';
import 'highlight.js/styles/github.css';
import './viewer.css';
import { asCommandError, backend, type ShownFile, type ShownKind } from './backend';
import { el } from './dom';

/** What the frame may do: run scripts in an opaque origin, nothing else. */
export const FRAME_SANDBOX = 'allow-scripts';

interface ShownEvent {
  kind: 'shown';
  session_id: string;
  id: string;
  path: string;
  file_kind: ShownKind;
  language?: string;
  line?: number;
  size: number;
}

const state = {
  files: [] as ShownFile[],
  open: null as { file: ShownFile; text: string } | null,
  error: null as string | null,
  /** Called when a new file opens, so the window can switch to this view. */
  onOpened: null as (() => void) | null,
};

let root: HTMLElement;
let list: HTMLElement;
let pane: HTMLElement;

/** Builds the view into `host` once, and keeps it in step with the runtime's pushes. */
export function mountViewer(host: HTMLElement, onOpened: () => void): void {
  state.onOpened = onOpened;
  list = el('nav', { id: 'shown-list', 'aria-label': 'Shown files' });
  pane = el('div', { id: 'shown-pane' });
  root = el('section', { id: 'viewer', 'aria-label': 'Shown' }, el('h2', { text: 'Shown' }), list, pane);
  host.replaceChildren(root);
  drawList();
  void drawPane();
  void backend.onControlPush(({ method, params }) => {
    if (method !== 'event') return;
    const event = params as ShownEvent | null;
    if (event?.kind !== 'shown') return;
    const file: ShownFile = {
      id: event.id, session_id: event.session_id, path: event.path, kind: event.file_kind,
      language: event.language, line: event.line, size: event.size, shown_ms: Date.now(),
    };
    state.files = [file, ...state.files.filter((f) => f.id !== file.id)];
    void open(file, true);
  });
}

/** Reads the list again (the person went to this view). */
export async function refresh(): Promise<void> {
  try {
    // What the last file opened said (one no longer kept) stays: it was announced while the person
    // was elsewhere, and this is where they come to see it.
    state.files = await backend.listShown();
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  drawList();
}

async function open(file: ShownFile, announced = false): Promise<void> {
  try {
    const read = await backend.readShown(file.id);
    state.open = { file: read.file, text: read.text };
    state.error = null;
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  drawList();
  await drawPane();
  if (announced) state.onOpened?.();
}

function drawList(): void {
  if (!list) return;
  const bySession = new Map<string, ShownFile[]>();
  for (const file of state.files) {
    if (!bySession.has(file.session_id)) bySession.set(file.session_id, []);
    bySession.get(file.session_id)?.push(file);
  }
  const groups: HTMLElement[] = [];
  for (const [session, files] of bySession) {
    const items = el('ul', {});
    for (const file of files) {
      const opened = state.open?.file.id === file.id;
      const b = el('button', {
        type: 'button', class: opened ? 'shown-file open' : 'shown-file', 'data-id': file.id,
        'aria-pressed': String(opened), title: `${file.path} (${file.kind}, ${file.size} bytes)`,
      }, el('span', { class: 'path', text: file.path }), ' ', el('span', { class: 'kind', text: file.language ?? file.kind }));
      b.addEventListener('click', () => void open(file));
      items.append(el('li', {}, b));
    }
    groups.push(el('div', { class: 'shown-session', 'data-session': session }, el('h3', { text: `Session ${session}` }), items));
  }
  list.replaceChildren(
    ...(groups.length ? groups : [el('p', { class: 'hint', id: 'shown-empty', text: 'Nothing shown yet. When an agent session shows you a file, it opens here.' })]),
    state.error ? el('p', { class: 'error', id: 'shown-error', role: 'alert', text: state.error }) : '',
  );
}

async function drawPane(): Promise<void> {
  if (!pane) return;
  const opened = state.open;
  if (!opened) {
    pane.replaceChildren();
    return;
  }
  const { file, text } = opened;
  const header = el('p', { class: 'shown-path', id: 'shown-path', text: file.path });
  if (file.kind === 'html') {
    pane.replaceChildren(header, frame(file));
    return;
  }
  // The renderers (marked, DOMPurify, highlight.js) load with the first file shown, not with the
  // window: its first paint waits for less script.
  const { render } = await import('./viewer-render');
  if (state.open !== opened) return; // another file opened meanwhile
  pane.replaceChildren(header, render(file, text));
  if (file.line) pane.querySelector(`#shown-line-${file.line}`)?.scrollIntoView({ block: 'center' });
}

/** A shown HTML page in its sandboxed frame, from the window's `shown` protocol (which adds the
 * page's own CSP): not `srcdoc`, whose page would inherit the window's policy and run no script.
 * Framed and captioned as the agent's, so a page drawn to look like one of this app's cards cannot
 * pass for it. */
function frame(file: ShownFile): HTMLElement {
  const iframe = el('iframe', {
    id: 'shown-frame', class: 'shown-frame', sandbox: FRAME_SANDBOX, referrerpolicy: 'no-referrer',
    allow: '', title: 'A page the agent showed (untrusted, sandboxed)',
  });
  iframe.src = convertFileSrc(file.id, 'shown');
  const caption = el('figcaption', {
    id: 'shown-warning',
    text: 'A page the agent showed, not part of LLeMbas Desktop: untrusted. It runs sandboxed and cannot reach this app, your files or the network; nothing in it answers an approval.',
  });
  return el('figure', { class: 'agent-page', 'aria-label': 'A page the agent showed' }, caption, iframe);
}

