// Unit tests of the pure parts of schemaform.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSchema, isMultiline } from '../../assets/schemaform.js';

test('compileSchema keeps the properties in the schema\'s order, required or not', () => {
  const c = compileSchema({
    type: 'object',
    properties: { name: { type: 'string' }, entityType: { type: 'string' }, observations: { type: 'array', items: { type: 'string' } } },
    required: ['entityType'],
  });
  assert.deepEqual(c.props.map((p) => p.name), ['name', 'entityType', 'observations']);
});

test('isMultiline: what the schema or the value says', () => {
  const yes = [
    [{ type: 'string', contentMediaType: 'text/vnd.abc' }, 'x'],
    [{ type: 'string', format: 'textarea' }, 'x'],
    [{ type: 'string', maxLength: 5000 }, 'x'],
    [{ type: 'string', default: 'X:1\nK:C\nCDEF|' }, 'x'],
    [{ type: 'string', examples: ['a\nb'] }, 'x'],
    [{ type: 'string', description: 'Music in ABC notation' }, 'x'],
    [{ type: 'string', description: 'Multi-line text to write' }, 'x'],
    [{ type: 'string', description: 'JavaScript code to run' }, 'x'],
    [{ type: 'string' }, 'abcNotation'],
    [{ type: 'string' }, 'code'],
    [{ type: 'string' }, 'text'],
    [{ type: 'string' }, 'file_content'],
    [{ type: 'string' }, 'markdown'],
  ];
  for (const [node, name] of yes) assert.equal(isMultiline(node, name), true, `${name} ${JSON.stringify(node)}`);
  const no = [
    [{ type: 'string' }, 'name'],
    [{ type: 'string' }, 'entityType'],
    [{ type: 'string', maxLength: 40 }, 'text'],
    [{ type: 'string', description: 'ISO country code' }, 'country'],
    [{ type: 'string', format: 'uri' }, 'content'],
    [{ type: 'string', pattern: '^[a-z]+$' }, 'code'],
    [{ type: 'string', format: 'password', default: 'a\nb' }, 'text'],
    [{ type: 'string', writeOnly: true, maxLength: 9000 }, 'body'],
  ];
  for (const [node, name] of no) assert.equal(isMultiline(node, name), false, `${name} ${JSON.stringify(node)}`);
});
