// Unit tests of the pure parts of approvals.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalName } from '../../assets/approvals.js';

test('approvalName names a tool call by server and tool', () => {
  assert.deepEqual(approvalName({ server: 'files', tool: 'write_file' }), { name: 'files.write_file', what: 'call' });
  assert.deepEqual(approvalName({ op: '', server: 'files', tool: 'w' }), { name: 'files.w', what: 'call' });
});

test('approvalName names another operation by what it is about', () => {
  assert.deepEqual(approvalName({ op: 'resources/read', server: 'files', tool: 'file:///etc/hosts' }),
    { name: 'resources/read files: file:///etc/hosts', what: 'request' });
  assert.deepEqual(approvalName({ op: 'prompts/get', server: 'ops', tool: 'deploy' }),
    { name: 'prompts/get ops: deploy', what: 'request' });
});

test('approvalName survives what a server or a bug could send', () => {
  for (const a of [null, {}, { server: 3, tool: {} }, { op: 7 }]) {
    assert.equal(typeof approvalName(a).name, 'string');
  }
});
