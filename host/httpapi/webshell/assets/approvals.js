// Approval prompts: a call that an `ask` policy paused waits here until
// someone who may answer it approves it once or denies it (or its time
// runs out, which denies). The user sees the approvals of its own calls,
// those it may answer (a rule may name approvers: then the caller cannot
// answer its own call), and, as an admin, every one; canAnswer says which
// it may answer. Everything shown comes from the API and goes in as text.

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
 * approvalRole says how the user (named me) stands to an approval: whether
 * it may answer it, whether the call is its own, and the sentence that
 * says who may answer when it may not.
 */
export function approvalRole(a, me) {
  const canAnswer = a?.canAnswer === true;
  const principal = typeof a?.principal === 'string' ? a.principal : '';
  const mine = !principal || principal === me;
  const approvers = Array.isArray(a?.approvers) ? a.approvers.filter((x) => typeof x === 'string' && x) : [];
  const who = approvers.length ? approvers.join(', ') : principal || 'its caller';
  let waiting = '';
  if (!canAnswer) {
    waiting = mine
      ? `Waiting for an approver (${who}): the policy does not let you approve your own call.`
      : `Waiting for ${who} to answer. You see it as an admin.`;
  }
  return { canAnswer, mine, principal, waiting };
}

/**
 * approvalEndText is what to tell the user when an approval it was shown
 * ended without an answer (outcome cancelled or expired), or '' otherwise
 * (an answered one shows in its call's entry).
 */
export function approvalEndText(a, outcome) {
  const { name, what } = approvalName(a);
  switch (outcome) {
    case 'cancelled': return `No longer waiting for approval: ${name}. The ${what} was cancelled, or its client went away.`;
    case 'expired': return `No longer waiting for approval: ${name}. Nobody answered in time, so it was denied.`;
    default: return '';
  }
}

/**
 * approvalOrigin says where the call that waits came from, as a sentence
 * for its card: the WebShell, an MCP App, the CLI or another API client,
 * or a gateway client by the name it gave.
 */
export function approvalOrigin(a) {
  const origin = typeof a?.origin === 'string' ? a.origin : '';
  const client = typeof a?.client === 'string' && a.client ? a.client : '';
  switch (origin) {
    case 'user': return 'From the WebShell.';
    case 'app': return `Requested by the MCP App of server ${typeof a?.server === 'string' ? a.server : '?'}.`;
    case 'api': return 'From the CLI or another API client.';
    case 'gateway': return client ? `From the gateway client ${client}.` : 'From a client of the gateway.';
    case '': return '';
    default: return `From ${origin}.`;
  }
}

/**
 * approvalResultText says what became of an answered approval: its outcome
 * ("approved" or "denied") and, once it is known, its call's entry
 * ({status, error, durationMs}); '' for any other outcome.
 */
export function approvalResultText(a, outcome, entry) {
  const { name, what } = approvalName(a);
  if (outcome === 'denied') return `Denied — ${name} was not run.`;
  if (outcome !== 'approved') return '';
  if (!entry || typeof entry !== 'object') return what === 'call' ? `Approved — ${name} is running.` : `Approved — ${name}.`;
  const ms = Number.isFinite(entry.durationMs) ? ` (${Math.round(entry.durationMs)} ms)` : '';
  const error = typeof entry.error === 'string' && entry.error ? `: ${entry.error}` : '';
  switch (entry.status) {
    case 'ok': return `Approved — ${name} ok${ms}.`;
    case 'tool_error': return `Approved — ${name} returned an error${ms}${error}.`;
    case 'cancelled': return `Approved — ${name} was cancelled${error}.`;
    case 'denied': return `Approved — but ${name} was denied${error}.`;
    default: return `Approved — the ${what} ${name} failed${ms}${error}.`;
  }
}

/**
 * approvalResultCard shows, in place of an answered approval's card, what
 * became of it: for a call the user cannot see in the selected session
 * (made from the CLI, the gateway, another session), which would
 * otherwise just vanish. It says where the call came from and the outcome,
 * then its result when update(entry) brings the call's entry. onDismiss
 * is called when the user closes it; onOpen, when given, opens the call's
 * session. Returns {el, update(entry)}.
 */
export function approvalResultCard(a, outcome, onDismiss, onOpen) {
  const { name } = approvalName(a);
  const text = h('span', { class: 'approval-result-text', testid: 'approval-result-text' }, approvalResultText(a, outcome));
  const dismiss = h('button', { type: 'button', class: 'small ghost', testid: 'approval-result-dismiss', 'aria-label': `Dismiss the outcome of ${name}` }, 'Dismiss');
  dismiss.addEventListener('click', () => onDismiss());
  let open = null;
  if (onOpen) {
    open = h('button', { type: 'button', class: 'small ghost', testid: 'approval-result-open' }, 'Open its session');
    open.addEventListener('click', () => onOpen());
  }
  const origin = approvalOrigin(a);
  const el = h('article', {
    class: `entry approval approval-result outcome-${outcome}`, testid: 'approval-result', role: 'status',
    'data-approval-id': String(a?.id ?? ''), 'data-outcome': outcome,
  },
  h('header', { class: 'entry-head' }, text, h('span', { class: 'spacer' }), open, dismiss),
  origin ? h('p', { class: 'muted approval-origin', testid: 'approval-origin' }, origin) : null);
  return {
    el,
    update(entry) {
      el.dataset.status = typeof entry?.status === 'string' ? entry.status : '';
      text.textContent = approvalResultText(a, outcome, entry);
    },
  };
}

/**
 * approvalCard renders one pending approval and returns {el, tick()}.
 * a: {id, op?, server, tool, arguments, rule, message, expires, principal,
 * approvers?, canAnswer}; op names an operation other than a tool call
 * (resources/read, prompts/get, …), and tool is then what it is about (a
 * URI, a prompt's name). me is the user's principal name. onAnswer(id,
 * approve) sends the answer; the card disables its buttons meanwhile. An
 * approval the user may not answer has no buttons and says who may.
 */
export function approvalCard(a, onAnswer, me) {
  const { name, what } = approvalName(a);
  const role = approvalRole(a, me);
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
  const runs = role.canAnswer && role.mine
    ? ` paused this ${what}. It runs only if you approve it; no answer in time denies it.`
    : ` paused this ${what}. It runs only if it is approved; no answer in time denies it.`;
  const el = h('article', {
    class: 'entry approval', testid: 'approval', role: 'alertdialog',
    'data-approval-id': String(a.id ?? ''), 'aria-label': `Approval needed: ${name}`,
  },
  h('header', { class: 'entry-head' },
    h('span', { class: 'entry-name' }, name),
    h('span', { class: 'badge status-ask' }, role.canAnswer ? 'needs approval' : 'waits for approval'),
    h('span', { class: 'spacer' }),
    left),
  h('p', { class: 'approval-message', testid: 'approval-message' }, typeof a.message === 'string' && a.message ? a.message : `A policy asks you to approve this ${what}.`),
  a.origin === 'app'
    ? h('p', { class: 'approval-origin', testid: 'approval-origin' }, 'Requested by the MCP App of server ', h('strong', {}, String(a.server ?? '?')), role.mine ? ', not by you.' : '.')
    : approvalOrigin(a) ? h('p', { class: 'approval-origin', testid: 'approval-origin' }, approvalOrigin(a)) : null,
  role.mine ? null : h('p', { class: 'approval-principal', testid: 'approval-principal' }, 'A call of ', h('strong', {}, role.principal), '.'),
  h('p', { class: 'muted' }, 'Policy ', h('code', {}, typeof a.rule === 'string' ? a.rule : '?'), runs),
  h('details', { class: 'collapsible arguments', open: true },
    h('summary', {}, 'Arguments'),
    h('pre', { class: 'json', testid: 'approval-arguments' }, pretty(args))),
  role.canAnswer
    ? h('div', { class: 'approval-actions' }, approve, deny)
    : h('p', { class: 'approval-waiting', testid: 'approval-waiting' }, role.waiting),
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
