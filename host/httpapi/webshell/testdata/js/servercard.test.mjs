// Unit tests of the pure parts of servercard.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { placementText } from '../../assets/servercard.js';

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
