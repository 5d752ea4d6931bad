// The cards of a chat this window holds, drawn under its timeline from the `card` push: an approval
// (Deny · Allow once · Allow for this chat, and the same keys as the window's cards; described as
// the window's cards are, from the device's own card once the window's state has it), a question
// (each question's options, or words of the person's own) and a plan (approve in a mode up to the
// ceiling, revise with feedback, or dismiss). Each element is made once per card and kept, so a
// redraw never loses what the person is typing into it.
import type { ApprovalCard, CardAnswer, ChatCard, Detail, Mode, PermissionCard, PlanCard, QuestionAnswered, QuestionCard } from './backend';
import { cardIdOf } from './backend';
import { approvalParts, detailOf } from './card-view';
import { el } from './dom';

/** Answers the card; the composer says what came of it. */
export type Answer = (card: ChatCard, answer: CardAnswer) => void;

const MODES: Mode[] = ['plan', 'manual', 'edit', 'auto'];

/** What an approval would do: the command, the change (its lines out and in), else the arguments. */
function approvalDetail(card: PermissionCard): Detail {
  const call = card.toolCall;
  const input = call.rawInput;
  const command = input && typeof input === 'object' && !Array.isArray(input) ? input.command : undefined;
  if (typeof command === 'string') return { type: 'command', command };
  const diff = call.content?.find((c): c is Extract<typeof c, { path: string }> => c.type === 'diff' && 'newText' in c);
  if (diff) {
    const lines = (text: string | null, mark: string) => (text === null ? [] : text.split('\n').map((l) => `${mark}${l}`));
    return { type: 'change', path: diff.path, diff: [...lines(diff.oldText, '-'), ...lines(diff.newText, '+')].join('\n') };
  }
  return { type: 'arguments', json: JSON.stringify(input ?? null, null, 2) };
}

function choice(text: string, id: string, onClick: () => void, cls = ''): HTMLButtonElement {
  const b = el('button', { type: 'button', id, class: cls, text });
  b.addEventListener('click', onClick);
  return b;
}

/** What a card is drawn with besides itself. */
export interface CardContext {
  /** The chat's mode ceiling (a plan goes on in a mode up to it). */
  maxMode: Mode;
  /** The device's own card for an approval (the window's state), when read. */
  device?: ApprovalCard;
  home: string;
}

/** An approval as the pushed request says it: until the window's state has the device's card. */
function requestParts(card: PermissionCard): { headline: string; parts: (HTMLElement | null)[] } {
  const says = card._meta.lembas;
  const headline = card.toolCall.title || 'A tool call';
  return {
    headline,
    parts: [
      el('h3', { text: headline }),
      says.reason ? el('p', { class: 'reason', text: says.reason }) : null,
      detailOf(approvalDetail(card)),
      says.purpose && says.purpose !== headline ? el('p', { class: 'agent-says', text: `The agent says: ${says.purpose}` }) : null,
    ],
  };
}

function approvalView(card: PermissionCard, context: CardContext, answer: Answer): HTMLElement {
  const id = card.toolCall.toolCallId;
  const says = card._meta.lembas;
  const { headline, parts } = context.device ? approvalParts(context.device, context.home) : requestParts(card);
  const pick = (optionId: 'once' | 'session' | 'deny') => () => answer(card, { outcome: { outcome: 'selected', optionId }, _meta: null });
  const deny = choice('Deny', `deny-${id}`, pick('deny'), 'deny');
  const once = choice('Allow once', `allow-${id}`, pick('once'), 'allow');
  const always = choice('Allow for this chat', `always-${id}`, pick('session'), 'allow');
  deny.setAttribute('aria-label', `Deny: ${headline}`);
  once.setAttribute('aria-label', `Allow once: ${headline}`);
  always.setAttribute('aria-label', `Allow for this chat: ${headline}`);
  deny.setAttribute('aria-keyshortcuts', 'D');
  once.setAttribute('aria-keyshortcuts', 'A');
  always.setAttribute('aria-keyshortcuts', 'Shift+A');
  if (says.always) always.title = `From now on in this chat, without asking: ${says.always}`;
  return el('article', { class: 'card', id: `chat-card-${id}`, 'data-tool-call-id': id, tabindex: '-1' },
    ...parts,
    el('div', { class: 'row' }, deny, once, always),
  );
}

function questionView(card: QuestionCard, answer: Answer): HTMLElement {
  const id = card.toolCallId;
  const parts = card.questions.map((q, n) => {
    const name = `${id}-${n}`;
    const boxes = q.options.map((o, k) => {
      const input = el('input', { type: q.multiple ? 'checkbox' : 'radio', name, value: o.label, id: `${name}-${k}` });
      return el('label', { class: 'option', for: `${name}-${k}` }, input, ` ${o.label}`,
        o.recommended ? el('span', { class: 'hint', text: ' (recommended)' }) : null,
        o.description ? el('span', { class: 'hint', text: ` — ${o.description}` }) : null);
    });
    const own = el('input', { type: 'text', class: 'custom', id: `${name}-own`, 'data-question': String(n),
      placeholder: q.options.length ? 'Or in your own words' : 'Your answer', 'aria-label': `${q.question}: in your own words` });
    return el('fieldset', { class: 'question' },
      el('legend', { text: q.header ? `${q.header}: ${q.question}` : q.question }), ...boxes, own);
  });
  const form = el('form', { class: 'card question-card', id: `chat-card-${id}`, 'data-tool-call-id': id, tabindex: '-1' },
    el('h3', { text: card.questions.length === 1 ? 'The agent asks' : `The agent asks ${card.questions.length} things` }),
    card.why ? el('p', { class: 'reason', text: card.why }) : null,
    ...parts,
    el('div', { class: 'row' },
      el('button', { type: 'submit', class: 'question-send', text: 'Answer' }),
      choice('Dismiss', `dismiss-${id}`, () => answer(card, { outcome: 'dismissed' }))),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const answers: QuestionAnswered[] = card.questions.map((_, n) => {
      const own = (form.querySelector<HTMLInputElement>(`input.custom[data-question="${n}"]`)?.value ?? '').trim();
      if (own) return { kind: 'custom', text: own };
      const labels = [...form.querySelectorAll<HTMLInputElement>(`input[name="${id}-${n}"]:checked`)].map((i) => i.value);
      return labels.length ? { kind: 'options', labels } : { kind: 'skipped' };
    });
    answer(card, { outcome: 'answered', answers });
  });
  return form;
}

function planView(card: PlanCard, maxMode: Mode, answer: Answer): HTMLElement {
  const id = card.toolCallId;
  // Going on in plan mode would only plan again: the modes that act, up to the ceiling.
  const modes = MODES.slice(1, MODES.indexOf(maxMode) + 1);
  const mode = el('select', { id: `${id}-mode`, 'aria-label': 'Go on in this mode' }, ...modes.map((m) => el('option', { value: m, text: m })));
  mode.value = modes.includes('edit') ? 'edit' : (modes[modes.length - 1] ?? 'manual');
  const feedback = el('textarea', { id: `${id}-feedback`, rows: '2', placeholder: 'What to change in the plan', 'aria-label': 'What to change in the plan' });
  return el('article', { class: 'card plan-card', id: `chat-card-${id}`, 'data-tool-call-id': id, tabindex: '-1' },
    el('h3', { text: 'Approve the plan' }),
    detailOf({ type: 'plan', path: card.path, text: card.text }),
    el('div', { class: 'row' },
      choice('Approve', `approve-${id}`, () => answer(card, { outcome: 'approve', mode: mode.value as Mode }), 'allow plan-approve'),
      modes.length ? mode : null),
    feedback,
    el('div', { class: 'row' },
      choice('Revise', `revise-${id}`, () => answer(card, { outcome: 'revise', feedback: feedback.value.trim() }), 'plan-revise'),
      choice('Dismiss', `dismiss-${id}`, () => answer(card, { outcome: 'dismissed' }))),
  );
}

/** The card's element, made once (an approval's again once the device's card is known). */
export function cardView(card: ChatCard, context: CardContext, answer: Answer): HTMLElement {
  if ('toolCall' in card) return approvalView(card, context, answer);
  if ('questions' in card) return questionView(card, answer);
  return planView(card, context.maxMode, answer);
}

/** A card's name in a sentence: an approval's headline, else what kind of card it is. */
export function cardName(card: ChatCard): string {
  if ('toolCall' in card) return `“${card.toolCall.title || 'A tool call'}”`;
  return 'questions' in card ? 'The question' : 'The plan';
}

export { cardIdOf };
