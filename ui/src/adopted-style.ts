// xterm.js styles its screen with <style> elements it writes at run time, which the window's CSP
// (style-src 'self') refuses. Here each one becomes a constructed stylesheet adopted by the document
// while the element is in it: the same rules, with no inline style the CSP would have to allow.

class AdoptedStyle extends HTMLElement {
  #sheet = new CSSStyleSheet();
  #text = '';

  override get textContent(): string {
    return this.#text;
  }

  override set textContent(text: string | null) {
    this.#text = text ?? '';
    this.#sheet.replaceSync(this.#text);
  }

  connectedCallback() {
    if (!document.adoptedStyleSheets.includes(this.#sheet)) {
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, this.#sheet];
    }
  }

  disconnectedCallback() {
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== this.#sheet);
  }
}

let installed = false;

/** Runs `open` (xterm's `Terminal.open`) with <style> elements made adoptable, here and after. */
export function adoptStyleElements(open: () => void) {
  if (!installed) {
    installed = true;
    customElements.define('lembas-adopted-style', AdoptedStyle);
    const create = document.createElement.bind(document) as (tag: string, options?: ElementCreationOptions) => HTMLElement;
    // Only <style>: nothing else this window makes is touched.
    document.createElement = ((tag: string, options?: ElementCreationOptions) =>
      tag.toLowerCase() === 'style' ? new AdoptedStyle() : create(tag, options)) as typeof document.createElement;
  }
  open();
}
