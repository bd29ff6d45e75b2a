/* The handle between the code and the values panel: drag it (or focus it and press ← / →) to
   give wide values more room. The width is remembered in localStorage for the next visit. */

const KEY = 'cs336-lectures-values-width';
const MIN_WIDTH = 220; // px
const MAX_SHARE = 0.7; // of the lecture's width
const KEY_STEP = 24; // px per arrow key

function storedWidth() {
  try {
    return Number(localStorage.getItem(KEY)) || 0;
  } catch {
    return 0; // storage disabled: the default width
  }
}

function store(width) {
  try {
    localStorage.setItem(KEY, String(Math.round(width)));
  } catch {
    /* storage disabled: the width lasts until the page is left */
  }
}

/** makeDivider(handle, lecture, panel): `handle` resizes `panel`, the right column of the `lecture` grid. */
export function makeDivider(handle, lecture, panel) {
  const apply = (width) => {
    const limit = Math.max(MIN_WIDTH, lecture.getBoundingClientRect().width * MAX_SHARE);
    const clamped = Math.round(Math.min(Math.max(width, MIN_WIDTH), limit));
    lecture.style.setProperty('--env-width', `${clamped}px`);
    handle.setAttribute('aria-valuenow', String(clamped));
    return clamped;
  };
  const saved = storedWidth();
  if (saved) lecture.style.setProperty('--env-width', `${saved}px`);

  handle.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    document.body.classList.add('resizing');
    const right = lecture.getBoundingClientRect().right;
    let width = panel.getBoundingClientRect().width;
    const move = (e) => { width = apply(right - e.clientX); };
    const done = () => {
      handle.removeEventListener('pointermove', move);
      document.body.classList.remove('resizing');
      store(width);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('lostpointercapture', done, { once: true });
  });
  handle.addEventListener('keydown', (event) => {
    const direction = { ArrowLeft: 1, ArrowRight: -1 }[event.key];
    if (!direction) return;
    event.preventDefault();
    event.stopPropagation(); // not a step: the viewer's arrow keys are for the trace
    store(apply(panel.getBoundingClientRect().width + direction * KEY_STEP));
  });
  handle.addEventListener('dblclick', () => {
    lecture.style.removeProperty('--env-width');
    try {
      localStorage.removeItem(KEY);
    } catch {
      /* nothing stored */
    }
  });
}
