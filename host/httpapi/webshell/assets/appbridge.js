// The host side of MCP Apps in the WebShell: the minimal-host profile of
// docs/apps.md §11 (shared docs), first slice.
//
// An App is hostile code. It runs two opaque frames deep:
//
//   WebShell page  http://127.0.0.1:P
//   └─ outer iframe  sandbox="allow-scripts allow-forms", no allow attribute,
//      src = http://localhost:P/mcp-app-sandbox?hostOrigin=…&csp=…
//      (the sandbox proxy, served on the *other* loopback name, §9)
//      └─ inner iframe  srcdoc = the App's HTML (created by the proxy)
//
// The bridge talks JSON-RPC 2.0 over window.postMessage with the proxy, which
// relays to and from the App. Both frames have the origin "null", so senders
// are told apart by event.source only (§13), and messages go out with the
// target "*" (the only one an opaque frame receives).
//
// What the App may do here: ui/initialize, ui/notifications/initialized,
// ui/notifications/size-changed, ping, ui/request-display-mode (inline
// only) and notifications/message (dropped; kept in a page log in test mode).
// Every other request is answered -32601. It gets tool-input and tool-result
// once initialized, host-context-changed on a theme change, and
// ui/resource-teardown before its frame goes.
//
// Nothing from the display record or the App reaches the WebShell's DOM as
// markup; the App's HTML only ever travels to the proxy as a string.

import { h, isPlainObject } from './dom.js';

export const APP_PROTOCOL_VERSION = '2026-01-26';
const KNOWN_PROTOCOL_VERSIONS = new Set(['2026-01-26', '2025-11-21']);

export const SANDBOX_PATH = '/mcp-app-sandbox';
const MAX_SANDBOX_QUERY = 8192; // the route's limit (§8.1)
const CSP_KEYS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
const MAX_SOURCES = 32;
const PERMISSION_KEYS = new Set(['camera', 'microphone', 'geolocation', 'clipboardWrite']);

export const HANDSHAKE_TIMEOUT_MS = 10000; // src set ⇒ sandbox-proxy-ready
export const INIT_TIMEOUT_MS = 30000; // resource sent ⇒ initialized
export const TEARDOWN_WAIT_MS = 500; // ui/resource-teardown ⇒ reply
export const MIN_HEIGHT = 120;
export const MAX_HEIGHT = 640;
const INITIAL_HEIGHT = 160;
const MAX_MESSAGE_BYTES = 1 << 20;
const MAX_METHOD_LENGTH = 128;
const MAX_DEPTH = 64;
const MAX_ID_LENGTH = 256;
const MAX_TEST_LOG = 1000;
const MAX_REASON_LENGTH = 200;

// ------------------------------------------------------------------ the record

const isStr = (v) => typeof v === 'string';
const optional = (v, check) => v === undefined || check(v);

// A CSP source as the sandbox route accepts it (§8.2). The daemon already
// filtered the lists; a record that still holds something else is not used.
const SOURCE_RE = /^(?:https?|wss?):\/\/(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::([0-9]{1,5}))?$/;

function validSource(s) {
  if (!isStr(s) || s.length > 255) return false;
  const m = SOURCE_RE.exec(s);
  if (!m) return false;
  if (m[1] === undefined) return true;
  const port = Number(m[1]);
  return port >= 1 && port <= 65535;
}

function checkCsp(c) {
  if (!isPlainObject(c)) return null;
  const out = {};
  for (const [k, v] of Object.entries(c)) {
    if (!CSP_KEYS.includes(k)) return null;
    if (!Array.isArray(v) || v.length > MAX_SOURCES || !v.every(validSource)) return null;
    out[k] = v.slice();
  }
  return out;
}

function checkPermissions(p) {
  if (!isPlainObject(p)) return false;
  return Object.entries(p).every(([k, v]) => PERMISSION_KEYS.has(k) && isPlainObject(v));
}

/**
 * checkDisplay checks the structure of a display record (apps.md §6) and
 * returns {ok, rec, problem}. rec always holds the fields that are safe to
 * show (serverName, resourceUri, fallbackText and warning when they are
 * strings); when ok it is the whole checked record, with html, toolArguments,
 * toolResult and csp (lists copied). problem says in a few words what is
 * wrong when not ok.
 */
export function checkDisplay(d) {
  const rec = {
    serverName: isPlainObject(d) && isStr(d.serverName) ? d.serverName : '',
    resourceUri: isPlainObject(d) && isStr(d.resourceUri) ? d.resourceUri : '',
    fallbackText: isPlainObject(d) && isStr(d.fallbackText) ? d.fallbackText : '',
    warning: isPlainObject(d) && isStr(d.warning) ? d.warning : '',
    html: '',
  };
  const bad = (problem) => ({ ok: false, rec, problem });
  if (!isPlainObject(d)) return bad('the display record is not an object');
  if (d.type !== 'mcp_app') return bad('the display record is not of type mcp_app');
  if (!isStr(d.serverName) || !isStr(d.resourceUri) || !isStr(d.fallbackText) || !isStr(d.html)) {
    return bad('the display record lacks a required field');
  }
  if (!d.resourceUri.startsWith('ui://')) return bad('the resource URI is not a ui:// URI');
  if (!optional(d.warning, isStr) || !optional(d.admittedBy, isStr)) return bad('the display record has a malformed field');
  if (!optional(d.prefersBorder, (v) => typeof v === 'boolean')) return bad('prefersBorder is not a boolean');
  if (!optional(d.permissions, checkPermissions)) return bad('permissions are malformed');
  let csp;
  if (d.csp !== undefined) {
    csp = checkCsp(d.csp);
    if (!csp) return bad('the CSP lists are malformed');
  }
  if (d.html !== '') {
    if (!optional(d.toolArguments, (v) => v === null || isPlainObject(v))) return bad('the tool arguments are not an object');
    if (!isPlainObject(d.toolResult)) return bad('the tool result is not an object');
  }
  return {
    ok: true,
    rec: {
      ...rec,
      html: d.html,
      toolArguments: isPlainObject(d.toolArguments) ? d.toolArguments : {},
      toolResult: isPlainObject(d.toolResult) ? d.toolResult : null,
      csp,
      prefersBorder: d.prefersBorder,
    },
    problem: '',
  };
}

// ------------------------------------------------------------------ the sandbox URL

/**
 * sandboxURL returns the URL of the sandbox proxy for a page at loc (a
 * Location or URL) with the CSP lists csp (or undefined), or '' when this
 * page cannot host Apps (§9): the page must be http on 127.0.0.1 or
 * localhost with an explicit port; the proxy goes on the other name.
 */
export function sandboxURL(loc, csp) {
  if (loc.protocol !== 'http:' || !/^[1-9][0-9]{0,4}$/.test(loc.port)) return '';
  const port = Number(loc.port);
  if (port > 65535) return '';
  let other;
  if (loc.hostname === '127.0.0.1') other = 'localhost';
  else if (loc.hostname === 'localhost') other = '127.0.0.1';
  else return '';
  const hostOrigin = `http://${loc.hostname}:${port}`;
  if (loc.origin !== hostOrigin) return '';
  const q = new URLSearchParams({ hostOrigin });
  if (csp !== undefined) q.set('csp', JSON.stringify(csp));
  const query = q.toString();
  if (query.length > MAX_SANDBOX_QUERY) return '';
  return `http://${other}:${port}${SANDBOX_PATH}?${query}`;
}

// ------------------------------------------------------------------ inbound messages

function validId(id) {
  return (isStr(id) && id.length <= MAX_ID_LENGTH) || Number.isSafeInteger(id);
}

// depthOK reports whether the JSON value v nests at most max levels deep.
function depthOK(v, max) {
  const stack = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    if (d > max) return false;
    for (const c of Object.values(x)) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return true;
}

function utf8Length(s) {
  return new TextEncoder().encode(s).length;
}

/**
 * validateInbound checks a message from the proxy (§11.10) and returns a
 * plain JSON copy of it, or null to drop it: a plain object with jsonrpc
 * "2.0"; a request or notification has a method string of at most 128
 * characters, an id that is a string or an integer (requests), params an
 * object or absent; a response has such an id and a result or an error
 * object. Anything that does not serialise, serialises to more than 1 MiB or
 * nests more than 64 levels deep is dropped. It never throws.
 */
export function validateInbound(data) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  let s;
  try {
    s = JSON.stringify(data);
  } catch {
    return null; // cycles, BigInt, too deep
  }
  if (!isStr(s) || s.length > MAX_MESSAGE_BYTES) return null;
  if (s.length * 3 > MAX_MESSAGE_BYTES && utf8Length(s) > MAX_MESSAGE_BYTES) return null;
  let m;
  try {
    m = JSON.parse(s);
  } catch {
    return null;
  }
  if (!isPlainObject(m) || m.jsonrpc !== '2.0' || !depthOK(m, MAX_DEPTH)) return null;
  if ('method' in m) {
    if (!isStr(m.method) || m.method.length === 0 || m.method.length > MAX_METHOD_LENGTH) return null;
    if ('id' in m && !validId(m.id)) return null;
    if ('params' in m && !isPlainObject(m.params)) return null;
    if ('result' in m || 'error' in m) return null;
    return m;
  }
  if (!validId(m.id)) return null;
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) return null;
  if (hasError && (!isPlainObject(m.error) || !Number.isSafeInteger(m.error.code))) return null;
  return m;
}

// ------------------------------------------------------------------ host facts

let hostVersion = '';
let versionLoad = null;

// loadHostVersion asks the daemon's /healthz (no credentials) once for its
// version, for hostInfo.
function loadHostVersion() {
  if (!versionLoad) {
    versionLoad = fetch('/healthz', { cache: 'no-store', credentials: 'omit' })
      .then((r) => (r.ok ? r.json() : null))
      .then((j) => {
        const v = j?.version;
        if (isStr(v) && /^[\x20-\x7e]{1,64}$/.test(v)) hostVersion = v;
      })
      .catch(() => {});
  }
  return versionLoad;
}

const darkQuery = typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;

function currentTheme() {
  return darkQuery?.matches ? 'dark' : 'light';
}

function timeZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// ------------------------------------------------------------------ mounts

// Every live mount, for theme changes.
const live = new Set();
// slot -> its current mount (the generation check of teardown).
const mounts = new WeakMap();
let generation = 0;

darkQuery?.addEventListener?.('change', () => {
  const theme = currentTheme();
  for (const m of live) m.themeChanged(theme);
});

// parked holds frames that are being torn down after their card left the
// page: they stay alive (moved, not reloaded) until the App has answered
// ui/resource-teardown or 500 ms have passed.
let parking = null;

function park(iframe) {
  if (!iframe.isConnected || typeof Element.prototype.moveBefore !== 'function') return false;
  if (!parking || !parking.isConnected) {
    parking = h('div', { class: 'app-parking', 'aria-hidden': 'true', inert: true });
    document.body.append(parking);
  }
  try {
    parking.moveBefore(iframe, null);
    return true;
  } catch {
    return false;
  }
}

function appLogEnabled() {
  return document.documentElement.dataset.appLog === '1';
}

function appendAppLog(record) {
  if (!Array.isArray(window.__mcphostAppLog)) window.__mcphostAppLog = [];
  const log = window.__mcphostAppLog;
  log.push(record);
  if (log.length > MAX_TEST_LOG) log.splice(0, log.length - MAX_TEST_LOG);
}

/** setSlotState sets the host-page state of a slot (§11.11). */
export function setSlotState(slot, state) {
  slot.dataset.mcpAppState = state;
}

/**
 * showFallback puts the record's fallbackText (as text) into slot, with the
 * record's warning and the host's note (why there is no App) as small notes.
 */
export function showFallback(slot, rec, note) {
  for (const el of slot.querySelectorAll('.app-frame-wrap, .app-fallback, .app-note, .app-warning')) el.remove();
  if (rec.warning) slot.append(h('p', { class: 'app-warning', testid: 'app-warning', role: 'note' }, rec.warning));
  if (note) slot.append(h('p', { class: 'app-note muted', testid: 'app-note' }, note));
  slot.append(h('pre', { class: 'content-text app-fallback', testid: 'app-fallback' }, rec.fallbackText || '(no fallback text)'));
  setSlotState(slot, 'fallback');
}

/**
 * mountApp mounts the App of a checked record (rec.html non-empty) in slot,
 * loading the sandbox proxy from url. tool is the tool's name (for
 * hostContext.toolInfo). The slot may not be in the page yet: the frame loads
 * once it is inserted.
 */
export function mountApp(slot, rec, { url, tool }) {
  const m = new Mount(slot, rec, url, tool);
  mounts.set(slot, m);
  m.start();
  return m;
}

/**
 * teardownSlot tears down the App mounted in slot (§11.8) with reason; it
 * resolves when done and never rejects. A slot without an App resolves at
 * once.
 */
export function teardownSlot(slot, reason) {
  const m = mounts.get(slot);
  if (!m) return Promise.resolve();
  return m.teardown(isStr(reason) ? reason.slice(0, MAX_REASON_LENGTH) : 'unmount');
}

class Mount {
  constructor(slot, rec, url, tool) {
    this.gen = ++generation;
    this.slot = slot;
    this.rec = rec;
    this.url = url;
    this.tool = isStr(tool) ? tool : '';
    this.closed = false;
    this.proxyReady = false;
    this.initializeAnswered = false;
    this.initialized = false;
    this.teardownPromise = null;
    this.pending = new Map(); // id -> {resolve, reject, timer}
    this.nextId = 1;
    this.timers = new Set();
    this.onMessage = this.onMessage.bind(this);

    const wrapClass = rec.prefersBorder === true ? 'app-frame-wrap has-border'
      : rec.prefersBorder === false ? 'app-frame-wrap no-border' : 'app-frame-wrap';
    this.iframe = h('iframe', {
      class: 'app-frame',
      testid: 'app-frame',
      sandbox: 'allow-scripts allow-forms',
      referrerpolicy: 'origin',
      title: `${rec.serverName || 'Unknown server'} MCP App`,
    });
    this.iframe.style.height = `${INITIAL_HEIGHT}px`;
    this.wrap = h('div', { class: wrapClass }, this.iframe);
    slot.append(this.wrap);
  }

  isCurrent() {
    return mounts.get(this.slot) === this;
  }

  later(ms, fn) {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return t;
  }

  cancelTimer(t) {
    if (t === undefined || t === null) return;
    clearTimeout(t);
    this.timers.delete(t);
  }

  start() {
    setSlotState(this.slot, 'loading');
    loadHostVersion();
    live.add(this);
    // The listener goes in before src: the proxy announces itself on load.
    window.addEventListener('message', this.onMessage);
    this.handshakeTimer = this.later(HANDSHAKE_TIMEOUT_MS, () => this.fail('The App sandbox did not answer in time.'));
    this.iframe.src = this.url;
  }

  post(msg) {
    try {
      // The proxy is opaque: "*" is the only target it receives (§13).
      this.iframe.contentWindow?.postMessage(msg, '*');
    } catch {
      /* a frame that is gone */
    }
  }

  notify(method, params) {
    this.post({ jsonrpc: '2.0', method, params });
  }

  reply(id, result) {
    this.post({ jsonrpc: '2.0', id, result });
  }

  replyError(id, code, message) {
    this.post({ jsonrpc: '2.0', id, error: { code, message } });
  }

  request(method, params, timeoutMs) {
    const id = `mcphost-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = this.later(timeoutMs, () => {
        this.pending.delete(id);
        reject(new Error(`${method}: no reply within ${timeoutMs} ms`));
      });
      this.pending.set(id, { resolve, reject, timer });
      this.post({ jsonrpc: '2.0', id, method, params });
    });
  }

  onMessage(event) {
    if (this.closed) return;
    const win = this.iframe.contentWindow;
    if (!win || event.source !== win) return;
    const msg = validateInbound(event.data);
    if (!msg) return;
    try {
      if (!('method' in msg)) this.onResponse(msg);
      else if ('id' in msg) this.onRequest(msg.id, msg.method, msg.params ?? {});
      else this.onNotification(msg.method, msg.params ?? {});
    } catch {
      /* the bridge survives every message */
    }
  }

  onResponse(msg) {
    const p = this.pending.get(msg.id);
    if (!p) return; // matches no request of ours: ignored
    this.pending.delete(msg.id);
    this.cancelTimer(p.timer);
    if ('error' in msg) p.reject(new Error(isStr(msg.error.message) ? msg.error.message : `error ${msg.error.code}`));
    else p.resolve(msg.result);
  }

  onRequest(id, method, params) {
    if (method === 'ui/initialize') {
      this.answerInitialize(id, params).catch(() => {});
      return;
    }
    // Nothing but the ui/initialize response goes to the View before it
    // has said it is initialized (§11.4).
    if (!this.initialized) return;
    switch (method) {
      case 'ping':
        this.reply(id, {});
        return;
      case 'ui/request-display-mode':
        this.reply(id, { mode: 'inline' });
        return;
      default:
        this.replyError(id, -32601, `Method not found: ${method}`);
    }
  }

  async answerInitialize(id, params) {
    if (!this.proxyReady) return;
    if (!isStr(params.protocolVersion)) {
      this.replyError(id, -32602, 'Invalid params: protocolVersion must be a string');
      return;
    }
    if (!hostVersion) await Promise.race([loadHostVersion(), sleep(1000)]);
    if (this.closed) return;
    const csp = this.rec.csp;
    const result = {
      protocolVersion: KNOWN_PROTOCOL_VERSIONS.has(params.protocolVersion) ? params.protocolVersion : APP_PROTOCOL_VERSION,
      hostInfo: { name: 'mcphost', version: hostVersion || 'unknown' },
      hostCapabilities: { sandbox: csp ? { csp } : {} },
      hostContext: {
        theme: currentTheme(),
        platform: 'web',
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: { maxHeight: MAX_HEIGHT },
        locale: navigator.language || 'en',
        timeZone: timeZone(),
        toolInfo: { tool: { name: this.tool } },
      },
    };
    this.initializeAnswered = true;
    this.reply(id, result);
  }

  onNotification(method, params) {
    switch (method) {
      case 'ui/notifications/sandbox-proxy-ready':
        this.onProxyReady();
        return;
      case 'ui/notifications/initialized':
        this.onInitialized();
        return;
      case 'ui/notifications/size-changed':
        this.onSizeChanged(params);
        return;
      case 'notifications/message':
        if (appLogEnabled() && isStr(params.level)) {
          appendAppLog({ server: this.rec.serverName, level: params.level, data: params.data ?? null });
        }
        return;
      default:
        // Other notifications are ignored.
    }
  }

  onProxyReady() {
    if (this.proxyReady) return;
    this.proxyReady = true;
    this.cancelTimer(this.handshakeTimer);
    this.notify('ui/notifications/sandbox-resource-ready', { html: this.rec.html });
    this.initTimer = this.later(INIT_TIMEOUT_MS, () => this.fail('The App did not start in time.'));
  }

  onInitialized() {
    if (!this.initializeAnswered || this.initialized) return;
    this.initialized = true;
    this.cancelTimer(this.initTimer);
    if (this.isCurrent() && !this.teardownPromise) setSlotState(this.slot, 'ready');
    this.notify('ui/notifications/tool-input', { arguments: this.rec.toolArguments });
    this.notify('ui/notifications/tool-result', this.rec.toolResult);
  }

  onSizeChanged(params) {
    const hgt = params.height;
    if (typeof hgt !== 'number' || !Number.isFinite(hgt) || hgt <= 0) return;
    const px = Math.round(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, hgt)));
    this.iframe.style.height = `${px}px`;
    this.slot.dataset.appHeight = String(px);
  }

  themeChanged(theme) {
    if (this.closed || !this.initialized || this.teardownPromise) return;
    this.notify('ui/notifications/host-context-changed', { theme });
  }

  // fail gives up on the App (a timeout): the frame goes and the slot shows
  // the fallback text.
  fail(note) {
    if (this.closed || this.teardownPromise) return;
    this.close();
    if (this.isCurrent()) showFallback(this.slot, this.rec, note);
  }

  // close ends the bridge: no listener, no timers, no pending requests, and
  // the frame is blanked and removed.
  close() {
    if (this.closed) return;
    this.closed = true;
    live.delete(this);
    window.removeEventListener('message', this.onMessage);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const p of this.pending.values()) p.reject(new Error('closed'));
    this.pending.clear();
    this.iframe.removeAttribute('src');
    this.iframe.remove();
    this.wrap.remove();
  }

  teardown(reason) {
    if (this.teardownPromise) return this.teardownPromise;
    this.teardownPromise = (async () => {
      if (!this.closed && this.initialized) {
        // The card is about to leave the page; keep the frame alive (moved,
        // not reloaded) so that the App can answer.
        park(this.iframe);
        try {
          await this.request('ui/resource-teardown', { reason }, TEARDOWN_WAIT_MS);
        } catch {
          /* no answer in time, or an error: torn down all the same */
        }
      }
      // The App's own frame goes in any case; the slot's state changes only
      // if this is still its current mount.
      this.close();
      if (this.isCurrent()) setSlotState(this.slot, 'torn-down');
    })().catch(() => {});
    return this.teardownPromise;
  }
}
