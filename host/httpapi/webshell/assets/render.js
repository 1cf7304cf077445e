// Transcript cards: one per stored Entry, and one per running call.
// Everything from the API or a server goes in as text; media only as data:
// URLs of a checked image/* or audio/* type.

import { h, isPlainObject, pretty, formatTime, formatDuration, formatBytes, base64Size } from './dom.js';
import { renderDisplay } from './display.js';
import { contentOf, messageContent } from './offerings.js';

export const STATUS_LABELS = {
  ok: 'ok',
  tool_error: 'tool error',
  error: 'error',
  cancelled: 'cancelled',
  denied: 'denied',
};

const classSafe = (s) => (/^[a-z_]{1,32}$/.test(s) ? s : 'unknown');

function collapsible(summary, body, { open = false, cls = '' } = {}) {
  const d = h('details', { class: `collapsible ${cls}`.trim() }, h('summary', {}, summary), body);
  d.open = open;
  return d;
}

/** startedTime is the <time> of an entry's start, for its card's header. */
function startedTime(entry) {
  const at = String(entry.startedAt ?? '');
  return h('time', { class: 'muted', datetime: at, title: at }, formatTime(entry.startedAt));
}

function jsonBlock(v) {
  return h('pre', { class: 'json' }, pretty(v));
}

/** dataUrl returns a data: URL for base64 data of a kind/* MIME type, or null. */
export function dataUrl(kind, mime, data) {
  if (typeof mime !== 'string' || typeof data !== 'string') return null;
  const m = mime.trim().toLowerCase();
  if (!/^[a-z]+\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(m) || !m.startsWith(`${kind}/`)) return null;
  const d = data.replace(/\s+/g, '');
  if (d.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(d)) return null;
  return `data:${m};base64,${d}`;
}

function mediaBlock(b, kind) {
  const src = dataUrl(kind, b.mimeType, b.data);
  const mime = typeof b.mimeType === 'string' ? b.mimeType : 'no MIME type';
  const size = typeof b.data === 'string' ? formatBytes(base64Size(b.data)) : '';
  if (!src) {
    return h('div', { class: 'content-note' }, `${kind === 'image' ? 'Image' : 'Audio'} not shown: `,
      h('code', {}, mime), ` is not an ${kind}/* type with base64 data.`);
  }
  const media = kind === 'image'
    ? h('img', { class: 'content-image', src, alt: `Image from the tool (${mime})`, loading: 'lazy', decoding: 'async' })
    : h('audio', { class: 'content-audio', src, controls: true, preload: 'metadata' });
  return h('figure', { class: `content-media media-${kind}` }, media, h('figcaption', { class: 'muted' }, [mime, size].filter(Boolean).join(' · ')));
}

function kv(label, value, mono = false) {
  if (value === undefined || value === null || value === '') return null;
  return h('div', { class: 'kv' }, h('span', { class: 'kv-key' }, label), h(mono ? 'code' : 'span', { class: 'kv-value' }, String(value)));
}

function resourceLinkBlock(b) {
  const name = typeof b.title === 'string' && b.title ? b.title : b.name;
  return h('div', { class: 'content-resource' },
    h('p', { class: 'content-kind' }, 'Resource link'),
    kv('name', name),
    kv('uri', b.uri, true),
    kv('type', b.mimeType, true),
    kv('size', Number.isFinite(b.size) ? formatBytes(b.size) : undefined),
    kv('description', b.description));
}

function embeddedResourceBlock(b) {
  const r = isPlainObject(b.resource) ? b.resource : {};
  const parts = [
    h('p', { class: 'content-kind' }, 'Embedded resource'),
    kv('uri', r.uri, true),
    kv('type', r.mimeType, true),
  ];
  if (typeof r.text === 'string') {
    parts.push(h('pre', { class: 'content-text' }, r.text));
  } else if (typeof r.blob === 'string') {
    parts.push(h('p', { class: 'muted' }, `Binary content, ${formatBytes(base64Size(r.blob))}${typeof r.mimeType === 'string' ? ` (${r.mimeType})` : ''}.`));
  } else {
    parts.push(h('p', { class: 'muted' }, 'No text or blob.'));
  }
  return h('div', { class: 'content-resource' }, parts);
}

/** contentBlock renders one MCP content block. */
export function contentBlock(b) {
  if (!isPlainObject(b)) return collapsible('Unrecognised content', jsonBlock(b), { open: true });
  switch (b.type) {
    case 'text':
      return h('pre', { class: 'content-text' }, typeof b.text === 'string' ? b.text : pretty(b.text));
    case 'image':
      return mediaBlock(b, 'image');
    case 'audio':
      return mediaBlock(b, 'audio');
    case 'resource_link':
      return resourceLinkBlock(b);
    case 'resource':
      return embeddedResourceBlock(b);
    default:
      return collapsible(`Content of type "${String(b.type)}"`, jsonBlock(b), { open: false });
  }
}

function resultBody(result) {
  const parts = [];
  if (!isPlainObject(result)) {
    parts.push(collapsible('Result', jsonBlock(result), { open: true }));
    return parts;
  }
  const content = Array.isArray(result.content) ? result.content : [];
  for (const b of content) parts.push(contentBlock(b));
  if (content.length === 0 && !('structuredContent' in result)) parts.push(h('p', { class: 'muted' }, 'The tool returned no content.'));
  if ('structuredContent' in result && result.structuredContent !== undefined) {
    parts.push(collapsible('Structured content', jsonBlock(result.structuredContent), { cls: 'structured' }));
  }
  return parts;
}

function argsSummary(args) {
  if (isPlainObject(args)) {
    const n = Object.keys(args).length;
    return n === 0 ? 'Arguments (none)' : `Arguments (${n})`;
  }
  return 'Arguments';
}

/**
 * appMessageCard renders an App message (kind "app_message"): text an MCP
 * App added to the transcript with ui/message. It names the App's server
 * and resource and is never styled or labelled as the user's own words.
 */
function appMessageCard(entry) {
  const server = typeof entry.server === 'string' && entry.server ? entry.server : '?';
  const msg = isPlainObject(entry.message) ? entry.message : {};
  const uri = typeof msg.resourceUri === 'string' ? msg.resourceUri : '';
  const card = h('article', {
    class: 'entry app-message',
    testid: 'entry',
    'data-kind': 'app_message',
    'data-status': 'ok',
    'data-entry-id': String(entry.id ?? ''),
    'aria-label': `Message from the ${server} MCP App`,
  });
  card.append(h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, `${server} App`),
    h('span', { class: 'badge badge-muted', testid: 'app-message-badge' }, 'App message'),
    h('span', { class: 'spacer' }),
    startedTime(entry)));
  card.append(h('p', { class: 'app-message-label' }, 'Sent by the MCP App of server ', h('strong', {}, server),
    uri ? [' (', h('code', {}, uri), ')'] : null, ', not by you.'));
  const blocks = Array.isArray(msg.content) ? msg.content : [];
  for (const b of blocks) {
    const text = isPlainObject(b) && typeof b.text === 'string' ? b.text : '';
    card.append(h('pre', { class: 'content-text', testid: 'app-message-text' }, text));
  }
  if (Number.isFinite(entry.seq)) card.append(h('footer', { class: 'entry-foot muted' }, `#${entry.seq}`));
  return card;
}

/** denyingDecision returns the last decision of a trail that did not allow. */
function denyingDecision(trail) {
  const ds = isPlainObject(trail) && Array.isArray(trail.decisions) ? trail.decisions : [];
  for (let i = ds.length - 1; i >= 0; i--) {
    if (isPlainObject(ds[i]) && ds[i].effect !== 'allow') return ds[i];
  }
  return null;
}

const APPROVAL_LABELS = { approved: 'approved by you', denied: 'denied by you', expired: 'not answered in time', cancelled: 'cancelled' };

/**
 * trailBlock shows what the policies and plugins did to a call: each
 * decision (phase, rule, effect, reason, time) and each plugin run (name,
 * stage, time, changed, error), folded; null when nothing happened.
 */
function trailBlock(trail) {
  if (!isPlainObject(trail)) return null;
  const decisions = Array.isArray(trail.decisions) ? trail.decisions.filter(isPlainObject) : [];
  const runs = Array.isArray(trail.plugins) ? trail.plugins.filter(isPlainObject) : [];
  const approval = typeof trail.approval === 'string' ? trail.approval : '';
  const asks = Array.isArray(trail.input) ? trail.input.filter(isPlainObject) : [];
  if (!decisions.length && !runs.length && !approval && !asks.length) return null;
  const items = [];
  for (const d of decisions) {
    const effect = typeof d.effect === 'string' ? d.effect : '?';
    items.push(h('li', { class: `trail-decision effect-${classSafe(effect)}`, testid: 'trail-decision', 'data-rule': String(d.rule ?? ''), 'data-effect': effect },
      h('span', { class: 'badge badge-muted' }, `policy · ${typeof d.phase === 'string' ? d.phase : '?'}`),
      ' ',
      typeof d.rule === 'string' && d.rule ? h('code', {}, d.rule) : h('span', { class: 'muted' }, 'default'),
      ` → ${effect}`,
      d.error === true ? h('span', { class: 'trail-error' }, ' (evaluation error: denied)') : '',
      typeof d.reason === 'string' && d.reason ? h('span', { class: 'muted' }, ` — ${d.reason}`) : '',
      Number.isFinite(d.micros) ? h('span', { class: 'muted duration' }, ` ${d.micros.toFixed(1)} µs`) : ''));
  }
  if (approval) {
    items.push(h('li', { class: 'trail-approval', testid: 'trail-approval', 'data-approval': approval },
      h('span', { class: 'badge badge-muted' }, 'approval'), ` ${APPROVAL_LABELS[approval] ?? approval}`));
  }
  for (const r of runs) {
    const changed = r.changed === true;
    items.push(h('li', { class: 'trail-plugin', testid: 'trail-plugin', 'data-plugin': String(r.plugin ?? ''), 'data-changed': String(changed) },
      h('span', { class: 'badge badge-muted' }, `plugin · ${typeof r.stage === 'string' ? r.stage : '?'}`),
      ' ',
      h('code', {}, typeof r.plugin === 'string' ? r.plugin : '?'),
      typeof r.error === 'string' && r.error
        ? h('span', { class: 'trail-error' }, r.skipped === true ? ` failed, skipped: ${r.error}` : ` failed: ${r.error}`)
        : ` ${changed ? 'changed the result' : 'left it unchanged'}`,
      Number.isFinite(r.durationMs) ? h('span', { class: 'muted duration' }, ` ${formatDuration(r.durationMs)}`) : ''));
  }
  // What the server asked while the call ran (elicitation, roots,
  // sampling) and how it ended; secret values arrive redacted.
  for (const a of asks) {
    const kind = typeof a.kind === 'string' ? a.kind : '?';
    const outcome = typeof a.outcome === 'string' ? a.outcome : '?';
    items.push(h('li', { class: 'trail-input', testid: 'trail-input', 'data-kind': kind, 'data-outcome': outcome },
      h('span', { class: 'badge badge-muted' }, Number.isFinite(a.round) && a.round > 0 ? `asked · round ${a.round}` : 'asked'),
      ` ${kind}`,
      typeof a.message === 'string' && a.message ? h('span', {}, ` “${a.message}”`) : '',
      typeof a.url === 'string' && a.url ? h('code', {}, ` ${a.url}`) : '',
      ` → ${outcome}`,
      typeof a.reason === 'string' && a.reason ? h('span', { class: 'muted' }, ` — ${a.reason}`) : ''));
  }
  const summary = [
    asks.length ? `${asks.length} question${asks.length === 1 ? '' : 's'} from the server` : '',
    decisions.length ? `${decisions.length} policy decision${decisions.length === 1 ? '' : 's'}` : '',
    runs.length ? `${runs.length} plugin run${runs.length === 1 ? '' : 's'}` : '',
    approval && !decisions.length ? 'approval' : '',
  ].filter(Boolean).join(', ');
  return collapsible(`${asks.length && !decisions.length && !runs.length ? 'Trail' : 'Policies and plugins'}: ${summary}`, h('ul', { class: 'trail' }, items), { cls: 'trail-block', open: decisions.some((d) => d.effect !== 'allow') });
}

/**
 * offeringCard renders a resource read (kind "resource_read") or a prompt
 * got (kind "prompt_get"): what was asked, and the server's answer, or why
 * there is none, as its card in the panel shows it.
 */
function offeringCard(entry) {
  const read = entry.kind === 'resource_read';
  const status = typeof entry.status === 'string' ? entry.status : 'unknown';
  const label = STATUS_LABELS[status] ?? status;
  const server = typeof entry.server === 'string' ? entry.server : '?';
  const subject = typeof entry.tool === 'string' ? entry.tool : '?';
  const card = h('article', {
    class: `entry offering-entry status-${classSafe(status)}`,
    testid: 'entry',
    'data-kind': entry.kind,
    'data-status': status,
    'data-entry-id': String(entry.id ?? ''),
    'aria-label': `${server} ${read ? 'resource' : 'prompt'} ${subject}: ${label}`,
  });
  card.append(h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, `${server} · ${read ? 'read' : 'prompt'} `, h('code', {}, subject)),
    h('span', { class: `badge status-${classSafe(status)}` }, label),
    entry.origin && entry.origin !== 'user' ? h('span', { class: 'badge badge-muted', title: 'origin' }, `via ${entry.origin}`) : null,
    h('span', { class: 'spacer' }),
    startedTime(entry),
    Number.isFinite(entry.durationMs) ? h('span', { class: 'muted duration', title: 'duration' }, formatDuration(entry.durationMs)) : null));
  if (!read && isPlainObject(entry.arguments) && Object.keys(entry.arguments).length) {
    card.append(collapsible(argsSummary(entry.arguments), jsonBlock(entry.arguments), { cls: 'arguments' }));
  }
  if (status !== 'ok') {
    card.append(h('p', { class: `entry-error ${status === 'denied' ? 'is-denied' : ''}`.trim(), role: 'note', testid: status === 'denied' ? 'denied' : null },
      h('strong', {}, status === 'denied' ? 'Denied by policy' : status === 'cancelled' ? 'Cancelled' : 'Error'),
      typeof entry.error === 'string' && entry.error ? `: ${entry.error}` : ''));
  }
  const r = isPlainObject(entry.result) ? entry.result : null;
  if (r && read) {
    const contents = (Array.isArray(r.contents) ? r.contents : []).filter(isPlainObject);
    card.append(h('div', { class: 'entry-result', testid: 'entry-resource' },
      contents.length ? contents.map((c) => contentOf(c, 'entry-')) : h('p', { class: 'muted' }, 'The resource is empty.')));
  } else if (r) {
    const messages = (Array.isArray(r.messages) ? r.messages : []).filter(isPlainObject);
    card.append(h('div', { class: 'entry-result', testid: 'entry-prompt' },
      typeof r.description === 'string' && r.description ? h('p', { class: 'muted' }, r.description) : null,
      messages.map((m) => h('div', { class: 'prompt-message', testid: 'entry-prompt-message' },
        h('span', { class: 'badge badge-muted' }, typeof m.role === 'string' && m.role ? m.role : '?'), messageContent(m.content)))));
  }
  const trail = trailBlock(entry.trail);
  if (trail) card.append(trail);
  if (Number.isFinite(entry.seq)) card.append(h('footer', { class: 'entry-foot muted' }, `#${entry.seq}`));
  return card;
}

/** entryCard renders a stored transcript Entry. */
export function entryCard(entry) {
  if (entry.kind === 'app_message') return appMessageCard(entry);
  if (entry.kind === 'resource_read' || entry.kind === 'prompt_get') return offeringCard(entry);
  const status = typeof entry.status === 'string' ? entry.status : 'unknown';
  const label = STATUS_LABELS[status] ?? status;
  const name = `${entry.server ?? '?'}.${entry.tool ?? '?'}`;
  const card = h('article', {
    class: `entry status-${classSafe(status)}`,
    testid: 'entry',
    'data-status': status,
    'data-entry-id': String(entry.id ?? ''),
    'aria-label': `${name}: ${label}`,
  });
  if (typeof entry.callId === 'string') card.dataset.callId = entry.callId;

  card.append(h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, name),
    h('span', { class: `badge status-${classSafe(status)}` }, label),
    entry.origin && entry.origin !== 'user' ? h('span', { class: 'badge badge-muted', title: 'origin' }, `via ${entry.origin}`) : null,
    h('span', { class: 'spacer' }),
    startedTime(entry),
    Number.isFinite(entry.durationMs) ? h('span', { class: 'muted duration', title: 'duration' }, formatDuration(entry.durationMs)) : null));

  card.append(collapsible(argsSummary(entry.arguments), jsonBlock(entry.arguments ?? {}), { cls: 'arguments' }));

  if (status === 'denied') {
    const d = denyingDecision(entry.trail);
    card.append(h('p', { class: 'entry-error is-denied', role: 'note', testid: 'denied' },
      h('strong', {}, 'Denied by policy'),
      d && typeof d.rule === 'string' && d.rule ? [' ', h('code', {}, d.rule)] : '',
      typeof entry.error === 'string' && entry.error ? `: ${entry.error}` : ''));
  } else if ((status === 'error' || status === 'cancelled') || (typeof entry.error === 'string' && entry.error && !entry.result)) {
    card.append(h('p', { class: `entry-error ${status === 'cancelled' ? 'is-cancelled' : ''}`.trim(), role: status === 'error' ? 'note' : null },
      h('strong', {}, status === 'cancelled' ? 'Cancelled' : 'Error'),
      typeof entry.error === 'string' && entry.error ? `: ${entry.error}` : ''));
  }

  const slot = renderDisplay(entry);
  if (slot) card.append(slot);

  if (entry.result !== null && entry.result !== undefined) {
    const isError = isPlainObject(entry.result) && entry.result.isError === true;
    const body = h('div', { class: `entry-result ${isError ? 'is-error' : ''}`.trim() },
      isError ? h('p', { class: 'result-label' }, 'The tool reported an error') : null,
      resultBody(entry.result));
    // With an App display the result is what the model saw; keep it, folded.
    card.append(slot ? collapsible('Model-visible result', body, { cls: 'model-result' }) : body);
  }

  const trail = trailBlock(entry.trail);
  if (trail) card.append(trail);

  const foot = [
    Number.isFinite(entry.seq) ? `#${entry.seq}` : '',
    typeof entry.era === 'string' ? entry.era : '',
    typeof entry.protocolVersion === 'string' ? entry.protocolVersion : '',
  ].filter(Boolean).join(' · ');
  if (foot) card.append(h('footer', { class: 'entry-foot muted' }, foot));
  return card;
}

/**
 * runningCard renders a call that is still running and returns
 * {el, update(run), tick()}. run: {callId, server, tool, startedAt (ms),
 * progress, total, message, cancelling, cancelState}.
 */
export function runningCard(run, onCancel) {
  const elapsed = h('span', { class: 'muted duration' }, '0 s');
  const cancel = h('button', { type: 'button', class: 'small danger', testid: 'cancel-button' }, 'Cancel');
  cancel.setAttribute('aria-label', `Cancel ${run.server}.${run.tool}`);
  cancel.addEventListener('click', () => onCancel(run.callId));
  const activity = h('div', { class: 'running-bar', 'aria-hidden': 'true' });
  const note = h('p', { class: 'muted running-note', hidden: true });
  const el = h('article', { class: 'entry running', testid: 'entry-running', 'data-call-id': run.callId, 'aria-busy': 'true', 'aria-label': `${run.server}.${run.tool}: running` },
    h('header', { class: 'entry-head' },
      h('span', { class: 'entry-name' }, `${run.server}.${run.tool}`),
      h('span', { class: 'badge status-running' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'running'),
      h('span', { class: 'spacer' }),
      elapsed,
      cancel),
    activity,
    note);
  let progressEl = null;
  let bar = null;
  let text = null;

  function update(r) {
    if (r.progress !== undefined) {
      if (!progressEl) {
        bar = h('progress', { class: 'progress-bar' });
        text = h('span', { class: 'progress-text' });
        progressEl = h('div', { class: 'progress', testid: 'progress' }, bar, text);
        activity.replaceWith(progressEl);
      }
      const p = Number(r.progress);
      const t = Number(r.total);
      if (Number.isFinite(t) && t > 0) {
        bar.max = t;
        bar.value = Math.min(Math.max(p, 0), t);
      } else {
        bar.removeAttribute('value');
        bar.removeAttribute('max');
      }
      progressEl.dataset.progress = Number.isFinite(p) ? String(p) : '';
      progressEl.dataset.total = Number.isFinite(t) ? String(t) : '';
      const count = Number.isFinite(t) && t > 0 ? `${p} / ${t}` : Number.isFinite(p) ? String(p) : '';
      const msg = typeof r.message === 'string' ? r.message : '';
      text.textContent = [count, msg].filter(Boolean).join(' — ');
      bar.setAttribute('aria-label', `Progress of ${r.server}.${r.tool}`);
    }
    cancel.disabled = !!r.cancelling;
    cancel.textContent = r.cancelling ? 'Cancelling…' : 'Cancel';
    note.hidden = !r.note;
    note.textContent = r.note || '';
  }

  function tick() {
    const s = Math.max(0, Math.floor((Date.now() - run.startedAt) / 1000));
    elapsed.textContent = s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
  }

  update(run);
  tick();
  return { el, update, tick };
}
