// Elicitation prompts: a server asks the user something while one of the
// user's calls runs. Form mode is a form generated from the requested
// schema (schemaform.js: enums, defaults, required, formats; a "password"
// or writeOnly field is a masked input); URL mode shows the server and the
// full URL, and opens it in a new tab only after the user confirms.
// Everything shown comes from the API and goes in as text.

import { h, isPlainObject } from './dom.js';
import { compileSchema, buildForm, defaultArguments, Unsupported } from './schemaform.js';

/**
 * formSchema returns the requested schema as the form generator reads it:
 * MCP's titled single-choice enums (oneOf of {const, title}) and titled
 * multi-choice items (anyOf/oneOf of {const, title}) become plain enums.
 */
export function formSchema(schema) {
  if (!isPlainObject(schema)) return schema;
  const titled = (list) => Array.isArray(list) && list.length > 0 && list.every((b) => isPlainObject(b) && 'const' in b);
  const props = {};
  for (const [name, p] of Object.entries(isPlainObject(schema.properties) ? schema.properties : {})) {
    if (!isPlainObject(p)) { props[name] = p; continue; }
    let q = p;
    if (titled(p.oneOf)) {
      const { oneOf, ...rest } = p;
      q = { ...rest, enum: oneOf.map((b) => b.const) };
    }
    if (isPlainObject(q.items)) {
      for (const key of ['anyOf', 'oneOf']) {
        if (titled(q.items[key])) {
          const { [key]: list, ...rest } = q.items;
          q = { ...q, items: { ...rest, enum: list.map((b) => b.const) } };
        }
      }
    }
    props[name] = q;
  }
  return { ...schema, properties: props };
}

/** safeURL returns url when it is an absolute http or https URL, else ''. */
export function safeURL(url) {
  if (typeof url !== 'string') return '';
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : '';
  } catch {
    return '';
  }
}

/**
 * elicitationCard renders one open question and returns {el, tick()}.
 * q: {id, server, tool, mode, message, requestedSchema, url, expires}.
 * onAnswer(id, {action, content}) sends the answer and resolves to an
 * error text ('' when sent); the card disables its buttons meanwhile.
 */
export function elicitationCard(q, onAnswer, openURL = (u) => window.open(u, '_blank', 'noopener,noreferrer')) {
  const server = String(q.server ?? '?');
  const name = `${server}.${q.tool ?? '?'}`;
  const left = h('span', { class: 'muted approval-left' });
  const status = h('p', { class: 'muted approval-status', testid: 'elicitation-status', role: 'status', hidden: true });
  const errors = h('div', { class: 'form-error', testid: 'elicitation-error', role: 'alert', hidden: true });
  const buttons = [];
  const button = (label, cls, testid) => {
    const b = h('button', { type: 'button', class: `small ${cls}`, testid }, label);
    buttons.push(b);
    return b;
  };
  const busy = (on, text) => {
    for (const b of buttons) b.disabled = on;
    status.hidden = !text;
    status.textContent = text || '';
  };
  const send = async (answer, text) => {
    errors.hidden = true;
    busy(true, text);
    const err = await onAnswer(q.id, answer);
    if (err) {
      busy(false, '');
      errors.textContent = err;
      errors.hidden = false;
    }
  };

  const decline = button('Decline', 'danger', 'elicitation-decline');
  const cancel = button('Cancel', 'ghost', 'elicitation-cancel');
  decline.addEventListener('click', () => send({ action: 'decline' }, 'Declining…'));
  cancel.addEventListener('click', () => send({ action: 'cancel' }, 'Cancelling…'));

  let body;
  let accept;
  if (q.mode === 'url') {
    const url = safeURL(q.url);
    accept = button('Open URL…', 'primary', 'elicitation-open');
    const confirmBox = h('div', { class: 'elicit-confirm', testid: 'elicitation-confirm', hidden: true },
      h('p', {}, 'Open this URL in a new tab? It goes to the site it names, not to mcphost.'),
      h('code', { class: 'elicit-url' }, String(q.url ?? '')));
    const yes = button('Open and accept', 'primary', 'elicitation-confirm-open');
    const back = button('Back', 'ghost', 'elicitation-confirm-back');
    confirmBox.append(h('div', { class: 'approval-actions' }, yes, back));
    if (!url) accept.disabled = true;
    accept.addEventListener('click', () => { confirmBox.hidden = false; yes.focus(); });
    back.addEventListener('click', () => { confirmBox.hidden = true; });
    yes.addEventListener('click', () => {
      if (!url) return;
      openURL(url);
      send({ action: 'accept' }, 'Accepted; the URL opened in a new tab.');
    });
    body = h('div', {},
      h('p', { class: 'muted' }, 'The server ', h('strong', {}, server), ' asks you to open this URL:'),
      h('code', { class: 'elicit-url', testid: 'elicitation-url' }, String(q.url ?? '')),
      url ? null : h('p', { class: 'form-error' }, 'This is not an http or https URL, so the WebShell will not open it.'),
      confirmBox);
  } else {
    let form = null;
    let reason = '';
    try {
      form = buildForm(compileSchema(formSchema(q.requestedSchema)));
      form.set(defaultArguments(q.requestedSchema));
    } catch (err) {
      if (!(err instanceof Unsupported)) throw err;
      reason = err.message;
    }
    accept = button('Accept', 'primary', 'elicitation-accept');
    if (!form) accept.disabled = true;
    accept.addEventListener('click', () => {
      const { value, errors: problems } = form.collect(true);
      if (problems.length > 0) {
        errors.textContent = problems.length === 1
          ? `Check this field: ${problems[0].message}.`
          : `Check these ${problems.length} fields: ${problems.slice(0, 5).map((p) => p.message).join('; ')}.`;
        errors.hidden = false;
        problems[0].focus?.();
        return;
      }
      send({ action: 'accept', content: value }, 'Sending…');
    });
    body = form
      ? h('div', { class: 'elicit-form', testid: 'elicitation-form' }, form.el)
      : h('p', { class: 'form-error' }, `The WebShell cannot show this form (${reason}); decline or cancel.`);
  }

  const el = h('article', {
    class: 'entry approval elicitation', testid: 'elicitation', role: 'alertdialog',
    'data-elicitation-id': String(q.id ?? ''), 'aria-label': `Question from ${server}: ${name}`,
  },
  h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, name),
    h('span', { class: 'badge status-ask' }, q.mode === 'url' ? 'asks to open a URL' : 'asks you'),
    h('span', { class: 'spacer' }),
    left),
  h('p', { class: 'approval-message', testid: 'elicitation-message' }, typeof q.message === 'string' && q.message ? q.message : 'The server asks for input.'),
  body,
  errors,
  h('div', { class: 'approval-actions' }, accept, decline, cancel),
  status);

  const expires = Date.parse(q.expires);
  function tick() {
    if (!Number.isFinite(expires)) return;
    const s = Math.max(0, Math.round((expires - Date.now()) / 1000));
    left.textContent = s > 0 ? `${s} s left` : 'expiring…';
  }
  tick();
  return { el, tick };
}

/**
 * elicitations keeps the open questions of the signed-in principal on
 * screen: load() lists them (GET /elicitations), onEvent(d) and onDone(d)
 * follow the "elicitation" and "elicitation_done" events. deps:
 * {api, seg, errors: {ApiError, AuthError, NetworkError}, onAuthError(),
 * reportError(err, what), place(el, callId), note(callId, text)}; reset()
 * forgets them all (sign-out).
 */
export function elicitations(deps) {
  const open = new Map(); // id -> {q, card}
  let ticker = 0;
  const { ApiError, AuthError, NetworkError } = deps.errors;

  function ensureTicker() {
    if (ticker || open.size === 0) return;
    ticker = setInterval(() => {
      if (open.size === 0) {
        clearInterval(ticker);
        ticker = 0;
        return;
      }
      for (const { card } of open.values()) card.tick();
    }, 1000);
  }

  async function answer(id, ans) {
    try {
      await deps.api('POST', `/elicitations/${deps.seg(id)}`, ans);
      return '';
    } catch (err) {
      if (err instanceof AuthError) {
        deps.onAuthError();
        return 'Signed out.';
      }
      if (err instanceof ApiError && err.status === 404) {
        onDone({ id });
        return '';
      }
      if (err instanceof ApiError && err.status === 422) return `The server would not accept this answer: ${err.message}`;
      return err instanceof NetworkError ? 'mcphost is not reachable; try again.' : `Could not send the answer: ${err.message}`;
    }
  }

  function onEvent(q) {
    if (!isPlainObject(q) || typeof q.id !== 'string' || open.has(q.id)) return;
    const card = elicitationCard(q, answer);
    open.set(q.id, { q, card });
    deps.note(q.callId, `Waiting for your answer to ${String(q.server ?? 'the server')}'s question.`);
    deps.place(card.el, q.callId);
    card.el.querySelector('input, select, textarea, button:not([disabled])')?.focus({ preventScroll: true });
    ensureTicker();
  }

  function onDone(d) {
    const cur = open.get(d?.id);
    if (!cur) return;
    cur.card.el.remove();
    open.delete(d.id);
    deps.note(cur.q.callId, '');
  }

  async function load() {
    try {
      const r = await deps.api('GET', '/elicitations');
      const list = Array.isArray(r?.elicitations) ? r.elicitations.filter((q) => isPlainObject(q) && typeof q.id === 'string') : [];
      for (const id of [...open.keys()]) {
        if (!list.some((q) => q.id === id)) onDone({ id });
      }
      for (const q of list) onEvent(q);
    } catch (err) {
      deps.reportError(err, 'Loading questions');
    }
  }

  // reset forgets every question (sign-out).
  function reset() {
    for (const { card } of open.values()) card.el.remove();
    open.clear();
  }

  return { load, onEvent, onDone, reset, get size() { return open.size; } };
}
