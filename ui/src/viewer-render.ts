// The Shown view's renderers, loaded with the first file shown (see viewer.ts): markdown rendered
// and sanitized, code highlighted, text escaped, each with its lines numbered.
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
import { el } from './dom';
import type { ShownFile } from './backend';

// The languages the runtime names (crates/device/src/engine/show/kind.rs); `toml` is ini's alias.
const languages = {
  bash, c, cmake, cpp, csharp, css, dart, diff, dockerfile, elixir, go, haskell, ini, java, javascript,
  json, kotlin, less, lua, makefile, perl, php, powershell, python, r, ruby, rust, scala, scss, sql,
  swift, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);

/** A shown file's text as the pane shows it (not HTML: that goes in the frame). */
export function render(file: ShownFile, text: string): HTMLElement {
  switch (file.kind) {
    case 'markdown':
      return markdown(text);
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
