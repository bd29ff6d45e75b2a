/* What text(), image(), link() and plot() put on a line, as DOM. Markdown arrives rendered by
   our own Python renderer (raw HTML in the lecture source already escaped), so its html goes
   in as HTML, through the allow-list of sanitize.js (a trace may be hand-made); titles,
   authors, URLs and error texts go in as text. */

import { el, safeUrl } from './dom.js';
import { sanitizedFragment } from './sanitize.js';
import { fallbackReason, language, localized, t } from './i18n.js';

/** An asset path from the trace (relative to the trace file) or a data: image URL, else null. */
function assetUrl(src, traceUrl) {
  if (typeof src !== 'string') return null;
  if (src.startsWith('data:image/')) return src;
  return safeUrl(src, new URL(traceUrl, document.baseURI));
}

function placeholder(alt, error) {
  return el('div', { class: 'r-missing', role: 'img', 'aria-label': alt || 'image' },
    el('strong', { text: t('Image unavailable') }), alt ? el('span', { text: ` — ${alt}` }) : null,
    error ? el('div', { class: 'r-error', text: error }) : null);
}

function image(rendering, traceUrl, cls) {
  const src = assetUrl(rendering.src, traceUrl);
  if (!src) return placeholder(rendering.alt, rendering.error || (rendering.src ? `refused source ${rendering.src}` : ''));
  const img = el('img', { class: cls, src, alt: rendering.alt || '', loading: 'lazy' });
  if (rendering.width !== undefined) img.style.width = typeof rendering.width === 'number' ? `${rendering.width}px` : String(rendering.width);
  img.addEventListener('error', () => img.replaceWith(placeholder(rendering.alt, `could not load ${rendering.src}`)), { once: true });
  return el('div', { class: 'r-image' }, img);
}

/** The markdown in the viewer's language; a string shown in English for want of a current
    translation says so with a marker (its reason in the tooltip). */
function markdown(rendering) {
  const { html, lang, fallback } = localized(rendering);
  const node = el('div', { class: rendering.verbatim ? 'r-markdown r-verbatim' : 'r-markdown', lang });
  node.append(sanitizedFragment(typeof html === 'string' ? html : ''));
  for (const [property, value] of Object.entries(rendering.style || {})) node.style.setProperty(property, String(value));
  if (fallback) {
    node.classList.add('i18n-fallback');
    node.prepend(el('span', { class: 'i18n-marker', title: fallbackReason(fallback), 'aria-label': fallbackReason(fallback), text: 'EN' }));
  }
  return node;
}

function card(rendering) {
  const lines = [el('div', { class: 'card-title', text: rendering.title })];
  if (rendering.authors && rendering.authors.length) lines.push(el('div', { class: 'card-authors', text: rendering.authors.join(', ') }));
  const meta = [rendering.organization, rendering.date].filter(Boolean).join(' · ');
  if (meta) lines.push(el('div', { class: 'card-meta', text: meta }));
  if (rendering.description) lines.push(el('div', { class: 'card-description', text: rendering.description }));
  if (rendering.notes) lines.push(el('div', { class: 'card-notes', text: rendering.notes }));
  lines.push(el('div', { class: 'card-url', text: rendering.url }));
  return el('div', { class: 'card', role: 'tooltip' }, lines);
}

/** The byline under an external link: ['A', 'B', 'C', 'D'] -> "A, B, C et al." */
function shortAuthors(authors) {
  if (!authors || !authors.length) return '';
  return authors.slice(0, 3).join(', ') + (authors.length > 3 ? ' et al.' : '');
}

function link(rendering, trace, openFile) {
  if (Number.isInteger(rendering.file)) {
    const file = trace.files[rendering.file];
    const where = file ? `${file.path}:${rendering.line}` : `file ${rendering.file}`;
    const anchor = el('a', { class: 'r-link r-internal', href: '#', title: t('Open {where}', { where }) },
      el('span', { class: 'r-link-title', text: rendering.title }), el('span', { class: 'r-where', text: where }));
    anchor.addEventListener('click', (event) => {
      event.preventDefault();
      if (file) openFile(rendering.file, rendering.line);
    });
    return el('div', { class: 'r-linkline' }, anchor);
  }
  const href = safeUrl(rendering.url);
  const anchor = el('a', { class: 'r-link r-external', href: href || undefined, target: '_blank', rel: 'noopener noreferrer' },
    el('span', { class: 'r-link-title', text: rendering.title || rendering.url }));
  const byline = [shortAuthors(rendering.authors), rendering.date].filter(Boolean).join(', ');
  return el('div', { class: 'r-linkline' }, el('span', { class: 'r-hover' }, anchor, card(rendering)), byline ? el('span', { class: 'r-byline', text: ` ${byline}` }) : null);
}

/** A plot drawn with its labels in the viewer's language, when the trace has that drawing. */
function localizedPlot(rendering) {
  const drawing = rendering.translations && rendering.translations[language()];
  return drawing && typeof drawing.src === 'string' ? { ...rendering, ...drawing } : rendering;
}

/** renderRenderings(step.r, trace, openFile) -> DocumentFragment of the line's renderings. */
export function renderRenderings(renderings, trace, openFile) {
  const fragment = document.createDocumentFragment();
  for (const rendering of renderings) {
    if (!rendering || typeof rendering !== 'object') continue;
    if (rendering.type === 'markdown') fragment.append(markdown(rendering));
    else if (rendering.type === 'image') fragment.append(image(rendering, trace.url, 'r-img'));
    else if (rendering.type === 'plot') fragment.append(image(localizedPlot(rendering), trace.url, 'r-plot'));
    else if (rendering.type === 'link') fragment.append(link(rendering, trace, openFile));
    else fragment.append(el('div', { class: 'r-error', text: `unknown rendering type ${JSON.stringify(rendering.type)}` }));
  }
  return fragment;
}
