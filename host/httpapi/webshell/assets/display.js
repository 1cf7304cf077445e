// Where MCP Apps (docs/apps.md §6–11, in the shared docs) are mounted into
// transcript entries. The bridge itself is appbridge.js.
//
//   renderDisplay(entry) -> HTMLElement | null
//     called once per rendered entry card with a non-null entry.display;
//     returns the element placed in the card (class "app-slot"). A record
//     with non-empty html mounts the App in a sandboxed frame; an empty html
//     (the failure form, or a compacted entry) or a malformed record shows
//     the fallbackText as text and mounts no frame.
//   teardownDisplay(slot, reason) -> Promise<void>
//     called before a slot leaves the page: session switch, transcript
//     reload, entry replaced, sign-out. Must never throw.
//
// The slot carries data-mcp-app-state: loading | ready | fallback | torn-down.
// An App whose server's config allows eval (app_csp_unsafe_eval, the
// record's unsafeEval) has a badge saying so next to its name.
// Nothing from the record may reach the DOM as markup.

import { h } from './dom.js';
import { checkDisplay, sandboxURL, mountApp, showFallback, setSlotState, teardownSlot } from './appbridge.js';

/** renderDisplay returns the app slot for entry.display, or null when there is none. */
export function renderDisplay(entry) {
  const d = entry?.display;
  if (d === null || d === undefined) return null;
  const { ok, rec, problem } = checkDisplay(d);
  const slot = h('div', { class: 'app-slot', testid: 'app-slot' });
  if (rec.resourceUri) slot.dataset.resourceUri = rec.resourceUri;
  if (rec.serverName) slot.dataset.serverName = rec.serverName;
  const label = h('p', { class: 'app-slot-label' },
    h('span', { class: 'app-slot-server' }, rec.serverName ? `${rec.serverName} MCP App` : 'MCP App'),
    rec.resourceUri ? h('code', {}, rec.resourceUri) : null);
  slot.append(label);

  if (!ok) {
    showFallback(slot, rec, `The App cannot be shown: ${problem}.`);
    return slot;
  }
  if (rec.html === '') {
    showFallback(slot, rec, '');
    return slot;
  }
  const url = sandboxURL(window.location, rec.csp, appsSandbox(), { unsafeEval: rec.unsafeEval });
  if (rec.unsafeEval) {
    slot.dataset.unsafeEval = 'true';
    label.append(h('span', {
      class: 'badge sandbox-warn app-unsafe-eval', testid: 'app-unsafe-eval',
      title: "This server's config (app_csp_unsafe_eval) lets its Apps run code built from strings (eval, the Function constructor, data: scripts). Apps of other servers cannot.",
    }, "unsafe-eval allowed by the server's config"));
  }
  if (!url) {
    showFallback(slot, rec, 'Apps are shown only when the WebShell is opened at http://127.0.0.1:PORT or http://localhost:PORT, or at a public URL when the daemon is given a host name for their sandbox (apps_sandbox_url).');
    return slot;
  }
  mountApp(slot, rec, { url, tool: entry.tool, entryId: entry.id, sessionId: entry.sessionId });
  return slot;
}

// appsSandbox is the origin the daemon serves Apps' sandbox at for a page
// opened at a public URL ('' for none), from the page's meta tag.
function appsSandbox() {
  const m = document.querySelector('meta[name="mcphost-apps-sandbox"]');
  return m ? m.getAttribute('content') ?? '' : '';
}

/** teardownDisplay releases whatever renderDisplay mounted in slot. */
export async function teardownDisplay(slot, reason) {
  try {
    if (slot?.dataset?.mcpAppState === 'fallback') setSlotState(slot, 'torn-down');
    await teardownSlot(slot, reason);
  } catch {
    /* never throws */
  }
}

/** teardownDisplays tears down every app slot inside root. */
export function teardownDisplays(root, reason) {
  for (const slot of root.querySelectorAll('.app-slot')) {
    teardownDisplay(slot, reason).catch(() => {});
  }
}
