// Unit tests of sandboxURL (appbridge.js), run by `node --test` from
// TestWebShellModules (modules_test.go): where the App sandbox is loaded
// from for a page at each kind of address (apps.md §9).
import { test } from 'node:test';
import assert from 'node:assert/strict';

// appbridge.js and its imports listen on document and window when loaded;
// sandboxURL
// itself touches no DOM.
globalThis.document ??= { addEventListener() {} };
globalThis.window ??= { addEventListener() {} };
const { sandboxURL, checkDisplay } = await import('../../assets/appbridge.js');

const hostOf = (u) => (u ? new URL(u).origin : '');
const hostOriginOf = (u) => (u ? new URL(u).searchParams.get('hostOrigin') : '');

test('a loopback page gets the other loopback name', () => {
  const u = sandboxURL(new URL('http://127.0.0.1:7777/'), undefined, 'https://apps.example.com');
  assert.equal(hostOf(u), 'http://localhost:7777');
  assert.equal(hostOriginOf(u), 'http://127.0.0.1:7777');
  assert.equal(hostOf(sandboxURL(new URL('http://localhost:8080/#x'), undefined)), 'http://127.0.0.1:8080');
  assert.equal(sandboxURL(new URL('http://127.0.0.1/'), undefined), '', 'no explicit port');
  assert.equal(sandboxURL(new URL('https://localhost:8443/'), undefined, 'https://apps.example.com'), '', 'https loopback');
});

test('a public page gets the configured sandbox origin', () => {
  const u = sandboxURL(new URL('https://mcp.example.com/'), { connectDomains: ['https://api.example.com'] }, 'https://apps.example.com');
  assert.equal(hostOf(u), 'https://apps.example.com');
  assert.equal(new URL(u).pathname, '/mcp-app-sandbox');
  assert.equal(hostOriginOf(u), 'https://mcp.example.com');
  assert.deepEqual(JSON.parse(new URL(u).searchParams.get('csp')), { connectDomains: ['https://api.example.com'] });
  assert.equal(hostOf(sandboxURL(new URL('http://shell.mcphost.test:8080/'), undefined, 'http://apps.mcphost.test:8080')), 'http://apps.mcphost.test:8080');
  assert.equal(hostOf(sandboxURL(new URL('http://shell.example.com/'), undefined, 'https://apps.example.com')), 'https://apps.example.com');
});

test('a public page without a usable sandbox origin shows the fallback', () => {
  const page = new URL('https://mcp.example.com/');
  for (const sb of ['', 'https://mcp.example.com', 'http://apps.example.com', 'https://Apps.example.com',
    'https://apps.example.com/', 'https://apps.example.com/x', 'javascript:alert(1)', 'https://apps.example.com;x',
    'https://apps.example.com:0', 'https://[::1]:8080', null, undefined, 42]) {
    assert.equal(sandboxURL(page, undefined, sb), '', `sandbox ${String(sb)}`);
  }
  assert.equal(sandboxURL(new URL('http://[::1]:7777/'), undefined, 'https://apps.example.com'), '', 'bracketed IPv6 page');
  assert.equal(sandboxURL(new URL('file:///tmp/x.html'), undefined, 'https://apps.example.com'), '', 'a file page');
});

test('unsafeEval reaches the sandbox query only from a record that says true', () => {
  const page = new URL('http://127.0.0.1:7777/');
  const q = (u) => new URL(u).searchParams;
  assert.equal(q(sandboxURL(page, undefined, '', { unsafeEval: true })).get('unsafeEval'), '1');
  for (const v of [false, 'true', 1, undefined, null]) {
    assert.equal(q(sandboxURL(page, undefined, '', { unsafeEval: v })).has('unsafeEval'), false, String(v));
  }
  assert.equal(q(sandboxURL(page, undefined)).has('unsafeEval'), false);
  const rec = { type: 'mcp_app', serverName: 's', resourceUri: 'ui://a', fallbackText: '', html: '<p>', toolResult: {} };
  assert.equal(checkDisplay({ ...rec, unsafeEval: true }).rec.unsafeEval, true);
  assert.equal(checkDisplay(rec).rec.unsafeEval, false);
  assert.equal(checkDisplay({ ...rec, unsafeEval: 'yes' }).ok, false, 'not a boolean');
  // An App's CSP lists cannot carry it: checkDisplay refuses unknown keys.
  assert.equal(checkDisplay({ ...rec, csp: { unsafeEval: true } }).ok, false);
});
