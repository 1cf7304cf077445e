// Authenticated access to the mcphost HTTP API (docs/api.md). The credential
// lives in sessionStorage and goes out only in the Authorization header.
// What the user signs in with is a principal's token; the WebShell exchanges
// it at once for the WebShell credential of that principal (signIn), so the
// daemon knows its requests are a person's (origin "user"), and keeps only
// the credential.

const TOKEN_KEY = 'mcphost.token';

/** Every WebShell credential starts with this; anything else is a token to exchange. */
export const CREDENTIAL_PREFIX = 'mcphost-ws-';

/** The API answered 401: the token is missing or not accepted. */
export class AuthError extends Error {
  constructor(message = 'unauthorized') {
    super(message);
    this.name = 'AuthError';
  }
}

/** fetch itself failed: the daemon is down or unreachable. */
export class NetworkError extends Error {
  constructor(message = 'network error') {
    super(message);
    this.name = 'NetworkError';
  }
}

/** Any other non-2xx answer, with the API's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code || '';
  }
}

function storage() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

export const auth = {
  get() {
    try {
      return storage()?.getItem(TOKEN_KEY) || '';
    } catch {
      return '';
    }
  },
  set(token) {
    try {
      storage()?.setItem(TOKEN_KEY, token);
    } catch {
      /* storage unavailable: the token is simply not kept */
    }
  },
  clear() {
    try {
      storage()?.removeItem(TOKEN_KEY);
    } catch {
      /* ignore */
    }
  },
};

/** prefs keeps small per-tab UI state (the selected session) in sessionStorage. */
export const prefs = {
  get(key) {
    try {
      return storage()?.getItem(`mcphost.${key}`) || '';
    } catch {
      return '';
    }
  },
  set(key, value) {
    try {
      if (value) storage()?.setItem(`mcphost.${key}`, value);
      else storage()?.removeItem(`mcphost.${key}`);
    } catch {
      /* ignore */
    }
  },
};

/** authHeaders returns the headers every API request carries. */
export function authHeaders(extra = {}) {
  return { Authorization: `Bearer ${auth.get()}`, ...extra };
}

/**
 * api sends one request to /api/v1 + path and returns the decoded JSON body.
 * It throws AuthError on 401, NetworkError when fetch fails, the AbortError
 * when signal aborts, and ApiError for every other non-2xx answer. Requests
 * carry no cookies and keep none, unless keepCookies is set: then the
 * browser keeps what the answer sets (the OAuth sign-in's binding cookie).
 */
export async function api(method, path, body, { signal, keepCookies = false } = {}) {
  const headers = authHeaders({ Accept: 'application/json' });
  const init = { method, headers, signal, cache: 'no-store', credentials: keepCookies ? 'same-origin' : 'omit', redirect: 'error' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`/api/v1${path}`, init);
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new NetworkError(err?.message || 'network error');
  }
  let data = null;
  const text = await res.text().catch(() => '');
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (res.status === 401) throw new AuthError(data?.error?.message);
  if (!res.ok) {
    const e = data?.error;
    throw new ApiError(res.status, typeof e?.code === 'string' ? e.code : '',
      typeof e?.message === 'string' && e.message ? e.message : `HTTP ${res.status} ${res.statusText}`.trim());
  }
  return data;
}

/**
 * signIn exchanges a principal's token for its WebShell credential. It
 * throws AuthError when the token is refused (with the daemon's reason when
 * the principal may not use the WebShell), NetworkError when the daemon is
 * unreachable, and ApiError otherwise.
 */
export async function signIn(token) {
  let res;
  try {
    res = await fetch('/api/v1/webshell/session', {
      method: 'POST', cache: 'no-store', credentials: 'omit', redirect: 'error',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    });
  } catch (err) {
    throw new NetworkError(err?.message || 'network error');
  }
  const data = await res.json().catch(() => null);
  const msg = typeof data?.error?.message === 'string' ? data.error.message : '';
  if (res.status === 401) throw new AuthError(msg || 'unauthorized');
  if (data?.error?.code === 'no_webshell') {
    const e = new AuthError(msg);
    e.reason = msg;
    throw e;
  }
  if (!res.ok) throw new ApiError(res.status, data?.error?.code || '', msg || `HTTP ${res.status}`);
  if (typeof data?.credential !== 'string' || !data.credential.startsWith(CREDENTIAL_PREFIX)) {
    throw new ApiError(res.status, 'bad_answer', 'mcphost answered the sign-in without a credential');
  }
  return data.credential;
}

/** seg escapes one path segment. */
export const seg = (s) => encodeURIComponent(String(s));
