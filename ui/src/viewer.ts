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
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cmake from 'highlight.js/lib/languages/cmake';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import dart from 'highlight.js/lib/languages/dart';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import elixir from 'highlight.js/lib/languages/elixir';
import go from 'highlight.js/lib/languages/go';
import haskell from 'highlight.js/lib/languages/haskell';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import less from 'highlight.js/lib/languages/less';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import perl from 'highlight.js/lib/languages/perl';
import php from 'highlight.js/lib/languages/php';
import powershell from 'highlight.js/lib/languages/powershell';
import python from 'highlight.js/lib/languages/python';
import r from 'highlight.js/lib/languages/r';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scala from 'highlight.js/lib/languages/scala';
import scss from 'highlight.js/lib/languages/scss';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import 'highlight.js/styles/github.css';
import './viewer.css';
import { asCommandError, backend } from './backend';
import { el } from './dom';

// The languages the runtime names (crates/device/src/engine/show/kind.rs); `toml` is ini's alias.
const languages = {
  bash, c, cmake, cpp, csharp, css, dart, diff, dockerfile, elixir, go, haskell, ini, java, javascript,
  json, kotlin, less, lua, makefile, perl, php, powershell, python, r, ruby, rust, scala, scss, sql,
  swift, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

/** What the frame may do: run scripts in an opaque origin, nothing else. */
export const FRAME_SANDBOX = 'allow-scripts';

export type ShownKind = 'markdown' | 'code' | 'text' | 'html';

/** One file a session showed (the runtime's ShownFile). */
export interface ShownFile {
  id: string;
  session_id: string;
  path: string;
  kind: ShownKind;
  language?: string;
  line?: number;
  size: number;
  shown_ms: number;
}

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
  drawPane();
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
    state.files = await backend.controlCall<ShownFile[]>('shown/list', {});
    state.error = null;
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  drawList();
}

async function open(file: ShownFile, announced = false): Promise<void> {
  try {
    const read = await backend.controlCall<{ file: ShownFile; text: string }>('shown/read', { id: file.id });
    state.open = { file: read.file, text: read.text };
    state.error = null;
  } catch (e) {
    state.error = asCommandError(e).message;
  }
  drawList();
  drawPane();
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

function drawPane(): void {
  if (!pane) return;
  const opened = state.open;
  if (!opened) {
    pane.replaceChildren();
    return;
  }
  const { file, text } = opened;
  const header = el('p', { class: 'shown-path', id: 'shown-path', text: file.path });
  pane.replaceChildren(header, render(file, text));
  if (file.line) pane.querySelector(`#shown-line-${file.line}`)?.scrollIntoView({ block: 'center' });
}

function render(file: ShownFile, text: string): HTMLElement {
  switch (file.kind) {
    case 'markdown':
      return markdown(text);
    case 'html':
      return frame(file);
    case 'code':
      return numbered(highlighted(text, file.language), file.line);
    default:
      return numbered(escaped(text), file.line);
  }
}

/** Markdown to HTML, then sanitized: no script, no handlers, no forms, no styles, no frames. */
export function markdownHtml(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true });
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
  });
}

function markdown(text: string): HTMLElement {
  const body = el('div', { class: 'markdown', id: 'shown-markdown' });
  body.innerHTML = markdownHtml(text);
  // A link would take the window itself away from the app: its address is shown instead.
  for (const a of body.querySelectorAll('a')) {
    a.setAttribute('title', a.getAttribute('href') ?? '');
    a.addEventListener('click', (e) => e.preventDefault());
  }
  return body;
}

/** A shown HTML page in its sandboxed frame, from the window's `shown` protocol (which adds the
 * page's own CSP): not `srcdoc`, whose page would inherit the window's policy and run no script. */
function frame(file: ShownFile): HTMLElement {
  const iframe = el('iframe', {
    id: 'shown-frame', class: 'shown-frame', sandbox: FRAME_SANDBOX, referrerpolicy: 'no-referrer',
    allow: '', title: 'Shown page (sandboxed)',
  });
  iframe.src = convertFileSrc(file.id, 'shown');
  return iframe;
}

function highlighted(text: string, language: string | undefined): string {
  if (language && hljs.getLanguage(language)) {
    try {
      return hljs.highlight(text, { language, ignoreIllegals: true }).value;
    } catch {
      // Falls back to plain text below.
    }
  }
  return escaped(text);
}

function escaped(text: string): string {
  const holder = document.createElement('div');
  holder.textContent = text;
  return holder.innerHTML;
}

/** Lines numbered in a gutter beside the (already escaped) HTML; `line` marked. */
function numbered(html: string, line: number | undefined): HTMLElement {
  const count = html.split('\n').length - (html.endsWith('\n') ? 1 : 0);
  const gutter = el('pre', { class: 'gutter', 'aria-hidden': 'true' });
  for (let n = 1; n <= Math.max(count, 1); n++) {
    gutter.append(el('span', { id: `shown-line-${n}`, class: n === line ? 'marked' : '', text: String(n) }), '\n');
  }
  const code = el('code', { class: 'hljs' });
  code.innerHTML = DOMPurify.sanitize(html);
  return el('div', { class: 'numbered', id: 'shown-code' }, gutter, el('pre', { class: 'code' }, code));
}
