/* Tiny DOM helpers. Everything passed as a child or as `text` becomes a text node, so values
   from a trace can never turn into markup; only renderers that mean to insert pre-rendered
   HTML (markdown, highlighted code) insert it, and only what sanitize.js lets through. */

/** el('a', {class: 'x', href: '#', text: 'hi'}, child, ...) -> HTMLAnchorElement */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** The URL `url` if it is safe to follow from a page (http, https, mailto or relative), else null. */
export function safeUrl(url, base = document.baseURI) {
  try {
    const parsed = new URL(url, base);
    return ['http:', 'https:', 'mailto:'].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Whether keys pressed in `node` are typing (in a form field or editable text), not commands. */
export function isEditable(node) {
  return node instanceof Element && node.closest('input, textarea, select, [contenteditable]:not([contenteditable="false"])') !== null;
}

const COUNT = new Intl.NumberFormat('en-US');

/** 12345 -> "12,345" */
export function formatCount(n) {
  return COUNT.format(n);
}
