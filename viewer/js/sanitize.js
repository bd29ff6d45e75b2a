/* The gate for the only HTML a trace brings: markdown and formulas rendered by our Python
   renderer, and highlighted source lines (cs336_lectures/runtime/render/rendering.py). A trace is a
   file anyone can write by hand, so that HTML passes an allow-list of what the renderer
   produces (CommonMark with tables, latex2mathml's MathML, pygments' token spans) before it
   reaches the page; everything else goes:

   - an element not on the list is dropped; its text stays, unless it is one whose content is
     never text for the reader (script, style, iframe, svg, ...), which goes with it;
   - an attribute not on the list of its element is dropped, and so is every on* handler;
   - links keep http(s), mailto, relative and #fragment targets; images also data:image/;
     javascript:, data: pages and other schemes are dropped;
   - comments go.

   The page's Content-Security-Policy (index.html) already stops inline script; this keeps a
   hostile trace harmless even where no policy applies, and keeps it from loading frames,
   forms or plugins at all. Parsing happens in an inert <template>: nothing in it loads or
   runs before it has been cleaned.

     sanitizedFragment('<p onclick="x()">Hi <script>x()</script></p>')  // <p>Hi </p>
     sanitizedHtml('<span class="tok-k">def</span>')                    // unchanged */

const HTML = 'http://www.w3.org/1999/xhtml';
const MATHML = 'http://www.w3.org/1998/Math/MathML';

const HEADING = ['id'];
const TABLE_CELL = ['style'];
// tag -> the attributes it may keep (besides class and title, which any element may keep).
const HTML_ELEMENTS = new Map(Object.entries({
  p: [], div: ['id'], // a labelled formula, $$...$$ (label), is a div with that id
  span: [], br: [], hr: [], blockquote: [], pre: [], code: [],
  h1: HEADING, h2: HEADING, h3: HEADING, h4: HEADING, h5: HEADING, h6: HEADING,
  em: [], strong: [], s: [],
  ul: [], ol: ['start'], li: [],
  table: [], thead: [], tbody: [], tr: [], th: TABLE_CELL, td: TABLE_CELL,
  a: ['href', 'target', 'rel'], img: ['src', 'alt'],
}));
const COMMON_ATTRIBUTES = ['class', 'title'];
const MATHML_ELEMENTS = new Set(('math mrow mi mn mo ms mtext mspace mfrac msqrt mroot mstyle merror mpadded '
  + 'mphantom menclose msub msup msubsup munder mover munderover mmultiscripts mprescripts none mtable mtr mtd '
  + 'mlabeledtr semantics annotation mfenced').split(' '));
// What latex2mathml writes; presentation only.
const MATHML_ATTRIBUTES = new Set(('xmlns display displaystyle mathvariant mathsize mathcolor mathbackground '
  + 'stretchy fence separator separators largeop movablelimits accent accentunder lspace rspace form minsize '
  + 'maxsize symmetric linethickness scriptlevel notation open close columnalign columnspacing columnlines '
  + 'rowalign rowspacing rowlines frame width height depth voffset linebreak encoding border-color '
  + 'class').split(' '));
// Elements whose content is not text meant for the reader: removed whole.
const DROP_WITH_CONTENT = new Set(('script style template iframe frame frameset object embed applet noscript '
  + 'noembed noframes svg textarea select title xmp plaintext head link meta base').split(' '));
// In a MathML attribute (colours, lengths): nothing that could load or run.
const UNSAFE_VALUE = /javascript:|vbscript:|url\(|expression\(/i;
const TEXT_ALIGN = /^\s*text-align\s*:\s*(left|right|center)\s*;?\s*$/i;
// A highlighted source line as pygments and our renderer write it: escaped text in token spans.
const TOKEN_LINE = /<span class="tok-[a-z0-9]+">|<\/span>|&(?:amp|lt|gt|quot|#x27|#39);|[^<>&]+/y;

/** A URL attribute's value if its target is safe to follow (or, for images, to load), else null. */
function safeTarget(value, image) {
  const trimmed = value.trim();
  if (trimmed.startsWith('#')) return trimmed;
  if (image && /^data:image\//i.test(trimmed)) return trimmed;
  try {
    const { protocol } = new URL(trimmed, document.baseURI);
    return ['http:', 'https:', 'mailto:'].includes(protocol) && !(image && protocol === 'mailto:') ? trimmed : null;
  } catch {
    return null;
  }
}

function allowedAttribute(element, isMath, name, value) {
  if (name.startsWith('on')) return null;
  if (isMath) return MATHML_ATTRIBUTES.has(name) && !UNSAFE_VALUE.test(value) ? value : null;
  const tag = element.localName;
  if (!COMMON_ATTRIBUTES.includes(name) && !HTML_ELEMENTS.get(tag).includes(name)) return null;
  if (name === 'href' || name === 'src') return safeTarget(value, tag === 'img');
  if (name === 'style') return TEXT_ALIGN.test(value) ? value : null;
  if (name === 'target') return value === '_blank' ? value : null;
  if (name === 'rel') return /^(noopener|noreferrer|nofollow|\s)*$/.test(value) ? value : null;
  return value;
}

function cleanElement(element) {
  const isMath = element.namespaceURI === MATHML;
  for (const { name, value } of Array.from(element.attributes)) {
    const kept = allowedAttribute(element, isMath, name.toLowerCase(), value);
    if (kept === null) element.removeAttribute(name);
    else if (kept !== value) element.setAttribute(name, kept);
  }
}

/** Clean every node under `root`, in place. */
function clean(root) {
  for (const node of Array.from(root.childNodes)) {
    if (node.nodeType === Node.TEXT_NODE) continue;
    if (node.nodeType !== Node.ELEMENT_NODE) {
      node.remove(); // comments, processing instructions, CDATA
      continue;
    }
    const name = node.localName;
    const allowed = (node.namespaceURI === HTML && HTML_ELEMENTS.has(name))
      || (node.namespaceURI === MATHML && MATHML_ELEMENTS.has(name));
    if (!allowed && DROP_WITH_CONTENT.has(name)) {
      node.remove();
      continue;
    }
    clean(node);
    if (allowed) cleanElement(node);
    else node.replaceWith(...node.childNodes);
  }
}

function parsed(html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  clean(template.content);
  return template;
}

/** The allowed part of `html`, as nodes ready to insert. */
export function sanitizedFragment(html) {
  return typeof html === 'string' ? parsed(html).content : document.createDocumentFragment();
}

function isTokenLine(html) {
  let depth = 0;
  TOKEN_LINE.lastIndex = 0;
  while (TOKEN_LINE.lastIndex < html.length) {
    const match = TOKEN_LINE.exec(html);
    if (match === null) return false;
    if (match[0].startsWith('<span')) depth++;
    else if (match[0] === '</span>' && --depth < 0) return false;
  }
  return depth === 0;
}

function escapeText(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The allowed part of `html`, as HTML text, for views that build their markup as a string.
    A line shaped like our highlighter's output is returned as is (the common, fast case). A
    cleaned result that would change when parsed again is shown as plain text instead, so the
    string form can never turn into something the cleaning did not see. */
export function sanitizedHtml(html) {
  if (typeof html !== 'string') return '';
  if (isTokenLine(html)) return html;
  const once = parsed(html).innerHTML;
  return parsed(once).innerHTML === once ? once : escapeText(parsed(html).content.textContent);
}
