// Approval prompts: a call that an `ask` policy paused waits here until the
// user approves it once or denies it (or its time runs out, which denies).
// Everything shown comes from the API and goes in as text.

import { h, isPlainObject, pretty } from './dom.js';

/**
 * approvalName is how a card names what waits: SERVER.TOOL for a tool
 * call, "OP SERVER: SUBJECT" for another operation; what is "call" or
 * "request".
 */
export function approvalName(a) {
  const op = typeof a?.op === 'string' && a.op ? a.op : '';
  const server = typeof a?.server === 'string' ? a.server : '?';
  const tool = typeof a?.tool === 'string' ? a.tool : '?';
  return op ? { name: `${op} ${server}: ${tool}`, what: 'request' } : { name: `${server}.${tool}`, what: 'call' };
}

/**
 * approvalCard renders one pending approval and returns {el, tick()}.
 * a: {id, op?, server, tool, arguments, rule, message, expires}; op names
 * an operation other than a tool call (resources/read, prompts/get, …),
 * and tool is then what it is about (a URI, a prompt's name). onAnswer(id,
 * approve) sends the answer; the card disables its buttons meanwhile.
 */
export function approvalCard(a, onAnswer) {
  const { name, what } = approvalName(a);
  const left = h('span', { class: 'muted approval-left', testid: 'approval-left' });
  const approve = h('button', { type: 'button', class: 'small primary', testid: 'approve-button' }, 'Approve once');
  const deny = h('button', { type: 'button', class: 'small danger', testid: 'deny-button' }, 'Deny');
  approve.setAttribute('aria-label', `Approve ${name} once`);
  deny.setAttribute('aria-label', `Deny ${name}`);
  const status = h('p', { class: 'muted approval-status', hidden: true });
  const answer = async (ok) => {
    approve.disabled = true;
    deny.disabled = true;
    status.hidden = false;
    status.textContent = ok ? 'Approving…' : 'Denying…';
    const err = await onAnswer(a.id, ok);
    if (err) {
      status.textContent = err;
      approve.disabled = false;
      deny.disabled = false;
    }
  };
  approve.addEventListener('click', () => answer(true));
  deny.addEventListener('click', () => answer(false));

  const args = isPlainObject(a.arguments) ? a.arguments : {};
  const el = h('article', {
    class: 'entry approval', testid: 'approval', role: 'alertdialog',
    'data-approval-id': String(a.id ?? ''), 'aria-label': `Approval needed: ${name}`,
  },
  h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, name),
    h('span', { class: 'badge status-ask' }, 'needs approval'),
    h('span', { class: 'spacer' }),
    left),
  h('p', { class: 'approval-message', testid: 'approval-message' }, typeof a.message === 'string' && a.message ? a.message : `A policy asks you to approve this ${what}.`),
  a.origin === 'app'
    ? h('p', { class: 'approval-origin', testid: 'approval-origin' }, 'Requested by the MCP App of server ', h('strong', {}, String(a.server ?? '?')), ', not by you.')
    : null,
  h('p', { class: 'muted' }, 'Policy ', h('code', {}, typeof a.rule === 'string' ? a.rule : '?'),
    ` paused this ${what}. It runs only if you approve it; no answer in time denies it.`),
  h('details', { class: 'collapsible arguments', open: true },
    h('summary', {}, 'Arguments'),
    h('pre', { class: 'json', testid: 'approval-arguments' }, pretty(args))),
  h('div', { class: 'approval-actions' }, approve, deny),
  status);

  const expires = Date.parse(a.expires);
  function tick() {
    if (!Number.isFinite(expires)) return;
    const s = Math.max(0, Math.round((expires - Date.now()) / 1000));
    left.textContent = s > 0 ? `${s} s left` : 'expiring…';
  }
  tick();
  return { el, tick };
}
