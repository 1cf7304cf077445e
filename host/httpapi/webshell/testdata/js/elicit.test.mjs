// Unit tests of the pure parts of elicit.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formSchema, safeURL } from '../../assets/elicit.js';

test('formSchema turns titled enums into plain enums', () => {
  const got = formSchema({
    type: 'object',
    properties: {
      color: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] },
      tags: { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }, { const: 'b', title: 'B' }] } },
      name: { type: 'string', default: 'Ada' },
    },
    required: ['name'],
  });
  assert.deepEqual(got.properties.color, { type: 'string', enum: ['r', 'g'] });
  assert.deepEqual(got.properties.tags, { type: 'array', items: { enum: ['a', 'b'] } });
  assert.deepEqual(got.properties.name, { type: 'string', default: 'Ada' });
  assert.deepEqual(got.required, ['name']);
});

test('formSchema leaves what it does not know alone', () => {
  assert.equal(formSchema(null), null);
  assert.deepEqual(formSchema({ type: 'object' }), { type: 'object', properties: {} });
  const mixed = { type: 'object', properties: { x: { oneOf: [{ type: 'string' }, { type: 'number' }] } } };
  assert.deepEqual(formSchema(mixed), mixed);
});

test('safeURL accepts only absolute http and https URLs', () => {
  for (const [url, want] of [
    ['https://example.com/a?b=1', 'https://example.com/a?b=1'],
    ['HTTP://EXAMPLE.com', 'http://example.com/'],
    ['javascript:alert(1)', ''],
    [' javascript:alert(1)', ''],
    ['data:text/html,<b>x</b>', ''],
    ['file:///etc/passwd', ''],
    ['//example.com', ''],
    ['/relative', ''],
    ['', ''],
    [42, ''],
  ]) {
    assert.equal(safeURL(url), want, String(url));
  }
});
