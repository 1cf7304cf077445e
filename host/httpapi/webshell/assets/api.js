// Authenticated access to the mcphost HTTP API (docs/api.md). The token lives
// in sessionStorage and goes out only in the Authorization header.

const TOKEN_KEY = 'mcphost.token';

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
 * when signal aborts, and ApiError for every other non-2xx answer.
 */
export async function api(method, path, body, { signal } = {}) {
  const headers = authHeaders({ Accept: 'application/json' });
  const init = { method, headers, signal, cache: 'no-store', credentials: 'omit', redirect: 'error' };
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

/** seg escapes one path segment. */
export const seg = (s) => encodeURIComponent(String(s));
