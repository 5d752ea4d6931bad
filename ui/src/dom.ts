// Small DOM builders. Text always goes in as text (never as HTML), so nothing the device or the
// instance says can become markup.

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string | boolean>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === false || value === undefined) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'checked' || key === 'disabled') (node as unknown as Record<string, boolean>)[key] = Boolean(value);
    else if (key === 'value') (node as unknown as { value: string }).value = String(value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child);
  }
  return node;
}
