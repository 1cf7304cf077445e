// The hook where MCP Apps (docs/apps.md §10–11, in the shared docs) will be
// mounted into transcript entries. Today it only shows a placeholder with the
// display record's fallbackText; the Apps work replaces mountDisplay and
// teardownDisplay and keeps their contracts:
//
//   renderDisplay(entry) -> HTMLElement | null
//     called once per rendered entry card with a non-null entry.display;
//     returns the element placed in the card (class "app-slot").
//   teardownDisplay(slot, reason) -> Promise<void>
//     called before a slot leaves the page: session switch, transcript
//     reload, entry replaced, sign-out. Must never throw.
//
// Nothing from the record may reach the DOM as markup.

import { h, isPlainObject } from './dom.js';

/** renderDisplay returns the app slot for entry.display, or null when there is none. */
export function renderDisplay(entry) {
  const d = entry?.display;
  if (d === null || d === undefined) return null;
  const rec = isPlainObject(d) ? d : {};
  const slot = h('div', { class: 'app-slot', testid: 'app-slot' });
  if (typeof rec.resourceUri === 'string') slot.dataset.resourceUri = rec.resourceUri;
  if (typeof rec.serverName === 'string') slot.dataset.serverName = rec.serverName;
  const text = typeof rec.fallbackText === 'string' ? rec.fallbackText : '';
  slot.append(
    h('p', { class: 'app-slot-label' }, 'App view', typeof rec.resourceUri === 'string' ? h('code', {}, rec.resourceUri) : null),
    h('pre', { class: 'content-text app-fallback' }, text || '(no fallback text)'),
  );
  return slot;
}

/** teardownDisplay releases whatever renderDisplay mounted in slot. */
export async function teardownDisplay(_slot, _reason) {
  // Nothing is mounted yet.
}

/** teardownDisplays tears down every app slot inside root. */
export function teardownDisplays(root, reason) {
  for (const slot of root.querySelectorAll('.app-slot')) {
    teardownDisplay(slot, reason).catch(() => {});
  }
}
