// Unit tests of the pure parts of servercard.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { placementText, whenText } from '../../assets/servercard.js';

test('placementText names the replica a singleton runs on', () => {
  assert.equal(placementText({ placement: 'singleton', runsOn: 'b' }), 'replica b (singleton: one replica runs it for all)');
  assert.match(placementText({ placement: 'singleton' }), /^no replica yet/);
  assert.match(placementText({ placement: 'singleton', runsOn: 42 }), /^no replica yet/);
});

test('placementText is empty for a server every replica runs', () => {
  for (const s of [{}, { placement: 'replica', runsOn: 'a' }, { runsOn: 'a' }, null, 'singleton']) {
    assert.equal(placementText(s), '');
  }
});

test('whenText says how long a server has been connecting, and why it may take long', () => {
  const now = Date.parse('2026-12-03T21:14:30Z');
  assert.equal(whenText({ status: 'connecting', since: '2026-12-03T21:14:17Z' }, now), 'connecting for 13s');
  assert.equal(whenText({ status: 'connecting', since: '2026-12-03T21:12:17Z', launcher: 'npx' }, now),
    'connecting for 2m 13s · npx downloads the package on a first start: this can take a minute');
  assert.equal(whenText({ status: 'connecting', since: 'garbage' }, now), '');
});

test('whenText says when a failed server is tried next', () => {
  const now = Date.parse('2026-12-03T21:14:30Z');
  assert.match(whenText({ status: 'failed', restarts: 5, nextAttempt: '2026-12-03T21:18:33Z' }, now), /^5 restarts · next try in 4m 3s \(at .+\)$/);
  assert.equal(whenText({ status: 'failed', restarts: 1, nextAttempt: '2026-12-03T21:14:00Z' }, now), '1 restart · trying again now');
  assert.equal(whenText({ status: 'failed', restarts: 2 }, now), '2 restarts · no next try: restart it, or fix its block and reload');
  assert.equal(whenText({ status: 'failed', restarts: 0 }, now), '');
  assert.equal(whenText({ status: 'ready', since: '2026-12-03T21:14:17Z' }, now), '');
  assert.equal(whenText(null, now), '');
});
