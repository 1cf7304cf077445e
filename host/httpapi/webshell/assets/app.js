// mcphost WebShell: start-up, state and wiring. See docs/api.md for the API.
//
// Rules this file keeps:
//  - the token lives only in sessionStorage and the Authorization header;
//  - nothing from the API or a server reaches the DOM as markup;
//  - no inline script or style (the page runs under a strict CSP).

import { h, clear, isPlainObject, pretty, formatTime, formatRelative, newCallId } from './dom.js';
import { api, auth, prefs, authHeaders, seg, signIn, CREDENTIAL_PREFIX, AuthError, NetworkError, ApiError } from './api.js';
import { readEventStream } from './sse.js';
import { compileSchema, buildForm, defaultArguments } from './schemaform.js';
import { entryCard, runningCard } from './render.js';
import { teardownDisplays } from './display.js';
import { forgetAppCapabilities } from './appbridge.js';
import { approvalCard, approvalEndText, approvalResultCard, approvalRole } from './approvals.js';
import { elicitations } from './elicit.js';
import { serverDetails, sandboxText, whenText } from './servercard.js';
import { showResource, showPrompt } from './offerings.js';
import { signInControls, takeSignInFromHash } from './signin.js';
import { createToolSearch, searchPath } from './toolsearch.js';

const $ = (id) => document.getElementById(id);

const state = {
  view: '',
  me: null,
  servers: new Map(), // name -> ServerStatus
  tools: [], // Tool, sorted
  toolsByKey: new Map(), // "server.tool" -> Tool
  selectedKey: '',
  forms: new Map(), // "server.tool" -> tool panel controller
  sessions: [], // Session, most recently updated first
  sessionId: '',
  entries: new Map(), // entry id -> {entry, el, json}
  entriesGen: 0,
  loadingEntries: false,
  running: new Map(), // callId -> run
  approvals: new Map(), // approval id -> {a, card}
  answered: new Map(), // call id -> {card, timer}: answered approvals of calls not in the selected session
  finished: new Set(), // callIds whose entry (or failure) has been seen
  eventsConnectedOnce: false,
};

const keyOf = (t) => `${t.server}.${t.name}`;
const str = (v) => (typeof v === 'string' ? v : '');
const classSafe = (s) => (/^[a-z_]{1,32}$/.test(s) ? s : 'unknown');

function backoff(attempt) {
  const base = Math.min(30000, 1000 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

// ------------------------------------------------------------------ views

const VIEWS = ['login-page', 'token-error-page', 'unreachable-page', 'app'];

function showView(id) {
  for (const v of VIEWS) $(v).hidden = v !== id;
  state.view = id;
}

function focusTokenInput(pageId) {
  const input = $(pageId).querySelector('input[name=token]');
  input.value = '';
  input.removeAttribute('aria-invalid');
  const err = $(pageId).querySelector('[data-role=token-form-error]');
  err.hidden = true;
  err.textContent = '';
  input.focus();
}

function showLogin() {
  showView('login-page');
  focusTokenInput('login-page');
}

// ------------------------------------------------------------------ toasts

function toast(message, kind = 'info') {
  const box = $('toasts');
  const t = h('div', { class: `toast toast-${kind}` },
    h('span', { class: 'toast-text' }, message),
    h('button', { type: 'button', class: 'ghost small', 'aria-label': 'Dismiss' }, '×'));
  t.querySelector('button').addEventListener('click', () => t.remove());
  box.append(t);
  while (box.children.length > 4) box.firstElementChild.remove();
  setTimeout(() => t.remove(), kind === 'error' ? 12000 : 6000);
}

function reportError(err, what) {
  if (err instanceof AuthError) {
    handleAuthError();
    return;
  }
  if (err?.name === 'AbortError') return;
  if (err instanceof NetworkError) return; // the event stream notices and shows the page
  toast(`${what}: ${err?.message ?? err}`, 'error');
}

// ------------------------------------------------------------------ token

// A header value must be visible ASCII; anything else makes fetch throw,
// which would look like a network failure.
const validToken = (t) => /^[\x21-\x7e]{1,4096}$/.test(t);

// tokenFromFragment reads "token=…" from a URL fragment without
// URLSearchParams, which would turn a "+" in the token into a space.
function tokenFromFragment(fragment) {
  for (const part of fragment.split('&')) {
    const eq = part.indexOf('=');
    if ((eq < 0 ? part : part.slice(0, eq)) !== 'token') continue;
    const raw = eq < 0 ? '' : part.slice(eq + 1);
    try {
      return decodeURIComponent(raw).trim();
    } catch {
      return raw.trim();
    }
  }
  return null;
}

function takeTokenFromHash() {
  if (!location.hash || location.hash.length < 2) return;
  const token = tokenFromFragment(location.hash.slice(1));
  if (token === null) return;
  // Replace the current history entry so the token is neither in the
  // address bar nor reachable with Back.
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  if (token) auth.set(token);
}

function parseTokenInput(raw) {
  let s = raw.trim();
  const hash = s.indexOf('#');
  const fromLink = tokenFromFragment(hash >= 0 ? s.slice(hash + 1) : s);
  if (fromLink !== null) s = fromLink;
  return s.replace(/^Bearer\s+/i, '');
}

function onTokenFormSubmit(ev) {
  ev.preventDefault();
  const form = ev.currentTarget;
  const input = form.querySelector('input[name=token]');
  const err = form.querySelector('[data-role=token-form-error]');
  const token = parseTokenInput(input.value);
  if (!validToken(token)) {
    err.textContent = 'That does not look like a token. Paste the token, or the whole link mcphost serve printed.';
    err.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.value = '';
  err.hidden = true;
  auth.set(token);
  tokenFromForm = true;
  start();
}

// tokenFromForm is set while a pasted token is being tried, so that a
// refusal says so on the page the person is looking at.
let tokenFromForm = false;

// ------------------------------------------------------------------ start, sign-in, sign-out

let startGen = 0;

async function start() {
  const gen = ++startGen;
  stopEvents();
  const token = auth.get();
  if (!token) {
    hideUnreachable();
    showLogin();
    return;
  }
  if (!validToken(token)) {
    handleAuthError();
    return;
  }
  let me;
  try {
    if (!token.startsWith(CREDENTIAL_PREFIX)) {
      // A token from the sign-in link or the form: exchange it, and keep
      // only the credential.
      const credential = await signIn(token);
      if (gen !== startGen) return;
      auth.set(credential);
    }
    me = await api('GET', '/me');
  } catch (err) {
    if (gen !== startGen) return;
    if (err instanceof AuthError) handleAuthError(err.reason);
    else if (err instanceof NetworkError) showUnreachable(start, '');
    else showUnreachable(start, `mcphost answered: ${err.message}`);
    return;
  }
  if (gen !== startGen) return;
  hideUnreachable();
  tokenFromForm = false;
  state.me = isPlainObject(me) ? me : {};
  renderMe();
  if (!state.sessionId) state.sessionId = prefs.get('session');
  showView('app');
  renderSessionSelection();
  state.eventsConnectedOnce = false;
  connectEvents();
  refreshAll();
}

// handleAuthError shows the token page: the credential was refused, or the
// daemon gave a reason (reason) not to sign this principal in.
function handleAuthError(reason = '') {
  startGen++;
  stopEvents();
  hideUnreachable();
  auth.clear();
  resetApp();
  showView('token-error-page');
  focusTokenInput('token-error-page');
  const err = $('token-error-page').querySelector('[data-role=token-form-error]');
  if (reason) {
    err.textContent = `mcphost did not sign you in: ${reason}`;
    err.hidden = false;
  } else if (tokenFromForm) {
    err.textContent = 'mcphost did not accept the token you pasted either.';
    err.hidden = false;
  }
  tokenFromForm = false;
}

function signOut() {
  startGen++;
  tokenFromForm = false;
  stopEvents();
  hideUnreachable();
  auth.clear();
  prefs.set('session', '');
  prefs.set('tool', '');
  resetApp();
  showLogin();
}

function resetApp() {
  teardownDisplays($('transcript'), 'sign-out');
  state.me = null;
  state.servers.clear();
  state.tools = [];
  state.toolsByKey.clear();
  state.selectedKey = '';
  state.forms.clear();
  state.sessions = [];
  state.sessionId = '';
  state.entries.clear();
  state.entriesGen++;
  state.running.clear();
  state.finished.clear();
  questions.reset();
  clear($('entries'));
  clear($('running-list'));
  clear($('server-list'));
  clear($('session-list'));
  clear($('tool-list'));
  $('principal').textContent = '';
  $('tool-search').value = '';
  toolSearch.ctl.reset();
  toolSearch.hits = null;
  toolSearch.query = '';
  showToolPlaceholder();
  renderTranscriptHead();
}

// ------------------------------------------------------------------ unreachable page

const unreach = { attempt: 0, timer: 0, ticker: 0, due: 0, retry: null };

function showUnreachable(retry, detail) {
  clearTimeout(unreach.timer);
  clearInterval(unreach.ticker);
  unreach.retry = retry;
  const delay = backoff(unreach.attempt);
  unreach.attempt += 1;
  unreach.due = Date.now() + delay;
  $('unreachable-detail').textContent = detail || '';
  const wasShown = state.view === 'unreachable-page';
  showView('unreachable-page');
  const tick = () => {
    const s = Math.max(0, Math.ceil((unreach.due - Date.now()) / 1000));
    $('unreachable-status').textContent = `Trying again in ${s} s (attempt ${unreach.attempt}).`;
  };
  tick();
  unreach.ticker = setInterval(tick, 1000);
  unreach.timer = setTimeout(retryNow, delay);
  $('unreachable-retry').disabled = false;
  if (!wasShown) $('unreachable-retry').focus();
}

function retryNow() {
  clearTimeout(unreach.timer);
  clearInterval(unreach.ticker);
  const retry = unreach.retry;
  if (!retry) return;
  $('unreachable-status').textContent = 'Connecting…';
  $('unreachable-retry').disabled = true;
  retry();
}

function hideUnreachable() {
  clearTimeout(unreach.timer);
  clearInterval(unreach.ticker);
  unreach.attempt = 0;
  unreach.retry = null;
  $('unreachable-retry').disabled = false;
}

// ------------------------------------------------------------------ events

const ev = { gen: 0, ctrl: null, timer: 0, watchdog: 0, drops: 0, lastActivity: 0 };
const IDLE_LIMIT_MS = 45000; // the daemon pings every 15 s

function setLive(kind, text) {
  const el = $('live');
  el.dataset.state = kind;
  const labels = { live: 'Live', connecting: 'Connecting…', offline: 'Offline' };
  $('live-text').textContent = text || labels[kind] || kind;
}

function stopEvents() {
  ev.gen += 1;
  ev.ctrl?.abort();
  ev.ctrl = null;
  clearTimeout(ev.timer);
  clearInterval(ev.watchdog);
}

function scheduleReconnect(gen) {
  clearTimeout(ev.timer);
  ev.timer = setTimeout(() => {
    if (gen === ev.gen) connectEvents();
  }, backoff(ev.drops));
  ev.drops += 1;
}

function connectEvents() {
  stopEvents();
  const gen = ev.gen;
  const ctrl = new AbortController();
  ev.ctrl = ctrl;
  setLive('connecting', state.eventsConnectedOnce ? 'Reconnecting…' : 'Connecting…');
  (async () => {
    let res;
    try {
      res = await fetch('/api/v1/events', {
        headers: authHeaders({ Accept: 'text/event-stream' }),
        signal: ctrl.signal,
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      if (gen !== ev.gen) return;
      setLive('offline');
      showUnreachable(connectEvents, 'The live event stream could not connect.');
      return;
    }
    if (gen !== ev.gen) {
      ctrl.abort();
      return;
    }
    if (res.status === 401) {
      handleAuthError();
      return;
    }
    const fromUnreachable = state.view === 'unreachable-page';
    if (fromUnreachable) {
      hideUnreachable();
      showView('app');
    }
    if (!res.ok || !res.body) {
      res.body?.cancel().catch(() => {});
      setLive('offline', `Live updates unavailable (HTTP ${res.status})`);
      if (fromUnreachable) refreshAll();
      scheduleReconnect(gen);
      return;
    }
    const connectedAt = Date.now();
    setLive('live');
    if (state.eventsConnectedOnce || fromUnreachable) refreshAll();
    state.eventsConnectedOnce = true;
    ev.lastActivity = Date.now();
    ev.watchdog = setInterval(() => {
      if (Date.now() - ev.lastActivity > IDLE_LIMIT_MS) ctrl.abort();
    }, 5000);
    try {
      await readEventStream(res,
        (e) => { if (gen === ev.gen) handleEvent(e); },
        () => { ev.lastActivity = Date.now(); });
    } catch {
      /* dropped or aborted: reconnect below */
    }
    clearInterval(ev.watchdog);
    if (gen !== ev.gen) return;
    if (Date.now() - connectedAt > 10000) ev.drops = 0;
    setLive('connecting', 'Reconnecting…');
    scheduleReconnect(gen);
  })();
}

function handleEvent({ event, data }) {
  let d;
  try {
    d = JSON.parse(data);
  } catch {
    return;
  }
  if (!isPlainObject(d)) return;
  switch (event) {
    case 'server': onServerEvent(d); break;
    case 'call_started': onCallStarted(d); break;
    case 'progress': onProgress(d); break;
    case 'entry': onEntryEvent(d); break;
    case 'approval': onApproval(d); break;
    case 'approval_done': onApprovalDone(d); break;
    case 'elicitation': questions.onEvent(d); break;
    case 'elicitation_done': questions.onDone(d); break;
    case 'config': forgetAppCapabilities(); loadServers(); loadTools(); break; // reloaded: servers may be gone or new, their App settings changed
    default: break;
  }
}

async function refreshAll() {
  await Promise.all([loadServers(), loadTools(), loadSessions(), loadApprovals(), questions.load()]);
  if (state.sessionId) await loadEntries(state.sessionId);
}

// ------------------------------------------------------------------ header

function renderMe() {
  const name = str(state.me?.name) || 'unknown';
  const groups = Array.isArray(state.me?.groups) ? state.me.groups.filter((g) => typeof g === 'string') : [];
  const el = $('principal');
  clear(el).append(h('span', { class: 'principal-label' }, 'Signed in as '), h('strong', {}, name));
  el.title = groups.length ? `groups: ${groups.join(', ')}` : '';
}

// ------------------------------------------------------------------ servers

async function loadServers() {
  try {
    const r = await api('GET', '/servers');
    const list = Array.isArray(r?.servers) ? r.servers : [];
    state.servers = new Map(list.filter((s) => isPlainObject(s) && typeof s.name === 'string').map((s) => [s.name, s]));
    renderServers();
  } catch (err) {
    reportError(err, 'Loading servers');
  }
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// sandboxBadge marks how a stdio server is contained.
function sandboxBadge(s) {
  const { text, kind } = sandboxText(s);
  return text ? h('span', { class: `badge sandbox-${kind}`, testid: `server-sandbox-badge-${s.name}`, title: str(s.sandbox?.summary) || null }, text) : null;
}

function serverItem(s) {
  const status = str(s.status) || 'unknown';
  const cls = classSafe(status);
  const info = isPlainObject(s.serverInfo) ? [str(s.serverInfo.name), str(s.serverInfo.version)].filter(Boolean).join(' ') : '';
  const proto = [str(s.era), str(s.protocolVersion)].filter(Boolean).join(' · ');
  const counts = status === 'ready'
    ? [Number.isFinite(s.tools) ? plural(s.tools, 'tool') : '',
      Number.isFinite(s.prompts) && s.prompts ? plural(s.prompts, 'prompt') : '',
      Number.isFinite(s.resources) && s.resources ? plural(s.resources, 'resource') : ''].filter(Boolean).join(' · ')
    : '';
  const li = h('li', { class: `server status-${cls}`, testid: `server-${s.name}`, 'data-status': status },
    h('div', { class: 'server-row' },
      h('span', { class: 'server-name', title: info || null }, s.name),
      h('span', { class: `badge status-${cls}` }, status),
      sandboxBadge(s)),
    counts ? h('p', { class: 'server-meta muted', title: proto || null }, counts) : null,
    status === 'failed' && str(s.lastError) ? h('p', { class: 'server-error' }, s.lastError) : null,
    whenLine(s),
    signInControls(s, reportError),
    serverDetails(s, {
      admin: state.me?.admin === true,
      onResource: (server, uri, tpl) => openOffering(() => showResource($('tool-panel'), server, uri, tpl, () => state.sessionId)),
      onPrompt: (server, p) => openOffering(() => showPrompt($('tool-panel'), server, p, () => state.sessionId)),
      report: reportError,
      toast,
    }));
  return li;
}

// whenLine is a server card's line about time: how long it has been
// connecting, or when a failed one is tried next. serverTicker keeps the
// lines current while any card has one.
function whenLine(s) {
  const text = whenText(s, Date.now());
  if (!text) return null;
  ensureServerTicker();
  return h('p', { class: 'server-meta muted', testid: `server-when-${s.name}`, 'data-server': s.name }, text);
}

let serverTicker = 0;

function ensureServerTicker() {
  if (serverTicker) return;
  serverTicker = setInterval(() => {
    const lines = document.querySelectorAll('#server-list [data-server]');
    if (lines.length === 0) {
      clearInterval(serverTicker);
      serverTicker = 0;
      return;
    }
    for (const el of lines) {
      const text = whenText(state.servers.get(el.dataset.server), Date.now());
      if (text && el.textContent !== text) el.textContent = text;
    }
  }, 1000);
}

// openOffering shows a server's resource or prompt in the main panel in
// place of the selected tool.
function openOffering(show) {
  state.selectedKey = '';
  prefs.set('tool', '');
  for (const b of $('tool-list').querySelectorAll('.tool-item')) b.removeAttribute('aria-current');
  show();
  if (window.matchMedia('(max-width: 760px)').matches) $('tool-panel').scrollIntoView({ block: 'start', behavior: 'smooth' });
}

function renderServers() {
  const list = $('server-list');
  const servers = [...state.servers.values()].sort((a, b) => a.name.localeCompare(b.name));
  clear(list).append(...servers.map(serverItem));
  const ready = servers.filter((s) => s.status === 'ready').length;
  $('server-count').textContent = servers.length ? `${ready}/${servers.length} ready` : '';
  $('server-empty').hidden = servers.length > 0;
  renderTools();
  updateToolAvailability();
}

let toolsReloadTimer = 0;
function onServerEvent(s) {
  if (typeof s.name !== 'string') return;
  const prev = state.servers.get(s.name);
  state.servers.set(s.name, s);
  renderServers();
  if (!prev || prev.status !== s.status || prev.tools !== s.tools) {
    clearTimeout(toolsReloadTimer);
    toolsReloadTimer = setTimeout(loadTools, 250);
  }
}

// ------------------------------------------------------------------ tools

async function loadTools() {
  try {
    const r = await api('GET', '/tools');
    const list = Array.isArray(r?.tools) ? r.tools : [];
    state.tools = list
      .filter((t) => isPlainObject(t) && typeof t.server === 'string' && typeof t.name === 'string')
      .sort((a, b) => a.server.localeCompare(b.server) || a.name.localeCompare(b.name));
    state.toolsByKey = new Map(state.tools.map((t) => [keyOf(t), t]));
    renderTools();
    // The catalog changed: rank the search box's query again.
    if ($('tool-search').value.trim()) toolSearch.ctl.set($('tool-search').value);
    if (state.selectedKey) {
      const t = state.toolsByKey.get(state.selectedKey);
      if (t) showTool(t);
      updateToolAvailability();
    } else {
      const remembered = prefs.get('tool');
      if (remembered && state.toolsByKey.has(remembered)) selectTool(remembered, false);
    }
  } catch (err) {
    reportError(err, 'Loading tools');
  }
}

function toolTitle(t) {
  return str(t.title) || str(t.annotations?.title) || t.name;
}

// The search box ranks through the daemon (toolsearch.js): the same
// ranker as the gateway's search_tools and `mcphost tools -search`. There
// is no filtering here, not even when the daemon is unreachable: a failed
// search says why and shows nothing, so a list is always the ranker's.
const toolSearch = {
  query: '', // the query whose results are shown ('' : every tool)
  hits: null, // its tools, best first
  total: 0, // how many matched in all
  error: null,
  ctl: createToolSearch({
    search: (q) => api('GET', searchPath(q)),
    show: (r) => {
      toolSearch.query = r.query;
      toolSearch.hits = r.tools === null ? null
        : r.tools.filter((t) => isPlainObject(t) && typeof t.server === 'string' && typeof t.name === 'string');
      toolSearch.total = r.total;
      toolSearch.error = r.error;
      if (r.error instanceof AuthError) {
        reportError(r.error, 'Searching tools');
        return;
      }
      renderTools();
    },
  }),
};

function renderTools() {
  const list = $('tool-list');
  const searching = toolSearch.hits !== null;
  const q = toolSearch.query;
  const shown = searching ? toolSearch.hits : state.tools;
  // A hit the list has not loaded yet (the catalog just changed) can be
  // selected all the same.
  for (const t of shown) if (!state.toolsByKey.has(keyOf(t))) state.toolsByKey.set(keyOf(t), t);
  // Under their server's name; search hits in rank order, so a server
  // heads each run of its hits.
  const groups = [];
  for (const t of shown) {
    const g = groups.at(-1);
    if (g && g[0] === t.server) g[1].push(t);
    else groups.push([t.server, [t]]);
  }
  const hadFocus = list.contains(document.activeElement) ? document.activeElement.dataset.testid : '';
  clear(list);
  for (const [server, tools] of groups) {
    const status = str(state.servers.get(server)?.status);
    list.append(h('section', { class: 'tool-group', 'aria-label': `Tools of ${server}` },
      h('h3', { class: 'tool-group-title' }, server,
        status && status !== 'ready' ? h('span', { class: `badge status-${classSafe(status)}` }, status) : null),
      h('ul', { class: 'tool-items' }, tools.map((t) => {
        const k = keyOf(t);
        const title = toolTitle(t);
        const desc = str(t.description);
        const b = h('button', {
          type: 'button',
          class: 'tool-item',
          testid: `tool-${k}`,
          'aria-current': k === state.selectedKey ? 'true' : null,
          title: desc || null,
        },
        h('span', { class: 'tool-item-title' }, title),
        title !== t.name ? h('code', { class: 'tool-item-name' }, t.name) : null,
        desc ? h('span', { class: 'tool-item-desc' }, desc) : null);
        b.addEventListener('click', () => selectTool(k, true));
        return h('li', {}, b);
      }))));
  }
  if (hadFocus) {
    const again = [...list.querySelectorAll('.tool-item')].find((b) => b.dataset.testid === hadFocus);
    again?.focus();
  }
  list.dataset.search = searching ? q : '';
  const total = state.tools.length;
  $('tool-count').textContent = total ? (searching ? `${toolSearch.total} of ${total}` : String(total)) : '';
  const empty = $('tool-empty');
  if (searching && toolSearch.error) {
    empty.textContent = `Search failed: ${toolSearch.error instanceof NetworkError ? 'the daemon is unreachable' : (toolSearch.error?.message ?? String(toolSearch.error))}`;
    empty.hidden = false;
  } else if (total === 0 && !searching) {
    empty.textContent = 'No tools yet. Tools of servers that are ready show up here.';
    empty.hidden = false;
  } else if (shown.length === 0) {
    empty.textContent = `No tool matches “${q}”.`;
    empty.hidden = false;
  } else {
    empty.hidden = true;
  }
}

function selectTool(k, userAction) {
  const t = state.toolsByKey.get(k);
  if (!t) return;
  state.selectedKey = k;
  prefs.set('tool', k);
  for (const b of $('tool-list').querySelectorAll('.tool-item')) {
    if (b.dataset.testid === `tool-${k}`) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
  showTool(t);
  if (userAction && window.matchMedia('(max-width: 760px)').matches) {
    $('tool-panel').scrollIntoView({ block: 'start', behavior: 'smooth' });
  }
}

function showToolPlaceholder() {
  const panel = $('tool-panel');
  clear(panel).append(h('div', { class: 'tool-placeholder' },
    h('p', {}, 'Select a tool to fill in its arguments and call it.'),
    h('p', { class: 'muted' }, 'Press / to search.')));
}

function showTool(t) {
  const k = keyOf(t);
  const sig = JSON.stringify(t.inputSchema ?? null);
  let ctl = state.forms.get(k);
  if (!ctl || ctl.sig !== sig) {
    ctl = buildToolPanel(t, sig);
    state.forms.set(k, ctl);
  } else {
    ctl.tool = t;
  }
  const panel = $('tool-panel');
  if (panel.firstElementChild !== ctl.el) clear(panel).append(ctl.el);
  ctl.updateTarget();
  ctl.updateAvailability();
}

function updateToolAvailability() {
  const ctl = state.forms.get(state.selectedKey);
  ctl?.updateAvailability();
}

function updateCallTargets() {
  for (const ctl of state.forms.values()) ctl.updateTarget();
}

function annotationBadges(a) {
  if (!isPlainObject(a)) return null;
  const out = [];
  if (a.readOnlyHint === true) out.push(h('span', { class: 'badge badge-muted' }, 'read-only'));
  if (a.destructiveHint === true && a.readOnlyHint !== true) out.push(h('span', { class: 'badge status-failed' }, 'destructive'));
  if (a.idempotentHint === true) out.push(h('span', { class: 'badge badge-muted' }, 'idempotent'));
  if (a.openWorldHint === true) out.push(h('span', { class: 'badge badge-muted' }, 'open world'));
  return out.length ? h('div', { class: 'badges' }, out) : null;
}

function buildToolPanel(tool, sig) {
  const k = keyOf(tool);
  const headingId = `tool-heading-${Math.random().toString(36).slice(2)}`;
  const desc = str(tool.description);
  const ctl = { tool, key: k, sig, raw: false, extra: {}, form: null, compiled: null };

  let reason = '';
  try {
    ctl.compiled = compileSchema(tool.inputSchema);
    ctl.form = buildForm(ctl.compiled);
  } catch (err) {
    reason = err?.message || String(err);
    ctl.compiled = null;
    ctl.form = null;
  }

  const descEl = desc ? h('p', { class: 'tool-desc-full clamped' }, desc) : null;
  let moreBtn = null;
  if (desc && (desc.length > 280 || desc.split('\n').length > 4)) {
    moreBtn = h('button', { type: 'button', class: 'link-button small', 'aria-expanded': 'false' }, 'Show more');
    moreBtn.addEventListener('click', () => {
      const open = descEl.classList.toggle('clamped') === false;
      moreBtn.textContent = open ? 'Show less' : 'Show more';
      moreBtn.setAttribute('aria-expanded', String(open));
    });
  }
  const avail = h('p', { class: 'tool-avail', role: 'note', hidden: true });

  const errorEl = h('div', { class: 'form-error', testid: 'form-error', role: 'alert', hidden: true });
  const notice = h('p', { class: 'form-notice', hidden: true });
  const rawToggle = h('button', { type: 'button', class: 'small toggle', testid: 'raw-json-toggle', 'aria-pressed': 'false' }, 'Raw JSON');
  const rawId = `raw-${Math.random().toString(36).slice(2)}`;
  const rawArea = h('textarea', { id: rawId, class: 'mono raw-json', testid: 'raw-json', rows: 10, spellcheck: 'false', autocomplete: 'off' });
  const rawWrap = h('div', { class: 'raw-wrap', hidden: true },
    h('label', { class: 'field-label', for: rawId }, 'Arguments as JSON'), rawArea);
  const fieldsWrap = h('div', { class: 'fields-wrap' }, ctl.form ? ctl.form.el : null);
  const callBtn = h('button', { type: 'submit', class: 'primary', testid: 'call-button' }, 'Call tool');
  const resetBtn = h('button', { type: 'button', class: 'ghost' }, 'Reset');
  const target = h('span', { class: 'muted call-target' });
  const reqNote = ctl.form && !ctl.form.empty ? h('span', { class: 'muted req-note' }, h('span', { class: 'req' }, '*'), ' required') : null;

  const form = h('form', { class: 'tool-form', testid: 'tool-form', novalidate: true, 'aria-labelledby': headingId, 'data-tool': k },
    h('div', { class: 'form-toolbar' }, h('h3', { class: 'form-toolbar-title' }, 'Arguments'), reqNote, h('span', { class: 'spacer' }), rawToggle),
    notice, fieldsWrap, rawWrap,
    h('div', { class: 'form-footer' }, errorEl, h('div', { class: 'form-actions' }, callBtn, resetBtn, target)));

  ctl.el = h('div', { class: 'tool-view' },
    h('div', { class: 'tool-head' },
      h('div', { class: 'tool-title-row' },
        h('h2', { class: 'tool-heading', id: headingId }, toolTitle(tool)),
        h('code', { class: 'tool-qname' }, k)),
      annotationBadges(tool.annotations),
      descEl, moreBtn, avail),
    form);

  ctl.showError = (message, details = []) => {
    clear(errorEl).append(h('p', {}, message));
    if (details.length > 1) errorEl.append(h('ul', {}, details.slice(0, 12).map((d) => h('li', {}, d))));
    errorEl.hidden = false;
  };
  ctl.clearError = () => {
    clear(errorEl);
    errorEl.hidden = true;
  };
  ctl.showNotice = (message) => {
    notice.textContent = message;
    notice.hidden = !message;
  };

  function fitRaw() {
    rawArea.rows = Math.min(24, Math.max(8, rawArea.value.split('\n').length + 1));
  }

  function setRaw(on) {
    ctl.raw = on;
    rawToggle.setAttribute('aria-pressed', String(on));
    rawWrap.hidden = !on;
    fieldsWrap.hidden = on;
  }

  if (!ctl.form) {
    setRaw(true);
    rawToggle.disabled = true;
    rawToggle.title = 'The form cannot show this schema';
    rawArea.value = pretty(defaultArguments(tool.inputSchema));
    fitRaw();
    ctl.showNotice(`The form cannot show this tool's input schema (${reason}), so its arguments are edited as JSON.`);
  }

  rawToggle.addEventListener('click', () => {
    ctl.clearError();
    if (!ctl.form) return;
    if (!ctl.raw) {
      const { value } = ctl.form.collect(false);
      rawArea.value = pretty({ ...ctl.extra, ...value });
      fitRaw();
      ctl.showNotice('');
      setRaw(true);
      rawArea.focus();
      return;
    }
    let obj;
    try {
      obj = JSON.parse(rawArea.value.trim() || '{}');
    } catch (err) {
      ctl.showError(`The JSON is not valid, so the form cannot take it over: ${err.message}`);
      rawArea.focus();
      return;
    }
    if (!isPlainObject(obj)) {
      ctl.showError('The arguments must be a JSON object.');
      rawArea.focus();
      return;
    }
    const known = ctl.compiled?.known ?? new Set();
    ctl.extra = Object.fromEntries(Object.entries(obj).filter(([name]) => !known.has(name)));
    const unknown = ctl.form.set(obj);
    const dropped = unknown.filter((u) => !Object.hasOwn(ctl.extra, u));
    const kept = Object.keys(ctl.extra);
    const notes = [];
    if (kept.length) notes.push(`Kept ${kept.length === 1 ? 'a key' : 'keys'} the form has no field for (${kept.join(', ')}); ${kept.length === 1 ? 'it is' : 'they are'} sent with the call. Edit ${kept.length === 1 ? 'it' : 'them'} in Raw JSON.`);
    if (dropped.length) notes.push(`Dropped nested keys the form has no field for: ${dropped.join(', ')}.`);
    ctl.showNotice(notes.join(' '));
    setRaw(false);
    ctl.form.focus();
  });

  resetBtn.addEventListener('click', () => {
    state.forms.delete(k);
    showTool(ctl.tool);
    state.forms.get(k)?.el.querySelector('input, select, textarea')?.focus();
  });

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submitCall(ctl);
  });
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit(callBtn);
    }
  });

  ctl.callBtn = callBtn;
  ctl.rawArea = rawArea;
  ctl.updateTarget = () => {
    const s = state.sessions.find((x) => x.id === state.sessionId);
    target.textContent = state.sessionId ? `Runs in ${sessionTitle(s) || 'the selected session'}` : 'Starts a new session';
  };
  ctl.updateAvailability = () => {
    const server = state.servers.get(ctl.tool.server);
    const listed = state.toolsByKey.has(k);
    let text = '';
    if (server && server.status !== 'ready') text = `Server “${ctl.tool.server}” is ${server.status}; calls fail until it is ready.`;
    else if (!listed && state.tools.length) text = 'This tool is no longer listed by its server.';
    avail.textContent = text;
    avail.hidden = !text;
  };
  return ctl;
}

async function submitCall(ctl) {
  ctl.clearError();
  let args;
  if (ctl.raw) {
    try {
      args = JSON.parse(ctl.rawArea.value.trim() || '{}');
    } catch (err) {
      ctl.showError(`The arguments are not valid JSON: ${err.message}`);
      ctl.rawArea.focus();
      return;
    }
    if (!isPlainObject(args)) {
      ctl.showError('The arguments must be a JSON object.');
      ctl.rawArea.focus();
      return;
    }
  } else {
    const { value, errors } = ctl.form.collect(true);
    if (errors.length) {
      ctl.showError(errors.length === 1 ? `Check this field: ${errors[0].message}.` : `Check these ${errors.length} fields:`,
        errors.map((e) => e.message));
      errors[0].focus();
      return;
    }
    args = { ...ctl.extra, ...value };
  }

  let sid = state.sessionId;
  if (!sid) {
    ctl.callBtn.disabled = true;
    try {
      const s = await api('POST', '/sessions', {});
      if (!isPlainObject(s) || typeof s.id !== 'string') throw new Error('the API returned no session id');
      addSession(s);
      selectSession(s.id);
      sid = s.id;
    } catch (err) {
      if (err instanceof AuthError) {
        handleAuthError();
        return;
      }
      ctl.showError(err instanceof NetworkError ? 'mcphost is not reachable, so no session could be started.' : `Could not start a session: ${err.message}`);
      return;
    } finally {
      ctl.callBtn.disabled = false;
    }
  }

  const callId = newCallId();
  const { server, name } = ctl.tool;
  startRunning({ callId, sessionId: sid, server, tool: name, own: true }, true);
  try {
    const entry = await api('POST', `/sessions/${seg(sid)}/calls`, { server, tool: name, arguments: args, callId });
    finishRunning(callId);
    if (isPlainObject(entry)) {
      upsertEntry(entry);
      touchSession(entry.sessionId);
      revealEntry(entry.id);
    }
  } catch (err) {
    finishRunning(callId);
    if (err instanceof AuthError) {
      handleAuthError();
      return;
    }
    if (err instanceof ApiError && err.code === 'invalid_arguments') ctl.showError(`The arguments do not match the tool's schema: ${err.message}`);
    else if (err instanceof ApiError && err.code === 'denied_by_policy') { /* the denied entry in the transcript says why */ }
    else if (err instanceof ApiError && err.status === 400) ctl.showError(`The request was rejected: ${err.message}`);
    else if (err instanceof NetworkError) ctl.showError('mcphost is not reachable, so the outcome of the call is unknown. The transcript reloads when the connection is back.');
    else ctl.showError(`The call failed: ${err.message}`);
  }
}

// ------------------------------------------------------------------ approvals

async function loadApprovals() {
  try {
    const r = await api('GET', '/approvals');
    const list = Array.isArray(r?.approvals) ? r.approvals.filter((a) => isPlainObject(a) && typeof a.id === 'string') : [];
    for (const id of [...state.approvals.keys()]) {
      if (!list.some((a) => a.id === id)) onApprovalDone({ id });
    }
    for (const a of list) onApproval(a);
  } catch (err) {
    reportError(err, 'Loading approvals');
  }
}

function onApproval(a) {
  if (typeof a.id !== 'string' || state.approvals.has(a.id)) return;
  const me = str(state.me?.name);
  const card = approvalCard(a, answerApproval, me);
  const role = approvalRole(a, me);
  state.approvals.set(a.id, { a, card });
  if (role.mine) setRunNote(a.callId, role.canAnswer ? 'Waiting for your approval.' : role.waiting);
  $('approval-list').append(card.el);
  updateTranscriptEmpty();
  scrollToBottom();
  card.el.querySelector('[data-testid=approve-button]')?.focus({ preventScroll: true });
  ensureTicker();
}

// onApprovalDone removes an approval's card; one that ended without an
// answer (its call cancelled, its client gone, no answer in time) says so.
// An answered approval of a call the selected session does not show (one
// from the CLI, the gateway, another session) leaves a card that says
// where it came from and what happened, instead of vanishing: the call's
// result when its entry comes, or that it was denied.
function onApprovalDone(d) {
  const cur = state.approvals.get(d.id);
  if (!cur) return;
  state.approvals.delete(d.id);
  setRunNote(cur.a.callId, '');
  const elsewhere = !cur.a.sessionId || cur.a.sessionId !== state.sessionId;
  if (elsewhere && (d.outcome === 'approved' || d.outcome === 'denied')) {
    showAnswered(cur, d.outcome);
  } else {
    cur.card.el.remove();
  }
  updateTranscriptEmpty();
  const text = approvalEndText(cur.a, d.outcome);
  if (text) toast(text);
}

// How long an answered approval's card stays: once its outcome is final,
// and at most while its call runs.
const ANSWERED_SHOW_MS = 8000;
const ANSWERED_WAIT_MS = 30000;

function showAnswered(cur, outcome) {
  const key = typeof cur.a.callId === 'string' && cur.a.callId ? cur.a.callId : `approval:${cur.a.id}`;
  const dismiss = () => {
    const it = state.answered.get(key);
    if (!it) return;
    clearTimeout(it.timer);
    state.answered.delete(key);
    const hadFocus = it.card.el.contains(document.activeElement);
    it.card.el.remove();
    if (hadFocus) $('tool-panel').querySelector('input, select, textarea, button')?.focus({ preventScroll: true });
  };
  const sid = typeof cur.a.sessionId === 'string' ? cur.a.sessionId : '';
  const open = sid && state.sessions.some((x) => x.id === sid)
    ? () => { dismiss(); selectSession(sid); }
    : null;
  const card = approvalResultCard(cur.a, outcome, dismiss, open);
  const final = outcome !== 'approved' || !cur.a.callId || cur.a.op;
  const it = { card, dismiss, timer: setTimeout(dismiss, final ? ANSWERED_SHOW_MS : ANSWERED_WAIT_MS) };
  state.answered.set(key, it);
  const hadFocus = cur.card.el.contains(document.activeElement);
  cur.card.el.replaceWith(card.el);
  if (hadFocus) card.el.querySelector('button')?.focus({ preventScroll: true });
}

// answeredEntry brings a call's entry to the card of its answered
// approval, if there is one.
function answeredEntry(entry) {
  const it = typeof entry.callId === 'string' ? state.answered.get(entry.callId) : null;
  if (!it) return;
  it.card.update(entry);
  clearTimeout(it.timer);
  it.timer = setTimeout(it.dismiss, ANSWERED_SHOW_MS);
}

// questions are the servers' open elicitations (elicit.js), each shown
// under the running card of its call.
const questions = elicitations({
  api, seg, errors: { ApiError, AuthError, NetworkError },
  onAuthError: () => handleAuthError(),
  reportError: (err, what) => reportError(err, what),
  note: (callId, text) => setRunNote(callId, text),
  place(el, callId) {
    const run = typeof callId === 'string' ? state.running.get(callId) : null;
    if (run?.card?.el?.isConnected) run.card.el.after(el);
    else $('approval-list').append(el);
    updateTranscriptEmpty();
    scrollToBottom();
  },
});

// setRunNote shows a note on the running card of a call, if it has one.
function setRunNote(callId, note) {
  const run = typeof callId === 'string' ? state.running.get(callId) : null;
  if (!run) return;
  run.note = note;
  run.card?.update(run);
}

// answerApproval sends the user's answer; it returns an error text to show
// on the card, or '' (the approval_done event then removes the card).
async function answerApproval(id, approve) {
  try {
    await api('POST', `/approvals/${seg(id)}`, { decision: approve ? 'approve' : 'deny' });
    return '';
  } catch (err) {
    if (err instanceof AuthError) {
      handleAuthError();
      return 'Signed out.';
    }
    if (err instanceof ApiError && err.status === 404) {
      onApprovalDone({ id });
      return '';
    }
    return err instanceof NetworkError ? 'mcphost is not reachable; try again.' : `Could not send the answer: ${err.message}`;
  }
}

// ------------------------------------------------------------------ running calls

// One 1-second ticker refreshes the elapsed times of the running-call cards
// and the approval cards; it stops when there are neither.
let ticker = 0;

function ensureTicker() {
  if (ticker || (state.running.size === 0 && state.approvals.size === 0)) return;
  ticker = setInterval(() => {
    if (state.running.size === 0 && state.approvals.size === 0) {
      clearInterval(ticker);
      ticker = 0;
      return;
    }
    for (const run of state.running.values()) run.card?.tick();
    for (const { card } of state.approvals.values()) card.tick();
  }, 1000);
}

function mountRunning(run, scroll) {
  run.card = runningCard(run, cancelCall);
  const nearBottom = isNearBottom();
  $('running-list').append(run.card.el);
  updateTranscriptEmpty();
  if (scroll || nearBottom) scrollToBottom();
}

function startRunning(r, scroll = false) {
  if (state.finished.has(r.callId)) return null;
  const existing = state.running.get(r.callId);
  if (existing) return existing;
  const run = { ...r, startedAt: Date.now(), progress: undefined, total: undefined, message: '', cancelling: false, note: '', card: null };
  state.running.set(run.callId, run);
  if (run.sessionId === state.sessionId) mountRunning(run, scroll);
  ensureTicker();
  return run;
}

function finishRunning(callId) {
  if (typeof callId !== 'string') return;
  state.finished.add(callId);
  if (state.finished.size > 500) state.finished.delete(state.finished.values().next().value);
  const run = state.running.get(callId);
  if (!run) return;
  state.running.delete(callId);
  run.card?.el.remove();
  updateTranscriptEmpty();
}

async function cancelCall(callId) {
  const run = state.running.get(callId);
  if (!run || run.cancelling) return;
  run.cancelling = true;
  run.note = '';
  run.card?.update(run);
  try {
    await api('DELETE', `/sessions/${seg(run.sessionId)}/calls/${seg(callId)}`);
  } catch (err) {
    if (err instanceof AuthError) {
      handleAuthError();
      return;
    }
    if (err instanceof ApiError && err.status === 404) {
      run.note = 'The call is no longer running.';
      if (!run.own) {
        finishRunning(callId);
        if (run.sessionId === state.sessionId) loadEntries(run.sessionId);
        return;
      }
    } else {
      run.cancelling = false;
      run.note = `Cancel failed: ${err instanceof NetworkError ? 'mcphost is not reachable' : err.message}`;
    }
    run.card?.update(run);
  }
}

function onCallStarted(d) {
  if (typeof d.callId !== 'string' || typeof d.sessionId !== 'string') return;
  startRunning({ callId: d.callId, sessionId: d.sessionId, server: str(d.server) || '?', tool: str(d.tool) || '?', own: false });
}

function onProgress(d) {
  if (typeof d.callId !== 'string') return;
  let run = state.running.get(d.callId);
  if (!run) {
    if (d.sessionId !== state.sessionId) return;
    run = startRunning({ callId: d.callId, sessionId: d.sessionId, server: str(d.server) || '…', tool: str(d.tool) || '…', own: false });
    if (!run) return;
  }
  run.progress = d.progress;
  run.total = d.total;
  run.message = str(d.message);
  run.card?.update(run);
}

function onEntryEvent(entry) {
  if (typeof entry.id !== 'string') return;
  answeredEntry(entry);
  finishRunning(entry.callId);
  if (entry.sessionId === state.sessionId) upsertEntry(entry);
  touchSession(entry.sessionId);
}

// ------------------------------------------------------------------ sessions

function sessionTitle(s) {
  if (!s) return '';
  if (str(s.title)) return s.title;
  const t = formatTime(s.createdAt);
  return t ? `Session of ${t}` : 'Untitled session';
}

async function loadSessions() {
  const q = $('session-search').value.trim();
  try {
    const r = await api('GET', q ? `/sessions?q=${encodeURIComponent(q)}` : '/sessions');
    const list = (Array.isArray(r?.sessions) ? r.sessions : []).filter((s) => isPlainObject(s) && typeof s.id === 'string');
    // Keep the current session even if this answer predates its creation
    // (a search shows only what it found).
    const cur = state.sessions.find((s) => s.id === state.sessionId);
    if (!q && cur && !list.some((s) => s.id === cur.id)) list.unshift(cur);
    state.sessions = list;
    renderSessions();
  } catch (err) {
    reportError(err, 'Loading sessions');
  }
}

function addSession(s) {
  state.sessions = [s, ...state.sessions.filter((x) => x.id !== s.id)];
  renderSessions();
}

let sessionsReloadTimer = 0;
function touchSession(id) {
  if (typeof id !== 'string') return;
  clearTimeout(sessionsReloadTimer);
  sessionsReloadTimer = setTimeout(loadSessions, 400);
}

function renderSessions() {
  const list = $('session-list');
  const hadFocus = list.contains(document.activeElement) ? document.activeElement.dataset.sessionId : '';
  clear(list);
  for (const s of state.sessions) {
    const entries = Number.isFinite(s.entries) ? plural(s.entries, 'call') : '';
    const updated = formatRelative(s.updatedAt || s.createdAt);
    const b = h('button', {
      type: 'button',
      class: 'session-item',
      testid: `session-${s.id}`,
      'data-session-id': s.id,
      'aria-current': s.id === state.sessionId ? 'true' : null,
    },
    h('span', { class: 'session-title' }, sessionTitle(s)),
    h('span', { class: 'session-meta muted' }, [entries, updated].filter(Boolean).join(' · ')));
    b.addEventListener('click', () => selectSession(s.id));
    list.append(h('li', {}, b));
    if (hadFocus === s.id) b.focus();
  }
  const empty = $('session-empty');
  const q = $('session-search').value.trim();
  empty.textContent = q ? `No session matches “${q}”.` : 'No sessions yet. Calling a tool starts one.';
  empty.hidden = state.sessions.length > 0;
  renderTranscriptHead();
  updateCallTargets();
}

function renderSessionSelection() {
  for (const b of $('session-list').querySelectorAll('.session-item')) {
    if (b.dataset.sessionId === state.sessionId) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
  renderTranscriptHead();
  updateCallTargets();
}

// newSession leaves the current session: the next call starts a new one,
// so a session is never created empty.
function newSession() {
  selectSession('');
}

let sessionSearchTimer = 0;
function onSessionSearch() {
  clearTimeout(sessionSearchTimer);
  sessionSearchTimer = setTimeout(loadSessions, 200);
}

function startRename() {
  const s = state.sessions.find((x) => x.id === state.sessionId);
  if (!s) return;
  $('rename-input').value = sessionTitle(s);
  $('session-actions').hidden = true;
  $('rename-form').hidden = false;
  $('rename-input').focus();
  $('rename-input').select();
}

function endRename() {
  $('rename-form').hidden = true;
  renderTranscriptHead();
}

async function submitRename(ev) {
  ev.preventDefault();
  const id = state.sessionId;
  if (!id) return;
  try {
    const s = await api('PATCH', `/sessions/${seg(id)}`, { title: $('rename-input').value });
    if (!isPlainObject(s) || typeof s.id !== 'string') throw new Error('the API returned no session');
    state.sessions = state.sessions.map((x) => (x.id === s.id ? { ...x, title: s.title } : x));
    endRename();
    renderSessions();
  } catch (err) {
    reportError(err, 'Renaming the session');
  }
}

// deleteSession asks first, in the transcript's head.
function deleteSession() {
  const s = state.sessions.find((x) => x.id === state.sessionId);
  if (!s) return;
  const n = Number.isFinite(s.entries) ? plural(s.entries, 'call') : 'its calls';
  $('delete-confirm-text').textContent = `Delete “${sessionTitle(s)}” and its transcript (${n})? This cannot be undone; the audit log keeps its record of the calls.`;
  $('session-actions').hidden = true;
  $('delete-confirm').hidden = false;
  $('delete-confirm-no').focus();
}

function endDelete() {
  $('delete-confirm').hidden = true;
  renderTranscriptHead();
}

async function confirmDelete() {
  const id = state.sessionId;
  endDelete();
  if (!id) return;
  try {
    await api('DELETE', `/sessions/${seg(id)}`);
    state.sessions = state.sessions.filter((x) => x.id !== id);
    selectSession('');
    renderSessions();
    toast('Session deleted.');
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) toast('A call is running in this session: cancel it or wait for it to end, then delete.', 'error');
    else reportError(err, 'Deleting the session');
  }
}

function selectSession(id) {
  $('delete-confirm').hidden = true;
  $('rename-form').hidden = true;
  teardownDisplays($('transcript'), 'session switch');
  clear($('entries'));
  clear($('running-list'));
  state.entries.clear();
  state.entriesGen += 1;
  state.sessionId = id || '';
  prefs.set('session', state.sessionId);
  for (const run of state.running.values()) {
    run.card = null;
    if (run.sessionId === state.sessionId) mountRunning(run, false);
  }
  renderSessionSelection();
  if (state.sessionId) loadEntries(state.sessionId);
  else {
    state.loadingEntries = false;
    updateTranscriptEmpty();
  }
}

// ------------------------------------------------------------------ transcript

function transcriptScroller() {
  return $('transcript-panel');
}

function isNearBottom() {
  const p = transcriptScroller();
  return p.scrollHeight - p.scrollTop - p.clientHeight < 120;
}

// revealEntry scrolls the transcript (or, on a narrow screen, the page) so
// that the entry's header (tool, status, duration) is in view: after a
// call from the form, whose result would otherwise be scrolled out of view
// under a tall form, showing only the tail of a long result.
function revealEntry(id) {
  const cur = state.entries.get(id);
  if (!cur) return;
  // After scrollToBottom's frame, which would undo it.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (cur.el.isConnected) cur.el.scrollIntoView({ block: 'start', inline: 'nearest' });
  }));
}

function scrollToBottom() {
  const p = transcriptScroller();
  requestAnimationFrame(() => {
    p.scrollTop = p.scrollHeight;
  });
}

function renderTranscriptHead() {
  const s = state.sessions.find((x) => x.id === state.sessionId);
  $('transcript-heading').textContent = state.sessionId ? sessionTitle(s) || 'Transcript' : 'Transcript';
  $('session-actions').hidden = !s || !$('rename-form').hidden || !$('delete-confirm').hidden;
  const n = state.entries.size;
  $('transcript-meta').textContent = state.sessionId && !state.loadingEntries ? plural(n, 'call') : '';
  updateTranscriptEmpty();
}

function updateTranscriptEmpty() {
  const empty = $('transcript-empty');
  let text = '';
  if (!state.sessionId) text = 'No session selected. Pick one on the left, or call a tool to start a new session.';
  else if (state.loadingEntries && state.entries.size === 0) text = 'Loading the transcript…';
  else if (state.entries.size === 0 && $('running-list').children.length === 0 && state.approvals.size === 0) text = 'No calls in this session yet. Pick a tool and call it.';
  empty.textContent = text;
  empty.hidden = !text;
}

function upsertEntry(entry) {
  if (!isPlainObject(entry) || typeof entry.id !== 'string') return;
  if (typeof entry.sessionId === 'string' && entry.sessionId !== state.sessionId) return;
  finishRunning(entry.callId);
  const json = JSON.stringify(entry);
  const cur = state.entries.get(entry.id);
  if (cur && cur.json === json) return;
  const el = entryCard(entry);
  const seq = Number.isFinite(entry.seq) ? entry.seq : Number.MAX_SAFE_INTEGER;
  el.dataset.seq = String(seq);
  if (cur) {
    teardownDisplays(cur.el, 'entry replaced');
    cur.el.replaceWith(el);
    Object.assign(cur, { entry, el, json });
    return;
  }
  const nearBottom = isNearBottom();
  const box = $('entries');
  const last = box.lastElementChild;
  if (!last || Number(last.dataset.seq) <= seq) {
    box.append(el);
  } else {
    let before = null;
    for (const c of box.children) {
      if (Number(c.dataset.seq) > seq) {
        before = c;
        break;
      }
    }
    box.insertBefore(el, before);
  }
  state.entries.set(entry.id, { entry, el, json });
  // Count it in the session list at once; the debounced reload confirms it.
  const s = state.sessions.find((x) => x.id === state.sessionId);
  if (s && !state.loadingEntries && Number.isFinite(s.entries) && s.entries < state.entries.size) {
    s.entries = state.entries.size;
    s.updatedAt = new Date().toISOString();
    renderSessions();
  }
  renderTranscriptHead();
  if (nearBottom) scrollToBottom();
}

async function loadEntries(sid) {
  const gen = state.entriesGen;
  state.loadingEntries = true;
  updateTranscriptEmpty();
  const first = state.entries.size === 0;
  let after = null;
  try {
    for (let page = 0; page < 10000; page++) {
      const q = after === null ? '?limit=500' : `?after=${encodeURIComponent(after)}&limit=500`;
      const r = await api('GET', `/sessions/${seg(sid)}/entries${q}`);
      if (gen !== state.entriesGen || sid !== state.sessionId) return;
      const list = Array.isArray(r?.entries) ? r.entries : [];
      for (const e of list) upsertEntry(e);
      if (r?.next === null || r?.next === undefined || list.length === 0 || r.next === after) break;
      after = r.next;
    }
  } catch (err) {
    if (gen !== state.entriesGen) return;
    state.loadingEntries = false;
    if (err instanceof ApiError && err.status === 404) {
      toast('That session no longer exists.', 'error');
      state.sessions = state.sessions.filter((s) => s.id !== sid);
      renderSessions();
      selectSession('');
      return;
    }
    renderTranscriptHead();
    reportError(err, 'Loading the transcript');
    return;
  }
  state.loadingEntries = false;
  renderTranscriptHead();
  if (first) scrollToBottom();
}

// ------------------------------------------------------------------ wiring

function wire() {
  for (const f of document.querySelectorAll('[data-role=token-form]')) f.addEventListener('submit', onTokenFormSubmit);
  for (const b of document.querySelectorAll('[data-role=sign-out]')) b.addEventListener('click', signOut);
  $('unreachable-retry').addEventListener('click', retryNow);
  $('new-session').addEventListener('click', newSession);
  $('session-search').addEventListener('input', onSessionSearch);
  $('rename-session').addEventListener('click', startRename);
  $('delete-session').addEventListener('click', deleteSession);
  $('rename-form').addEventListener('submit', submitRename);
  $('rename-cancel').addEventListener('click', endRename);
  $('delete-confirm-yes').addEventListener('click', confirmDelete);
  $('delete-confirm-no').addEventListener('click', endDelete);
  $('rename-input').addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') endRename();
  });

  const search = $('tool-search');
  search.addEventListener('input', () => toolSearch.ctl.set(search.value));
  search.addEventListener('keydown', async (e) => {
    const first = () => $('tool-list').querySelector('.tool-item');
    if (e.key === 'ArrowDown' && first()) {
      e.preventDefault();
      first().focus();
    } else if (e.key === 'Enter') {
      // The best match of what is typed, not of a query still waiting.
      e.preventDefault();
      await toolSearch.ctl.flush();
      first()?.click();
    } else if (e.key === 'Escape' && search.value) {
      search.value = '';
      toolSearch.ctl.set('');
    }
  });
  $('tool-list').addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const items = [...$('tool-list').querySelectorAll('.tool-item')];
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    e.preventDefault();
    if (e.key === 'ArrowUp' && i === 0) search.focus();
    else items[Math.min(items.length - 1, Math.max(0, i + (e.key === 'ArrowDown' ? 1 : -1)))].focus();
  });
  document.addEventListener('keydown', (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || state.view !== 'app') return;
    const t = e.target;
    if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    e.preventDefault();
    search.focus();
    search.select();
  });

  // A new sign-in link pasted into this tab's address bar.
  window.addEventListener('hashchange', () => {
    const before = auth.get();
    takeTokenFromHash();
    if (auth.get() !== before) {
      resetApp();
      start();
    }
  });
  // Relative times in the session list go stale; refresh them now and then.
  setInterval(() => {
    if (state.view === 'app' && !$('session-list').contains(document.activeElement)) renderSessions();
  }, 60000);
}

takeTokenFromHash();
const signedIn = takeSignInFromHash();
wire();
start();
if (signedIn) toast(signedIn);
