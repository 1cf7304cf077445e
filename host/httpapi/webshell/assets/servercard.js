// A server's card, folded: the protocol details, its resources and
// prompts, and for admins its stderr tail and log messages on demand and a
// Restart button. The resources and prompts open in the main panel
// (offerings.js). Everything from the server goes in as text.

import { h, clear, append, isPlainObject, formatTime } from './dom.js';
import { api, seg } from './api.js';

const str = (v) => (typeof v === 'string' ? v : '');

// open remembers which cards are unfolded across re-renders (the list is
// rebuilt on every server event).
const open = new Set();

/**
 * serverDetails returns the fold of server s's card. opts: admin (bool),
 * onResource(server, uri), onPrompt(server, prompt), report(err, what),
 * toast(text, kind).
 */
export function serverDetails(s, opts) {
  const d = h('details', { class: 'server-details', testid: `server-details-${s.name}` },
    h('summary', { testid: `server-details-toggle-${s.name}` }, 'Details'));
  const body = h('div', { class: 'server-details-body' });
  d.append(body);
  const fill = () => {
    append(clear(body), detailRows(s));
    append(body, sandboxBlock(s));
    body.append(signedInBlock(s, opts));
    if (s.status === 'ready') body.append(offeringsBlock(s, opts));
    if (opts.admin) body.append(adminBlock(s, opts));
  };
  d.addEventListener('toggle', () => {
    if (d.open) {
      open.add(s.name);
      fill();
    } else {
      open.delete(s.name);
    }
  });
  if (open.has(s.name)) {
    d.open = true;
    fill();
  }
  return d;
}

/**
 * placementText says where a server with placement = "singleton" runs: the
 * replica that holds it (one replica of the cluster runs it for all), or
 * that none does yet. Empty for any other server, which runs on every
 * replica.
 */
export function placementText(s) {
  if (!isPlainObject(s) || s.placement !== 'singleton') {
    return '';
  }
  const on = str(s.runsOn);
  return on ? `replica ${on} (singleton: one replica runs it for all)` : 'no replica yet (singleton: waiting for the one that runs it)';
}

/**
 * sandboxText says how a stdio server is contained, for its badge:
 * "contained", "unsandboxed" (mode = "off"), "partial" (layers dropped
 * with on_unsupported = "warn"), or '' for a remote server. kind is the
 * badge's class: ok, warn or ''.
 */
export function sandboxText(s) {
  const sb = isPlainObject(s) && isPlainObject(s.sandbox) ? s.sandbox : null;
  if (!sb) return { text: '', kind: '' };
  if (sb.summary === 'unsandboxed') return { text: 'unsandboxed', kind: 'warn' };
  if (str(sb.summary).startsWith('webassembly')) return { text: 'webassembly', kind: 'ok' };
  const layers = Array.isArray(sb.layers) ? sb.layers.filter(isPlainObject) : [];
  if (!layers.length) return { text: '', kind: '' };
  const dropped = layers.filter((l) => l.active !== true && l.name !== 'env' && !(l.name === 'net' && sb.network === 'host'));
  if (dropped.length) return { text: `partial sandbox (no ${dropped.map((l) => str(l.name)).join(', ')})`, kind: 'warn' };
  return { text: 'contained', kind: 'ok' };
}

// sandboxBlock lists a server's layers, the connections its egress proxy
// refused and what its stderr said it was refused, with the grant that
// would allow it.
function sandboxBlock(s) {
  const sb = isPlainObject(s.sandbox) ? s.sandbox : null;
  if (!sb) return [];
  const layers = (Array.isArray(sb.layers) ? sb.layers : []).filter(isPlainObject);
  const denials = (Array.isArray(sb.denials) ? sb.denials : []).filter(isPlainObject);
  const hints = (Array.isArray(sb.hints) ? sb.hints : []).filter((x) => typeof x === 'string');
  const net = [str(sb.network), Array.isArray(sb.allowHosts) && sb.allowHosts.length ? `to ${sb.allowHosts.filter((x) => typeof x === 'string').join(', ')}` : ''].filter(Boolean).join(' ');
  return [h('div', { class: 'server-sandbox', testid: `server-sandbox-${s.name}` },
    h('h4', {}, 'Sandbox'),
    h('p', {}, str(sb.summary)),
    net ? h('p', { class: 'muted' }, `network: ${net}`) : null,
    layers.length ? h('ul', { class: 'sandbox-layers' }, layers.map((l) => h('li', { class: l.active === true ? 'on' : 'off' },
      `${str(l.name)}: ${l.active === true ? 'on' : 'off'} — ${str(l.detail)}`))) : null,
    denials.length ? [h('h4', {}, `Refused connections (${Number.isFinite(sb.denied) ? sb.denied : denials.length})`),
      h('ul', { class: 'sandbox-denials', testid: `server-denials-${s.name}` }, denials.map((d) => h('li', {},
        `${formatTime(d.time)} ${str(d.host)}:${Number(d.port) || ''} — ${str(d.reason)}`)))] : null,
    hints.length ? h('ul', { class: 'sandbox-hints', testid: `server-hints-${s.name}` }, hints.map((x) => h('li', {}, x))) : null)];
}

function detailRows(s) {
  const info = isPlainObject(s.serverInfo) ? [str(s.serverInfo.name), str(s.serverInfo.version)].filter(Boolean).join(' ') : '';
  const rows = [
    ['protocol', [str(s.era), str(s.protocolVersion)].filter(Boolean).join(' · ')],
    ['transport', str(s.transport)],
    ['server', info],
    ['why this era', str(s.evidence)],
    ['restarts', Number.isFinite(s.restarts) && s.restarts > 0 ? String(s.restarts) : ''],
    ['runs on', placementText(s)],
    ['pid', Number.isFinite(s.pid) && s.pid > 0 ? String(s.pid) : ''],
    ['client sessions', Number.isFinite(s.clientSessions) && s.clientSessions > 0 ? String(s.clientSessions) : ''],
  ].filter(([, v]) => v);
  return [h('dl', { class: 'server-facts' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))];
}

// offeringsBlock lists the server's resources, templates and prompts once
// loaded; each opens in the main panel.
function offeringsBlock(s, opts) {
  const box = h('div', { class: 'server-offerings', testid: `server-offerings-${s.name}` }, h('p', { class: 'muted' }, 'Loading resources and prompts…'));
  (async () => {
    try {
      const [res, pr] = await Promise.all([
        api('GET', `/servers/${seg(s.name)}/resources`),
        api('GET', `/servers/${seg(s.name)}/prompts`),
      ]);
      const resources = (Array.isArray(res?.resources) ? res.resources : []).filter((r) => isPlainObject(r) && typeof r.uri === 'string');
      const templates = (Array.isArray(res?.resourceTemplates) ? res.resourceTemplates : []).filter((r) => isPlainObject(r) && typeof r.uriTemplate === 'string');
      const prompts = (Array.isArray(pr?.prompts) ? pr.prompts : []).filter((p) => isPlainObject(p) && typeof p.name === 'string');
      clear(box);
      if (resources.length || templates.length) {
        box.append(h('h4', {}, 'Resources'), h('ul', { class: 'offering-list' },
          resources.map((r) => h('li', {}, h('button', {
            type: 'button', class: 'link', testid: `resource-${s.name}-${r.uri}`, title: str(r.description) || null,
            onclick: () => opts.onResource(s.name, r.uri),
          }, str(r.title) || str(r.name) || r.uri))),
          templates.map((tpl) => h('li', {}, h('button', {
            type: 'button', class: 'link', testid: `template-${s.name}-${tpl.uriTemplate}`, title: str(tpl.description) || null,
            onclick: () => opts.onResource(s.name, '', tpl),
          }, `${str(tpl.title) || str(tpl.name) || tpl.uriTemplate} (template)`)))));
      }
      if (prompts.length) {
        box.append(h('h4', {}, 'Prompts'), h('ul', { class: 'offering-list' },
          prompts.map((p) => h('li', {}, h('button', {
            type: 'button', class: 'link', testid: `prompt-${s.name}-${p.name}`, title: str(p.description) || null,
            onclick: () => opts.onPrompt(s.name, p),
          }, str(p.title) || p.name)))));
      }
      if (!box.firstChild) box.append(h('p', { class: 'muted' }, 'No resources or prompts.'));
    } catch (err) {
      clear(box).append(h('p', { class: 'server-error' }, `Could not list them: ${err?.message || err}`));
    }
  })();
  return box;
}

// signedInBlock says who is signed in to the server (OAuth, an auth
// block): the caller's own credential and a shared one, with its issuer,
// scopes and expiry, never a token; and signs out. Empty for a server
// without stored credentials.
function signedInBlock(s, opts) {
  const box = h('div', { class: 'server-signin', testid: `server-signin-${s.name}` });
  (async () => {
    let creds = [];
    try {
      const r = await api('GET', `/auth?server=${encodeURIComponent(s.name)}`);
      creds = (Array.isArray(r?.credentials) ? r.credentials : []).filter(isPlainObject);
    } catch {
      return; // no OAuth here, or nothing to show
    }
    if (!creds.length) return;
    append(box, [h('h4', {}, 'Signed in'), creds.map((c) => {
      const who = str(c.principal) === '*' ? 'shared by everyone' : `as ${str(c.principal)}`;
      const facts = [who, str(c.issuer) ? `at ${c.issuer}` : '',
        Array.isArray(c.scopes) && c.scopes.length ? `scopes ${c.scopes.filter((x) => typeof x === 'string').join(' ')}` : '',
        str(c.expiresAt) ? `expires ${formatTime(c.expiresAt)}` : '', c.refresh === true ? 'renews itself' : ''].filter(Boolean).join(' · ');
      const out = h('button', { type: 'button', class: 'small', testid: `signout-${s.name}` }, 'Sign out');
      out.addEventListener('click', async () => {
        out.disabled = true;
        try {
          await api('DELETE', `/servers/${seg(s.name)}/auth`);
          clear(box).append(h('p', { class: 'muted' }, 'Signed out.'));
        } catch (err) {
          out.disabled = false;
          opts.report(err, `Signing out of ${s.name}`);
        }
      });
      return h('p', { class: 'server-signin-line' }, facts, ' ', out);
    })]);
  })();
  return box;
}

// adminBlock: the logs on demand, and Restart.
function adminBlock(s, opts) {
  const out = h('div', { class: 'server-logs', testid: `server-logs-${s.name}` });
  const logsBtn = h('button', { type: 'button', class: 'small', testid: `server-logs-button-${s.name}` }, 'Show logs');
  const restartBtn = h('button', { type: 'button', class: 'small danger', testid: `server-restart-${s.name}` }, 'Restart');
  logsBtn.addEventListener('click', async () => {
    logsBtn.disabled = true;
    try {
      const r = await api('GET', `/servers/${seg(s.name)}/logs`);
      const stderr = (Array.isArray(r?.stderr) ? r.stderr : []).filter((l) => typeof l === 'string');
      const messages = (Array.isArray(r?.messages) ? r.messages : []).filter(isPlainObject);
      append(clear(out), [
        h('h4', {}, 'stderr'),
        stderr.length ? h('pre', { class: 'log-lines', testid: `server-stderr-${s.name}` }, stderr.join('\n')) : h('p', { class: 'muted' }, 'Nothing on stderr.'),
        h('h4', {}, 'Log messages'),
        messages.length
          ? h('pre', { class: 'log-lines', testid: `server-messages-${s.name}` }, messages.map((m) =>
            [formatTime(m.at), str(m.level), str(m.logger), str(m.data)].filter(Boolean).join('  ')).join('\n'))
          : h('p', { class: 'muted' }, 'No log messages.')]);
      logsBtn.textContent = 'Refresh logs';
    } catch (err) {
      opts.report(err, 'Loading the server logs');
    } finally {
      logsBtn.disabled = false;
    }
  });
  restartBtn.addEventListener('click', async () => {
    restartBtn.disabled = true;
    try {
      await api('POST', `/servers/${seg(s.name)}/restart`);
      opts.toast(`Restarting ${s.name}…`);
    } catch (err) {
      opts.report(err, `Restarting ${s.name}`);
    } finally {
      restartBtn.disabled = false;
    }
  });
  return h('div', { class: 'server-admin' }, h('div', { class: 'server-admin-buttons' }, logsBtn, restartBtn), out);
}

/**
 * spanText writes a span of seconds as people read it on a card: 13s,
 * 4m 3s, 1h 2m.
 */
function spanText(sec) {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/**
 * whenText says where a server stands in time at now (ms since the
 * epoch): how long a connecting one has been at it (with a word on the
 * first start of a package runner's server), and for a failed one its
 * restarts and when it is tried next. '' when there is nothing to say.
 */
export function whenText(s, now) {
  if (!isPlainObject(s)) return '';
  const status = str(s.status);
  const since = Date.parse(str(s.since));
  if (status === 'connecting' && Number.isFinite(since)) {
    const parts = [`connecting for ${spanText((now - since) / 1000)}`];
    const l = str(s.launcher);
    if (l) parts.push(`${l} downloads the package on a first start: this can take a minute`);
    return parts.join(' · ');
  }
  if (status !== 'failed') return '';
  const parts = [];
  if (Number.isFinite(s.restarts) && s.restarts > 0) parts.push(`${s.restarts} restart${s.restarts === 1 ? '' : 's'}`);
  const next = Date.parse(str(s.nextAttempt));
  if (Number.isFinite(next)) {
    parts.push(next > now ? `next try in ${spanText((next - now) / 1000)} (at ${formatTime(str(s.nextAttempt))})` : 'trying again now');
  } else if (parts.length) {
    parts.push('no next try: restart it, or fix its block and reload');
  }
  return parts.join(' · ');
}
