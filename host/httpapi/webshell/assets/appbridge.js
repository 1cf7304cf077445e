// The host side of MCP Apps in the WebShell: the minimal-host profile of
// docs/apps.md §11 (shared docs), first slice.
//
// An App is hostile code. It runs two opaque frames deep:
//
//   WebShell page  http://127.0.0.1:P
//   └─ outer iframe  sandbox="allow-scripts allow-forms", no allow attribute,
//      src = http://localhost:P/mcp-app-sandbox?hostOrigin=…&csp=…[&unsafeEval=1]
//      (the sandbox proxy, served on the *other* loopback name, §9)
//      └─ inner iframe  srcdoc = the App's HTML (created by the proxy)
//
// The bridge talks JSON-RPC 2.0 over window.postMessage with the proxy, which
// relays to and from the App. Both frames have the origin "null", so senders
// are told apart by event.source only (§13), and messages go out with the
// target "*" (the only one an opaque frame receives).
//
// What the App may do here: ui/initialize, ui/notifications/initialized,
// ui/notifications/request-teardown (it is closed, its text shown),
// ui/notifications/size-changed, ping, ui/request-display-mode (inline
// only) and notifications/message (dropped; kept in a page log in test mode).
// Three requests are gated (§12): tools/call (a tool of the App's own
// server), ui/open-link (http/https, after the user confirms) and ui/message
// (recorded as an App message). Each is denied by default; the server's
// app_tool_calls, app_open_links and app_messages switches open them, and
// only then are they advertised in hostCapabilities. A denied request is
// answered with the error DENIED_CODE, "denied by host policy: …". An
// allowed one is made by this page through the API with the principal's
// token (the App never sees it), naming the App by its entry, and the daemon
// decides again. Every other request is answered -32601. The App gets
// tool-input and tool-result once initialized, host-context-changed on a
// theme change, and ui/resource-teardown before its frame goes.
//
// Nothing from the display record or the App reaches the WebShell's DOM as
// markup; the App's HTML only ever travels to the proxy as a string.

import { h, isPlainObject } from './dom.js';
import { api, seg, ApiError } from './api.js';
import { APP_PREAMBLE } from './app-preamble.js';
import {
  ModeChrome, AppToolsPanel, checkAppTools, DISPLAY_MODES, MAX_DOWNLOAD_BYTES, safeFileName, confirmDownload, saveFile, askInDialog,
} from './appchrome.js';

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
const MAX_TOOL_NAME = 128;
const MAX_LINK_LENGTH = 2048;
const APP_TOOL_TIMEOUT_MS = 30000; // the App answers tools/list or tools/call
const MODE_CHANGES = 5; // display mode changes an App may ask for …
const MODE_WINDOW_MS = 10000; // … within this window
const MODE_COOLDOWN_MS = 1500; // after the user left a mode, the App waits
const MAX_EARLY_REQUESTS = 16; // requests kept until the App is initialized
const MAX_LOG_LINES = 50; // the App's log pane keeps the newest ones
const MAX_LOG_LINE = 500;
const MAX_APP_ERROR = 1000;

/** APP_ERROR_METHOD is how the preamble reports an App's uncaught error. */
export const APP_ERROR_METHOD = 'mcphost/notifications/app-error';

// APP_PREAMBLE (app-preamble.js) is put before the App's HTML: it closes
// WebRTC in the App's realm and reports the App's uncaught errors.

/**
 * withPreamble returns the App's HTML with APP_PREAMBLE put first: right
 * after a leading doctype (so that the document keeps its standards mode),
 * else at the very start.
 */
export function withPreamble(html) {
  const m = /^\uFEFF?\s*<!doctype[^>]*>/i.exec(html);
  if (!m) return APP_PREAMBLE + html;
  return html.slice(0, m[0].length) + APP_PREAMBLE + html.slice(m[0].length);
}

/** DENIED_CODE is the JSON-RPC error code of an App request the host refused. */
export const DENIED_CODE = -32000;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

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
 * toolResult and csp (lists copied), and unsafeEval (true only when the
 * record says exactly true: the host sets it from the server's
 * app_csp_unsafe_eval, never from the App). problem says in a few words
 * what is wrong when not ok.
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
  if (!optional(d.unsafeEval, (v) => typeof v === 'boolean')) return bad('unsafeEval is not a boolean');
  if (!optional(d.permissions, checkPermissions)) return bad('permissions are malformed');
  let csp;
  if (d.csp !== undefined) {
    csp = checkCsp(d.csp);
    if (!csp) return bad('the CSP lists are malformed');
  }
  if (!optional(d.tool, isPlainObject)) return bad('the tool definition is not an object');
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
      tool: isPlainObject(d.tool) ? d.tool : null,
      csp,
      prefersBorder: d.prefersBorder,
      unsafeEval: d.unsafeEval === true,
    },
    problem: '',
  };
}

// ------------------------------------------------------------------ the sandbox URL

/**
 * sandboxURL returns the URL of the sandbox proxy for a page at loc (a
 * Location or URL) with the CSP lists csp (or undefined), or '' when this
 * page cannot host Apps (§9). A page on http 127.0.0.1 or localhost with an
 * explicit port gets the proxy on the other loopback name. Any other page
 * gets it at appsSandbox, the origin the daemon names for Apps behind a
 * public URL (config apps_sandbox_url; '' for none), when that is an
 * origin of its own and the page could frame it (no http frame in an https
 * page). With unsafeEval the proxy's policy, which the App inherits, allows
 * eval ('unsafe-eval' in script-src): only for a record that says so.
 */
export function sandboxURL(loc, csp, appsSandbox = '', { unsafeEval = false } = {}) {
  let base;
  let hostOrigin;
  const loopback = loc.hostname === '127.0.0.1' || loc.hostname === 'localhost';
  if (loopback) {
    if (loc.protocol !== 'http:' || !/^[1-9][0-9]{0,4}$/.test(loc.port)) return '';
    const port = Number(loc.port);
    if (port > 65535) return '';
    hostOrigin = `http://${loc.hostname}:${port}`;
    base = `http://${loc.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1'}:${port}`;
  } else {
    if (!PUBLIC_ORIGIN.test(appsSandbox) || !PUBLIC_ORIGIN.test(loc.origin)) return '';
    if (appsSandbox === loc.origin) return '';
    if (loc.protocol === 'https:' && appsSandbox.startsWith('http:')) return '';
    hostOrigin = loc.origin;
    base = appsSandbox;
  }
  if (loc.origin !== hostOrigin) return '';
  const q = new URLSearchParams({ hostOrigin });
  if (csp !== undefined) q.set('csp', JSON.stringify(csp));
  if (unsafeEval === true) q.set('unsafeEval', '1');
  const query = q.toString();
  if (query.length > MAX_SANDBOX_QUERY) return '';
  return `${base}${SANDBOX_PATH}?${query}`;
}

// PUBLIC_ORIGIN is an http(s) origin as a browser writes it: a lower-case
// host name and an optional port (what the sandbox proxy accepts).
const PUBLIC_ORIGIN = /^https?:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*(:[1-9][0-9]{0,4})?$/;

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

// The keys of an MCP Tool and of its annotations that the App SDK's schema
// of hostContext.toolInfo.tool admits (it refuses any other key).
const TOOL_KEYS = ['name', 'title', 'icons', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution', '_meta'];
const ANNOTATION_KEYS = { title: isStr, readOnlyHint: 'boolean', destructiveHint: 'boolean', idempotentHint: 'boolean', openWorldHint: 'boolean' };
const TASK_SUPPORT = new Set(['required', 'optional', 'forbidden']);

function validIcon(i) {
  return isPlainObject(i) && isStr(i.src) && optional(i.mimeType, isStr)
    && optional(i.sizes, (v) => Array.isArray(v) && v.every(isStr))
    && optional(i.theme, (v) => v === 'light' || v === 'dark');
}

/**
 * toolDefinition returns the MCP Tool for hostContext.toolInfo.tool: the
 * tool of the display record (as the server listed it), reduced to the keys
 * an MCP Tool has and checked field by field, so that the App SDK, which
 * validates it as a Tool, accepts it. name is the entry's tool name, used
 * when the record has none. Without a usable inputSchema the tool gets
 * {type: "object"}, the schema of a tool without parameters.
 */
export function toolDefinition(tool, name) {
  const t = isPlainObject(tool) ? tool : {};
  const out = { name: isStr(t.name) && t.name ? t.name : (isStr(name) ? name : '') };
  if (isStr(t.title)) out.title = t.title;
  if (isStr(t.description)) out.description = t.description;
  if (Array.isArray(t.icons) && t.icons.every(validIcon)) out.icons = t.icons;
  const schema = t.inputSchema;
  const propsOK = (p) => p === undefined || isPlainObject(p);
  const reqOK = (r) => r === undefined || (Array.isArray(r) && r.every(isStr));
  out.inputSchema = isPlainObject(schema) && schema.type === 'object' && propsOK(schema.properties) && reqOK(schema.required)
    ? schema : { type: 'object' };
  if (isPlainObject(t.outputSchema) && optional(t.outputSchema.$schema, isStr)) out.outputSchema = t.outputSchema;
  if (isPlainObject(t.annotations)) {
    const a = {};
    for (const [k, check] of Object.entries(ANNOTATION_KEYS)) {
      const v = t.annotations[k];
      if (v !== undefined && (check === 'boolean' ? typeof v === 'boolean' : check(v))) a[k] = v;
    }
    out.annotations = a;
  }
  if (isPlainObject(t.execution) && TASK_SUPPORT.has(t.execution.taskSupport)) out.execution = { taskSupport: t.execution.taskSupport };
  if (isPlainObject(t._meta)) out._meta = t._meta;
  for (const k of Object.keys(out)) if (!TOOL_KEYS.includes(k)) delete out[k];
  return out;
}

function deviceCapabilities() {
  const mq = (q) => typeof window.matchMedia === 'function' && window.matchMedia(q).matches;
  return { touch: mq('(pointer: coarse)') || (navigator.maxTouchPoints ?? 0) > 0, hover: mq('(hover: hover)') };
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// ------------------------------------------------------------------ App capabilities

const NO_CAPABILITIES = Object.freeze({ toolCalls: false, openLinks: false, messages: false, displayModes: false, tools: false, resources: false, downloads: false, modelContext: false });

// One answer per server name, shared by all its Apps until the
// configuration is reloaded (forgetAppCapabilities).
const capabilitiesLoads = new Map();

/**
 * loadCapabilities asks the daemon which App requests server allows
 * (GET /api/v1/servers/{name}/app-capabilities), once per server. Anything
 * but a clean answer means none: deny by default. A failed question is not
 * kept, so the next App of that server asks again.
 */
function loadCapabilities(server) {
  if (!isStr(server) || server === '') return Promise.resolve(NO_CAPABILITIES);
  let load = capabilitiesLoads.get(server);
  if (!load) {
    load = api('GET', `/servers/${seg(server)}/app-capabilities`).then((r) => {
      if (!isPlainObject(r)) throw new Error('app-capabilities: not an object');
      return Object.freeze({ toolCalls: r.toolCalls === true, openLinks: r.openLinks === true, messages: r.messages === true,
        displayModes: r.displayModes === true, tools: r.tools === true, resources: r.resources === true,
        downloads: r.downloads === true, modelContext: r.modelContext === true });
    });
    capabilitiesLoads.set(server, load);
    load.catch(() => {
      if (capabilitiesLoads.get(server) === load) capabilitiesLoads.delete(server);
    });
  }
  return load.catch(() => NO_CAPABILITIES);
}

/**
 * forgetAppCapabilities drops the answers of loadCapabilities: the daemon's
 * configuration was reloaded, and the next App of each server asks again.
 */
export function forgetAppCapabilities() {
  capabilitiesLoads.clear();
}

// ------------------------------------------------------------------ link confirmation

// One link prompt at a time, for every App of the page.
let linkPrompt = null;

/**
 * confirmLink asks the user whether to open url for the App of server; it
 * resolves true only on an explicit click on "Open link". The dialog shows
 * the server and the whole URL as the browser parsed it (international
 * names in punycode). signal (an AbortSignal) cancels it.
 */
function confirmLink(server, href, signal) {
  return new Promise((resolve) => {
    const open = h('button', { type: 'button', class: 'primary', testid: 'app-link-open' }, 'Open link');
    const cancel = h('button', { type: 'button', testid: 'app-link-cancel' }, 'Cancel');
    const dialog = h('dialog', { class: 'app-link-dialog', testid: 'app-link-dialog', 'aria-labelledby': 'app-link-title' },
      h('h2', { id: 'app-link-title' }, 'Open a link for an MCP App?'),
      h('p', {}, 'The MCP App of server ', h('strong', { testid: 'app-link-server' }, server || 'unknown'),
        ' asks to open this link in a new tab:'),
      h('p', { class: 'app-link-url' }, h('code', { testid: 'app-link-url' }, href)),
      h('p', { class: 'muted' }, 'Open it only if you expected this App to send you there. The new tab gets no reference to this page.'),
      h('div', { class: 'app-link-actions' }, cancel, open));
    askInDialog(dialog, open, cancel, signal).then(resolve);
  });
}

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

// initTimeout is INIT_TIMEOUT_MS, or in test mode a shorter value from
// <html data-app-init-timeout-ms>, so that a test of an App that never
// initializes need not wait 30 s. It can only shorten the wait.
function initTimeout() {
  if (!appLogEnabled()) return INIT_TIMEOUT_MS;
  const v = Number(document.documentElement.dataset.appInitTimeoutMs);
  return Number.isInteger(v) && v >= 100 && v < INIT_TIMEOUT_MS ? v : INIT_TIMEOUT_MS;
}

// appToolTimeout is APP_TOOL_TIMEOUT_MS, or in test mode a shorter value
// from <html data-app-tool-timeout-ms>; it can only shorten the wait.
function appToolTimeout() {
  if (!appLogEnabled()) return APP_TOOL_TIMEOUT_MS;
  const v = Number(document.documentElement.dataset.appToolTimeoutMs);
  return Number.isInteger(v) && v >= 100 && v < APP_TOOL_TIMEOUT_MS ? v : APP_TOOL_TIMEOUT_MS;
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
 * hostContext.toolInfo). entryId and sessionId name the App's transcript
 * entry: the App's gated requests go to the API in its name; without them
 * every gated request is denied. The slot may not be in the page yet: the
 * frame loads once it is inserted.
 */
export function mountApp(slot, rec, { url, tool, entryId, sessionId }) {
  const m = new Mount(slot, rec, url, tool, isStr(entryId) ? entryId : '', isStr(sessionId) ? sessionId : '');
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
  constructor(slot, rec, url, tool, entryId, sessionId) {
    this.gen = ++generation;
    this.slot = slot;
    this.rec = rec;
    this.url = url;
    this.tool = isStr(tool) ? tool : '';
    this.toolDef = toolDefinition(rec.tool, this.tool);
    this.width = 0; // the container width last told to the App
    this.resizeObserver = null;
    this.entryId = entryId;
    this.sessionId = sessionId;
    this.capabilities = NO_CAPABILITIES;
    this.capabilitiesLoad = null;
    this.aborter = new AbortController(); // ends the App's API requests and prompts
    this.closed = false;
    this.proxyReady = false;
    this.initializeAnswered = false;
    this.initialized = false;
    this.teardownPromise = null;
    this.pending = new Map(); // id -> {resolve, reject, timer}
    this.early = []; // requests made before initialized: [id, method, params]
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
    this.logPane = null; // the App's log, made on its first message
    this.chrome = new ModeChrome(this.wrap, this.iframe, rec.serverName, () => this.onUserExitMode());
    this.modeTimes = [];
    this.modeCooldownUntil = 0;
    this.modeBusy = false;
    this.appCapabilities = {}; // from the App's ui/initialize
    this.toolsPanel = null;
  }

  // containerDimensions: the width the App has (when laid out) and the
  // height it may grow to.
  containerDimensions() {
    const w = Math.round(this.wrap.clientWidth || this.slot.clientWidth || 0);
    const inline = w > 0 ? { width: w, maxHeight: MAX_HEIGHT } : { maxWidth: Math.round(window.innerWidth || 1024), maxHeight: MAX_HEIGHT };
    return this.chrome.dimensions(inline);
  }

  hostContext() {
    const dims = this.containerDimensions();
    this.width = dims.width ?? 0;
    const ctx = {
      toolInfo: { tool: this.toolDef },
      theme: currentTheme(),
      displayMode: this.chrome.mode,
      availableDisplayModes: this.capabilities.displayModes ? DISPLAY_MODES.slice() : ['inline'],
      containerDimensions: dims,
      locale: navigator.language || 'en',
      platform: 'web',
      deviceCapabilities: deviceCapabilities(),
      userAgent: `mcphost/${hostVersion || 'unknown'}`,
    };
    const tz = timeZone();
    if (tz) ctx.timeZone = tz;
    return ctx;
  }

  // contextChanged sends a partial hostContext to an initialized App.
  contextChanged(partial) {
    if (this.closed || !this.initialized || this.teardownPromise) return;
    this.notify('ui/notifications/host-context-changed', partial);
  }

  watchSize() {
    if (typeof ResizeObserver !== 'function' || this.resizeObserver) return;
    this.resizeObserver = new ResizeObserver(() => {
      const w = Math.round(this.wrap.clientWidth);
      if (w > 0 && w !== this.width) {
        this.width = w;
        this.contextChanged({ containerDimensions: this.containerDimensions() });
      }
    });
    this.resizeObserver.observe(this.wrap);
  }

  // log appends one line to the App's log pane (bounded), made on first use.
  log(level, text) {
    if (!this.logPane) {
      this.logList = h('ol', { class: 'app-log-lines', testid: 'app-log-lines' });
      this.logCount = h('span', { class: 'muted' }, '');
      this.logPane = h('details', { class: 'app-log', testid: 'app-log' },
        h('summary', {}, 'App log ', this.logCount), this.logList);
      this.slot.append(this.logPane);
    }
    const line = h('li', { class: `app-log-line level-${/^[a-z]{1,16}$/.test(level) ? level : 'info'}` },
      h('span', { class: 'app-log-level' }, level.slice(0, 16)), ' ', text.slice(0, MAX_LOG_LINE));
    this.logList.append(line);
    while (this.logList.childElementCount > MAX_LOG_LINES) this.logList.firstElementChild.remove();
    this.logTotal = (this.logTotal ?? 0) + 1;
    this.logCount.textContent = this.logTotal > MAX_LOG_LINES ? `(newest ${MAX_LOG_LINES} of ${this.logTotal})` : `(${this.logTotal})`;
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
    this.capabilitiesLoad = (this.entryId && this.sessionId ? loadCapabilities(this.rec.serverName) : Promise.resolve(NO_CAPABILITIES))
      .then((c) => { this.capabilities = c; });
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

  deny(id, reason) {
    this.log('warning', `refused: ${reason}`);
    this.replyError(id, DENIED_CODE, `denied by host policy: ${reason}`);
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
    // has said it is initialized (§11.4): earlier requests (the official
    // SDK lets an App call a tool before its handshake is done) wait, a
    // few of them, and are answered once it is.
    if (!this.initialized) {
      if (this.early.length < MAX_EARLY_REQUESTS) this.early.push([id, method, params]);
      else this.earlyDropped = true;
      return;
    }
    switch (method) {
      case 'ping':
        this.reply(id, {});
        return;
      case 'ui/request-display-mode':
        this.requestDisplayMode(id, params).catch(() => this.reply(id, { mode: this.chrome.mode }));
        return;
      case 'ui/update-model-context':
        this.updateModelContext(id, params).catch(() => this.replyError(id, INTERNAL_ERROR, 'the update failed'));
        return;
      case 'ui/download-file':
        this.downloadFile(id, params).catch(() => this.reply(id, { isError: true }));
        return;
      case 'resources/read':
        this.readResource(id, params).catch(() => this.replyError(id, INTERNAL_ERROR, 'the read failed'));
        return;
      case 'sampling/createMessage':
        this.log('warning', 'refused sampling/createMessage: mcphost has no model to sample from');
        this.replyError(id, -32601, 'Method not found: sampling/createMessage (mcphost has no model to sample from)');
        return;
      case 'tools/call':
        this.callTool(id, params).catch(() => this.replyError(id, INTERNAL_ERROR, 'the call failed'));
        return;
      case 'ui/open-link':
        this.openLink(id, params).catch(() => this.reply(id, { isError: true }));
        return;
      case 'ui/message':
        this.sendMessage(id, params).catch(() => this.reply(id, { isError: true }));
        return;
      default:
        this.replyError(id, -32601, `Method not found: ${method}`);
    }
  }

  // appRequest sends one of the App's requests to the API with the page's
  // token, bound to this mount (teardown aborts it).
  appRequest(method, path, body) {
    return api(method, `/sessions/${seg(this.sessionId)}${path}`, { ...body, appEntryId: this.entryId }, { signal: this.aborter.signal });
  }

  // answerApiError turns a refusal of the API into the App's answer: a
  // denial, invalid params, or fallback(message) for anything else.
  answerApiError(id, err, fallback) {
    if (this.closed) return;
    if (err instanceof ApiError && err.status === 403) {
      this.log('warning', `refused: ${err.message}`);
      this.replyError(id, DENIED_CODE, err.message);
    }
    else if (err instanceof ApiError && (err.status === 400 || err.status === 404)) this.replyError(id, INVALID_PARAMS, err.message);
    else fallback(err instanceof ApiError ? err.message : 'the request failed');
  }

  // tools/call: a tool of the App's own server, through POST …/calls with
  // origin "app"; the result goes to the App only.
  async callTool(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.toolCalls) {
      this.deny(id, `the Apps of server "${server}" may not call tools (app_tool_calls is off)`);
      return;
    }
    if (!isStr(params.name) || params.name === '' || params.name.length > MAX_TOOL_NAME) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: name must be a tool name');
      return;
    }
    if (params.arguments !== undefined && !isPlainObject(params.arguments)) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: arguments must be an object');
      return;
    }
    let entry;
    try {
      entry = await this.appRequest('POST', '/calls', { server, tool: params.name, arguments: params.arguments ?? {}, origin: 'app' });
    } catch (err) {
      this.answerApiError(id, err, (msg) => this.replyError(id, INTERNAL_ERROR, msg));
      return;
    }
    if (this.closed) return;
    if (isPlainObject(entry) && (entry.status === 'ok' || entry.status === 'tool_error') && isPlainObject(entry.result)) {
      this.reply(id, entry.result);
      return;
    }
    const why = isPlainObject(entry) && isStr(entry.error) && entry.error ? entry.error : 'the call failed';
    this.replyError(id, INTERNAL_ERROR, why.slice(0, MAX_REASON_LENGTH * 5));
  }

  // resources/read: a resource of the App's own server, read by the daemon
  // (which sends it to that server only, whatever the URI says).
  async readResource(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.resources) {
      this.deny(id, `the Apps of server "${server}" may not read its resources (app_resources is off)`);
      return;
    }
    if (!isStr(params.uri) || params.uri === '' || params.uri.length > MAX_LINK_LENGTH) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: uri must be a resource URI');
      return;
    }
    let res;
    try {
      res = await this.appRequest('POST', '/app-resources', { uri: params.uri });
    } catch (err) {
      this.answerApiError(id, err, (msg) => this.replyError(id, INTERNAL_ERROR, msg));
      return;
    }
    if (!this.closed) this.reply(id, res);
  }

  // ui/update-model-context: kept by the daemon with the App's entry
  // (replacing the last one; text blocks and structuredContent, 64 KiB) and
  // shown under the entry as the App's, never as the user's words.
  async updateModelContext(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.modelContext) {
      this.deny(id, `the Apps of server "${server}" may not give context for the model (app_model_context is off)`);
      return;
    }
    const body = {};
    if (params.content !== undefined) body.content = params.content;
    if (params.structuredContent !== undefined) body.structuredContent = params.structuredContent;
    let kept;
    try {
      kept = await this.appRequest('POST', '/app-context', body);
    } catch (err) {
      this.answerApiError(id, err, (msg) => this.replyError(id, INTERNAL_ERROR, msg));
      return;
    }
    if (this.closed) return;
    this.showModelContext(kept?.context);
    this.reply(id, {});
  }

  // showModelContext shows the context the App gave (as text) under its
  // entry, replacing the last one.
  showModelContext(c) {
    if (!isPlainObject(c)) return;
    const texts = Array.isArray(c.content) ? c.content.filter((b) => isPlainObject(b) && isStr(b.text)).map((b) => b.text) : [];
    let text = texts.join('\n');
    if (isPlainObject(c.structuredContent)) {
      try {
        text += (text ? '\n' : '') + JSON.stringify(c.structuredContent, null, 2);
      } catch { /* not shown */ }
    }
    if (text.length > 4000) text = `${text.slice(0, 4000)}…`;
    this.contextPane?.remove();
    this.contextPane = h('details', { class: 'app-context', testid: 'app-context' },
      h('summary', {}, 'Context the App gave ', h('span', { class: 'muted' }, `(from the ${this.rec.serverName || 'unknown'} App, for the model)`)),
      h('pre', { class: 'content-text', testid: 'app-context-text' }, text || '(empty)'));
    this.slot.append(this.contextPane);
  }

  // loadModelContext shows what the App of a stored entry gave before.
  async loadModelContext() {
    if (!this.entryId || !this.sessionId || !this.capabilities.modelContext) return;
    try {
      const r = await api('GET', `/sessions/${seg(this.sessionId)}/app-context?entry=${encodeURIComponent(this.entryId)}`, undefined, { signal: this.aborter.signal });
      if (!this.closed) this.showModelContext(r?.context);
    } catch { /* none given */ }
  }

  // ui/download-file: embedded resources (text or base64 blob) and
  // resource_links (fetched through the App's server by the daemon, never
  // from the App's frame), at most 8 files and MAX_DOWNLOAD_BYTES together,
  // each under a sanitised name the daemon's App gate agreed to; saved only
  // after the user confirms. {isError: true} when refused or cancelled.
  async downloadFile(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.downloads) {
      this.deny(id, `the Apps of server "${server}" may not offer downloads (app_downloads is off)`);
      return;
    }
    const items = params.contents;
    if (!Array.isArray(items) || items.length === 0 || items.length > 8) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: contents must hold 1 to 8 resources');
      return;
    }
    const files = [];
    let total = 0;
    const refuse = (why) => {
      this.log('warning', `refused ui/download-file: ${why}`);
      this.reply(id, { isError: true });
    };
    for (const it of items) {
      let bytes;
      let name;
      let mimeType;
      if (isPlainObject(it) && it.type === 'resource' && isPlainObject(it.resource) && isStr(it.resource.uri)) {
        const r = it.resource;
        name = r.uri;
        mimeType = isStr(r.mimeType) ? r.mimeType : '';
        if (isStr(r.text)) bytes = new TextEncoder().encode(r.text);
        else if (isStr(r.blob)) {
          if (r.blob.length > MAX_DOWNLOAD_BYTES * 1.4) return refuse(`larger than ${MAX_DOWNLOAD_BYTES} bytes`);
          try {
            bytes = Uint8Array.from(atob(r.blob), (c) => c.charCodeAt(0));
          } catch {
            return refuse('a blob is not valid base64');
          }
        }
      } else if (isPlainObject(it) && it.type === 'resource_link' && isStr(it.uri)) {
        name = isStr(it.name) && it.name ? it.name : it.uri;
        mimeType = isStr(it.mimeType) ? it.mimeType : '';
        let res;
        try {
          res = await this.appRequest('POST', '/app-resources', { uri: it.uri, purpose: 'download' });
        } catch (err) {
          return refuse(err instanceof ApiError ? err.message : 'the resource could not be read');
        }
        if (this.closed) return;
        const c = Array.isArray(res?.contents) ? res.contents.find((x) => isPlainObject(x) && x.uri === it.uri) ?? res.contents[0] : null;
        if (isPlainObject(c) && isStr(c.text)) bytes = new TextEncoder().encode(c.text);
        else if (isPlainObject(c) && isStr(c.blob)) {
          try {
            bytes = Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0));
          } catch {
            return refuse('the resource is not valid base64');
          }
        }
      }
      if (!bytes) return refuse('each item must be an embedded resource with text or blob, or a resource_link');
      total += bytes.length;
      if (total > MAX_DOWNLOAD_BYTES) return refuse(`larger than ${MAX_DOWNLOAD_BYTES} bytes`);
      files.push({ name: safeFileName(name), size: bytes.length, mimeType: mimeType.slice(0, 100), bytes });
    }
    for (const f of files) {
      try {
        await this.appRequest('POST', '/app-requests', { kind: 'ui/download-file', detail: f.name });
      } catch (err) {
        return refuse(err instanceof ApiError ? err.message : 'the request failed');
      }
    }
    if (this.closed) return;
    const ok = await confirmDownload(server, files, this.aborter.signal);
    if (this.closed) return;
    if (!ok) {
      this.reply(id, { isError: true });
      return;
    }
    for (const f of files) saveFile(f.name, f.bytes);
    this.reply(id, {});
  }

  // ui/open-link: checked by the daemon, then shown to the user, who must
  // confirm; opened in a new tab with noopener and noreferrer.
  async openLink(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.openLinks) {
      this.deny(id, `the Apps of server "${server}" may not open links (app_open_links is off)`);
      return;
    }
    if (!isStr(params.url) || params.url.length > MAX_LINK_LENGTH) {
      this.reply(id, { isError: true });
      return;
    }
    let href;
    try {
      const u = new URL(params.url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      href = u.href;
    } catch {
      this.reply(id, { isError: true });
      return;
    }
    if (linkPrompt) {
      this.reply(id, { isError: true }); // one prompt at a time
      return;
    }
    linkPrompt = this;
    try {
      let checked;
      try {
        checked = await this.appRequest('POST', '/app-links', { url: href });
      } catch (err) {
        this.answerApiError(id, err, () => this.reply(id, { isError: true }));
        return;
      }
      if (this.closed) return;
      if (!isPlainObject(checked) || !isStr(checked.url)) {
        this.reply(id, { isError: true });
        return;
      }
      const shown = new URL(checked.url).href;
      const ok = await confirmLink(server, shown, this.aborter.signal);
      if (this.closed) return;
      if (!ok) {
        this.reply(id, { isError: true });
        return;
      }
      window.open(shown, '_blank', 'noopener,noreferrer');
      this.reply(id, {});
    } finally {
      linkPrompt = null;
    }
  }

  // ui/message: recorded by the daemon as an App message entry (never as
  // the user's words); the entry reaches the transcript through the events.
  async sendMessage(id, params) {
    const server = this.rec.serverName;
    if (!this.capabilities.messages) {
      this.deny(id, `the Apps of server "${server}" may not add messages (app_messages is off)`);
      return;
    }
    if (!Array.isArray(params.content)) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: content must be a list of text blocks');
      return;
    }
    const body = { content: params.content };
    if (params.role !== undefined) body.role = params.role;
    try {
      await this.appRequest('POST', '/app-messages', body);
    } catch (err) {
      this.answerApiError(id, err, () => this.reply(id, { isError: true }));
      return;
    }
    if (!this.closed) this.reply(id, {});
  }

  // ui/request-display-mode: inline always; fullscreen and pip only with
  // the server's app_display_modes switch, after the daemon's App gate
  // agreed, at most MODE_CHANGES per MODE_WINDOW_MS, and not right after
  // the user left a mode. The answer is always the mode in effect.
  async requestDisplayMode(id, params) {
    const mode = params.mode;
    if (!DISPLAY_MODES.includes(mode)) {
      this.replyError(id, INVALID_PARAMS, 'Invalid params: mode must be "inline", "fullscreen" or "pip"');
      return;
    }
    if (mode === this.chrome.mode) {
      this.reply(id, { mode });
      return;
    }
    if (mode === 'inline') {
      this.setMode('inline');
      this.reply(id, { mode: 'inline' });
      return;
    }
    const server = this.rec.serverName;
    if (!this.capabilities.displayModes) {
      this.log('warning', `refused ${mode}: the Apps of server "${server}" may not leave the inline frame (app_display_modes is off)`);
      this.reply(id, { mode: this.chrome.mode });
      return;
    }
    const now = Date.now();
    this.modeTimes = this.modeTimes.filter((t) => now - t < MODE_WINDOW_MS);
    if (this.modeBusy || now < this.modeCooldownUntil || this.modeTimes.length >= MODE_CHANGES) {
      this.reply(id, { mode: this.chrome.mode }); // too many, too soon: stays
      return;
    }
    this.modeTimes.push(now);
    this.modeBusy = true;
    try {
      await this.appRequest('POST', '/app-requests', { kind: 'ui/request-display-mode', detail: mode });
    } catch (err) {
      if (!this.closed) {
        this.log('warning', `refused ${mode}: ${err instanceof ApiError ? err.message : 'the request failed'}`);
        this.reply(id, { mode: this.chrome.mode });
      }
      return;
    } finally {
      this.modeBusy = false;
    }
    if (this.closed) return;
    this.setMode(mode);
    this.reply(id, { mode: this.chrome.mode });
  }

  setMode(mode) {
    this.chrome.set(mode);
    this.slot.dataset.displayMode = this.chrome.mode;
    this.contextChanged({ displayMode: this.chrome.mode, containerDimensions: this.containerDimensions() });
  }

  // The user closed fullscreen or picture-in-picture: the App is told, and
  // may not switch again at once.
  onUserExitMode() {
    this.modeCooldownUntil = Date.now() + MODE_COOLDOWN_MS;
    this.slot.dataset.displayMode = 'inline';
    this.contextChanged({ displayMode: 'inline', containerDimensions: this.containerDimensions() });
  }

  // listAppTools asks an App that declared tools for them and lists them
  // under its entry, or says why they are not offered.
  async listAppTools() {
    if (!isPlainObject(this.appCapabilities.tools)) return;
    if (!this.toolsPanel) this.toolsPanel = new AppToolsPanel(this.slot, this.rec.serverName, (name, args) => this.callAppTool(name, args));
    if (!this.capabilities.tools) {
      this.toolsPanel.show({ tools: [], skipped: 0 });
      this.toolsPanel.note.hidden = false;
      this.toolsPanel.note.textContent = `This App offers tools, but the Apps of server "${this.rec.serverName}" may not offer tools (app_tools is off).`;
      return;
    }
    let r;
    try {
      r = await this.request('tools/list', {}, appToolTimeout());
    } catch (err) {
      if (!this.closed) this.log('warning', `the App's tools/list failed: ${err.message}`);
      return;
    }
    if (!this.closed) this.toolsPanel.show(checkAppTools(r));
  }

  // callAppTool: the user calls one of the App's tools; the daemon's App
  // gate decides, then the App runs it and answers within
  // APP_TOOL_TIMEOUT_MS.
  async callAppTool(name, args) {
    try {
      await this.appRequest('POST', '/app-requests', { kind: 'app-tools/call', detail: name });
    } catch (err) {
      throw new Error(err instanceof ApiError ? err.message : 'the request failed');
    }
    if (this.closed) throw new Error('the App is gone');
    return this.request('tools/call', { name, arguments: args }, appToolTimeout());
  }

  async answerInitialize(id, params) {
    if (!this.proxyReady) return;
    if (isPlainObject(params.appCapabilities)) this.appCapabilities = params.appCapabilities;
    if (!isStr(params.protocolVersion)) {
      this.replyError(id, -32602, 'Invalid params: protocolVersion must be a string');
      return;
    }
    if (!hostVersion) await Promise.race([loadHostVersion(), sleep(1000)]);
    await Promise.race([this.capabilitiesLoad, sleep(2000)]);
    if (this.closed) return;
    const csp = this.rec.csp;
    // Only what this server's Apps may ask for is advertised (§12).
    const hostCapabilities = { logging: {}, sandbox: csp ? { csp } : {} };
    if (this.capabilities.toolCalls) hostCapabilities.serverTools = {};
    if (this.capabilities.openLinks) hostCapabilities.openLinks = {};
    if (this.capabilities.messages) hostCapabilities.message = {};
    if (this.capabilities.resources) hostCapabilities.serverResources = {};
    if (this.capabilities.downloads) hostCapabilities.downloadFile = {};
    if (this.capabilities.modelContext) hostCapabilities.updateModelContext = { text: {} };
    const result = {
      protocolVersion: KNOWN_PROTOCOL_VERSIONS.has(params.protocolVersion) ? params.protocolVersion : APP_PROTOCOL_VERSION,
      hostInfo: { name: 'mcphost', version: hostVersion || 'unknown' },
      hostCapabilities,
      hostContext: this.hostContext(),
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
        this.onLogMessage(params);
        return;
      case APP_ERROR_METHOD:
        this.onAppError(params);
        return;
      case 'notifications/tools/list_changed':
        if (this.initialized && this.toolsPanel) this.listAppTools().catch(() => {});
        return;
      case 'ui/notifications/request-teardown':
        this.onRequestTeardown();
        return;
      default:
        // Other notifications are ignored.
    }
  }

  // notifications/message: kept in the entry's log pane (and, in test
  // mode, in the page's log).
  onLogMessage(params) {
    if (!isStr(params.level)) return;
    if (appLogEnabled()) appendAppLog({ server: this.rec.serverName, level: params.level, data: params.data ?? null });
    let text;
    try {
      text = isStr(params.data) ? params.data : JSON.stringify(params.data ?? null);
    } catch {
      text = '(unprintable)';
    }
    const logger = isStr(params.logger) ? `${params.logger.slice(0, 64)}: ` : '';
    this.log(params.level, logger + (text ?? ''));
  }

  // onAppError: the App threw or rejected a promise without handling it.
  // Before it is initialized that means it will not start: show the error
  // now. Afterwards it goes to the App's log.
  onAppError(params) {
    const where = isStr(params.where) ? params.where.slice(0, 40) : 'error';
    const message = isStr(params.message) ? params.message.slice(0, MAX_APP_ERROR) : 'unknown error';
    if (!this.initialized) {
      this.fail(`The App failed to start (${where}): ${message}`);
      return;
    }
    this.log('error', `${where}: ${message}`);
  }

  onProxyReady() {
    if (this.proxyReady) return;
    this.proxyReady = true;
    this.cancelTimer(this.handshakeTimer);
    this.notify('ui/notifications/sandbox-resource-ready', { html: withPreamble(this.rec.html) });
    this.initTimer = this.later(initTimeout(), () => this.fail('The App did not start in time.'));
  }

  onInitialized() {
    if (!this.initializeAnswered || this.initialized) return;
    this.initialized = true;
    this.cancelTimer(this.initTimer);
    if (this.isCurrent() && !this.teardownPromise) setSlotState(this.slot, 'ready');
    this.notify('ui/notifications/tool-input', { arguments: this.rec.toolArguments });
    this.notify('ui/notifications/tool-result', this.rec.toolResult);
    this.watchSize();
    const early = this.early;
    this.early = [];
    for (const [id, method, params] of early) this.onRequest(id, method, params);
    this.listAppTools().catch(() => {});
    this.loadModelContext().catch(() => {});
    if (this.earlyDropped) this.log('warning', `requests the App made before it was initialized beyond the first ${MAX_EARLY_REQUESTS} were dropped`);
  }

  onSizeChanged(params) {
    const hgt = params.height;
    if (typeof hgt !== 'number' || !Number.isFinite(hgt) || hgt <= 0) return;
    const px = Math.round(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, hgt)));
    this.iframe.style.height = `${px}px`;
    this.slot.dataset.appHeight = String(px);
  }

  themeChanged(theme) {
    this.contextChanged({ theme });
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
    this.aborter.abort(); // running App calls are cancelled, prompts closed
    live.delete(this);
    this.resizeObserver?.disconnect();
    this.chrome.close();
    this.toolsPanel?.remove();
    this.contextPane?.remove();
    window.removeEventListener('message', this.onMessage);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const p of this.pending.values()) p.reject(new Error('closed'));
    this.pending.clear();
    this.iframe.removeAttribute('src');
    this.iframe.remove();
    this.wrap.remove();
  }

  // ui/notifications/request-teardown: the App asks to be closed. The host
  // tears it down as it would on unmount (ui/resource-teardown, then the
  // frame goes) and shows the entry's text in its place; only once, and
  // only an App that has started (a request before that is ignored).
  onRequestTeardown() {
    if (!this.initialized || this.teardownPromise || this.closed) return;
    this.teardown('app-request').then(() => {
      if (this.isCurrent()) showFallback(this.slot, this.rec, 'The App closed itself.');
    });
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
