// Sign-in to OAuth servers (package oauth): the controls on the card of a
// server in needs_auth or auth_error, and the notice after the round trip.
//
// A click asks the daemon for a single-use launch URL
// (POST /api/v1/servers/NAME/auth/start), keeping the cookie the answer
// sets, and navigates this same tab to it: the cookie tells the daemon
// that this browser started the sign-in, so it redirects to the
// authorization server at once (any other browser is asked to confirm
// first), which redirects back to /oauth/callback, which lands on
// /#signin=NAME&for=PRINCIPAL. The WebShell credential stays in
// sessionStorage across the round trip. Nothing opens a window on its own,
// and no token ever reaches this page: the daemon keeps them.

import { h } from './dom.js';
import { api, seg } from './api.js';

// signInControls returns the sign-in part of a server card, or null.
// insufficient_scope in the last error is a step-up: the banner says that
// more access is needed.
export function signInControls(s, onError) {
  const status = typeof s.status === 'string' ? s.status : '';
  if (status !== 'needs_auth' && status !== 'auth_error') return null;
  const last = typeof s.lastError === 'string' ? s.lastError : '';
  const stepUp = last.includes('insufficient_scope');
  const label = status === 'auth_error' ? `Try signing in to ${s.name} again` : stepUp ? `Grant ${s.name} more access` : `Sign in to ${s.name}`;
  const button = h('button', { type: 'button', class: 'signin-button', testid: `signin-${s.name}` }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const f = await api('POST', `/servers/${seg(s.name)}/auth/start`, undefined, { keepCookies: true });
      const url = typeof f?.launchUrl === 'string' ? f.launchUrl : '';
      // Only the daemon's own launch route: never a URL from elsewhere.
      if (!url.startsWith(`${location.origin}/oauth/launch/`)) throw new Error('the daemon answered without a launch URL');
      location.assign(url);
    } catch (err) {
      button.disabled = false;
      onError(err, `Signing in to ${s.name}`);
    }
  });
  return h('div', { class: `signin ${stepUp ? 'signin-step-up' : ''}`, testid: `signin-box-${s.name}` },
    h('p', { class: stepUp ? 'signin-banner' : 'server-error' },
      stepUp ? `${s.name} needs more access than it was granted.` : status === 'auth_error' ? last : `${s.name} needs you to sign in.`),
    button);
}

// takeSignInFromHash reads #signin=NAME&for=PRINCIPAL (where the callback
// lands), removes it from the address bar and returns the notice to show:
// the server and whose credential was stored ("*": the shared one), or ''.
export function takeSignInFromHash() {
  const m = /^#signin=([^&]*)(?:&for=([^&]*))?$/.exec(location.hash || '');
  if (!m) return '';
  history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  let server = '';
  let who = '';
  try {
    server = decodeURIComponent(m[1]);
    who = decodeURIComponent(m[2] ?? '');
  } catch {
    return '';
  }
  if (!server) return '';
  if (who === '*') return `Signed in to ${server}; the credential is stored as its shared credential, for every principal.`;
  if (who) return `Signed in to ${server} as ${who}; the credential is stored for ${who}.`;
  return `Signed in to ${server}.`;
}
