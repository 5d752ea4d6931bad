// An approval card's parts as the window draws them, from the card alone: where and when it was
// asked and when it denies by itself, what the call may do, and the command, diff or plan.
import type { ApprovalCard, Detail, Risk } from './backend';
import { el } from './dom';

/** `30 minutes`, `1 hour`, `90 seconds`: a schedule's wait as a person says it. */
function waitWords(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds > 0 && seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  if (seconds > 0 && seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}

export const RISK_WORDS: Record<Risk, string> = {
  deletes: 'Deletes files',
  outside_folder: 'Outside the chat’s folder',
  network: 'Uses the network',
  pipe_to_shell: 'Pipes into a shell',
  sudo: 'Runs as another user',
  protected: 'Touches a protected file',
  writes: 'Writes files',
};

/** A folder as a person reads it: under the home folder as `~/…` (cards and lists carry whole paths). */
export function shownFolder(path: string, home: string): string {
  if (!home || home === '/') return path;
  const base = home.endsWith('/') ? home.slice(0, -1) : home;
  if (path === base) return '~';
  return path.startsWith(`${base}/`) ? `~${path.slice(base.length)}` : path;
}

/** Which chat asks, in which folder, and when the card denies by itself. */
export function whereOf(card: ApprovalCard, at: string, home: string): HTMLElement {
  const parts: string[] = [];
  if (card.session_title) parts.push(`Chat “${card.session_title}”`);
  if (card.cwd) parts.push(`in ${shownFolder(card.cwd, home)}`);
  if (card.scheduled) {
    const run = card.scheduled.title ? `scheduled “${card.scheduled.title}”` : 'a scheduled run';
    parts.push(`${run}: waits ${waitWords(card.scheduled.wait_s)} from ${at}, then it is denied`);
  } else if (card.deadline_ms) {
    parts.push(`asked at ${at}, denied by itself at ${new Date(card.deadline_ms).toLocaleTimeString()}`);
  } else {
    parts.push(`asked at ${at}`);
  }
  const text = parts.join(' · ');
  return el('p', { class: card.scheduled ? 'scheduled where' : 'hint where', text: text.charAt(0).toUpperCase() + text.slice(1) + '.' });
}

/** An approval card's parts as the device describes the call, from its headline (never the
 * model's title: a model cannot word its way past a person) to the model's own words, last. */
export function approvalParts(card: ApprovalCard, home: string): { headline: string; parts: (HTMLElement | null)[] } {
  const headline = card.headline || card.title || 'A tool call';
  const at = new Date(card.asked_ms).toLocaleTimeString();
  const risks = card.risks?.length
    ? el('ul', { class: 'risks', 'aria-label': 'What it may do' }, ...card.risks.map((r) => el('li', { 'data-risk': r, text: RISK_WORDS[r] ?? r })))
    : null;
  const says = card.agent_says && card.agent_says !== headline
    ? el('p', { class: 'agent-says', text: `The agent says: ${card.agent_says}` })
    : null;
  return {
    headline,
    parts: [
      el('h3', { text: headline }),
      whereOf(card, at, home),
      risks,
      card.reason ? el('p', { class: 'reason', text: card.reason }) : null,
      detailOf(card.detail),
      says,
    ],
  };
}

/** A line of a unified diff (or of the older `-`/`+` form): its file header, hunk, removal, addition or context. */
function diffClass(line: string): string {
  if (line.startsWith('--- ') || line.startsWith('+++ ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('+')) return 'add';
  return 'ctx';
}

/** What a call would do or did: the command, the diff, the plan or the arguments. */
export function detailOf(d: Detail): HTMLElement {
  switch (d.type) {
    case 'command':
      return el('pre', { class: 'command', text: d.command });
    case 'change': {
      const diff = el('pre', { class: 'diff' });
      for (const line of d.diff.split('\n')) {
        diff.append(el('span', { class: diffClass(line), text: line }), '\n');
      }
      return el('div', {}, el('p', { class: 'path', text: d.path }), diff);
    }
    case 'plan':
      return el('div', {}, el('p', { class: 'path', text: d.path }), el('pre', { class: 'plan', text: d.text }));
    default:
      return el('pre', { class: 'arguments', text: d.json });
  }
}
